#pragma once
// The Dirichlet distribution as the latent law of a beta-VAE, and the closed-form collapse threshold.
//
// Notation (README, "Derivation"): z on the simplex Delta^{K-1}, prior p(z) = Dir(alpha0 1_K), encoder
// q(z|x) = Dir(alpha(x)) with A = sum_k alpha_k, decoder p(x|z) = N(mu(z), sigma^2 I_d), objective
// E_q log p(x|z) - beta KL(q || p). psi is digamma, psi1 = polygamma(1, .) is trigamma.
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace dirichlet_vae {

// ---- The distribution

// KL(Dir(alpha) || Dir(alpha0 1_K)) for each row of alpha [N, K]; returns [N]:
//   lnG(A) - sum_k lnG(alpha_k) - lnG(K alpha0) + K lnG(alpha0) + sum_k (alpha_k - alpha0)(psi(alpha_k) - psi(A)).
at::Tensor kl_to_symmetric(const at::Tensor& alpha, double alpha0);

// log Dir(z; alpha) for z, alpha [..., K] (broadcasting); returns [...].
at::Tensor log_density(const at::Tensor& alpha, const at::Tensor& z);

// `samples` reparameterised draws from Dir(alpha), alpha [..., K] -> [samples, ..., K]: Gamma(alpha_k, 1)
// variates from at::_standard_gamma (whose backward is the implicit reparameterisation gradient,
// Figurnov et al. 2018) normalised to sum one. Differentiable with respect to alpha.
at::Tensor rsample(const at::Tensor& alpha, std::int64_t samples, const at::Generator& gen);

// Mean m = alpha / A and covariance (diag(m) - m m^T) / (A + 1) of Dir(alpha) for one alpha [K].
at::Tensor dirichlet_mean(const at::Tensor& alpha);
at::Tensor dirichlet_covariance(const at::Tensor& alpha);

// ---- The threshold (README, eq. T1-T3)

// psi1(x) = d^2/dx^2 ln Gamma(x) for x > 0, to double precision.
double trigamma(double x);

// kappa(alpha0, K) = (K alpha0 + 1) / (K alpha0^2 psi1(alpha0)), the trigamma curvature factor; it
// decreases from 1 (alpha0 -> infinity) to 1/K (alpha0 -> 0).
double curvature_factor(double alpha0, std::int64_t K);

// beta_c = (lambda_max / sigma^2) kappa(alpha0, K): the collapsed point is a local maximum of the ELBO
// for beta > beta_c and a saddle for beta < beta_c.
double critical_beta(double lambda_max, double sigma2, double alpha0, std::int64_t K);

// Simplex directions the local analysis predicts active at beta = ratio * beta_c: data directions i
// with lambda_i > ratio * lambda_max, at most K - 1 (the simplex has K - 1 directions).
// spectrum: eigenvalues of the data covariance, any order.
std::int64_t predicted_active(const std::vector<double>& spectrum, double ratio, std::int64_t K);

}  // namespace dirichlet_vae
