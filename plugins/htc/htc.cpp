// The half-trek criterion (Foygel, Draisma and Drton 2012, Theorem 1): node v is solved when some Y
// with |Y| = |pa(v)|, Y disjoint from {v} and sib(v), each y in Y either solved or not half-trek
// reachable from v, has a system of half-treks with no sided intersection to pa(v). The graph is
// HTC-identifiable when every node is solved.
#include <algorithm>
#include <cmath>

#include "criteria.hpp"
#include "flow.hpp"
#include "half_trek_matrix.hpp"

namespace htc {

int Identification::solved_nodes(const MixedGraph& g) const {
  int count = 0;
  for (int v = 0; v < g.num_nodes(); ++v) count += node_solved(g, v);
  return count;
}

int Identification::solved_edges() const {
  int count = 0;
  for (const auto& p : solved_parents) count += static_cast<int>(p.size());
  return count;
}

double randomized_error_bound(const MixedGraph& g, u64 prime, int trials) {
  const double n = g.num_nodes();
  const double one = std::min(1.0, (n + n * g.num_directed()) / static_cast<double>(prime));
  return std::pow(one, std::max(trials, 1));
}

namespace {

// The HTC step that solved v: sources in htr(v) enter with their own (already identified) edges
// removed, i.e. as rows of (I - Lambda)^T Sigma; the others as plain rows of Sigma.
IdStep htc_step(const MixedGraph& g, Reach& reach, int v, int round, std::vector<int> sources) {
  std::vector<char> htr;
  reach.htr_from(v, htr);
  std::sort(sources.begin(), sources.end());
  IdStep step;
  step.node = v;
  step.round = round;
  step.targets = g.parents(v);
  for (int y : sources) step.removed.push_back(htr[y] ? g.parents(y) : std::vector<int>{});
  step.sources = std::move(sources);
  return step;
}

void finish(const MixedGraph& g, const std::vector<char>& solved, Identification& id) {
  id.solved_parents.assign(g.num_nodes(), {});
  for (int v = 0; v < g.num_nodes(); ++v)
    if (solved[v]) id.solved_parents[v] = g.parents(v);
}

// The nodes that could ever be solved: the fixed point of the necessary condition |A_v| >= |pa(v)|
// when every node passing it is assumed solved. It spares the algebra for nodes no half-trek system
// can serve (in most dense cyclic graphs: all of them, and with them the dense inverses of the
// strongly connected components). O(n (n + |D| + |B|)).
std::vector<char> solvable_by_count(const MixedGraph& g, Reach& reach) {
  const int n = g.num_nodes();
  std::vector<int> count(n, 0), queue;
  std::vector<char> candidate(n, 0), mask;
  auto admit = [&](int v) {
    candidate[v] = 1;
    queue.push_back(v);
  };
  for (int v = 0; v < n; ++v) {
    reach.htr_from(v, mask);
    for (int y = 0; y < n; ++y) count[v] += !mask[y];
    if (count[v] >= static_cast<int>(g.parents(v).size())) admit(v);
  }
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const int s = queue[i];
    reach.htr_to(s, mask);
    for (int v = 0; v < n; ++v)
      if (mask[v] && v != s && !candidate[v] && !g.is_sibling(v, s) &&
          ++count[v] >= static_cast<int>(g.parents(v).size()))
        admit(v);
  }
  return candidate;
}

Identification htc_randomized_once(const MixedGraph& g, const PrimeField& f, std::mt19937_64& rng) {
  const int n = g.num_nodes();
  Reach reach(g);
  Identification id;
  id.criterion = "htc";
  id.algorithm = "randomized";
  id.n = n;
  const std::vector<char> candidate = solvable_by_count(g, reach);
  bool work = false;
  for (int v = 0; v < n && !work; ++v) work = candidate[v] && !g.parents(v).empty();
  if (!work) {
    id.solved_parents.assign(n, {});
    return id;
  }
  HalfTrekMatrix m(g, f, rng);

  // solved: identified in an earlier wave; complete: the basis of M[A_v, pa(v)] reached rank |pa(v)|.
  std::vector<char> solved(n, 0), complete(n, 0), reach_mask;
  std::vector<EchelonBasis> basis(n);
  std::vector<int> frontier, next;
  for (int v = 0; v < n; ++v) {
    basis[v].reset(static_cast<int>(g.parents(v).size()));
    if (g.parents(v).empty()) {
      solved[v] = 1;
      frontier.push_back(v);
    }
  }
  std::vector<u64> row, x;
  auto open = [&](int v) { return candidate[v] && !solved[v] && !complete[v]; };
  auto offer = [&](int v, int y) {
    const auto& pa = g.parents(v);
    x.resize(pa.size());
    for (std::size_t k = 0; k < pa.size(); ++k) x[k] = row[pa[k]];
    if (basis[v].insert(x.data(), y, f) && basis[v].full()) {
      complete[v] = 1;
      next.push_back(v);
    }
  };

  // Every y outside htr(v) is allowed for v from the start (FDD's Y \ htr(v) part); each row of M is
  // computed once for these and once more when y is solved.
  for (int y = 0; y < n; ++y) {
    reach.htr_to(y, reach_mask);
    bool needed = false;
    for (int v = 0; v < n && !needed; ++v) needed = !reach_mask[v] && open(v);
    if (!needed) continue;
    m.row(y, row);
    for (int v = 0; v < n; ++v)
      if (!reach_mask[v] && open(v)) offer(v, y);
  }
  // Waves: a solved node s becomes allowed for the v with s in htr(v) that are not its siblings.
  int round = 0;
  std::size_t peak = 0;
  for (;;) {
    for (int s : frontier) {
      reach.htr_to(s, reach_mask);
      bool needed = false;
      for (int v = 0; v < n && !needed; ++v) needed = reach_mask[v] && v != s && open(v) && !g.is_sibling(v, s);
      if (!needed) continue;
      m.row(s, row);
      for (int v = 0; v < n; ++v)
        if (reach_mask[v] && v != s && open(v) && !g.is_sibling(v, s)) offer(v, s);
    }
    if (next.empty()) break;
    ++round;
    std::sort(next.begin(), next.end());
    std::size_t held = 0;  // the bases' memory peaks here, before the solved nodes release theirs
    for (const auto& b : basis) held += b.bytes();
    peak = std::max(peak, held);
    for (int v : next) id.steps.push_back(htc_step(g, reach, v, round, basis[v].tags()));
    for (int v : next) {
      solved[v] = 1;
      basis[v] = EchelonBasis();
    }
    frontier.swap(next);
    next.clear();
  }
  id.rounds = round;
  std::size_t held = 0;
  for (const auto& b : basis) held += b.bytes();
  id.memory_bytes = m.bytes() + std::max(peak, held) + (row.capacity() + x.capacity() + 2 * n) * sizeof(u64) +
                    n * sizeof(EchelonBasis);
  finish(g, solved, id);
  return id;
}

}  // namespace

Identification htc_classic(const MixedGraph& g) {
  const int n = g.num_nodes();
  Identification id;
  id.criterion = "htc";
  id.algorithm = "classic";
  id.n = n;
  std::vector<char> solved(n, 0), htr, allowed(n, 0);
  for (int v = 0; v < n; ++v) solved[v] = g.parents(v).empty();
  Reach reach(g);
  FlowNetwork net;
  for (bool changed = true; changed;) {
    changed = false;
    const int round = id.rounds + 1;
    for (int v = 0; v < n; ++v) {
      if (solved[v]) continue;
      const auto& pa = g.parents(v);
      reach.htr_from(v, htr);
      int count = 0;
      for (int y = 0; y < n; ++y) {
        allowed[y] = y != v && (!htr[y] || (solved[y] && !g.is_sibling(v, y)));
        count += allowed[y];
      }
      if (count < static_cast<int>(pa.size())) continue;
      HalfTrekSystem system = max_half_trek_system(g, allowed, pa, net);
      id.memory_bytes = std::max(id.memory_bytes, net.bytes() + (htr.capacity() + allowed.capacity()));
      if (system.size != static_cast<int>(pa.size())) continue;
      id.steps.push_back(htc_step(g, reach, v, round, std::move(system.sources)));
      solved[v] = 1;
      changed = true;
    }
    if (changed) id.rounds = round;
  }
  finish(g, solved, id);
  return id;
}

Identification htc_randomized(const MixedGraph& g, const RandomizedOptions& options) {
  const PrimeField f(options.prime);
  std::mt19937_64 rng(options.seed);
  Identification best;
  for (int t = 0; t < std::max(options.trials, 1); ++t) {
    Identification id = htc_randomized_once(g, f, rng);
    if (t == 0 || id.solved_edges() > best.solved_edges()) best = std::move(id);
  }
  best.error_bound = randomized_error_bound(g, options.prime, options.trials);
  return best;
}

}  // namespace htc
