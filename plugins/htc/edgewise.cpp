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
#include "flow.hpp"
#include "half_trek_matrix.hpp"

namespace htc {

namespace {

// Shared state of both algorithms: reachability tables and the solved / unsolved parents.
class EdgewiseState {
 public:
  explicit EdgewiseState(const MixedGraph& g) : g_(g), n_(g.num_nodes()), htr_(n_), tr_(n_), unsolved_(n_), solved_(n_) {
    Reach reach(g);
    for (int v = 0; v < n_; ++v) {
      reach.htr_from(v, htr_[v]);
      reach.tr_from(v, tr_[v]);
      unsolved_[v] = g.parents(v);
    }
  }

  const std::vector<int>& unsolved(int i) const { return unsolved_[i]; }

  // Allowed sources of node i and, for each, its support as a 0/1 mask over positions in unsolved(i).
  void sources(int i, std::vector<int>& allowed, std::vector<std::vector<char>>& support) const {
    const auto& u = unsolved_[i];
    allowed.clear();
    support.clear();
    for (int j = 0; j < n_; ++j) {
      if (j == i || g_.is_sibling(i, j)) continue;
      bool reaches = false;
      for (int p : u) reaches = reaches || htr_[j][p];
      bool blocked = false;
      for (int p : unsolved_[j]) blocked = blocked || htr_[i][p];
      if (!reaches || blocked) continue;
      std::vector<char> s(u.size(), 0);
      for (std::size_t k = 0; k < u.size(); ++k) {
        s[k] = htr_[j][u[k]];
        for (int p : unsolved_[j]) s[k] = s[k] || tr_[p][u[k]];
      }
      allowed.push_back(j);
      support.push_back(std::move(s));
    }
  }

  // Records that `targets` (a subset of unsolved(i)) are identified from `sources`; `usable` lists every
  // source allowed for these targets (the others become the step's extra equations).
  IdStep solve(int i, std::vector<int> targets, std::vector<int> sources, const std::vector<int>& usable, int round) {
    std::sort(targets.begin(), targets.end());
    std::sort(sources.begin(), sources.end());
    IdStep step;
    step.node = i;
    step.round = round;
    step.known = solved_[i];
    for (int a : sources) step.removed.push_back(solved_[a]);
    for (int a : usable)
      if (!std::binary_search(sources.begin(), sources.end(), a)) {
        step.extra.push_back(a);
        step.extra_removed.push_back(solved_[a]);
      }
    for (int t : targets) {
      solved_[i].push_back(t);
      unsolved_[i].erase(std::find(unsolved_[i].begin(), unsolved_[i].end(), t));
    }
    std::sort(solved_[i].begin(), solved_[i].end());
    step.targets = std::move(targets);
    step.sources = std::move(sources);
    return step;
  }

  std::vector<std::vector<int>> solved_parents() const { return solved_; }

 private:
  const MixedGraph& g_;
  int n_;
  std::vector<std::vector<char>> htr_, tr_;
  std::vector<std::vector<int>> unsolved_, solved_;
};

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

}  // namespace

Identification edgewise_classic(const MixedGraph& g, int max_subset_size) {
  const int n = g.num_nodes();
  Identification id;
  id.criterion = "edgewise";
  id.algorithm = "classic";
  id.n = n;
  EdgewiseState state(g);
  FlowNetwork net;
  std::vector<int> allowed;
  std::vector<std::vector<char>> support;
  std::vector<char> mask(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    const int round = id.rounds + 1;
    for (int i = 0; i < n; ++i) {
      const std::vector<int> u = state.unsolved(i);
      if (u.empty()) continue;
      if (max_subset_size <= 0 && u.size() > 24)
        throw std::invalid_argument("the full edgewise subset search at node " + std::to_string(i + 1) + " would visit 2^" +
                                    std::to_string(u.size()) +
                                    " subsets; bound max_subset_size or use the closure (algorithm: randomized)");
      state.sources(i, allowed, support);
      if (allowed.empty()) continue;
      bool found = false;
      for (int k : subset_sizes(static_cast<int>(u.size()), max_subset_size)) {
        std::vector<int> comb(k);
        for (int j = 0; j < k; ++j) comb[j] = j;
        do {
          std::vector<char> in(u.size(), 0);
          for (int j : comb) in[j] = 1;
          bool any = false;
          for (std::size_t a = 0; a < allowed.size(); ++a) {
            bool inside = true;
            for (std::size_t p = 0; p < u.size() && inside; ++p) inside = !support[a][p] || in[p];
            mask[allowed[a]] = inside;
            any = any || inside;
          }
          if (any) {
            std::vector<int> targets;
            for (int j : comb) targets.push_back(u[j]);
            HalfTrekSystem system = max_half_trek_system(g, mask, targets, net);
            if (system.size == k) {
              std::vector<int> usable;
              for (int a : allowed)
                if (mask[a]) usable.push_back(a);
              id.steps.push_back(state.solve(i, std::move(targets), std::move(system.sources), usable, round));
              found = true;
            }
          }
          for (int a : allowed) mask[a] = 0;
        } while (!found && next_combination(comb, static_cast<int>(u.size())));
        if (found) break;
      }
      changed = changed || found;
    }
    if (changed) id.rounds = round;
  }
  id.solved_parents = state.solved_parents();
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
    std::vector<int> allowed;
    std::vector<std::vector<char>> support;
    std::vector<u64> x;
    for (bool changed = true; changed;) {
      changed = false;
      const int round = id.rounds + 1;
      for (int i = 0; i < n; ++i) {
        const std::vector<int> u = state.unsolved(i);
        if (u.empty()) continue;
        state.sources(i, allowed, support);
        if (allowed.empty()) continue;
        std::vector<char> in(u.size(), 1);  // W as a mask over positions in U
        std::vector<int> w;                 // positions in W
        for (;;) {
          w.clear();
          for (std::size_t p = 0; p < u.size(); ++p)
            if (in[p]) w.push_back(static_cast<int>(p));
          if (w.empty()) break;
          basis.reset(static_cast<int>(w.size()));
          for (std::size_t a = 0; a < allowed.size() && !basis.full(); ++a) {
            bool inside = true;
            for (std::size_t p = 0; p < u.size() && inside; ++p) inside = !support[a][p] || in[p];
            if (!inside) continue;
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
        if (w.empty()) continue;
        std::vector<int> targets, usable;
        for (int q : w) targets.push_back(u[q]);
        for (std::size_t a = 0; a < allowed.size(); ++a) {
          bool inside = true;
          for (std::size_t p = 0; p < u.size() && inside; ++p) inside = !support[a][p] || in[p];
          if (inside) usable.push_back(allowed[a]);
        }
        id.steps.push_back(state.solve(i, std::move(targets), basis.tags(), usable, round));
        changed = true;
      }
      if (changed) id.rounds = round;
    }
    id.solved_parents = state.solved_parents();
    if (t == 0 || id.solved_edges() > best.solved_edges()) best = std::move(id);
  }
  best.error_bound = randomized_error_bound(g, options.prime, options.trials);
  return best;
}

}  // namespace htc
