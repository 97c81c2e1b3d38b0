// The MLP of approx_pc: forward pass, Jacobians, backprop, the local update (network.hpp).
#include "network.hpp"

#include <cmath>
#include <utility>

namespace approx_pc {

at::Tensor Updates::flat() const {
  std::vector<at::Tensor> parts;
  for (std::size_t l = 1; l < dW.size(); ++l) parts.push_back(dW[l].reshape({-1}));
  for (std::size_t l = 1; l < db.size(); ++l) parts.push_back(db[l].reshape({-1}));
  return at::cat(parts).to(at::kDouble);
}

double cosine(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.reshape({-1}).to(at::kDouble), y = b.reshape({-1}).to(at::kDouble);
  const double den = x.norm().item<double>() * y.norm().item<double>();
  return den > 0 ? x.dot(y).item<double>() / den : NAN;
}

double cosine(const Updates& a, const Updates& b) { return cosine(a.flat(), b.flat()); }

double relative_error(const Updates& a, const Updates& b) {
  const at::Tensor x = a.flat(), y = b.flat();
  return (x - y).norm().item<double>() / y.norm().item<double>();
}

Mlp::Mlp(std::vector<at::Tensor> W_, std::vector<at::Tensor> b_, Activation act, double g)
    : W(std::move(W_)), b(std::move(b_)), activation(act), gain(g) {}

at::Tensor Mlp::phi(const at::Tensor& x, int l) const {
  if (l == 0 || activation == Activation::Linear) return x;
  return at::tanh(gain * x);
}

at::Tensor Mlp::dphi(const at::Tensor& x, int l) const {
  if (l == 0 || activation == Activation::Linear) return at::ones_like(x);
  const at::Tensor t = at::tanh(gain * x);
  return gain * (1 - t * t);
}

at::Tensor Mlp::predict(int l, const at::Tensor& x_prev, Cost* cost) const {
  if (cost) cost->add(static_cast<double>(size(l - 1) * size(l)), size(l - 1), size(l));
  return at::addmm(b[l], phi(x_prev, l - 1), W[l].t());
}

std::vector<at::Tensor> Mlp::forward(const at::Tensor& input, Cost* cost) const {
  std::vector<at::Tensor> x(W.size());
  x[0] = input;
  for (int l = 1; l <= depth(); ++l) x[l] = predict(l, x[l - 1], cost);
  return x;
}

std::vector<at::Tensor> Mlp::jacobians(const std::vector<at::Tensor>& v, Cost* cost) const {
  const int L = depth();
  const std::int64_t B = v[L].size(0), C = size(L);
  std::vector<at::Tensor> J(W.size());
  J[L] = at::eye(C, v[L].options()).expand({B, C, C});
  if (L >= 2) J[L - 1] = W[L].unsqueeze(0) * dphi(v[L - 1], L - 1).unsqueeze(1);  // [B, C, n_{L-1}]
  for (int l = L - 2; l >= 1; --l) {
    // J_l = J_{l+1} W_{l+1} diag(f'(v_l)): C backward passes through layer l + 1.
    if (cost) cost->add(static_cast<double>(C * size(l + 1) * size(l)), size(l), size(l + 1));
    J[l] = at::matmul(J[l + 1], W[l + 1]) * dphi(v[l], l).unsqueeze(1);
  }
  return J;
}

Updates Mlp::local_update(const std::vector<at::Tensor>& x, const std::vector<at::Tensor>& e, Cost* cost) const {
  Updates u;
  u.dW.resize(W.size());
  u.db.resize(W.size());
  for (int l = 1; l <= depth(); ++l) {
    if (cost) cost->add(static_cast<double>(size(l - 1) * size(l)), size(l - 1), size(l));
    u.dW[l] = at::matmul(e[l].t(), phi(x[l - 1], l - 1));
    u.db[l] = e[l].sum(0);
  }
  return u;
}

Updates Mlp::backprop(const std::vector<at::Tensor>& ff, const at::Tensor& target, Cost* cost) const {
  // delta_L = target - yhat; delta_l = f'(x_l) . W_{l+1}^T delta_{l+1}: minus the gradient at each layer.
  std::vector<at::Tensor> delta(W.size());
  const int L = depth();
  delta[L] = target - ff[L];
  for (int l = L - 1; l >= 1; --l) {
    if (cost) cost->add(static_cast<double>(size(l) * size(l + 1)), size(l), size(l + 1));
    delta[l] = at::matmul(delta[l + 1], W[l + 1]) * dphi(ff[l], l);
  }
  return local_update(ff, delta, cost);
}

void Mlp::apply(const Updates& u, double lr) {
  for (int l = 1; l <= depth(); ++l) {
    W[l].add_(u.dW[l], lr);
    b[l].add_(u.db[l], lr);
  }
}

}  // namespace approx_pc
