#include "dirichlet.hpp"

#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>

namespace dirichlet_vae {

namespace {

at::Tensor kl_value(const at::Tensor& alpha, double alpha0) {
  const auto K = static_cast<double>(alpha.size(-1));
  const at::Tensor total = alpha.sum(-1);
  return at::lgamma(total) - at::lgamma(alpha).sum(-1) - std::lgamma(K * alpha0) + K * std::lgamma(alpha0) +
         ((alpha - alpha0) * (at::digamma(alpha) - at::digamma(total).unsqueeze(-1))).sum(-1);
}

// The KL with its gradient in closed form,
//   dKL/dalpha_k = (alpha_k - alpha0) psi1(alpha_k) - (A - K alpha0) psi1(A),
// instead of autograd through lgamma and digamma (which evaluates digamma twice and trigamma on both
// alpha and A anyway). The backward is itself differentiable, so Hessians work.
struct SymmetricKL : torch::autograd::Function<SymmetricKL> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& alpha, double alpha0) {
    ctx->save_for_backward({alpha});
    ctx->saved_data["alpha0"] = alpha0;
    return kl_value(alpha, alpha0);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const at::Tensor alpha = ctx->get_saved_variables()[0];
    const double alpha0 = ctx->saved_data["alpha0"].toDouble();
    const at::Tensor total = alpha.sum(-1, true);
    const double K = static_cast<double>(alpha.size(-1));
    const at::Tensor d = (alpha - alpha0) * at::polygamma(1, alpha) - (total - K * alpha0) * at::polygamma(1, total);
    return {grad[0].unsqueeze(-1) * d, at::Tensor()};
  }
};

}  // namespace

at::Tensor kl_to_symmetric(const at::Tensor& alpha, double alpha0) { return SymmetricKL::apply(alpha, alpha0); }

at::Tensor log_density(const at::Tensor& alpha, const at::Tensor& z) {
  return at::lgamma(alpha.sum(-1)) - at::lgamma(alpha).sum(-1) + ((alpha - 1) * at::log(z)).sum(-1);
}

at::Tensor rsample(const at::Tensor& alpha, std::int64_t samples, const at::Generator& gen) {
  std::vector<std::int64_t> shape{samples};
  shape.insert(shape.end(), alpha.sizes().begin(), alpha.sizes().end());
  at::Tensor g = at::_standard_gamma(alpha.unsqueeze(0).expand(shape), gen);
  // A Gamma variate of a small shape can underflow to zero; keep every coordinate strictly inside.
  const double tiny = alpha.scalar_type() == at::kFloat ? 1e-30 : 1e-300;
  g = g.clamp_min(tiny);
  return g / g.sum(-1, /*keepdim=*/true);
}

at::Tensor dirichlet_mean(const at::Tensor& alpha) { return alpha / alpha.sum(); }

at::Tensor dirichlet_covariance(const at::Tensor& alpha) {
  at::Tensor m = dirichlet_mean(alpha);
  return (at::diag(m) - at::outer(m, m)) / (alpha.sum() + 1);
}

double trigamma(double x) {
  // LibTorch's polygamma(1, x) is good to ~1e-9 relative; the threshold uses this double-precision
  // version: the recurrence psi1(x) = psi1(x + 1) + 1/x^2 up to x >= 10, then the asymptotic series
  // 1/x + 1/(2x^2) + sum_k B_2k / x^(2k+1) through B_10 (truncation error < 3e-14 there).
  double sum = 0;
  for (; x < 10; x += 1) sum += 1 / (x * x);
  const double r = 1 / x, r2 = r * r;
  return sum + r + r2 / 2 + r * r2 * (1.0 / 6 - r2 * (1.0 / 30 - r2 * (1.0 / 42 - r2 * (1.0 / 30 - r2 * 5.0 / 66))));
}

double curvature_factor(double alpha0, std::int64_t K) {
  const double k = static_cast<double>(K);
  return (k * alpha0 + 1.0) / (k * alpha0 * alpha0 * trigamma(alpha0));
}

double critical_beta(double lambda_max, double sigma2, double alpha0, std::int64_t K) {
  return lambda_max / sigma2 * curvature_factor(alpha0, K);
}

std::int64_t predicted_active(const std::vector<double>& spectrum, double ratio, std::int64_t K) {
  if (spectrum.empty()) return 0;
  const double top = *std::max_element(spectrum.begin(), spectrum.end());
  const auto above = std::count_if(spectrum.begin(), spectrum.end(), [&](double l) { return l > ratio * top; });
  return std::min<std::int64_t>(above, K - 1);
}

}  // namespace dirichlet_vae
