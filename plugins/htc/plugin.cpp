// htc: deciding generic identifiability of linear SEMs (the half-trek criterion) faster than SEMID.
// Registers the plugin's components with nexp; the mathematics lives in criteria.hpp and below.
#include <nexp/nexp.hpp>

#include "datasets.hpp"
#include "generators.hpp"
#include "methods.hpp"

namespace {

using nexp::Direction;
using nexp::Param;

void register_metrics(nexp::Registrar& r) {
  r.metric("graphs", Direction::None, "number of graphs decided");
  r.metric("identifiable", Direction::Maximize, "fraction of graphs whose directed edges are all identified");
  r.metric("identifiable_graphs", Direction::Maximize, "number of graphs whose directed edges are all identified");
  r.metric("solved_nodes", Direction::Maximize, "nodes with all incoming edges identified, summed over graphs");
  r.metric("solved_edges", Direction::Maximize, "identified directed edges, summed over graphs");
  r.metric("solved_edge_fraction", Direction::Maximize, "identified directed edges / all directed edges");
  r.metric("error_bound", Direction::Minimize,
           "largest Schwartz-Zippel bound on the probability that the randomized decision missed an identification");
  r.metric("memory_bytes", Direction::Minimize,
           "largest size of the decision algorithm's own data structures (flow network, bases, weights) in bytes");
  r.metric("nonidentifiable_graphs", Direction::None,
           "graphs proven generically infinite-to-one by the half-trek flow of FDD 2012 Theorem 2");
  r.metric("reference_graphs", Direction::None, "graphs with SEMID's answer to compare with");
  r.metric("agree_graphs", Direction::Maximize, "graphs on which every compared answer equals SEMID's");
  r.metric("speedup", Direction::Maximize, "SEMID's stored seconds / nexp's CPU seconds on the compared graphs")
      .measures_time();
  r.metric("cpu_seconds", Direction::Minimize,
           "CPU seconds of the decisions (single-threaded: the wall time on an idle core; the machine may be shared)")
      .measures_time();
  for (const char* algorithm : {"classic", "randomized"})
    for (const auto& family : htc::family_names())
      r.metric(std::string("slope_") + algorithm + "_" + family, Direction::Minimize,
               std::string("fitted exponent b of seconds ~ n^b, ") + algorithm + " algorithm, " + family + " graphs")
          .measures_time();
  r.metric("disagreements", Direction::Minimize, "graphs on which the timed algorithms gave different answers");
  r.metric("boundary_density", Direction::None,
           "edge density (|D| + |B|) / (n (n - 1) / 2) at which half of the graphs stop being HTC-identifiable");
  r.metric("edgewise_gain_graphs", Direction::None, "graphs on which the edgewise criterion identifies more than HTC");
  r.metric("equivalence_checked", Direction::None, "graphs on which the edgewise closure met the full subset search");
  r.metric("equivalence_agree", Direction::Maximize, "of those, graphs with identical identified edges");
  r.metric("dimension_violations", Direction::Minimize,
           "identifications contradicting the dimension count or HTC within edgewise (must be 0)");
  r.metric("false_positives", Direction::Minimize,
           "nodes or edges a randomized algorithm identified that the deterministic one did not (must be 0)");
  r.metric("false_negatives", Direction::Minimize, "nodes missed by the randomized algorithm with p = 2^61 - 1");
  r.metric("false_negatives_small_prime", Direction::None, "nodes missed by the randomized algorithm with the small p");
  r.metric("expected_misses_bound", Direction::None, "sum over graphs of the error bound with p = 2^61 - 1");
  r.metric("graphs_missed_small_prime", Direction::None, "graphs with a missed node with the small p");
  r.metric("expected_misses_bound_small_prime", Direction::None, "sum over graphs of the error bound with the small p");
  r.metric("error_population", Direction::Minimize, "largest max-abs error of Lambda, Omega from the exact Sigma");
  r.metric("error_smallest_sample", Direction::Minimize,
           "median over graphs of the max-abs error (least squares over all allowed equations), smallest N");
  r.metric("error_largest_sample", Direction::Minimize, "the same at the largest sample size");
  r.metric("error_slope", Direction::Minimize, "fitted exponent b of error ~ N^b (expected -1/2)");
  r.metric("error_largest_sample_square", Direction::Minimize,
           "as error_largest_sample, with only the certified sources' square systems (FDD's formula)");
  r.metric("typical_error_largest_sample", Direction::Minimize,
           "median over graphs of the median absolute error per parameter, at the largest sample size");
  r.metric("typical_error_slope", Direction::Minimize, "fitted exponent of the typical error against N");
}

void register_datasets(nexp::Registrar& r) {
  r.dataset("htc.semid_dir", "SEMID's L/O matrix files: every <name>_L.txt / <name>_O.txt pair of a folder",
            htc::make_semid_dir)
      .param(Param::string("dir", "plugins/htc/data/semid-0.4.2/graphs",
                           "the folder of <name>_L.txt / <name>_O.txt pairs (relative to the working directory)"))
      .param(Param::string("reference", "auto",
                           "SEMID's results.csv to compare with; auto: DIR/results.csv or DIR/../results.csv if present; "
                           "none: no comparison"))
      .param(Param::string("match", "", "only the graphs whose name matches this regular expression (empty: all)"));
  r.dataset("htc.edge_list", "mixed graphs as edge lists: `nodes N`, then `i -> j` and `i <-> j` lines (1-based)",
            htc::make_edge_list)
      .param(Param::string("path", "", "an edge-list file, or a folder whose *.edges files are read").required());
  std::vector<std::string> families = htc::family_names();
  families.push_back("custom");
  r.dataset("htc.random", "random mixed graphs of one family (DAG or cyclic, sparse, dense, near the boundary)",
            htc::make_random)
      .param(Param::string("family", "dag_sparse", "graph family; custom uses acyclic, p_directed and p_bidirected")
                 .choices(families))
      .param(Param::integer("n", 20, "nodes per graph").min(1))
      .param(Param::integer("graphs", 100, "number of graphs").min(1))
      .param(Param::boolean("acyclic", true, "custom family: DAG in a random order (else any directed graph)"))
      .param(Param::real("p_directed", 0.1, "custom family: probability of each directed edge").range(0, 1))
      .param(Param::real("p_bidirected", 0.1, "custom family: probability of each bidirected edge").range(0, 1));
}

void register_methods(nexp::Registrar& r) {
  auto& decide = r.method("htc.decide", "decide generic identifiability (HTC or edgewise) of every graph of a data set",
                          htc::run_decide);
  htc::add_decide_params(decide);
  decide.param(Param::boolean("nonid", true, "also run the generic non-identifiability check (FDD 2012 Theorem 2)"))
      .param(Param::integer("nonid_max_nodes", 200, "skip that check above this many nodes (its network has n^2 nodes)")
                 .min(0))
      .param(Param::integer("json_graphs", 1000, "write artifacts/graphs/<name>.json for the first this many graphs")
                 .min(0))
      .param(Param::real("min_seconds", 0.0, "repeat each decision until this much time has passed (stable timings)")
                 .min(0))
      .param(Param::boolean("export_graphs", false,
                            "also write each graph as SEMID matrix files artifacts/graph_files/<name>_L.txt, _O.txt"))
      .produces({"graphs", "identifiable", "identifiable_graphs", "solved_nodes", "solved_edges",
                 "solved_edge_fraction", "seconds", "cpu_seconds", "error_bound", "memory_bytes", "nonidentifiable_graphs", "reference_graphs",
                 "agree_graphs", "speedup"})
      .accepts({"htc.*"});

  auto& scaling = r.method("htc.scaling", "running time against n per graph family and algorithm, with log-log slopes",
                           htc::run_scaling);
  htc::add_decide_params(scaling);
  std::vector<std::string> slope_metrics = {"disagreements", "cpu_seconds"};
  for (const char* algorithm : {"classic", "randomized"})
    for (const auto& family : htc::family_names()) slope_metrics.push_back(std::string("slope_") + algorithm + "_" + family);
  scaling.param(Param::ints("ns", {10, 20, 40, 80, 160, 320}, "numbers of nodes").min(2))
      .param(Param::strings("families", htc::family_names(), "graph families").choices(htc::family_names()))
      .param(Param::strings("algorithms", {"classic", "randomized"}, "algorithms to time").choices({"classic", "randomized"}))
      .param(Param::integer("reps", 3, "graphs per family and n").min(1))
      .param(Param::real("budget_seconds", 60.0, "after one decision slower than this, larger n are skipped").min(0))
      .param(Param::real("min_seconds", 0.05, "repeat fast decisions until this much time has passed").min(0))
      .param(Param::integer("fit_min_n", 20, "fit the slope on n >= this").min(1))
      .produces(slope_metrics);

  r.method("htc.density", "identifiability against edge density: where random graphs stop being identifiable",
           htc::run_density)
      .param(Param::integer("n", 20, "nodes per graph").min(2))
      .param(Param::integer("graphs", 200, "graphs per density").min(1))
      .param(Param::reals("densities", {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2},
                          "expected (|D| + |B|) / (n (n - 1) / 2)")
                 .min(0))
      .param(Param::boolean("acyclic", true, "DAGs (else any directed graph)"))
      .param(Param::real("directed_share", 0.55, "share of the expected edges that are directed").range(0, 1))
      .param(Param::integer("equivalence_max_parents", 8,
                            "check the edgewise closure against the full subset search on graphs with in-degree <= this")
                 .min(0))
      .param(Param::integer("equivalence_graphs", 50, "and on at most this many graphs per density").min(0))
      .produces({"boundary_density", "edgewise_gain_graphs", "equivalence_checked", "equivalence_agree",
                 "dimension_violations"});

  r.method("htc.agreement", "randomized against classic HTC (and edgewise closure against subset search) on random graphs",
           htc::run_agreement)
      .param(Param::ints("ns", {6, 10, 15, 20, 30}, "numbers of nodes").min(2))
      .param(Param::strings("families", htc::family_names(), "graph families").choices(htc::family_names()))
      .param(Param::integer("graphs", 100, "graphs per family and n").min(1))
      .param(Param::integer("small_prime", 101, "a small prime for a second randomized run, to show one-sided errors")
                 .min(2))
      .param(Param::integer("equivalence_max_parents", 8,
                            "compare edgewise closure and full subset search on graphs with in-degree <= this")
                 .min(0))
      .produces({"graphs", "agree_graphs", "false_positives", "false_negatives", "false_negatives_small_prime",
                 "expected_misses_bound", "expected_misses_bound_small_prime", "graphs_missed_small_prime",
                 "equivalence_checked",
                 "equivalence_agree"});

  auto& numeric = r.method("htc.numeric", "recover Lambda and Omega from simulated data; error against sample size",
                           htc::run_numeric);
  htc::add_decide_params(numeric);
  numeric.param(Param::string("family", "dag_sparse", "graph family").choices(htc::family_names()))
      .param(Param::integer("n", 20, "nodes per graph").min(2))
      .param(Param::integer("graphs", 5, "graphs (each with its own random SEM)").min(1))
      .param(Param::ints("samples", {100, 1000, 10000, 100000, 1000000}, "sample sizes N").min(2))
      .produces({"error_population", "error_smallest_sample", "error_largest_sample", "error_largest_sample_square",
                 "typical_error_largest_sample", "error_slope", "typical_error_slope"});
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  register_datasets(r);
  register_methods(r);
}

}  // namespace

NEXP_PLUGIN(htc, "0.1.0",
            "Generic identifiability of linear SEMs: the half-trek criterion, decided by max-flow (FDD 2012) and by a "
            "faster randomized rank algorithm; edgewise criterion; numeric identification",
            "Faster half-trek criterion: a randomized O(n^4) decision of the HTC and a criterion equivalent to the "
            "edgewise one; building on Foygel, Draisma, Drton, Half-trek criterion for generic "
            "identifiability of linear structural equation models, Ann. Statist. 40(3), 2012; Weihs, Robeva, Robinson "
            "et al., Determinantal generalizations of instrumental variables, J. Causal Inference 6(1), 2018",
            register_components)
