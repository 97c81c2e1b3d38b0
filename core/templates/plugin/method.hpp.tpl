#pragma once
// @SLUG@: least squares by gradient descent, the starting point of a new nexp plugin.
// Replace it with your method; keep the shape: math in functions that tests can call, the nexp glue
// (parameters, metrics, checkpoints) in run_fit().
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>

namespace @SLUG@ {

// Synthetic regression data: y = X w* + noise, X ~ N(0, 1).
struct LinearData : nexp::Dataset {
  at::Tensor x, y, w_true;  // [n, d], [n], [d]
  std::string describe() const override;
};
std::shared_ptr<nexp::Dataset> make_linear(const nexp::Params& p, nexp::RunContext& ctx);

// One full-batch gradient step on the mean squared error (1/n) ||X w - y||^2.
at::Tensor gradient_step(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w, double lr);
double mse(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w);

void run_fit(nexp::RunContext& ctx);

}  // namespace @SLUG@
