#pragma once
// The multilayer perceptron every rule of approx_pc works on, its Jacobians, backprop's gradient and
// the local weight update shared by PC, DFC and Approx PC.
//
// Notation (Whittington & Bogacz 2017, "An approximation of the error backpropagation algorithm in a
// predictive coding network with local Hebbian synaptic plasticity", Neural Computation 29(5)):
//   layers l = 0..L, sizes n_0..n_L; x_0 the input (clamped), x_L the output (C = n_L classes);
//   prediction   mu_l = W_l phi_{l-1}(x_{l-1}) + b_l,   W_l: [n_l, n_{l-1}]                  (eq. 1)
//   phi_0 = identity (the input enters unchanged), phi_l = f for l >= 1, f(a) = tanh(gain a) or a;
//   the output is linear in f(x_{L-1}), so the feedforward pass x_l^- = mu_l(x_{l-1}^-) ends in yhat.
// Loss: squared error on one-hot targets, 1/2 ||yhat - y||^2 per sample.
// Per-sample Jacobians of the output with respect to each layer's state (DFC's J, Meulemans et al. 2021):
//   J_L = I,  J_l = dv_L/dv_l = J_{l+1} W_{l+1} diag(f'(v_l)),  shape [B, C, n_l].
// Tensors are batch-major: a state is [B, n_l].
//
// Cost is counted in layer passes: one layer's matrix product over the batch (B n_{l-1} n_l
// multiply-adds) is 1, and any other product attributed to layer l counts its multiply-adds over that.
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace approx_pc {

enum class Activation { Linear, Tanh };

// Layer passes spent, as defined above.
struct Cost {
  double passes = 0;
  // `macs_per_sample` multiply-adds per sample attributed to a layer with n_in inputs and n_out outputs.
  void add(double macs_per_sample, std::int64_t n_in, std::int64_t n_out) {
    passes += macs_per_sample / (static_cast<double>(n_in) * static_cast<double>(n_out));
  }
};

// Parameters of one step of a rule: dW[l], db[l] for l = 1..L (index 0 unused), in the descent
// direction (a rule's update is added to the weights with a positive learning rate).
struct Updates {
  std::vector<at::Tensor> dW, db;
  at::Tensor flat() const;  // every dW then every db, as one vector
};

double cosine(const at::Tensor& a, const at::Tensor& b);
double cosine(const Updates& a, const Updates& b);
// ||a - b|| / ||b|| over all parameters.
double relative_error(const Updates& a, const Updates& b);

class Mlp {
 public:
  // sizes n_0..n_L (at least two); weights W_l ~ N(0, scale^2 / n_{l-1}), b_l = 0, drawn in double from
  // the generator's normal() in a fixed order, then cast to `dtype`.
  template <class Rng>
  static Mlp init(const std::vector<std::int64_t>& sizes, Activation act, double gain, double scale, Rng& rng,
                  at::ScalarType dtype);
  Mlp() = default;
  Mlp(std::vector<at::Tensor> W, std::vector<at::Tensor> b, Activation act, double gain);

  int depth() const { return static_cast<int>(W.size()) - 1; }  // L
  std::int64_t size(int l) const { return l == 0 ? W[1].size(1) : W[l].size(0); }
  at::ScalarType dtype() const { return W[1].scalar_type(); }

  at::Tensor phi(const at::Tensor& x, int l) const;   // phi_l(x_l)
  at::Tensor dphi(const at::Tensor& x, int l) const;  // phi_l'(x_l), elementwise
  // mu_l = W_l phi_{l-1}(x_prev) + b_l; counts one layer pass.
  at::Tensor predict(int l, const at::Tensor& x_prev, Cost* cost = nullptr) const;
  // The feedforward states x_0^-..x_L^- (x_0 = input).
  std::vector<at::Tensor> forward(const at::Tensor& input, Cost* cost = nullptr) const;
  // J_1..J_L at the states `v` (index 0 undefined). J_{L-1} = W_L diag(f') needs no product; each
  // further layer is C backward passes (one per output), so C (L - 2) layer passes in all.
  std::vector<at::Tensor> jacobians(const std::vector<at::Tensor>& v, Cost* cost = nullptr) const;

  // dW_l = sum_b e_l phi_{l-1}(x_{l-1})^T, db_l = sum_b e_l: the local (Hebbian) update of PC and DFC,
  // from the errors e_1..e_L at the states x (W&B 2017 eq. 10; DFC's plasticity rule in matching form).
  Updates local_update(const std::vector<at::Tensor>& x, const std::vector<at::Tensor>& e, Cost* cost = nullptr) const;
  // Minus the gradient of sum_b 1/2 ||yhat - target||^2 at the feedforward states (backprop).
  Updates backprop(const std::vector<at::Tensor>& ff, const at::Tensor& target, Cost* cost = nullptr) const;

  void apply(const Updates& u, double lr);  // W_l += lr dW_l, b_l += lr db_l

  std::vector<at::Tensor> W, b;  // index 0 unused
  Activation activation = Activation::Tanh;
  double gain = 1.0;
};

template <class Rng>
Mlp Mlp::init(const std::vector<std::int64_t>& sizes, Activation act, double gain, double scale, Rng& rng,
              at::ScalarType dtype) {
  std::vector<at::Tensor> W(sizes.size()), b(sizes.size());
  for (std::size_t l = 1; l < sizes.size(); ++l) {
    at::Tensor w = at::empty({sizes[l], sizes[l - 1]}, at::kDouble);
    double* p = w.data_ptr<double>();
    const double sd = scale / std::sqrt(static_cast<double>(sizes[l - 1]));
    for (std::int64_t i = 0; i < w.numel(); ++i) p[i] = sd * rng.normal();
    W[l] = w.to(dtype);
    b[l] = at::zeros({sizes[l]}, at::TensorOptions().dtype(dtype));
  }
  return Mlp(std::move(W), std::move(b), act, gain);
}

}  // namespace approx_pc
