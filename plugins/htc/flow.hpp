#pragma once
// Unit-capacity maximum flow (Dinic) and the half-trek flow network of Foygel, Draisma and Drton
// (2012, Theorem 6): a system of half-treks with no sided intersection from a subset of sources A to a
// target set T exists iff the max flow below equals |T|.
//
//   source -> L(a)          a in A
//   L(a) -> R_in(a), L(a) -> R_in(s)    for every sibling s of a (the bidirected first step)
//   R_in(x) -> R_out(x)     unit vertex capacity on the right side
//   R_out(x) -> R_in(c)     for every directed edge x -> c
//   R_out(t) -> sink        t in T
// Left sides are single nodes, so distinct sources give disjoint left sides; the vertex capacities make
// the right sides disjoint. Memory and time per build are linear in the number of edges.
#include <vector>

#include "mixed_graph.hpp"

namespace htc {

class FlowNetwork {
 public:
  explicit FlowNetwork(int nodes = 0) { reset(nodes); }
  void reset(int nodes);
  int add_node();
  // A unit-capacity arc; returns its index.
  int add_arc(int from, int to);
  // Augments from `source` to `sink` until the flow reaches `limit` or no augmenting path is left.
  int max_flow(int source, int sink, int limit);
  bool saturated(int arc) const { return cap_[arc] == 0; }
  std::size_t bytes() const;

 private:
  bool levels(int source, int sink);
  int push(int v, int sink);
  int nodes_ = 0;
  std::vector<int> head_, next_, to_, cap_, level_, cursor_, queue_;
};

struct HalfTrekSystem {
  int size = 0;                 // the max flow: the largest system from a subset of A into T
  std::vector<int> sources;     // the sources the flow uses (|sources| == size)
};

// The largest system of half-treks with no sided intersection from a subset of `allowed` (a 0/1 mask)
// to `targets`.
HalfTrekSystem max_half_trek_system(const MixedGraph& g, const std::vector<char>& allowed,
                                    const std::vector<int>& targets, FlowNetwork& net);

}  // namespace htc
