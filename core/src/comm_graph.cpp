// The communication graphs of nexp/comm.hpp (no LibTorch: the collectives live in torch/comm.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "nexp/comm.hpp"
#include "nexp/error.hpp"
#include "nexp/random.hpp"

namespace nexp {

Comm::~Comm() = default;

Graph Graph::ring(int n) {
  if (n < 1) throw Error(fmt::format("a ring needs at least one node, got {}", n));
  Graph g;
  g.neighbours.resize(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    std::set<int> s{(k + n - 1) % n, (k + 1) % n};
    s.erase(k);
    g.neighbours[static_cast<size_t>(k)].assign(s.begin(), s.end());
  }
  return g;
}

Graph Graph::torus(int rows, int cols) {
  if (rows < 1 || cols < 1) throw Error(fmt::format("a torus needs rows, cols >= 1, got {} x {}", rows, cols));
  Graph g;
  g.neighbours.resize(static_cast<size_t>(rows * cols));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int k = r * cols + c;
      std::set<int> s{((r + rows - 1) % rows) * cols + c, ((r + 1) % rows) * cols + c, r * cols + (c + cols - 1) % cols,
                      r * cols + (c + 1) % cols};
      s.erase(k);
      g.neighbours[static_cast<size_t>(k)].assign(s.begin(), s.end());
    }
  return g;
}

namespace {

// One attempt of the configuration model: pair up n * d half-edges at random; fails on a self-loop
// or a repeated edge.
bool try_regular(int n, int d, Random& rng, std::vector<std::set<int>>& adj) {
  std::vector<int> stubs;
  for (int k = 0; k < n; ++k) stubs.insert(stubs.end(), static_cast<size_t>(d), k);
  for (size_t i = stubs.size(); i > 1; --i) std::swap(stubs[i - 1], stubs[static_cast<size_t>(rng.below(i))]);
  adj.assign(static_cast<size_t>(n), {});
  for (size_t i = 0; i < stubs.size(); i += 2) {
    const int a = stubs[i], b = stubs[i + 1];
    if (a == b || adj[static_cast<size_t>(a)].count(b)) return false;
    adj[static_cast<size_t>(a)].insert(b);
    adj[static_cast<size_t>(b)].insert(a);
  }
  return true;
}

}  // namespace

Graph Graph::random_regular(int n, int d, std::uint64_t seed) {
  if (n < 1 || d < 0 || d >= n || (n * d) % 2 != 0)
    throw Error(fmt::format("no {}-regular graph on {} nodes (need 0 <= d < n and n * d even)", d, n));
  Random rng = Random::stream(seed, "random_regular_graph");
  std::vector<std::set<int>> adj;
  for (int attempt = 0; attempt < 10000; ++attempt)
    if (try_regular(n, d, rng, adj)) {
      Graph g;
      for (const auto& s : adj) g.neighbours.emplace_back(s.begin(), s.end());
      return g;
    }
  throw Error(fmt::format("could not draw a simple {}-regular graph on {} nodes in 10000 attempts", d, n));
}

Graph Graph::adjacency(std::vector<std::vector<int>> neighbours) {
  const int n = static_cast<int>(neighbours.size());
  for (int k = 0; k < n; ++k) {
    auto& list = neighbours[static_cast<size_t>(k)];
    std::sort(list.begin(), list.end());
    for (size_t i = 0; i < list.size(); ++i) {
      const int j = list[i];
      if (j < 0 || j >= n || j == k || (i > 0 && list[i - 1] == j))
        throw Error(fmt::format("graph: node {} lists neighbour {} (out of range, itself or repeated)", k, j));
    }
  }
  for (int k = 0; k < n; ++k)
    for (int j : neighbours[static_cast<size_t>(k)]) {
      const auto& back = neighbours[static_cast<size_t>(j)];
      if (!std::binary_search(back.begin(), back.end(), k))
        throw Error(fmt::format("graph: {} lists {} as a neighbour but {} does not list {}", k, j, j, k));
    }
  return Graph{std::move(neighbours)};
}

std::vector<std::vector<double>> Graph::metropolis_weights() const {
  const size_t n = neighbours.size();
  std::vector<std::vector<double>> w(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) {
    for (int j : neighbours[i])
      w[i][static_cast<size_t>(j)] = 1.0 / (1.0 + std::max(degree(static_cast<int>(i)), degree(j)));
    w[i][i] = 1.0 - std::accumulate(w[i].begin(), w[i].end(), 0.0);
  }
  return w;
}

}  // namespace nexp
