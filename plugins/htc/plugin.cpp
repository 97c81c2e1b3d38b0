// htc: deciding generic identifiability of linear SEMs (the half-trek criterion) faster than SEMID.
// Registers the plugin's components with nexp; the mathematics lives in criteria.hpp and below.
#include <nexp/nexp.hpp>

#include "datasets.hpp"
#include "generators.hpp"
#include "methods.hpp"

// The one instantiation of each method's binding (methods.hpp declares them extern).
template htc::DecideOptions nexp::bind<htc::DecideOptions>(const nexp::Params&);
template htc::ScalingOptions nexp::bind<htc::ScalingOptions>(const nexp::Params&);
template htc::DensityOptions nexp::bind<htc::DensityOptions>(const nexp::Params&);
template htc::AgreementOptions nexp::bind<htc::AgreementOptions>(const nexp::Params&);
template htc::NumericOptions nexp::bind<htc::NumericOptions>(const nexp::Params&);

namespace {

using nexp::Direction;

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
  r.dataset<htc::SemidDirOptions>(
      "htc.semid_dir", "SEMID's L/O matrix files: every <name>_L.txt / <name>_O.txt pair of a folder",
      htc::make_semid_dir);
  r.dataset<htc::EdgeListOptions>(
      "htc.edge_list", "mixed graphs as edge lists: `nodes N`, then `i -> j` and `i <-> j` lines (1-based)",
      htc::make_edge_list);
  r.dataset<htc::RandomGraphsOptions>(
      "htc.random", "random mixed graphs of one family (DAG or cyclic, sparse, dense, near the boundary)",
      htc::make_random);
}

void register_methods(nexp::Registrar& r) {
  r.method("htc.decide", "decide generic identifiability (HTC or edgewise) of every graph of a data set",
           htc::run_decide)
      .options<htc::DecideOptions>()
      .produces({"graphs", "identifiable", "identifiable_graphs", "solved_nodes", "solved_edges",
                 "solved_edge_fraction", "seconds", "cpu_seconds", "error_bound", "memory_bytes", "nonidentifiable_graphs", "reference_graphs",
                 "agree_graphs", "speedup"})
      .accepts({"htc.*"});

  std::vector<std::string> slope_metrics = {"disagreements", "cpu_seconds"};
  for (const char* algorithm : {"classic", "randomized"})
    for (const auto& family : htc::family_names()) slope_metrics.push_back(std::string("slope_") + algorithm + "_" + family);
  r.method("htc.scaling", "running time against n per graph family and algorithm, with log-log slopes", htc::run_scaling)
      .options<htc::ScalingOptions>()
      .produces(slope_metrics);

  r.method("htc.density", "identifiability against edge density: where random graphs stop being identifiable",
           htc::run_density)
      .options<htc::DensityOptions>()
      .produces({"boundary_density", "edgewise_gain_graphs", "equivalence_checked", "equivalence_agree",
                 "dimension_violations"});

  r.method("htc.agreement", "randomized against classic HTC (and edgewise closure against subset search) on random graphs",
           htc::run_agreement)
      .options<htc::AgreementOptions>()
      .produces({"graphs", "agree_graphs", "false_positives", "false_negatives", "false_negatives_small_prime",
                 "expected_misses_bound", "expected_misses_bound_small_prime", "graphs_missed_small_prime",
                 "equivalence_checked",
                 "equivalence_agree"});

  r.method("htc.numeric", "recover Lambda and Omega from simulated data; error against sample size", htc::run_numeric)
      .options<htc::NumericOptions>()
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
