#pragma once
// The plugin's data sets: collections of named mixed graphs, optionally with SEMID's answers.
//   htc.semid_dir  every <name>_L.txt / <name>_O.txt pair of a folder (SEMID's matrix files), and
//                  SEMID's results.csv when one is found next to them
//   htc.edge_list  one edge-list file, or every *.edges file of a folder
//   htc.random     random graphs of one family (generators.hpp)
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nexp/nexp.hpp>

#include "mixed_graph.hpp"

namespace htc {

// One row of SEMID's results.csv: what one SEMID function answered on one graph.
struct ReferenceAnswer {
  double seconds = 0;  // NaN when SEMID did not run it (graphID.nonHtcID at n = 80)
  std::vector<int> solved_nodes;          // 1-based, as in the file
  std::optional<std::string> solved_edges;  // "j->i ..." (sorted as strings); absent when NA
  std::optional<bool> all_identified, nonidentifiable;
};
// graph name -> SEMID function (htcID_noTian, htcID_tian, edgewiseID_inf_noTian, graphID.htcID,
// graphID.nonHtcID) -> answer.
using Reference = std::map<std::string, std::map<std::string, ReferenceAnswer>>;
Reference read_reference(const std::filesystem::path& csv);

struct GraphSet : nexp::Dataset {
  std::vector<NamedGraph> graphs;
  std::string origin;  // where the graphs came from, for the log
  std::optional<Reference> reference;
  std::string describe() const override;
};

std::shared_ptr<nexp::Dataset> make_semid_dir(const nexp::Params& p, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_edge_list(const nexp::Params& p, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_random(const nexp::Params& p, nexp::RunContext& ctx);

// SEMID's solved-edge string of an identification: "j->i" (1-based), sorted as strings.
std::string edge_string(const std::vector<std::vector<int>>& solved_parents);
std::string node_string(const std::vector<int>& nodes_zero_based);  // "1 2 5"

}  // namespace htc
