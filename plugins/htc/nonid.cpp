// Generic non-identifiability (Foygel, Draisma and Drton 2012, Theorem 2; SEMID's graphID.nonHtcID).
// If no family (Y_v) exists with Y_v a set of |pa(v)| nodes that are not siblings of v, each with a
// half-trek system to pa(v), and "w in Y_v implies v not in Y_w" for every pair, the parametrization is
// generically infinite-to-one. One flow decides it: a unit per non-sibling pair {v, w}, spent either as
// w in Y_v (into copy v of the right side) or as v in Y_w (into copy w); the graph is non-identifiable
// when the maximum flow is below |D|.
//
//   source -> P{v,w}                       for every non-sibling pair v != w
//   P{v,w} -> R_v(w), R_v(s) for s in sib(w)   (and symmetrically into copy w)
//   R_v(x)in -> R_v(x)out -> R_v(c)in      for x -> c, inside copy v
//   R_v(t)out -> sink                      for t in pa(v)
// Copy v keeps only the ancestors of pa(v): no other right node can carry flow to the sink.
#include "criteria.hpp"
#include "flow.hpp"

namespace htc {

bool htc_nonidentifiable(const MixedGraph& g) {
  const int n = g.num_nodes();
  if (n <= 1) return false;
  Reach reach(g);
  FlowNetwork net(2);
  const int source = 0, sink = 1;
  // in_node[v][x]: the R_v(x)in node, or -1 when x cannot reach pa(v).
  std::vector<std::vector<int>> in_node(n);
  std::vector<char> keep;
  for (int v = 0; v < n; ++v) {
    in_node[v].assign(n, -1);
    if (g.parents(v).empty()) continue;
    reach.ancestors(g.parents(v), keep);
    std::vector<int> out_node(n, -1);
    for (int x = 0; x < n; ++x)
      if (keep[x]) {
        in_node[v][x] = net.add_node();
        out_node[x] = net.add_node();
        net.add_arc(in_node[v][x], out_node[x]);
      }
    for (int x = 0; x < n; ++x)
      if (keep[x])
        for (int c : g.children(x))
          if (keep[c]) net.add_arc(out_node[x], in_node[v][c]);
    for (int t : g.parents(v)) net.add_arc(out_node[t], sink);
  }
  // A pair's unit can enter copy v at w or at a sibling of w (and copy w at v or a sibling of v).
  auto enter = [&](int pair, int v, int w) {
    if (in_node[v][w] >= 0) net.add_arc(pair, in_node[v][w]);
    for (int s : g.siblings(w))
      if (in_node[v][s] >= 0) net.add_arc(pair, in_node[v][s]);
  };
  for (int v = 0; v < n; ++v)
    for (int w = v + 1; w < n; ++w) {
      if (g.is_sibling(v, w)) continue;
      const int pair = net.add_node();
      net.add_arc(source, pair);
      enter(pair, v, w);
      enter(pair, w, v);
    }
  return net.max_flow(source, sink, g.num_directed()) < g.num_directed();
}

}  // namespace htc
