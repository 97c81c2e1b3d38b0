#pragma once
// Gaussian mixtures with anisotropic components, and their denoisers in closed form.
//
// p_0 = sum_k w_k N(mu_k, S_k), S_k = U_k diag(lambda_k) U_k^T. Noised, p_sigma = sum_k w_k N(mu_k, S_k + sigma^2 I),
// and the exact (minimum-MSE) denoiser is the posterior mean (Tweedie):
//   D(x; sigma) = sum_k r_k(x) [mu_k + S_k (S_k + sigma^2 I)^-1 (x - mu_k)],
//   r_k(x) = w_k N(x; mu_k, S_k + sigma^2 I) / sum_j w_j N(x; mu_j, S_j + sigma^2 I),
// evaluated in each component's eigenbasis (O(d^2) per component and sample).
//
// exact_biased, a controlled stand-in for a trained network's error at size e = denoiser_error:
//  - wrong mode weights: w'_k proportional to w_k exp(e g_k), g_k ~ N(0, 1);
//  - a smooth bias field in the network's own coordinates (EDM preconditioning: D = c_skip x + c_out F(c_in x)),
//      D'(x; sigma) = D_{w'}(x; sigma) + e c_out(sigma) sin(Omega c_in(sigma) x + phi),
//    c_out = sigma s / sqrt(sigma^2 + s^2), c_in = 1 / sqrt(sigma^2 + s^2), s the data's standard deviation,
//    Omega ~ N(0, 4) (d x d), phi ~ U(0, 2 pi): an O(e) error of F, vanishing as sigma -> 0 like a
//    preconditioned network's.
#include <nexp/random.hpp>

#include <memory>
#include <string>
#include <vector>

#include "sampler.hpp"

namespace fds {

struct Component {
  Eigen::VectorXd mean;
  Eigen::MatrixXd basis;    // U: columns are the eigenvectors
  Eigen::VectorXd lambda;   // eigenvalues of the covariance
  double weight = 1.0;
};

struct Mixture {
  std::vector<Component> components;
  int dim() const { return static_cast<int>(components.front().mean.size()); }
  double data_sd() const;  // sqrt(trace Cov / d) of the mixture
  Mat sample(std::size_t n, nexp::Random& rng) const;
  // The component whose Mahalanobis distance to x is smallest, and that distance.
  std::pair<int, double> nearest_mode(const Eigen::VectorXd& x) const;
};

struct MixtureSpec {
  std::string kind = "ring8";  // ring8 | grid25 | gmm
  int dim = 2;                 // gmm only; ring8 and grid25 are 2-D
  int components = 8;          // gmm only
  double scale = 2.0;          // ring8: radius; grid25: half-width; gmm: sd of the means
  double sd = 0.08;            // geometric mean of a component's standard deviations
  double anisotropy = 3.0;     // ratio of a component's largest to smallest standard deviation
};
Mixture make_mixture(const MixtureSpec& s, nexp::Random& rng);

class MixtureDenoiser : public Denoiser {
 public:
  explicit MixtureDenoiser(Mixture m) : m_(std::move(m)) {}
  void denoise(const Mat& x, double sigma, Mat& out) const override;
  const Mixture& mixture() const { return m_; }

 private:
  Mixture m_;
};

class BiasedMixtureDenoiser : public Denoiser {
 public:
  BiasedMixtureDenoiser(const Mixture& m, double error, nexp::Random& rng);
  void denoise(const Mat& x, double sigma, Mat& out) const override;

 private:
  MixtureDenoiser exact_;  // with the perturbed weights
  double error_, sd_;
  Eigen::MatrixXd omega_;
  Eigen::VectorXd phi_;
};

}  // namespace fds
