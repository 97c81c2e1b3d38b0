// Fuzz target for the htc plugin's graph readers (plugins/htc/mixed_graph.cpp): edge lists (`nodes N`,
// `i -> j`, `i <-> j`) and SEMID's pairs of 0/1 adjacency matrices (L: directed, O: bidirected), the
// files `dataset: htc.edge_list` and `htc.semid` read. The input is an edge list, then lines `#%file`
// before the L and the O matrix. For any input:
//   1. each reader returns a graph or refuses the text with a DataError, nothing else;
//   2. a graph read survives the writers: to_edge_list and to_semid_matrices (up to 2000 nodes) read
//      back to the same nodes and edges.
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "mixed_graph.hpp"

namespace {

void round_trip(const htc::MixedGraph& g, std::string_view input) {
  auto same = [&](const htc::MixedGraph& back, const char* how) {
    if (back.num_nodes() != g.num_nodes() || back.directed() != g.directed() || back.bidirected() != g.bidirected())
      nexp::fuzz::fail("htc_graph", std::string("the graph reads back as another through ") + how, input);
  };
  nexp::fuzz::must("htc_graph", input, "to_edge_list does not read back",
                   [&] { same(htc::parse_edge_list(htc::to_edge_list(g), "written"), "to_edge_list"); });
  if (g.num_nodes() > 2000) return;
  nexp::fuzz::must("htc_graph", input, "to_semid_matrices does not read back", [&] {
    const auto [l, o] = htc::to_semid_matrices(g);
    same(htc::parse_semid_matrices(l, o, "written"), "to_semid_matrices");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = nexp::fuzz::split_parts(input, "#%file", 3);
  htc::MixedGraph g(0, {}, {});
  if (nexp::fuzz::accepted("htc_graph", input, [&] { g = htc::parse_edge_list(parts[0], "fuzz.edges"); }))
    round_trip(g, input);
  if (nexp::fuzz::accepted("htc_graph", input, [&] { g = htc::parse_semid_matrices(parts[1], parts[2], "fuzz"); }))
    round_trip(g, input);
  return 0;
}
