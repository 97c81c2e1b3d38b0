#pragma once
// The networks (LibTorch inside nets.cpp only; this header is torch-free).
//
//   equal_width  f(c) = A_L s(... s(A_1 c + a_1) ...) + a_L+1: L hidden ReLU layers of one width W on the
//                standardised coefficients (the paper's equal-width network, setting (i)).
//   bottleneck   f(c) = h(B c): a bias-free linear map B to J indices (the index layer of the functional
//                multiple-index model y = g(<beta_1, x>, ..., <beta_J, x>) + e, as <beta_j, x> = c^T G b_j
//                is linear in c), then an equal-width ReLU network h on R^J (setting (ii)).
//   funcnn       Thind, Multani and Cao (2023): K functional neurons v_k = int beta_k(t) x(t) dt with
//                beta_k in a basis of Q weight functions psi_q, Fourier (their default) or cubic
//                B-splines (v = c^T G_W B, G_W the M x Q Gram matrix int phi_m psi_q, B learned), then
//                ReLU layers.
//   raw_mlp      the equal-width network on the raw grid values.
// Sizing rule (README): equal width W = clamp(round(sqrt(n)), 16, 128), L = 3; bottleneck after the
// index layer W = clamp(round(n^(J/(J+2))), 8, 128), L = 2; a set width or depth > 0 overrides it.
// Training: Adam on the mean squared error of standardised y, minibatches, early stopping on the
// validation loss (the best epoch's weights are kept).
#include <cstdint>
#include <string>

#include "basis.hpp"

namespace nexp {
template <class T>
class Options;
}

namespace functional_reg {

enum class Architecture { EqualWidth, Bottleneck, FuncNN };
enum class WeightBasis { Fourier, BSpline };

struct NetOptions {
  std::int64_t J = 2;            // bottleneck indices
  std::int64_t width = 0;        // 0: the sizing rule
  std::int64_t depth = 0;        // 0: the sizing rule
  std::int64_t neurons = 8;      // funcnn: functional neurons K
  std::int64_t weight_functions = 7;  // funcnn: basis functions per weight function Q
  WeightBasis weight_basis = WeightBasis::Fourier;
  double lr = 1e-3;
  double weight_decay = 0;
  std::int64_t batch_size = 64;
  std::int64_t max_epochs = 300;
  std::int64_t patience = 25;
  bool linear_link = false;      // bottleneck: the identity after the index layer (a linear model)
  static void declare(nexp::Options<NetOptions>& o);  // in plugin.cpp, with the other options
};

struct NetShape {
  std::int64_t width = 0, depth = 0;
};
NetShape net_shape(Architecture a, const NetOptions& o, std::int64_t n);

struct NetFit {
  Vector validation, test;  // predictions on the original y scale
  std::int64_t parameters = 0, epochs = 0, best_epoch = 0;
  NetShape shape;
};

// Trains on x_train (standardised inside) and predicts the validation and test rows. `weight_gram`
// (funcnn only): per predictor, the M x Q matrix int phi_m psi_q; `per_predictor` = M.
NetFit fit_net(Architecture a, const NetOptions& o, const Matrix& x_train, const Vector& y_train,
               const Matrix& x_validation, const Vector& y_validation, const Matrix& x_test, std::uint64_t seed,
               const Matrix& weight_gram = Matrix(), std::int64_t per_predictor = 0);

// Largest relative difference between autograd's gradient of the squared loss (double precision)
// and central finite differences, over every parameter entry of a small network of this architecture.
double gradient_check(Architecture a, const NetOptions& o, std::int64_t inputs, std::uint64_t seed);

}  // namespace functional_reg
