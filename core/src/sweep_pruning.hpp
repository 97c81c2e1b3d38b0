#pragma once
// Pruning in the local launcher: the trials' curves read from their metrics.jsonl, and the pruner's
// decision for a running trial (samplers/pruner.hpp). Core-internal.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "nexp/runtime/sweep.hpp"
#include "samplers/pruner.hpp"

namespace nexp::detail {

// What a run logged last: each metric's last value, and the last step (0 when it logged nothing).
struct LastLogged {
  std::map<std::string, double> values;
  std::int64_t step = 0;
};
LastLogged last_logged(const std::filesystem::path& run_folder);

// One metric's curve from a run's metrics.jsonl, oriented so that lower is better.
samplers::Curve read_curve(const std::filesystem::path& run_folder, const std::string& metric, Direction mode);

class PruneWatch {
 public:
  explicit PruneWatch(const SweepPlan& plan);
  // Whether running trial `index` should stop now, and why.
  std::optional<std::string> check(int index);

 private:
  const SweepPlan& plan_;
  samplers::PrunerOptions options_;
  std::map<int, samplers::Curve> ended_;  // trials that ended: their curves no longer change
  std::map<int, std::int64_t> checked_;   // each running trial's last step already decided on
};

}  // namespace nexp::detail
