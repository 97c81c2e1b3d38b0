#pragma once
// Denoisers trained in the run: a small MLP in Eigen with hand-written backprop and Adam, in the two
// parameterisations that stand in for the paper's two model families.
//
//  - mlp_edm (the EDM2 family): EDM preconditioning (Karras et al. 2022, Table 1)
//        D(x; s) = c_skip(s) x + c_out(s) F(c_in(s) x, c_noise(s)),
//        c_skip = sd^2 / (s^2 + sd^2), c_out = s sd / sqrt(s^2 + sd^2), c_in = 1 / sqrt(s^2 + sd^2),
//        c_noise = ln(s) / 4, loss weight lambda(s) = (s^2 + sd^2) / (s sd)^2 = 1 / c_out^2,
//        ln s ~ N(P_mean = -1.2, P_std = 1.2); sd = sigma_data, the training data's sd.
//    With lambda = 1 / c_out^2 the loss is || F - (y - c_skip (y + n)) / c_out ||^2 (EDM eq. 8).
//  - mlp_vp (the DiT family): epsilon-prediction on DDPM's linear-beta schedule (beta 1e-4 .. 0.02,
//    1000 steps, abar_t = prod_{s <= t} (1 - beta_s)), loss || eps_hat(sqrt(abar) y + sqrt(1 - abar) e, t)
//    - e ||^2 with t uniform, wrapped into D through sigma = sqrt((1 - abar) / abar):
//        x_vp = x / sqrt(1 + sigma^2), D(x; sigma) = x - sigma eps_hat(x_vp, t(sigma)),
//    t(sigma) found by linear interpolation of ln sigma_t between integer t (clamped to [0, 999]).
//
// The network F: input [x, emb(c)] (emb(c): c and cos / sin of c at 8 frequencies 1 .. 32; c = c_noise
// for EDM, t / 1000 for VP), `depth` hidden layers of `width` SiLU units, a linear output. Parameters live
// in one vector (Adam and the finite-difference test work on it directly).
//
// A trained denoiser is saved to and loaded from a checkpoint file (nexp/binary_file.hpp): the family,
// sigma_data, the training options and loss, a fingerprint of the training data, and the network.
#include <nexp/random.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "sampler.hpp"

namespace nexp {
class BinaryReader;
class BinaryWriter;
}  // namespace nexp

namespace fds {

class Mlp {
 public:
  Mlp() = default;
  // in, out: data dimensions; emb: 0 (no conditioning input) or kEmbedding; depth >= 1 hidden layers.
  Mlp(int in, int emb, int width, int depth, int out, nexp::Random& rng);
  static constexpr int kEmbedding = 17;

  struct Cache {  // per layer: the pre-activations and the activations (layer 0: the input)
    std::vector<Mat> pre, act;
  };
  // x: batch x in; c: batch conditioning scalars (ignored when emb = 0). Returns batch x out.
  Mat forward(const Mat& x, const Eigen::VectorXd& c, Cache* cache = nullptr) const;
  // Gradient of a loss with dL/d(output) = dout with respect to the parameters (same layout as theta).
  Eigen::VectorXd backward(const Cache& cache, const Mat& dout) const;
  // The last hidden layer's activations (the classifier's features).
  Mat features(const Mat& x) const;

  Eigen::VectorXd theta;  // all weights and biases, layer after layer (W_l column-major, then b_l)
  int inputs() const { return sizes_.empty() ? 0 : sizes_.front(); }
  int outputs() const { return sizes_.empty() ? 0 : sizes_.back(); }

  // The layer widths, the embedding size and theta; read() checks that theta fits the widths.
  void write(nexp::BinaryWriter& w) const;
  static Mlp read(nexp::BinaryReader& r);

 private:
  std::vector<int> sizes_;  // layer widths: in + emb, width x depth, out
  int emb_ = 0;
  std::vector<Eigen::Index> offset_;  // where W_l starts in theta
  Mat input(const Mat& x, const Eigen::VectorXd& c) const;
  void set_layout(std::vector<int> sizes, int emb);
};

// Adam (Kingma and Ba 2015) on a parameter vector, beta 0.9 / 0.999, eps 1e-8.
class Adam {
 public:
  explicit Adam(Eigen::Index n) : m_(Eigen::VectorXd::Zero(n)), v_(Eigen::VectorXd::Zero(n)) {}
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr);

 private:
  Eigen::VectorXd m_, v_;
  int t_ = 0;
};

// EDM Table 1 (the preconditioning of D) and the training loss weight.
struct EdmCoefficients {
  double c_skip, c_out, c_in, c_noise, weight;
};
EdmCoefficients edm_coefficients(double sigma, double sigma_data);

// DDPM's linear-beta schedule (beta_min .. beta_max over `steps` steps) as sigma_t = sqrt((1 - abar_t) / abar_t).
class VpSchedule {
 public:
  explicit VpSchedule(int steps = 1000, double beta_min = 1e-4, double beta_max = 0.02);
  int steps() const { return static_cast<int>(sigma_.size()); }
  double alpha_bar(int t) const { return 1.0 / (1.0 + sigma_[static_cast<std::size_t>(t)] * sigma_[static_cast<std::size_t>(t)]); }
  double sigma(int t) const { return sigma_[static_cast<std::size_t>(t)]; }
  // The fractional timestep whose ln sigma (interpolated linearly between integer t) is ln `sigma`; clamped.
  double timestep(double sigma) const;
  double sigma_at(double t) const;  // its inverse on [0, steps - 1]

 private:
  std::vector<double> sigma_;
};

// An epsilon-predictor eps_hat(x_vp, t) wrapped into D(x; sigma) (x_vp = x / sqrt(1 + sigma^2)).
using EpsModel = std::function<void(const Mat& x_vp, double t, Mat& eps)>;
class VpDenoiser : public Denoiser {
 public:
  VpDenoiser(EpsModel eps, VpSchedule schedule) : eps_(std::move(eps)), schedule_(std::move(schedule)) {}
  void denoise(const Mat& x, double sigma, Mat& out) const override;
  const VpSchedule& schedule() const { return schedule_; }

 private:
  EpsModel eps_;
  VpSchedule schedule_;
};

struct MlpTraining {
  int width = 256, depth = 3;
  int steps = 4000;   // a small value gives the under-trained checkpoint
  int batch = 128;
  double lr = 1e-3;   // Adam; cosine decay to lr / 10 over `steps`
};

// A hash of a data matrix (its shape and the bytes of its values): which data a denoiser was trained on.
std::uint64_t data_fingerprint(const Mat& data);

// A trained denoiser and what its training did.
class MlpDenoiser : public Denoiser {
 public:
  enum class Family { Edm, Vp };
  // Trains on `data` (one row per sample); every random number from `rng`.
  MlpDenoiser(Family family, const Mat& data, const MlpTraining& t, nexp::Random& rng);
  void denoise(const Mat& x, double sigma, Mat& out) const override;

  // The checkpoint file (format tag "fdsmlp", version 1).
  void save(const std::filesystem::path& file) const;
  // Reads what save() wrote. A DataError (exit 2) when the file is not such a checkpoint, holds the other
  // family, or was trained on other data than `data` (its fingerprint differs): loading stands in for
  // training on `data`, so it must be the same data.
  static std::unique_ptr<MlpDenoiser> load(const std::filesystem::path& file, Family family, const Mat& data);

  Family family() const { return family_; }
  double sigma_data() const { return sigma_data_; }
  double final_loss() const { return final_loss_; }  // mean training loss over the last 10% of steps
  double seconds() const { return seconds_; }       // training time (of the run that trained it)
  const MlpTraining& training() const { return training_; }
  const Mlp& net() const { return net_; }
  Mlp& net() { return net_; }

 private:
  explicit MlpDenoiser(Family family) : family_(family) {}
  Family family_;
  Mlp net_;
  VpSchedule vp_;
  MlpTraining training_;
  std::uint64_t data_fingerprint_ = 0;
  double sigma_data_ = 0.5, final_loss_ = 0, seconds_ = 0;
};

// A softmax classifier (the same Mlp, no conditioning input) trained by cross-entropy; its last hidden
// layer gives the features of the Frechet distance.
struct Classifier {
  Mlp net;
  double train_accuracy = 0, test_accuracy = 0;
};
Classifier train_classifier(const Mat& x, const std::vector<int>& labels, int classes, double test_share,
                            const MlpTraining& t, nexp::Random& rng);

}  // namespace fds
