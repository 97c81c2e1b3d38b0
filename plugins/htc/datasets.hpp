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

#include "generators.hpp"
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

// htc.semid_dir
struct SemidDirOptions {
  std::string dir = "plugins/htc/data/semid-0.4.2/graphs";
  std::string reference = "auto";
  std::string match;

  static void declare(nexp::Options<SemidDirOptions>& o) {
    o.add("dir", &SemidDirOptions::dir,
          "the folder of <name>_L.txt / <name>_O.txt pairs (relative to the working directory)");
    o.add("reference", &SemidDirOptions::reference,
          "SEMID's results.csv to compare with; auto: DIR/results.csv or DIR/../results.csv if present; none: no "
          "comparison");
    o.add("match", &SemidDirOptions::match, "only the graphs whose name matches this regular expression (empty: all)");
  }
};

// htc.edge_list
struct EdgeListOptions {
  std::string path;

  static void declare(nexp::Options<EdgeListOptions>& o) {
    o.add("path", &EdgeListOptions::path, "an edge-list file, or a folder whose *.edges files are read").required();
  }
};

// htc.random: a family of generators.hpp, or `custom` with its own edge probabilities.
struct RandomGraphsOptions {
  std::string family = "dag_sparse";
  int n = 20;
  std::int64_t graphs = 100;
  bool acyclic = true;
  double p_directed = 0.1;
  double p_bidirected = 0.1;

  static std::vector<std::string> families() {
    std::vector<std::string> names = family_names();
    names.push_back("custom");
    return names;
  }
  static void declare(nexp::Options<RandomGraphsOptions>& o) {
    o.add("family", &RandomGraphsOptions::family, "graph family; custom uses acyclic, p_directed and p_bidirected")
        .choices(families());
    o.add("n", &RandomGraphsOptions::n, "nodes per graph").min(1);
    o.add("graphs", &RandomGraphsOptions::graphs, "number of graphs").min(1);
    o.add("acyclic", &RandomGraphsOptions::acyclic, "custom family: DAG in a random order (else any directed graph)");
    o.add("p_directed", &RandomGraphsOptions::p_directed, "custom family: probability of each directed edge")
        .range(0, 1);
    o.add("p_bidirected", &RandomGraphsOptions::p_bidirected, "custom family: probability of each bidirected edge")
        .range(0, 1);
  }
};

std::shared_ptr<nexp::Dataset> make_semid_dir(const SemidDirOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_edge_list(const EdgeListOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_random(const RandomGraphsOptions& o, nexp::RunContext& ctx);

// SEMID's solved-edge string of an identification: "j->i" (1-based), sorted as strings.
std::string edge_string(const std::vector<std::vector<int>>& solved_parents);
std::string node_string(const std::vector<int>& nodes_zero_based);  // "1 2 5"

}  // namespace htc
