// Tian's decomposition as SEMID applies it (htcID(..., tianDecompose = TRUE)): strongly connected
// components joined by bidirected edges form c-components; each is decided on its own graph, made of
// its nodes plus their outside parents (which there have no parents and no siblings, so they start
// solved). An edge into a node is identified in the whole graph iff it is in its c-component's graph.
#include <algorithm>
#include <numeric>

#include "criteria.hpp"

namespace htc {

Identification tian_decompose(const MixedGraph& g, const CriterionFn& criterion) {
  const int n = g.num_nodes();
  const auto blocks = g.strong_components();  // topological order
  std::vector<int> block_of(n);
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (int v : blocks[b]) block_of[v] = static_cast<int>(b);
  std::vector<int> root(blocks.size());
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](int b) {
    while (root[b] != b) b = root[b] = root[root[b]];
    return b;
  };
  for (const auto& e : g.bidirected()) root[find(block_of[e.from])] = find(block_of[e.to]);

  Identification out;
  out.n = n;
  out.solved_parents.assign(n, {});
  std::vector<int> position(n, -1);
  for (std::size_t c = 0; c < blocks.size(); ++c) {
    if (find(static_cast<int>(c)) != static_cast<int>(c)) continue;
    // Internal nodes, then their outside parents, all in topological order of the blocks.
    std::vector<char> internal(n, 0), member(n, 0);
    std::vector<int> nodes;
    for (std::size_t b = 0; b < blocks.size(); ++b)
      if (find(static_cast<int>(b)) == static_cast<int>(c))
        for (int v : blocks[b]) internal[v] = member[v] = 1;
    for (int v = 0; v < n; ++v)
      if (internal[v])
        for (int p : g.parents(v)) member[p] = 1;
    for (const auto& block : blocks)
      for (int v : block)
        if (member[v]) nodes.push_back(v);
    for (std::size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = static_cast<int>(i);
    std::vector<Edge> d, b;
    for (int v : nodes)
      if (internal[v]) {
        for (int p : g.parents(v)) d.push_back({position[p], position[v]});
        for (int s : g.siblings(v))
          if (s > v) b.push_back({position[v], position[s]});
      }
    const MixedGraph sub(static_cast<int>(nodes.size()), std::move(d), std::move(b));
    const Identification part = criterion(sub);
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (internal[nodes[i]]) {
        auto& solved = out.solved_parents[nodes[i]];
        for (int p : part.solved_parents[i]) solved.push_back(nodes[p]);
        std::sort(solved.begin(), solved.end());
      }
    out.criterion = part.criterion;
    out.algorithm = part.algorithm + "+tian";
    out.rounds = std::max(out.rounds, part.rounds);
    out.memory_bytes = std::max(out.memory_bytes, part.memory_bytes);
    out.error_bound = std::min(1.0, out.error_bound + part.error_bound);
  }
  return out;
}

}  // namespace htc
