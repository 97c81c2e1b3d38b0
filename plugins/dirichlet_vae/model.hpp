#pragma once
// The Dirichlet beta-VAE: an MLP encoder to Dirichlet concentrations, a linear (free or archetypal) or
// MLP Gaussian decoder, the exact ELBO of the linear decoders, the reparameterised Monte-Carlo ELBO of
// any decoder, and full-batch Adam training.
//
// A DirichletVAE holds R independent replicas (a leading dimension on every parameter): a scan over
// beta / beta_c and seeds trains them all in one set of tensor operations. Adam is elementwise and the
// loss is a sum of per-replica terms, so each replica trains exactly as it would alone.
#include <ATen/ATen.h>

#include <nexp/options.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace torch::optim {
class Adam;
}

namespace dirichlet_vae {

enum class DecoderKind {
  Linear,      // mu(z) = E^T z, E [K, d] free: row k is endmember k (a bias is redundant on the simplex)
  Archetypal,  // mu(z) = E^T z with E = softmax(B) X: archetypes are convex combinations of the data
  Mlp,         // mu(z) = V2^T tanh(V1^T z + c1) + c2: non-linear, Monte-Carlo ELBO only
};
enum class ElboKind { Exact, MonteCarlo };
enum class Precision { Float64, Float32 };

// The architecture a config chooses (params of train, scan and collapse_sweep).
struct ArchitectureOptions {
  DecoderKind decoder = DecoderKind::Linear;
  std::int64_t hidden = 32;          // encoder width (one ReLU layer)
  std::int64_t decoder_hidden = 32;  // MLP decoder width (tanh)
  std::int64_t encoder_pca = 0;      // >0: the encoder sees the top principal components only
  // Distance of the start from the collapsed point: endmembers at mean + init_scale (x_i - mean) for
  // random data points x_i, the encoder's output layer at init_scale times its usual range.
  double init_scale = 1.0;
  // Float32: parameters and activations in single precision (initial values drawn in double).
  Precision precision = Precision::Float64;

  static void declare(nexp::Options<ArchitectureOptions>& o) {
    o.add("decoder", &ArchitectureOptions::decoder,
          "linear (free endmembers), archetypal (convex combinations of the data) or mlp",
          {{"linear", DecoderKind::Linear}, {"archetypal", DecoderKind::Archetypal}, {"mlp", DecoderKind::Mlp}});
    o.add("hidden", &ArchitectureOptions::hidden, "encoder hidden width (one ReLU layer)").min(1);
    o.add("decoder_hidden", &ArchitectureOptions::decoder_hidden, "hidden width of the MLP decoder (tanh)").min(1);
    o.add("encoder_pca", &ArchitectureOptions::encoder_pca,
          "feed the encoder the top principal components only (0: all inputs)")
        .min(0);
    o.add("init_scale", &ArchitectureOptions::init_scale,
          "distance of the start from the collapsed point: endmembers at mean + init_scale (random data point - "
          "mean), encoder output weights scaled alike")
        .min(0);
    o.add("precision", &ArchitectureOptions::precision,
          "float64, or float32 (about twice as fast; KL resolved to ~1e-6)",
          {{"float64", Precision::Float64}, {"float32", Precision::Float32}});
  }
};

// The architecture with the prior and decoder variance resolved against the data.
struct ModelOptions : ArchitectureOptions {
  std::int64_t K = 3;
  double alpha0 = 1.0;  // prior Dir(alpha0 1_K)
  double sigma2 = 1.0;  // decoder variance (the start value when learned)
  bool learn_sigma2 = false;
};

// Concentrations never fall below this (lgamma and digamma stay finite).
inline constexpr double kAlphaFloor = 1e-3;

// -E_q log N(x; E^T z, sigma^2 I) for q = Dir(alpha), exactly, per data point:
//   (||x - E^T m||^2 + tr(E^T Sigma_q E)) / (2 sigma^2) + d/2 log(2 pi sigma^2),
//   tr(E^T Sigma_q E) = (sum_k m_k ||e_k||^2 - ||E^T m||^2) / (A + 1),  m = alpha / A.
// x [N, d], alpha [..., N, K], E [..., K, d], log_sigma2 [...]; returns [..., N]. `centre` [d] is
// subtracted from x and from every e_k first (the value does not change since z sums to one); pass
// the data mean to avoid cancellation between large norms.
at::Tensor linear_expected_nll(const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& endmembers,
                               const at::Tensor& log_sigma2, const at::Tensor& centre);

class DirichletVAE {
 public:
  // x [N, d] (double) sets the encoder's input standardisation, the collapsed decoder (the data mean)
  // and, for the archetypal decoder, the points archetypes are made of. Replica r draws its initial
  // weights from inits[r]; equal seeds give equal replicas.
  DirichletVAE(const ModelOptions& options, const at::Tensor& x, const std::vector<at::Generator>& inits);

  const ModelOptions& options() const { return options_; }
  at::ScalarType dtype() const { return options_.precision == Precision::Float32 ? at::kFloat : at::kDouble; }
  std::int64_t replicas() const { return replicas_; }
  bool has_exact_elbo() const { return options_.decoder != DecoderKind::Mlp; }

  // x [N, d] in dtype().
  at::Tensor concentrations(const at::Tensor& x) const;  // alpha(x) [R, N, K]
  at::Tensor endmembers() const;                        // E [R, K, d]; linear decoders only
  at::Tensor decode(const at::Tensor& z) const;         // z [..., R, N, K] -> [..., R, N, d]
  at::Tensor sigma2() const;                            // [R]

  // -E_q log p(x|z) per replica and data point [R, N]: exact (linear decoders), or estimated with
  // `samples` reparameterised draws (any decoder).
  at::Tensor expected_nll_exact(const at::Tensor& x, const at::Tensor& alpha) const;
  at::Tensor expected_nll_mc(const at::Tensor& x, const at::Tensor& alpha, std::int64_t samples,
                             const at::Generator& gen) const;

  // Moves every parameter to the collapsed point: alpha(x) = alpha0 1 for all x, every endmember
  // (archetype) at the data mean, the MLP decoder constant at the data mean, a learned sigma^2 at its
  // collapsed optimum tr(C) / d.
  void collapse();

  std::vector<at::Tensor> parameters() const;
  void save(const std::filesystem::path& file) const;
  void load(const std::filesystem::path& file);

 private:
  at::Tensor encoder_input(const at::Tensor& x) const;

  ModelOptions options_;
  std::int64_t replicas_ = 1;
  // Encoder: alpha = softplus(relu(u W1 + b1) W2 + b2) + floor, u the standardised (projected) input.
  at::Tensor x_mean_, x_scale_, projection_;
  at::Tensor w1_, b1_, w2_, b2_;   // [R, p, h], [R, h], [R, h, K], [R, K]
  // Decoders, in standardised units where free: mu = mean + scale * (...).
  at::Tensor endmembers_;          // Linear: E = mean + scale * endmembers_, [R, K, d]
  at::Tensor logits_, points_;     // Archetypal: E = softmax(logits) points, [R, K, N], [N, d]
  at::Tensor v1_, c1_, v2_, c2_;   // Mlp [R, K, h], [R, h], [R, h, d], [R, d]
  at::Tensor log_sigma2_;          // [R]
};

// Terms of the negative ELBO per replica [R], each the mean over the data.
struct Objective {
  at::Tensor loss;  // sum over replicas of nll + beta kl: what the optimiser minimises
  at::Tensor nll;   // -E_q log p(x|z)
  at::Tensor kl;    // KL(q(z|x) || p(z))
};
// betas: one per replica.
Objective negative_elbo(const DirichletVAE& model, const at::Tensor& x, const std::vector<double>& betas, ElboKind elbo,
                        std::int64_t mc_samples, const at::Generator& gen);

// The objective and its optimisation, as a config chooses them.
struct FitOptions {
  ElboKind elbo = ElboKind::Exact;
  std::int64_t mc_samples = 8;
  std::int64_t steps = 3000;
  double lr = 3e-2;
  double lr_final = 3e-3;  // the learning rate decays on a cosine to lr * lr_final

  static void declare(nexp::Options<FitOptions>& o) {
    o.add("elbo", &FitOptions::elbo, "exact (linear decoders) or mc (reparameterised Gamma-normalise samples)",
          {{"exact", ElboKind::Exact}, {"mc", ElboKind::MonteCarlo}});
    o.add("mc_samples", &FitOptions::mc_samples, "samples per data point for the Monte-Carlo ELBO").min(1);
    o.add("steps", &FitOptions::steps, "full-batch Adam steps").min(1);
    o.add("lr", &FitOptions::lr, "Adam learning rate (parameters are in standardised data units)").range(1e-6, 1);
    o.add("lr_final", &FitOptions::lr_final, "final learning rate as a fraction of lr (cosine decay)").range(0, 1);
  }
};

struct TrainOptions : FitOptions {
  std::vector<double> betas = {1.0};  // one per replica
};

// Full-batch Adam on the negative ELBO; step() can be called until finished(), with save/load between.
class Trainer {
 public:
  Trainer(DirichletVAE& model, at::Tensor x, TrainOptions options, at::Generator gen);
  ~Trainer();
  double step();  // one step; returns the loss before it (summed over replicas)
  std::int64_t steps_done() const { return done_; }
  bool finished() const { return done_ >= options_.steps; }
  void run();     // step() until finished
  void save(const std::filesystem::path& dir) const;
  void load(const std::filesystem::path& dir);

 private:
  DirichletVAE& model_;
  at::Tensor x_;
  TrainOptions options_;
  at::Generator gen_;
  std::unique_ptr<torch::optim::Adam> adam_;
  std::int64_t done_ = 0;
};

// What one trained replica does on the data (x in any precision; results in double).
struct Evaluation {
  double kl = 0, nll = 0, elbo = 0;  // per data point; elbo = -(nll + beta kl)
  double recon_mse = 0;              // mean over points and coordinates of (x - mu(m(x)))^2
  double sigma2 = 0;
  std::int64_t active_dims = 0;      // eigenvalues of Cov_x[m(x)] above active_tol / (K (K alpha0 + 1))
  std::vector<double> latent_spectrum;  // those eigenvalues, descending
  at::Tensor means;                  // posterior means m(x) [N, K]
  at::Tensor endmembers;             // [K, d] (linear decoders), undefined otherwise
};
std::vector<Evaluation> evaluate(const DirichletVAE& model, const at::Tensor& x, const std::vector<double>& betas,
                                 double active_tol, ElboKind elbo, std::int64_t mc_samples, const at::Generator& gen);

// Unmixing scores against the truth, after the matching of estimated to true endmembers that
// minimises the mean spectral angle (all K! matchings; K <= 8).
struct UnmixingScore {
  double sad = 0;             // mean spectral angle distance, radians
  double abundance_rmse = 0;  // root mean squared abundance error
  std::vector<std::int64_t> match;  // match[k]: the estimated endmember paired with true endmember k
};
UnmixingScore score_unmixing(const at::Tensor& est_endmembers, const at::Tensor& est_abundances,
                             const at::Tensor& true_endmembers, const at::Tensor& true_abundances);

}  // namespace dirichlet_vae
