#include "graph.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nexp/error.hpp>

#include "problems.hpp"

namespace dsminimax {

std::vector<std::vector<double>> Mixing::dense() const {
  std::vector<std::vector<double>> w(static_cast<size_t>(nodes), std::vector<double>(static_cast<size_t>(nodes), 0.0));
  for (int k = 0; k < nodes; ++k) {
    w[k][k] = self[k];
    for (size_t i = 0; i < neighbours[k].size(); ++i) w[k][neighbours[k][i]] = weights[k][i];
  }
  return w;
}

double second_eigenvalue_modulus(const std::vector<std::vector<double>>& w) {
  const auto n = static_cast<Eigen::Index>(w.size());
  if (n < 2) return 0.0;
  Matrix m(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) m(i, j) = w[i][j];
  const Vector ev = symmetric_eigenvalues(m);  // ascending; ev(n-1) = 1
  return std::max(std::abs(ev(n - 2)), std::abs(ev(0)));
}

bool connected(const std::vector<std::vector<int>>& neighbours) {
  const size_t n = neighbours.size();
  std::vector<char> seen(n, 0);
  std::vector<int> stack = {0};
  seen[0] = 1;
  size_t count = 1;
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    for (int j : neighbours[k])
      if (!seen[j]) seen[j] = 1, ++count, stack.push_back(j);
  }
  return count == n;
}

namespace {

Mixing metropolis(std::vector<std::vector<int>> neighbours, bool uniform_third) {
  Mixing m;
  m.nodes = static_cast<int>(neighbours.size());
  for (auto& list : neighbours) std::sort(list.begin(), list.end());
  m.neighbours = std::move(neighbours);
  m.weights.resize(m.neighbours.size());
  m.self.resize(m.neighbours.size());
  for (size_t k = 0; k < m.neighbours.size(); ++k) {
    double sum = 0;
    for (int j : m.neighbours[k]) {
      const double wkj = uniform_third
                             ? 1.0 / 3.0
                             : 1.0 / (1.0 + static_cast<double>(std::max(m.neighbours[k].size(), m.neighbours[j].size())));
      m.weights[k].push_back(wkj);
      sum += wkj;
    }
    m.self[k] = 1.0 - sum;
  }
  m.lambda = second_eigenvalue_modulus(m.dense());
  return m;
}

}  // namespace

Mixing ring_mixing(int nodes) {
  if (nodes == 2 || nodes < 1)
    throw nexp::ConfigError(fmt::format(
        "dataset.nodes = {}: a ring needs 1 node or at least 3 (two nodes would be each other's both neighbours); "
        "use nodes: 1 or nodes >= 3",
        nodes));
  std::vector<std::vector<int>> nb(static_cast<size_t>(nodes));
  if (nodes >= 3)
    for (int k = 0; k < nodes; ++k) nb[k] = {(k + nodes - 1) % nodes, (k + 1) % nodes};
  return metropolis(std::move(nb), true);
}

Mixing erdos_renyi_mixing(int nodes, double p, nexp::Random& rng) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::vector<std::vector<int>> nb(static_cast<size_t>(nodes));
    for (int i = 0; i < nodes; ++i)
      for (int j = i + 1; j < nodes; ++j)
        if (rng.bernoulli(p)) nb[i].push_back(j), nb[j].push_back(i);
    if (connected(nb)) return metropolis(std::move(nb), false);
  }
  throw nexp::ConfigError(fmt::format(
      "dataset.edge_probability = {} with dataset.nodes = {}: no connected Erdos-Renyi graph in 1000 draws "
      "(a disconnected network cannot reach consensus); raise edge_probability (about 2 ln(M)/M or more)",
      p, nodes));
}

}  // namespace dsminimax
