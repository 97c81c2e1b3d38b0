#pragma once
// Pruners of sweeps (sweep: {pruner: {type: median|asha, ...}}): from the intermediate values the trials
// log (ctx.log_metrics), whether a running trial should stop early. Core-internal; the local launcher
// asks (sweep_pruning.cpp), and a trial it prunes is told through ctx.stop_requested(), checkpoints,
// and ends `pruned` with its last values.
//
// Both are pure functions of the curves, so any launcher that reads the same metrics.jsonl files
// decides the same way, and a re-run of the sweep needs no pruner state of its own.
//
//   median (the median stopping rule, Golovin et al., "Google Vizier", KDD 2017; Optuna's MedianPruner):
//     at step s >= min_step, once `startup_trials` trials have completed, prune when the trial's best
//     value so far is worse than the median of the completed trials' values at step s.
//   asha (asynchronous successive halving, Li et al., "A System for Massively Parallel Hyperparameter
//     Tuning", MLSys 2020; Optuna's SuccessiveHalvingPruner): rungs at steps min_step * reduction^k.
//     A trial that passes rung k records its value there and goes on only when that value is within
//     the best 1/reduction of all values recorded at that rung so far (the best one always goes on);
//     the decision is taken once, as the trial passes the rung.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nexp::samplers {

// A trial's intermediate values: step -> value, oriented so that lower is better.
struct Curve {
  int number = 0;
  std::map<std::int64_t, double> values;
  bool completed = false;
};

struct PrunerOptions {
  std::string type = "none";  // none, median, asha
  std::int64_t min_step = 1;
  double reduction = 3;
  int startup_trials = 5;
};

// Whether `trial` should stop now that its curve reached its last step; it was last asked at step
// `since` (ASHA decides at each rung once, when the trial passes it). `others` are every other trial
// of the sweep, running or ended. The reason is set when it should.
bool should_prune(const PrunerOptions& o, const Curve& trial, const std::vector<Curve>& others, std::int64_t since,
                  std::string& reason);

// The median rule and ASHA on their own (should_prune picks one).
bool median_prunes(const PrunerOptions& o, const Curve& trial, const std::vector<Curve>& others, std::string& reason);
bool asha_prunes(const PrunerOptions& o, const Curve& trial, const std::vector<Curve>& others, std::int64_t since,
                 std::string& reason);
// ASHA's rung steps up to `last`: min_step, min_step * reduction, ...
std::vector<std::int64_t> asha_rungs(const PrunerOptions& o, std::int64_t last);
// The value a curve recorded at a rung: its value at the first step at or past the rung (none if not reached).
bool value_at_rung(const Curve& c, std::int64_t rung, double& value);

}  // namespace nexp::samplers
