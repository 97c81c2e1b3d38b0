#include "gfv.hpp"

#include <nexp/random.hpp>

#include <cmath>
#include <limits>

namespace fisher_select {

namespace {
const auto kF64 = at::TensorOptions().dtype(at::kDouble);
}

at::Tensor with_bias(const at::Tensor& h) { return at::cat({h, at::ones({h.size(0), 1}, h.options())}, 1); }

at::Tensor last_layer_gradients(const at::Tensor& probs, const at::Tensor& labels, const at::Tensor& h) {
  const at::Tensor residual = probs - at::one_hot(labels, probs.size(1)).to(probs.scalar_type());
  const at::Tensor ht = with_bias(h);
  return (residual.unsqueeze(2) * ht.unsqueeze(1)).reshape({probs.size(0), -1});
}

at::Tensor gaussian_projection(std::int64_t classes, std::int64_t features, std::int64_t dim, std::uint64_t seed) {
  const std::int64_t width = classes * (features + 1);
  if (dim == 0) return at::eye(width, kF64);
  at::Tensor p = at::empty({width, dim}, kF64);
  double* data = p.data_ptr<double>();
  nexp::Random rng(seed);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  for (std::int64_t i = 0; i < width * dim; ++i) data[i] = scale * rng.normal();
  return p;
}

at::Tensor class_embeddings(const at::Tensor& h, const at::Tensor& projection, std::int64_t classes) {
  const at::Tensor ht = with_bias(h);
  const at::Tensor p = projection.reshape({classes, ht.size(1), projection.size(1)});  // [C, H+1, D]
  return at::einsum("nj,cjd->ncd", {ht, p});
}

at::Tensor projected_gradients(const at::Tensor& q, const at::Tensor& probs, const at::Tensor& labels) {
  const at::Tensor residual = probs - at::one_hot(labels, probs.size(1)).to(probs.scalar_type());
  return at::einsum("nc,ncd->nd", {residual, q});
}

at::Tensor model_fisher(const at::Tensor& q, const at::Tensor& probs) {
  // sum_y p_y (u - Q_y)(u - Q_y)^T with u = Q^T p equals Q^T (diag p - p p^T) Q.
  const at::Tensor u = at::einsum("nc,ncd->nd", {probs, q}).unsqueeze(1);
  const at::Tensor r = (q - u) * probs.sqrt().unsqueeze(2);  // [n, C, D]
  const at::Tensor flat = r.reshape({-1, q.size(2)});
  return flat.t().matmul(flat) / static_cast<double>(q.size(0));
}

void FisherEma::update(const at::Tensor& batch_fisher) {
  fisher_ = fisher_.defined() ? (1 - rho_) * fisher_ + rho_ * batch_fisher : batch_fisher.clone();
}

at::Tensor FisherEma::regularised() const {
  return fisher_ + lambda_ * at::eye(fisher_.size(0), fisher_.options());
}

at::Tensor whiten(const at::Tensor& g, const at::Tensor& f) {
  const at::Tensor l = at::linalg_cholesky(f);
  return at::linalg_solve_triangular(l, g.t(), /*upper=*/false).t();
}

at::Tensor alignment(const at::Tensor& z, const at::Tensor& zbar) {
  const double eps = 1e-12;
  return z.matmul(zbar) / (z.norm(2, {1}) * zbar.norm() + eps);
}

at::Tensor descent_gate(const at::Tensor& a, double tau) { return at::sigmoid(tau * a); }

at::Tensor gated_scores(const at::Tensor& z, const at::Tensor& w) { return at::log1p(w * z.pow(2).sum(1)); }

double gated_fisher_volume(const at::Tensor& z, const at::Tensor& w, const std::vector<std::int64_t>& subset) {
  at::Tensor m = at::eye(z.size(1), z.options());
  for (std::int64_t i : subset) m = m + w[i] * at::outer(z[i], z[i]);
  return std::get<1>(at::linalg_slogdet(m)).item<double>();
}

Greedy greedy_volume(const at::Tensor& z, const at::Tensor& w, std::int64_t k) {
  const std::int64_t n = z.size(0), d = z.size(1);
  at::Tensor residual = z.pow(2).sum(1);  // z_i^T M^-1 z_i, M = I at the start
  at::Tensor e = at::zeros({k, d}, z.options());  // M^-1 = I - sum_t e_t e_t^T
  at::Tensor taken = at::zeros({n}, at::kBool);
  Greedy out;
  for (std::int64_t t = 0; t < k; ++t) {
    at::Tensor gains = at::log1p(w * residual.clamp_min(0)).masked_fill(taken, -std::numeric_limits<double>::infinity());
    const std::int64_t j = gains.argmax().item<std::int64_t>();
    out.picked.push_back(j);
    out.gains.push_back(gains[j].item<double>());
    taken[j] = true;
    const at::Tensor v = w[j].sqrt() * z[j];
    const at::Tensor et = e.narrow(0, 0, t);
    const at::Tensor minv_v = v - et.t().matmul(et.matmul(v));
    const at::Tensor next = minv_v / (1 + v.dot(minv_v)).sqrt();
    e[t] = next;
    residual = residual - z.matmul(next).pow(2);
  }
  return out;
}

double effective_rank(const at::Tensor& x) {
  const at::Tensor s = at::linalg_svdvals(x);
  const double total = s.sum().item<double>();
  if (!(total > 0)) return 0;
  const at::Tensor p = s / total;
  const at::Tensor terms = at::where(p > 0, p * p.log(), at::zeros_like(p));
  return std::exp(-terms.sum().item<double>());
}

}  // namespace fisher_select
