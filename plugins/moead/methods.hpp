#pragma once
// The nexp side: parameters in, replicas in parallel with oneTBB, metrics and artifacts out.
#include <cstdint>
#include <string>
#include <vector>

#include <nexp/nexp.hpp>

#include "algorithms.hpp"

namespace moead {

// ---- Single-algorithm methods (moead.gsemo, moead.classic, moead.self_adjusting)

// Parameters all three share, so that switching `method=` keeps a config valid.
void add_shared_params(nexp::MethodSpec& m);
// The metrics those methods produce.
std::vector<std::string> run_metrics();

void run_gsemo_method(nexp::RunContext& ctx);
void run_classic_method(nexp::RunContext& ctx);
void run_self_adjusting_method(nexp::RunContext& ctx);

// Default budget when `budget: 0`: n^4 evaluations (the paper's bound, constant 1).
std::int64_t default_budget(int n);
// A seed for replica / cell `index` derived from the run's seed (splitmix64 of both).
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t index);

// ---- Studies: one run loops over (algorithm x distortion x n x seed) with oneTBB

// Algorithm labels used by the studies: gsemo, classic_ws, classic_tch, classic_pbi, self_adjusting.
const std::vector<std::string>& study_algorithm_names();
Algorithm parse_study_algorithm(const std::string& label, Settings& s);

void run_coverage_table(nexp::RunContext& ctx);
void run_runtime_scaling(nexp::RunContext& ctx);

}  // namespace moead
