// The edgewise criterion (Weihs, Robeva, Robinson et al. 2018, as implemented in SEMID's edgewiseID).
// For a node i with unsolved parents U, a source a is allowed when a != i, a is not a sibling of i,
// no unsolved parent of a is half-trek reachable from i, and (SEMID's pruning) a reaches some u in U.
// Its support s(a) = (htr(a) + tr(unsolved parents of a)) n U is where its equation involves unknown
// edges into i. A set W of U is identified when the sources A_W = {a : s(a) in W} have a half-trek
// system onto W: the equations of a system's sources, with the known edges subtracted, then determine
// lambda_{W, i}.
//
// Closure (our reading of a criterion equivalent to the edgewise one, see criteria.hpp): the rows
// M[a, U] of the half-trek matrix vanish outside s(a), so rowspan M[A_W, U] contains the coordinate
// space of every identified W' in W; identified sets are closed under union and the largest is the
// greatest fixed point of W -> {w in W : e_w in rowspan M[A_W, W]}, found from W = U downwards.
#include <algorithm>
#include <stdexcept>

#include "criteria.hpp"
#include "edgewise.hpp"
#include "flow.hpp"
#include "half_trek_matrix.hpp"

namespace htc {

namespace {

// SEMID's order of subset sizes: |U|, |U|-1, ..., |U|-k+1, then 1, ..., k (each once); k = 0: all.
std::vector<int> subset_sizes(int u, int k) {
  std::vector<int> sizes;
  const int top = k <= 0 ? 1 : std::max(u - k + 1, 1);
  for (int s = u; s >= top; --s) sizes.push_back(s);
  if (k > 0)
    for (int s = 1; s <= std::min(u, k); ++s)
      if (std::find(sizes.begin(), sizes.end(), s) == sizes.end()) sizes.push_back(s);
  return sizes;
}

// Next k-combination of {0..m-1} in lexicographic order; false after the last.
bool next_combination(std::vector<int>& c, int m) {
  const int k = static_cast<int>(c.size());
  int i = k - 1;
  while (i >= 0 && c[i] == m - k + i) --i;
  if (i < 0) return false;
  ++c[i];
  for (int j = i + 1; j < k; ++j) c[j] = c[j - 1] + 1;
  return true;
}

// Rounds over the nodes until one identifies nothing. try_node(i, u, allowed, support, round) looks for
// identifiable edges into node i (unsolved parents u, with allowed sources) and records them through
// state.solve(); it returns whether it found any.
template <class TryNode>
void rounds(const MixedGraph& g, EdgewiseState& state, Identification& id, TryNode try_node) {
  std::vector<int> allowed;
  std::vector<std::vector<char>> support;
  for (bool changed = true; changed;) {
    changed = false;
    const int round = id.rounds + 1;
    for (int i = 0; i < g.num_nodes(); ++i) {
      const std::vector<int> u = state.unsolved(i);
      if (u.empty()) continue;
      state.sources(i, allowed, support);
      if (allowed.empty()) continue;
      changed = try_node(i, u, allowed, support, round) || changed;
    }
    if (changed) id.rounds = round;
  }
  id.solved_parents = state.solved_parents();
}

}  // namespace

Identification edgewise_classic(const MixedGraph& g, int max_subset_size) {
  const int n = g.num_nodes();
  Identification id;
  id.criterion = "edgewise";
  id.algorithm = "classic";
  id.n = n;
  EdgewiseState state(g);
  FlowNetwork net;
  std::vector<char> mask(n, 0);
  rounds(g, state, id, [&](int i, const std::vector<int>& u, const std::vector<int>& allowed,
                           const std::vector<std::vector<char>>& support, int round) {
    if (max_subset_size <= 0 && u.size() > 24)
      throw std::invalid_argument("the full edgewise subset search at node " + std::to_string(i + 1) + " would visit 2^" +
                                  std::to_string(u.size()) +
                                  " subsets; bound max_subset_size or use the closure (algorithm: randomized)");
    for (int k : subset_sizes(static_cast<int>(u.size()), max_subset_size)) {
      std::vector<int> comb(k);
      for (int j = 0; j < k; ++j) comb[j] = j;
      do {
        std::vector<char> in(u.size(), 0);
        for (int j : comb) in[j] = 1;
        std::vector<int> usable;
        for (std::size_t a = 0; a < allowed.size(); ++a)
          if (within(support[a], in)) usable.push_back(allowed[a]);
        if (usable.empty()) continue;
        for (int a : usable) mask[a] = 1;
        std::vector<int> targets;
        for (int j : comb) targets.push_back(u[j]);
        HalfTrekSystem system = max_half_trek_system(g, mask, targets, net);
        for (int a : usable) mask[a] = 0;
        if (system.size == k) {
          id.steps.push_back(state.solve(i, std::move(targets), std::move(system.sources), round));
          return true;
        }
      } while (next_combination(comb, static_cast<int>(u.size())));
    }
    return false;
  });
  return id;
}

Identification edgewise_closure(const MixedGraph& g, const RandomizedOptions& options) {
  const int n = g.num_nodes();
  const PrimeField f(options.prime);
  std::mt19937_64 rng(options.seed);
  Identification best;
  for (int t = 0; t < std::max(options.trials, 1); ++t) {
    Identification id;
    id.criterion = "edgewise";
    id.algorithm = "randomized";
    id.n = n;
    HalfTrekMatrix m(g, f, rng);
    std::vector<std::vector<u64>> rows(n);  // M[a, .], computed on first use
    EdgewiseState state(g);
    EchelonBasis basis;
    std::vector<u64> x;
    rounds(g, state, id, [&](int i, const std::vector<int>& u, const std::vector<int>& allowed,
                             const std::vector<std::vector<char>>& support, int round) {
      std::vector<char> in(u.size(), 1);  // W as a mask over positions in U, from W = U down
      std::vector<int> w;                 // positions in W
      for (;;) {
        w.clear();
        for (std::size_t p = 0; p < u.size(); ++p)
          if (in[p]) w.push_back(static_cast<int>(p));
        if (w.empty()) return false;
        basis.reset(static_cast<int>(w.size()));
        for (std::size_t a = 0; a < allowed.size() && !basis.full(); ++a) {
          if (!within(support[a], in)) continue;
          if (rows[allowed[a]].empty()) m.row(allowed[a], rows[allowed[a]]);
          x.resize(w.size());
          for (std::size_t q = 0; q < w.size(); ++q) x[q] = rows[allowed[a]][u[w[q]]];
          basis.insert(x.data(), allowed[a], f);
        }
        if (basis.full()) break;  // rank |W|: certified
        std::vector<char> keep(u.size(), 0);
        for (int q : basis.covered_columns(f)) keep[w[q]] = 1;
        in.swap(keep);
      }
      std::vector<int> targets;
      for (int q : w) targets.push_back(u[q]);
      id.steps.push_back(state.solve(i, std::move(targets), basis.tags(), round));
      return true;
    });
    if (t == 0 || id.solved_edges() > best.solved_edges()) best = std::move(id);
  }
  best.error_bound = randomized_error_bound(g, options.prime, options.trials);
  return best;
}

}  // namespace htc
