#pragma once
// The nexp glue: one run function per method, plus the decision dispatcher they share.
//   htc.decide     decide every graph of a data set; results.csv, one JSON per graph, SEMID agreement
//   htc.scaling    runtime against n per family and algorithm, with fitted log-log slopes
//   htc.density    identifiability against edge density: where graphs stop being identifiable
//   htc.agreement  randomized against classic on thousands of random graphs (one-sided error)
//   htc.numeric    recover Lambda and Omega from simulated data; error against the sample size
#include <cstdint>
#include <string>

#include <nexp/nexp.hpp>

#include "criteria.hpp"

namespace htc {

struct DecideOptions {
  std::string algorithm = "randomized";  // classic | randomized
  std::string criterion = "htc";         // htc | edgewise
  bool tian = false;
  int max_subset_size = 3;  // edgewise, classic: subset sizes 1..k and |U|-k+1..|U|; 0 = all
  RandomizedOptions randomized;
};

// Reads algorithm, criterion, tian, max_subset_size, trials and prime from a method's parameters.
DecideOptions decide_options(const nexp::Params& p);
Identification decide(const MixedGraph& g, const DecideOptions& options);
// CPU seconds used so far by the calling thread.
double thread_seconds();
// CPU seconds of the calling thread for one decision, averaged over repeats until at least
// `min_seconds` have passed. CPU time, not wall time: on a shared machine the wall clock also counts
// the other processes' turns (a decision is single-threaded, so on an idle machine the two agree).
double time_decision(const MixedGraph& g, const DecideOptions& options, double min_seconds, Identification* out);
// A per-graph seed for the randomized algorithms: the run's seed mixed with the graph's index.
std::uint64_t graph_seed(std::uint64_t run_seed, std::uint64_t index);
// The parameters shared by the methods that decide (algorithm, criterion, ...).
void add_decide_params(nexp::MethodSpec& m);

void run_decide(nexp::RunContext& ctx);
void run_scaling(nexp::RunContext& ctx);
void run_density(nexp::RunContext& ctx);
void run_agreement(nexp::RunContext& ctx);
void run_numeric(nexp::RunContext& ctx);

}  // namespace htc
