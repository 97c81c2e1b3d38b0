#include "selectors.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "gfv.hpp"

namespace fisher_select {

const std::vector<std::pair<std::string, Selector>>& selector_names() {
  static const std::vector<std::pair<std::string, Selector>> names = {
      {"gfv", Selector::Gfv},         {"gfv_nowhiten", Selector::GfvNoWhiten}, {"gfv_nogate", Selector::GfvNoGate},
      {"gated_topk", Selector::GatedTopk}, {"uniform", Selector::Uniform},     {"loss", Selector::Loss},
      {"gradnorm", Selector::GradNorm}, {"entropy", Selector::Entropy},        {"margin", Selector::Margin},
      {"rholoss", Selector::RhoLoss},   {"badge", Selector::Badge},            {"greats", Selector::Greats}};
  return names;
}

const std::string& selector_name(Selector s) {
  for (const auto& [name, value] : selector_names())
    if (value == s) return name;
  static const std::string unknown = "?";
  return unknown;
}

bool uses_fisher(Selector s) { return s == Selector::Gfv || s == Selector::GfvNoGate || s == Selector::GatedTopk; }
bool uses_reference(Selector s) {
  return s == Selector::Gfv || s == Selector::GfvNoWhiten || s == Selector::GatedTopk || s == Selector::Greats;
}
bool needs_irreducible_loss(Selector s) { return s == Selector::RhoLoss; }

std::vector<std::int64_t> top_k(const at::Tensor& scores, std::int64_t k) {
  const at::Tensor idx = std::get<1>(scores.topk(k)).contiguous();
  return {idx.data_ptr<std::int64_t>(), idx.data_ptr<std::int64_t>() + k};
}

at::Tensor cross_entropy(const at::Tensor& probs, const at::Tensor& labels) {
  return -probs.gather(1, labels.unsqueeze(1)).squeeze(1).clamp_min(1e-12).log();
}

std::vector<std::int64_t> kmeans_pp(const at::Tensor& x, std::int64_t k, nexp::Random& rng) {
  const std::int64_t n = x.size(0);
  std::vector<std::int64_t> picked = {x.norm(2, {1}).argmax().item<std::int64_t>()};
  at::Tensor d2 = (x - x[picked[0]]).pow(2).sum(1);
  while (static_cast<std::int64_t>(picked.size()) < k) {
    const at::Tensor cdf = d2.cumsum(0).contiguous();
    const double total = cdf[n - 1].item<double>();
    std::int64_t j = 0;
    if (total > 0) {
      const double u = rng.uniform() * total;
      const double* c = cdf.data_ptr<double>();
      j = std::upper_bound(c, c + n, u) - c;
      j = std::min(j, n - 1);
    }
    if (std::find(picked.begin(), picked.end(), j) != picked.end() || d2[j].item<double>() <= 0) {
      // every remaining row coincides with a centre: fill with the first rows not yet taken
      for (j = 0; std::find(picked.begin(), picked.end(), j) != picked.end(); ++j) {
      }
    }
    picked.push_back(j);
    d2 = at::minimum(d2, (x - x[j]).pow(2).sum(1));
  }
  return picked;
}

std::vector<std::int64_t> greats_greedy(const at::Tensor& g, const at::Tensor& g_val, std::int64_t k, double eta) {
  // Reduction of the validation loss by the step -eta sum_S g_j, to second order with H = I:
  // R(S) = eta <g_val, sum_S g> - eta^2 / 2 |sum_S g|^2, so R(S + i) - R(S) is the gain below.
  const at::Tensor first = eta * g.matmul(g_val) - 0.5 * eta * eta * g.pow(2).sum(1);
  at::Tensor sum = at::zeros({g.size(1)}, g.options());
  at::Tensor taken = at::zeros({g.size(0)}, at::kBool);
  std::vector<std::int64_t> picked;
  for (std::int64_t t = 0; t < k; ++t) {
    const at::Tensor gains =
        (first - eta * eta * g.matmul(sum)).masked_fill(taken, -std::numeric_limits<double>::infinity());
    const std::int64_t j = gains.argmax().item<std::int64_t>();
    picked.push_back(j);
    taken[j] = true;
    sum = sum + g[j];
  }
  return picked;
}

at::Tensor candidate_gradients(const Pool& pool, const at::Tensor& labels) {
  return per_candidate(projected_gradients(pool.q, pool.probs, labels), pool.owner, pool.n);
}

namespace {

Selection gated(Selector s, const Pool& pool, const at::Tensor& fisher, std::int64_t k, const SelectorSettings& settings) {
  const at::Tensor g = candidate_gradients(pool, pool.labels);
  const bool white = s != Selector::GfvNoWhiten;
  const at::Tensor z = white ? whiten(g, fisher) : g;
  Selection out;
  if (s == Selector::GfvNoGate) {
    out.gate = at::ones({g.size(0)}, g.options());
  } else {
    const at::Tensor zbar = white ? whiten(pool.reference.unsqueeze(0), fisher).squeeze(0) : pool.reference;
    out.gate = descent_gate(alignment(z, zbar), settings.tau);
  }
  out.picked = s == Selector::GatedTopk ? top_k(gated_scores(z, out.gate), k) : greedy_volume(z, out.gate, k).picked;
  return out;
}

}  // namespace

Selection select(Selector s, const Pool& pool, const at::Tensor& fisher, std::int64_t k, const SelectorSettings& settings,
                 nexp::Random& rng) {
  const std::int64_t n = pool.n;
  const at::Tensor& p = pool.probs;
  const auto sum = [&](const at::Tensor& per_token) { return per_candidate(per_token, pool.owner, n); };
  const auto mean = [&](const at::Tensor& per_token) { return sum(per_token) / sum(at::ones_like(per_token)); };
  switch (s) {
    case Selector::Gfv:
    case Selector::GfvNoWhiten:
    case Selector::GfvNoGate:
    case Selector::GatedTopk:
      return gated(s, pool, fisher, k, settings);
    case Selector::Uniform: {
      std::vector<std::int64_t> idx(n);
      std::iota(idx.begin(), idx.end(), 0);
      for (std::int64_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + rng.below(n - i)]);  // partial Fisher-Yates
      idx.resize(k);
      return {idx, {}};
    }
    case Selector::Loss:
      return {top_k(sum(cross_entropy(p, pool.labels)), k), {}};
    case Selector::GradNorm:
      return {top_k(sum(last_layer_gradients(p, pool.labels, pool.h)).norm(2, {1}), k), {}};
    case Selector::Entropy:
      return {top_k(mean(-(p * p.clamp_min(1e-12).log()).sum(1)), k), {}};
    case Selector::Margin: {
      const at::Tensor top2 = std::get<0>(p.topk(2, 1));
      return {top_k(mean(top2.select(1, 1) - top2.select(1, 0)), k), {}};
    }
    case Selector::RhoLoss:
      return {top_k(sum(cross_entropy(p, pool.labels)) - pool.irreducible_loss, k), {}};
    case Selector::Badge:
      return {kmeans_pp(candidate_gradients(pool, p.argmax(1)), k, rng), {}};
    case Selector::Greats:
      return {greats_greedy(candidate_gradients(pool, pool.labels), pool.reference, k, settings.eta), {}};
  }
  return {};
}

}  // namespace fisher_select
