#pragma once
// Generic identifiability criteria for linear SEMs on mixed graphs, and their decision algorithms.
//
//   htc_classic        the half-trek criterion of Foygel, Draisma and Drton (2012), decided as in their
//                      paper and SEMID's htcID: rounds over the unsolved nodes, one max-flow per node
//                      and round, until a round solves nothing. O(n^5) worst case. Deterministic.
//   htc_randomized     the same criterion decided by ranks of the half-trek matrix at one random point
//                      of F_p (half_trek_matrix.hpp), each node's rank maintained incrementally as its
//                      allowed set grows. O(n^3 + n sum_v |pa(v)|^2): O(n^4) in general and O(n^2)
//                      for bounded in-degree on DAGs (O(n^3) with a giant cyclic component). One-sided:
//                      a node it solves is HTC-solvable (a nonzero minor proves the half-trek system),
//                      and it misses one with probability at most error_bound (below).
//   edgewise_classic   the edgewise criterion of Weihs, Robeva, Robinson et al. (2018) as in SEMID's
//                      edgewiseID: for each node, subsets W of its unsolved parents (sizes 1..k and
//                      |U|-k+1..|U|; all sizes when k = 0), each a max-flow.
//   edgewise_closure   the edgewise criterion decided without subsets: the identifiable W of a node are
//                      closed under union, and the largest is the greatest fixed point of
//                      W -> {w in W : e_w in rowspan M[A_W, W]}, computed at a random point and
//                      certified by rank M[A_W, W] = |W|. Equivalent to edgewise_classic with k = 0.
//   htc_nonidentifiable  FDD (2012) Theorem 2: a max-flow smaller than |D| proves that the graph is
//                      generically infinite-to-one. The flow network has O(n^2) nodes.
//   tian_decompose     SEMID's Tian decomposition: run a criterion on each c-component separately.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "field.hpp"
#include "mixed_graph.hpp"

namespace htc {

// One identification step: the edges targets -> node are recovered from the equations of the
// sources Y (|Y| = |targets|), row a of Sigma minus sum_{u in removed[a]} lambda_ua Sigma[u, .],
// with the parents in `known` identified before (their terms move to the right-hand side).
struct IdStep {
  int node = 0;
  int round = 0;
  std::vector<int> targets, sources, known;
  std::vector<std::vector<int>> removed;  // one list per source
};

struct Identification {
  std::string criterion, algorithm;
  int n = 0;
  std::vector<std::vector<int>> solved_parents;  // per node, sorted: the identified edges j -> node
  std::vector<IdStep> steps;                     // in the order they were found; empty after Tian
  int rounds = 0;
  double error_bound = 0;  // probability bound of a missed identification (0: deterministic)
  std::size_t memory_bytes = 0;  // the largest size of the algorithm's own data structures

  bool node_solved(const MixedGraph& g, int v) const { return solved_parents[v].size() == g.parents(v).size(); }
  int solved_nodes(const MixedGraph& g) const;
  int solved_edges() const;
  bool identifiable(const MixedGraph& g) const { return solved_edges() == g.num_directed(); }
};

struct RandomizedOptions {
  std::uint64_t seed = 0;
  u64 prime = PrimeField::kMersenne61;
  int trials = 1;  // independent random points; the run solving most wins
};

// The Schwartz-Zippel bound for one random point: P(some identification is missed) <=
// (n + n |D|) / p, from det(I - Lambda) (degree <= n) and one certifying minor per identification step
// (degree <= |targets| n, the targets summing to at most |D|). With t trials: the t-th power.
double randomized_error_bound(const MixedGraph& g, u64 prime, int trials);

Identification htc_classic(const MixedGraph& g);
Identification htc_randomized(const MixedGraph& g, const RandomizedOptions& options);
Identification edgewise_classic(const MixedGraph& g, int max_subset_size);
Identification edgewise_closure(const MixedGraph& g, const RandomizedOptions& options);
bool htc_nonidentifiable(const MixedGraph& g);

using CriterionFn = std::function<Identification(const MixedGraph&)>;
Identification tian_decompose(const MixedGraph& g, const CriterionFn& criterion);

}  // namespace htc
