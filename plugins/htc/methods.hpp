#pragma once
// The nexp glue: one run function per method, its options, and the decision dispatcher they share.
//   htc.decide     decide every graph of a data set; results.csv, one JSON per graph, SEMID agreement
//   htc.scaling    runtime against n per family and algorithm, with fitted log-log slopes
//   htc.density    identifiability against edge density: where graphs stop being identifiable
//   htc.agreement  randomized against classic on thousands of random graphs (one-sided error)
//   htc.numeric    recover Lambda and Omega from simulated data; error against the sample size
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nexp/nexp.hpp>

#include "criteria.hpp"
#include "generators.hpp"

namespace htc {

enum class Algorithm { Classic, Randomized };
enum class Criterion { Htc, Edgewise };
template <class E>
using Names = std::vector<std::pair<std::string, E>>;
const Names<Algorithm>& algorithm_names();  // classic, randomized
const Names<Criterion>& criterion_names();  // htc, edgewise
// The algorithm a validated name (one of algorithm_names()) stands for.
Algorithm algorithm_named(const std::string& name);
template <class E>
std::vector<std::string> names_of(const Names<E>& names) {
  std::vector<std::string> out;
  for (const auto& [name, value] : names) out.push_back(name);
  return out;
}

// How a graph is decided: the options shared by htc.decide, htc.scaling and htc.numeric.
struct DecisionOptions {
  Algorithm algorithm = Algorithm::Randomized;
  Criterion criterion = Criterion::Htc;
  bool tian = false;
  int max_subset_size = 3;  // edgewise, classic: subset sizes 1..k and |U|-k+1..|U|; 0 = all
  int trials = 1;
  std::int64_t prime = static_cast<std::int64_t>(PrimeField::kMersenne61);

  static void declare(nexp::Options<DecisionOptions>& o) {
    o.add("algorithm", &DecisionOptions::algorithm,
          "classic: max-flow per node and round (FDD 2012, deterministic); randomized: ranks of the half-trek "
          "matrix over F_p (one-sided error)",
          algorithm_names());
    o.add("criterion", &DecisionOptions::criterion,
          "htc: half-trek criterion (whole nodes); edgewise: edgewise criterion (edge subsets)", criterion_names());
    o.add("tian", &DecisionOptions::tian, "decide each c-component of the Tian decomposition separately");
    o.add("max_subset_size", &DecisionOptions::max_subset_size,
          "edgewise with algorithm=classic: subset sizes 1..k and |U|-k+1..|U| of the unsolved parents U (SEMID's "
          "subsetSizeControl); 0 = all sizes")
        .min(0);
    o.add("trials", &DecisionOptions::trials,
          "randomized: independent random points (error bound to the power trials)")
        .range(1, 64);
    o.add("prime", &DecisionOptions::prime,
          "randomized: the prime p of the field F_p (default 2^61 - 1); a small p shows the one-sided error")
        .min(2);
  }
  // Throws nexp::ConfigError unless prime is a prime below 2^62.
  void check() const;
  // The randomized algorithms' settings for one graph.
  RandomizedOptions randomized(std::uint64_t seed) const { return {seed, static_cast<u64>(prime), trials}; }
};

// htc.decide
struct DecideOptions : DecisionOptions {
  bool nonid = true;
  std::int64_t nonid_max_nodes = 200;
  std::int64_t json_graphs = 1000;
  double min_seconds = 0.0;
  bool export_graphs = false;

  static void declare(nexp::Options<DecideOptions>& o) {
    o.inherit<DecisionOptions>();
    o.add("nonid", &DecideOptions::nonid, "also run the generic non-identifiability check (FDD 2012 Theorem 2)");
    o.add("nonid_max_nodes", &DecideOptions::nonid_max_nodes,
          "skip that check above this many nodes (its network has n^2 nodes)")
        .min(0);
    o.add("json_graphs", &DecideOptions::json_graphs,
          "write artifacts/graphs/<name>.json for the first this many graphs")
        .min(0);
    o.add("min_seconds", &DecideOptions::min_seconds,
          "repeat each decision until this much time has passed (stable timings)")
        .min(0);
    o.add("export_graphs", &DecideOptions::export_graphs,
          "also write each graph as SEMID matrix files artifacts/graph_files/<name>_L.txt, _O.txt");
  }
};

// htc.scaling
struct ScalingOptions : DecisionOptions {
  std::vector<std::int64_t> ns = {10, 20, 40, 80, 160, 320};
  std::vector<std::string> families = family_names();
  std::vector<std::string> algorithms = names_of(algorithm_names());
  int reps = 3;
  double budget_seconds = 60.0;
  double min_seconds = 0.05;
  std::int64_t fit_min_n = 20;

  static void declare(nexp::Options<ScalingOptions>& o) {
    o.inherit<DecisionOptions>();
    o.add("ns", &ScalingOptions::ns, "numbers of nodes").min(2);
    o.add("families", &ScalingOptions::families, "graph families").choices(family_names());
    o.add("algorithms", &ScalingOptions::algorithms, "algorithms to time").choices(names_of(algorithm_names()));
    o.add("reps", &ScalingOptions::reps, "graphs per family and n").min(1);
    o.add("budget_seconds", &ScalingOptions::budget_seconds,
          "after one decision slower than this, larger n are skipped")
        .min(0);
    o.add("min_seconds", &ScalingOptions::min_seconds, "repeat fast decisions until this much time has passed").min(0);
    o.add("fit_min_n", &ScalingOptions::fit_min_n, "fit the slope on n >= this").min(1);
  }
};

// htc.density
struct DensityOptions {
  int n = 20;
  std::int64_t graphs = 200;
  std::vector<double> densities = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2};
  bool acyclic = true;
  double directed_share = 0.55;
  int equivalence_max_parents = 8;
  std::int64_t equivalence_graphs = 50;

  static void declare(nexp::Options<DensityOptions>& o) {
    o.add("n", &DensityOptions::n, "nodes per graph").min(2);
    o.add("graphs", &DensityOptions::graphs, "graphs per density").min(1);
    o.add("densities", &DensityOptions::densities, "expected (|D| + |B|) / (n (n - 1) / 2)").min(0);
    o.add("acyclic", &DensityOptions::acyclic, "DAGs (else any directed graph)");
    o.add("directed_share", &DensityOptions::directed_share, "share of the expected edges that are directed")
        .range(0, 1);
    o.add("equivalence_max_parents", &DensityOptions::equivalence_max_parents,
          "check the edgewise closure against the full subset search on graphs with in-degree <= this")
        .min(0);
    o.add("equivalence_graphs", &DensityOptions::equivalence_graphs, "and on at most this many graphs per density")
        .min(0);
  }
};

// htc.agreement
struct AgreementOptions {
  std::vector<std::int64_t> ns = {6, 10, 15, 20, 30};
  std::vector<std::string> families = family_names();
  std::int64_t graphs = 100;
  std::int64_t small_prime = 101;
  int equivalence_max_parents = 8;

  static void declare(nexp::Options<AgreementOptions>& o) {
    o.add("ns", &AgreementOptions::ns, "numbers of nodes").min(2);
    o.add("families", &AgreementOptions::families, "graph families").choices(family_names());
    o.add("graphs", &AgreementOptions::graphs, "graphs per family and n").min(1);
    o.add("small_prime", &AgreementOptions::small_prime,
          "a small prime for a second randomized run, to show one-sided errors")
        .min(2);
    o.add("equivalence_max_parents", &AgreementOptions::equivalence_max_parents,
          "compare edgewise closure and full subset search on graphs with in-degree <= this")
        .min(0);
  }
};

// htc.numeric
struct NumericOptions : DecisionOptions {
  std::string family = "dag_sparse";
  int n = 20;
  std::int64_t graphs = 5;
  std::vector<std::int64_t> samples = {100, 1000, 10000, 100000, 1000000};

  static void declare(nexp::Options<NumericOptions>& o) {
    o.inherit<DecisionOptions>();
    o.add("family", &NumericOptions::family, "graph family").choices(family_names());
    o.add("n", &NumericOptions::n, "nodes per graph").min(2);
    o.add("graphs", &NumericOptions::graphs, "graphs (each with its own random SEM)").min(1);
    o.add("samples", &NumericOptions::samples, "sample sizes N").min(2);
  }
};

}  // namespace htc

// The option structs are bound in plugin.cpp (explicit instantiations there), not again in every file
// whose method calls ctx.options<T>(): each binding instantiated costs about 5 s of compile time.
extern template htc::DecideOptions nexp::bind<htc::DecideOptions>(const nexp::Params&);
extern template htc::ScalingOptions nexp::bind<htc::ScalingOptions>(const nexp::Params&);
extern template htc::DensityOptions nexp::bind<htc::DensityOptions>(const nexp::Params&);
extern template htc::AgreementOptions nexp::bind<htc::AgreementOptions>(const nexp::Params&);
extern template htc::NumericOptions nexp::bind<htc::NumericOptions>(const nexp::Params&);

namespace htc {

Identification decide(const MixedGraph& g, const DecisionOptions& options, std::uint64_t seed);
// CPU seconds used so far by the calling thread.
double thread_seconds();
// CPU seconds of the calling thread for one decision, averaged over repeats until at least
// `min_seconds` have passed. CPU time, not wall time: on a shared machine the wall clock also counts
// the other processes' turns (a decision is single-threaded, so on an idle machine the two agree).
double time_decision(const MixedGraph& g, const DecisionOptions& options, std::uint64_t seed, double min_seconds,
                     Identification* out);

void run_decide(nexp::RunContext& ctx);
void run_scaling(nexp::RunContext& ctx);
void run_density(nexp::RunContext& ctx);
void run_agreement(nexp::RunContext& ctx);
void run_numeric(nexp::RunContext& ctx);

}  // namespace htc
