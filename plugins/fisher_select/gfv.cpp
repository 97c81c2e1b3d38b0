#include "gfv.hpp"

#include <nexp/random.hpp>

#include <cmath>
#include <algorithm>
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
  const std::int64_t j = ht.size(1), d = projection.size(1);
  // [C(H+1), D] -> [H+1, C D], so that one matrix product gives every Q_i[c]
  const at::Tensor p = projection.reshape({classes, j, d}).permute({1, 0, 2}).reshape({j, classes * d});
  return ht.matmul(p).reshape({h.size(0), classes, d});
}

at::Tensor projected_gradients(const at::Tensor& q, const at::Tensor& probs, const at::Tensor& labels) {
  const at::Tensor residual = probs - at::one_hot(labels, probs.size(1)).to(probs.scalar_type());
  return at::bmm(residual.unsqueeze(1), q).squeeze(1);
}

at::Tensor per_candidate(const at::Tensor& x, const at::Tensor& owner, std::int64_t n) {
  std::vector<std::int64_t> shape = x.sizes().vec();
  shape[0] = n;
  return at::zeros(shape, x.options()).index_add_(0, owner, x);
}

at::Tensor model_fisher(const at::Tensor& q, const at::Tensor& probs) {
  // sum_y p_y (u - Q_y)(u - Q_y)^T with u = Q^T p equals Q^T (diag p - p p^T) Q.
  const at::Tensor u = at::bmm(probs.unsqueeze(1), q);  // [n, 1, D]
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
  // Plain loops: k n D multiply-adds in all, too small for tensor calls to pay their overhead.
  const at::Tensor zc = z.to(at::kDouble).contiguous(), wc = w.to(at::kDouble).contiguous();
  const std::int64_t n = z.size(0), d = z.size(1);
  const double* zp = zc.data_ptr<double>();
  const double* wp = wc.data_ptr<double>();
  std::vector<double> residual(n, 0.0), e(static_cast<std::size_t>(k * d), 0.0), v(d), minv_v(d);
  for (std::int64_t i = 0; i < n; ++i)  // z_i^T M^-1 z_i with M = I
    for (std::int64_t c = 0; c < d; ++c) residual[i] += zp[i * d + c] * zp[i * d + c];
  std::vector<bool> taken(n, false);
  Greedy out;
  for (std::int64_t t = 0; t < k; ++t) {
    std::int64_t j = -1;
    double best = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < n; ++i) {
      const double gain = std::log1p(wp[i] * std::max(residual[i], 0.0));
      if (!taken[i] && gain > best) best = gain, j = i;
    }
    out.picked.push_back(j);
    out.gains.push_back(best);
    taken[j] = true;
    // e_t = M^-1 v / sqrt(1 + v^T M^-1 v), v = sqrt(w_j) z_j, M^-1 = I - sum_{s<t} e_s e_s^T
    const double sw = std::sqrt(std::max(wp[j], 0.0));
    for (std::int64_t c = 0; c < d; ++c) v[c] = sw * zp[j * d + c];
    minv_v = v;
    for (std::int64_t s = 0; s < t; ++s) {
      double dot = 0;
      for (std::int64_t c = 0; c < d; ++c) dot += e[s * d + c] * v[c];
      for (std::int64_t c = 0; c < d; ++c) minv_v[c] -= dot * e[s * d + c];
    }
    double quad = 0;
    for (std::int64_t c = 0; c < d; ++c) quad += v[c] * minv_v[c];
    const double scale = 1 / std::sqrt(1 + quad);
    for (std::int64_t c = 0; c < d; ++c) e[t * d + c] = scale * minv_v[c];
    for (std::int64_t i = 0; i < n; ++i) {
      double dot = 0;
      for (std::int64_t c = 0; c < d; ++c) dot += zp[i * d + c] * e[t * d + c];
      residual[i] -= dot * dot;
    }
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
