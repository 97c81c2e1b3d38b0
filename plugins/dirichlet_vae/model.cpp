#include "model.hpp"

#include <torch/optim/adam.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include "dirichlet.hpp"

namespace dirichlet_vae {

namespace {

constexpr double kPi = 3.14159265358979323846;

double inverse_softplus(double y) { return std::log(std::expm1(y)); }

at::Tensor uniform(at::IntArrayRef shape, double bound, const at::Generator& gen) {
  return at::empty(shape, at::kDouble).uniform_(-bound, bound, gen);
}

// Initial values are drawn in double whatever the model's precision, so a float32 model starts where
// its float64 twin does.
at::Tensor trainable(const at::Tensor& t, at::ScalarType dtype) { return t.to(dtype).set_requires_grad(true); }

}  // namespace

// ---------------------------------------------------------------------------------------------------
// The model

at::Tensor linear_expected_nll(const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& endmembers,
                               const at::Tensor& log_sigma2, const at::Tensor& centre) {
  // Written through x.e_k and the Gram matrix G = E E^T, never forming an [..., N, d] tensor: the cost
  // is O(N K (d + K)) per replica, whatever the data dimension.
  const std::int64_t n = x.size(0), d = x.size(1), K = endmembers.size(-2);
  const at::Tensor xc = x - centre;                                   // [N, d]
  const at::Tensor e = endmembers - centre;                           // [..., K, d]
  // x.e_k for every replica with one [N, d] x [d, (...) K] product, moved to [..., N, K].
  std::vector<std::int64_t> shape{n};
  for (std::int64_t i = 0; i + 2 < e.dim(); ++i) shape.push_back(e.size(i));
  shape.push_back(K);
  const at::Tensor xe = xc.matmul(e.reshape({-1, d}).t()).view(shape).movedim(0, -2);
  const at::Tensor gram = e.matmul(e.transpose(-1, -2));              // [..., K, K]
  const at::Tensor total = alpha.sum(-1, true);                       // A [..., N, 1]
  const at::Tensor m = alpha / total;                                 // [..., N, K]
  const at::Tensor fit2 = (m.matmul(gram) * m).sum(-1);               // ||E^T m - centre||^2
  const at::Tensor residual = xc.pow(2).sum(-1) - 2 * (m * xe).sum(-1) + fit2;
  const at::Tensor spread = ((m * gram.diagonal(0, -2, -1).unsqueeze(-2)).sum(-1) - fit2) / (total.squeeze(-1) + 1);
  const at::Tensor log_s2 = log_sigma2.unsqueeze(-1);
  return 0.5 * (residual + spread) / log_s2.exp() + 0.5 * static_cast<double>(d) * (std::log(2 * kPi) + log_s2);
}

DirichletVAE::DirichletVAE(const ModelOptions& options, const at::Tensor& x_in, const std::vector<at::Generator>& inits)
    : options_(options), replicas_(static_cast<std::int64_t>(inits.size())) {
  if (inits.empty()) throw std::invalid_argument("DirichletVAE: at least one replica");
  const at::Tensor x = x_in.to(at::kDouble);
  const std::int64_t n = x.size(0), d = x.size(1), K = options.K, h = options.hidden;
  x_mean_ = x.mean(0);
  const at::Tensor centred = x - x_mean_;
  x_scale_ = (centred.pow(2).sum(1).mean() / static_cast<double>(d)).sqrt().clamp_min(1e-12);

  std::int64_t inputs = d;
  if (options.encoder_pca > 0 && options.encoder_pca < d) {
    // The encoder may be any function of x; feeding it the top principal components keeps it small on
    // high-dimensional inputs (MNIST) without changing what the decoder has to explain.
    auto svd = at::linalg_svd(centred, /*full_matrices=*/false);
    projection_ = std::get<2>(svd).narrow(0, 0, options.encoder_pca).t().contiguous();
    inputs = options.encoder_pca;
  }
  const double in_bound = 1.0 / std::sqrt(static_cast<double>(inputs)), h_bound = 1.0 / std::sqrt(static_cast<double>(h));

  // Each replica's tensors from its own generator, then stacked along the replica dimension.
  std::vector<at::Tensor> w1, b1, w2, e, logits, v1, c1, v2;
  for (const at::Generator& gen : inits) {
    w1.push_back(uniform({inputs, h}, in_bound, gen));
    b1.push_back(uniform({h}, in_bound, gen));
    w2.push_back(uniform({h, K}, options.init_scale * h_bound, gen));
    // Starting endmembers: mean + init_scale (x_i - mean) for K distinct random data points.
    const at::Tensor picks = at::randperm(n, gen, at::TensorOptions().dtype(at::kLong)).narrow(0, 0, std::min(K, n));
    switch (options.decoder) {
      case DecoderKind::Linear: {
        // Stored in data units relative to the mean: E = mean + scale * E~, so that Adam's step size
        // means the same on every data set.
        at::Tensor rows = at::zeros({K, d}, at::kDouble);
        rows.narrow(0, 0, picks.size(0)).add_(options.init_scale * (x.index_select(0, picks) - x_mean_) / x_scale_);
        e.push_back(rows);
        break;
      }
      case DecoderKind::Archetypal: {
        // Archetype k puts weight ~ n^s / (n^s + n - 1) on its data point, s = init_scale.
        at::Tensor l = at::zeros({K, n}, at::kDouble);
        for (std::int64_t k = 0; k < picks.size(0); ++k)
          l[k][picks[k].item<std::int64_t>()] = options.init_scale * std::log(static_cast<double>(n));
        logits.push_back(l);
        break;
      }
      case DecoderKind::Mlp: {
        const std::int64_t hd = options.decoder_hidden;
        v1.push_back(uniform({K, hd}, 3.0 / std::sqrt(static_cast<double>(K)), gen));
        c1.push_back(uniform({hd}, 1.0, gen));
        v2.push_back(uniform({hd, d}, options.init_scale / std::sqrt(static_cast<double>(hd)), gen));
        break;
      }
    }
  }
  const std::int64_t R = replicas_;
  const at::ScalarType dt = dtype();
  w1_ = trainable(at::stack(w1), dt);
  b1_ = trainable(at::stack(b1), dt);
  w2_ = trainable(at::stack(w2), dt);
  b2_ = trainable(at::full({R, K}, inverse_softplus(options.alpha0 - kAlphaFloor), at::kDouble), dt);
  switch (options.decoder) {
    case DecoderKind::Linear: endmembers_ = trainable(at::stack(e), dt); break;
    case DecoderKind::Archetypal:
      points_ = x.to(dt);
      logits_ = trainable(at::stack(logits), dt);
      break;
    case DecoderKind::Mlp:
      v1_ = trainable(at::stack(v1), dt);
      c1_ = trainable(at::stack(c1), dt);
      v2_ = trainable(at::stack(v2), dt);
      c2_ = trainable(at::zeros({R, d}, at::kDouble), dt);
      break;
  }
  log_sigma2_ = at::full({R}, std::log(options.sigma2), dt);
  if (options.learn_sigma2) log_sigma2_.set_requires_grad(true);
  x_mean_ = x_mean_.to(dt);
  x_scale_ = x_scale_.to(dt);
  if (projection_.defined()) projection_ = projection_.to(dt);
}

at::Tensor DirichletVAE::encoder_input(const at::Tensor& x) const {
  at::Tensor u = (x - x_mean_) / x_scale_;
  return projection_.defined() ? u.matmul(projection_) : u;
}

at::Tensor DirichletVAE::concentrations(const at::Tensor& x) const {
  // The first layer is shared input times every replica's weights: one [N, p] x [p, R h] product
  // (a broadcast batched matmul would copy the input R times).
  const std::int64_t R = replicas_, p = w1_.size(1), h = w1_.size(2);
  const at::Tensor first = encoder_input(x).matmul(w1_.permute({1, 0, 2}).reshape({p, R * h}));  // [N, R h]
  const at::Tensor hidden = at::relu(first.view({-1, R, h}).permute({1, 0, 2}) + b1_.unsqueeze(1));  // [R, N, h]
  return at::softplus(at::matmul(hidden, w2_) + b2_.unsqueeze(1)) + kAlphaFloor;
}

at::Tensor DirichletVAE::endmembers() const {
  switch (options_.decoder) {
    case DecoderKind::Linear: return x_mean_ + x_scale_ * endmembers_;
    case DecoderKind::Archetypal: return at::softmax(logits_, -1).matmul(points_);
    case DecoderKind::Mlp: break;
  }
  throw std::logic_error("the MLP decoder has no endmember matrix");
}

at::Tensor DirichletVAE::decode(const at::Tensor& z) const {
  if (options_.decoder == DecoderKind::Mlp)
    return x_mean_ + x_scale_ * (at::tanh(z.matmul(v1_) + c1_.unsqueeze(1)).matmul(v2_) + c2_.unsqueeze(1));
  return z.matmul(endmembers());
}

at::Tensor DirichletVAE::sigma2() const { return log_sigma2_.exp(); }

at::Tensor DirichletVAE::expected_nll_exact(const at::Tensor& x, const at::Tensor& alpha) const {
  if (!has_exact_elbo()) throw std::logic_error("the exact ELBO needs a linear decoder; use the Monte-Carlo ELBO");
  return linear_expected_nll(x, alpha, endmembers(), log_sigma2_, x_mean_);
}

at::Tensor DirichletVAE::expected_nll_mc(const at::Tensor& x, const at::Tensor& alpha, std::int64_t samples,
                                         const at::Generator& gen) const {
  const double d = static_cast<double>(x.size(1));
  const at::Tensor z = rsample(alpha, samples, gen);   // [S, R, N, K]
  const at::Tensor squared = (x - decode(z)).pow(2).sum(-1).mean(0);  // [R, N]
  const at::Tensor log_s2 = log_sigma2_.unsqueeze(-1);
  return 0.5 * squared / log_s2.exp() + 0.5 * d * (std::log(2 * kPi) + log_s2);
}

void DirichletVAE::collapse() {
  at::NoGradGuard no_grad;
  w2_.zero_();
  b2_.fill_(inverse_softplus(options_.alpha0 - kAlphaFloor));
  switch (options_.decoder) {
    case DecoderKind::Linear: endmembers_.zero_(); break;
    case DecoderKind::Archetypal: logits_.zero_(); break;
    case DecoderKind::Mlp:
      v2_.zero_();
      c2_.zero_();
      break;
  }
  // The variance that maximises the collapsed ELBO: tr(C) / d, the squared input scale.
  if (options_.learn_sigma2) log_sigma2_.fill_(2 * std::log(x_scale_.item<double>()));
}

std::vector<at::Tensor> DirichletVAE::parameters() const {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : {w1_, b1_, w2_, b2_, endmembers_, logits_, v1_, c1_, v2_, c2_, log_sigma2_})
    if (t.defined() && t.requires_grad()) out.push_back(t);
  return out;
}

void DirichletVAE::save(const std::filesystem::path& file) const { torch::save(parameters(), file.string()); }

void DirichletVAE::load(const std::filesystem::path& file) {
  std::vector<at::Tensor> saved;
  torch::load(saved, file.string());
  auto params = parameters();
  if (saved.size() != params.size())
    throw std::runtime_error("checkpoint " + file.string() + " holds " + std::to_string(saved.size()) +
                             " tensors; this model has " + std::to_string(params.size()));
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(saved[i]);
}

Objective negative_elbo(const DirichletVAE& model, const at::Tensor& x, const std::vector<double>& betas, ElboKind elbo,
                        std::int64_t mc_samples, const at::Generator& gen) {
  if (static_cast<std::int64_t>(betas.size()) != model.replicas())
    throw std::invalid_argument("negative_elbo: " + std::to_string(betas.size()) + " betas for " +
                                std::to_string(model.replicas()) + " replicas");
  const at::Tensor alpha = model.concentrations(x);
  Objective o;
  o.nll = (elbo == ElboKind::Exact ? model.expected_nll_exact(x, alpha)
                                   : model.expected_nll_mc(x, alpha, mc_samples, gen)).mean(-1);
  o.kl = kl_to_symmetric(alpha, model.options().alpha0).mean(-1);
  o.loss = (o.nll + at::tensor(betas, o.kl.options()) * o.kl).sum();
  return o;
}

// ---------------------------------------------------------------------------------------------------
// Training

Trainer::Trainer(DirichletVAE& model, at::Tensor x, TrainOptions options, at::Generator gen)
    : model_(model), x_(x.to(model.dtype())), options_(options), gen_(std::move(gen)) {
  if (options_.elbo == ElboKind::Exact && !model_.has_exact_elbo())
    throw std::invalid_argument("the MLP decoder has no exact ELBO; use elbo: mc");
  if (static_cast<std::int64_t>(options_.betas.size()) != model_.replicas())
    throw std::invalid_argument("Trainer: " + std::to_string(options_.betas.size()) + " betas for " +
                                std::to_string(model_.replicas()) + " replicas");
  adam_ = std::make_unique<torch::optim::Adam>(model_.parameters(), torch::optim::AdamOptions(options_.lr));
}

Trainer::~Trainer() = default;

double Trainer::step() {
  // Cosine decay from lr to lr * lr_final: the last steps settle the slow direction near beta_c.
  const double progress = static_cast<double>(done_) / static_cast<double>(std::max<std::int64_t>(1, options_.steps));
  const double lr = options_.lr * (options_.lr_final + (1 - options_.lr_final) * 0.5 * (1 + std::cos(kPi * progress)));
  for (auto& group : adam_->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  adam_->zero_grad();
  Objective o = negative_elbo(model_, x_, options_.betas, options_.elbo, options_.mc_samples, gen_);
  o.loss.backward();
  adam_->step();
  ++done_;
  return o.loss.item<double>();
}

void Trainer::run() {
  while (!finished()) step();
}

void Trainer::save(const std::filesystem::path& dir) const {
  model_.save(dir / "model.pt");
  torch::save(*adam_, (dir / "adam.pt").string());
  std::ofstream(dir / "step.txt") << done_;
}

void Trainer::load(const std::filesystem::path& dir) {
  model_.load(dir / "model.pt");
  torch::load(*adam_, (dir / "adam.pt").string());
  std::ifstream(dir / "step.txt") >> done_;
}

// ---------------------------------------------------------------------------------------------------
// Evaluation

std::vector<Evaluation> evaluate(const DirichletVAE& model, const at::Tensor& x, const std::vector<double>& betas,
                                 double active_tol, ElboKind elbo, std::int64_t mc_samples, const at::Generator& gen) {
  at::NoGradGuard no_grad;
  const at::Tensor xm = x.to(model.dtype());
  const Objective o = negative_elbo(model, xm, betas, elbo, mc_samples, gen);
  const at::Tensor alpha = model.concentrations(xm);
  const at::Tensor mse = (xm - model.decode(alpha / alpha.sum(-1, true))).pow(2).mean({1, 2}).to(at::kDouble);  // [R]
  const at::Tensor means = (alpha / alpha.sum(-1, true)).to(at::kDouble);     // [R, N, K]
  const at::Tensor centred = means - means.mean(1, true);
  const at::Tensor cov = centred.transpose(1, 2).matmul(centred) / static_cast<double>(x.size(0));
  const at::Tensor eig = at::linalg_eigvalsh(cov).flip(-1).contiguous();      // [R, K] descending
  const at::Tensor sigma2 = model.sigma2().to(at::kDouble);
  const at::Tensor endmembers = model.has_exact_elbo() ? model.endmembers().detach().to(at::kDouble) : at::Tensor();
  const double K = static_cast<double>(model.options().K);
  const double prior_var = 1.0 / (K * (K * model.options().alpha0 + 1.0));  // per simplex direction

  std::vector<Evaluation> out(static_cast<std::size_t>(model.replicas()));
  for (std::int64_t r = 0; r < model.replicas(); ++r) {
    Evaluation& ev = out[static_cast<std::size_t>(r)];
    ev.kl = o.kl[r].item<double>();
    ev.nll = o.nll[r].item<double>();
    ev.elbo = -(ev.nll + betas[static_cast<std::size_t>(r)] * ev.kl);
    ev.recon_mse = mse[r].item<double>();
    ev.sigma2 = sigma2[r].item<double>();
    ev.means = means[r].clone();
    if (endmembers.defined()) ev.endmembers = endmembers[r].clone();
    const at::Tensor spectrum = eig[r];
    ev.latent_spectrum.assign(spectrum.data_ptr<double>(), spectrum.data_ptr<double>() + spectrum.numel());
    ev.active_dims = std::count_if(ev.latent_spectrum.begin(), ev.latent_spectrum.end(),
                                   [&](double v) { return v > active_tol * prior_var; });
  }
  return out;
}

UnmixingScore score_unmixing(const at::Tensor& est_endmembers, const at::Tensor& est_abundances,
                             const at::Tensor& true_endmembers, const at::Tensor& true_abundances) {
  const std::int64_t K = true_endmembers.size(0);
  if (est_endmembers.size(0) != K || K > 8)
    throw std::invalid_argument("score_unmixing: needs as many estimated as true endmembers, at most 8");
  const at::Tensor a = est_endmembers / est_endmembers.norm(2, 1, true);
  const at::Tensor b = true_endmembers / true_endmembers.norm(2, 1, true);
  const at::Tensor angle = at::arccos(b.matmul(a.t()).clamp(-1, 1));  // [true, est]
  const auto acc = angle.accessor<double, 2>();

  std::vector<std::int64_t> perm(K), best;
  std::iota(perm.begin(), perm.end(), 0);
  double best_sad = INFINITY;
  do {
    double s = 0;
    for (std::int64_t k = 0; k < K; ++k) s += acc[k][perm[k]];
    if (s < best_sad) best_sad = s, best = perm;
  } while (std::next_permutation(perm.begin(), perm.end()));

  UnmixingScore score;
  score.sad = best_sad / static_cast<double>(K);
  score.match = best;
  const at::Tensor index = at::tensor(std::vector<std::int64_t>(best.begin(), best.end()), at::kLong);
  score.abundance_rmse = (est_abundances.index_select(1, index) - true_abundances).pow(2).mean().sqrt().item<double>();
  return score;
}

}  // namespace dirichlet_vae
