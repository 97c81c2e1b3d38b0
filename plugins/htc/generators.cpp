#include "generators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace htc {

const std::vector<std::string>& family_names() {
  static const std::vector<std::string> names = {"dag_sparse", "dag_dense", "dag_boundary", "cyclic_sparse",
                                                 "cyclic_dense"};
  return names;
}

GraphSpec family_spec(const std::string& family, int n) {
  const double m = std::max(n, 1);
  if (family == "dag_sparse") return {true, std::min(1.0, 3 / m), std::min(1.0, 3 / m)};
  if (family == "dag_dense") return {true, 0.45, 0.35};
  if (family == "dag_boundary") return {true, 0.55, 0.40};
  if (family == "cyclic_sparse") return {false, std::min(1.0, 2 / m), std::min(1.0, 2 / m)};
  if (family == "cyclic_dense") return {false, 0.15, 0.20};
  throw std::invalid_argument(fmt::format("unknown graph family '{}'", family));
}

namespace {

// Calls take(k) for each k in [0, count) kept independently with probability p, visiting only the
// kept ones: the gap to the next kept index is geometric.
template <class Take>
void bernoulli_indices(long long count, double p, std::mt19937_64& rng, Take take) {
  if (p <= 0 || count <= 0) return;
  if (p >= 1) {
    for (long long k = 0; k < count; ++k) take(k);
    return;
  }
  const double log_q = std::log1p(-p);
  for (long long k = -1;;) {
    const double u = 1.0 - uniform01(rng);  // (0, 1]
    const double gap = std::floor(std::log(u) / log_q);
    if (static_cast<double>(k) + 1 + gap >= static_cast<double>(count)) return;
    k += 1 + static_cast<long long>(gap);
    take(k);
  }
}

// The unordered pair (a, b), a < b, with index k in the row-major order of the upper triangle.
std::pair<int, int> pair_at(long long k, int n) {
  // Row a holds n - 1 - a pairs; rows before a hold a n - a (a + 1) / 2.
  long long a = static_cast<long long>((2.0 * n - 1 - std::sqrt((2.0 * n - 1) * (2.0 * n - 1) - 8.0 * k)) / 2);
  auto start = [n](long long r) { return r * n - r * (r + 1) / 2; };
  while (a > 0 && start(a) > k) --a;
  while (start(a + 1) <= k) ++a;
  return {static_cast<int>(a), static_cast<int>(a + 1 + (k - start(a)))};
}

}  // namespace

MixedGraph random_mixed_graph(int n, const GraphSpec& spec, std::mt19937_64& rng) {
  std::vector<int> label(n);
  std::iota(label.begin(), label.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(label[i], label[static_cast<int>(rng() % static_cast<unsigned>(i + 1))]);
  const long long pairs = static_cast<long long>(n) * (n - 1) / 2;
  std::vector<Edge> d, b;
  if (spec.acyclic) {
    // Position a precedes position b: the edge label[a] -> label[b] respects the order.
    bernoulli_indices(pairs, spec.p_directed, rng, [&](long long k) {
      auto [a, c] = pair_at(k, n);
      d.push_back({label[a], label[c]});
    });
  } else {
    bernoulli_indices(static_cast<long long>(n) * (n - 1), spec.p_directed, rng, [&](long long k) {
      const int a = static_cast<int>(k / (n - 1));
      int c = static_cast<int>(k % (n - 1));
      if (c >= a) ++c;
      d.push_back({label[a], label[c]});
    });
  }
  bernoulli_indices(pairs, spec.p_bidirected, rng, [&](long long k) {
    auto [a, c] = pair_at(k, n);
    b.push_back({label[a], label[c]});
  });
  return MixedGraph(n, std::move(d), std::move(b));
}

}  // namespace htc
