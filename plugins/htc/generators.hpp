#pragma once
// Random mixed graphs. The five families reproduce the densities of SEMID's reference graphs (the
// counts in data/semid-0.4.2/results.csv): per unordered pair (ordered pair for cyclic directed edges)
// an edge is drawn independently with the probabilities below, after a random relabelling.
//
//   dag_sparse      DAG,    P(i -> j) = 3/n,  P(i <-> j) = 3/n   (about 1.5 n edges of each kind)
//   dag_dense       DAG,    0.45,             0.35
//   dag_boundary    DAG,    0.55,             0.40               (|D| + |B| near n(n-1)/2, the
//                                                                 dimension bound of identifiability)
//   cyclic_sparse   any,    2/n per ordered pair, 2/n
//   cyclic_dense    any,    0.15 per ordered pair, 0.20
//
// Sampling skips geometrically between edges, so a graph costs O(n + edges), not O(n^2).
#include <random>
#include <string>
#include <vector>

#include "mixed_graph.hpp"

namespace htc {

struct GraphSpec {
  bool acyclic = true;
  double p_directed = 0.1;    // per pair (DAG, in a random order) or per ordered pair (cyclic)
  double p_bidirected = 0.1;  // per unordered pair
};

const std::vector<std::string>& family_names();
// Throws std::invalid_argument for an unknown family.
GraphSpec family_spec(const std::string& family, int n);
MixedGraph random_mixed_graph(int n, const GraphSpec& spec, std::mt19937_64& rng);

// Uniform double in [0, 1) from 53 random bits: the same on every platform (std's distributions are not).
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace htc
