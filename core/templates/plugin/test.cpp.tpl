// @SLUG@'s own tests: the mathematics against something independent.
#include <gtest/gtest.h>

#include "@SLUG@.hpp"

// Gradient descent on a well-conditioned least-squares problem converges to the closed-form solution
// w = (X^T X)^{-1} X^T y.
TEST(@SLUG@, GradientDescentReachesTheNormalEquations) {
  at::manual_seed(1);
  at::Tensor x = at::randn({100, 3}, at::kDouble), y = at::randn({100}, at::kDouble);
  at::Tensor w = at::zeros({3}, at::kDouble);
  for (int i = 0; i < 500; ++i) w = @SLUG@::gradient_step(x, y, w, 0.1);
  at::Tensor exact = at::linalg_solve(x.t().matmul(x), x.t().matmul(y));
  EXPECT_LT((w - exact).abs().max().item<double>(), 1e-9);
}
