// The median rule and ASHA (samplers/pruner.hpp).
#include "pruner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nexp::samplers {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

bool median_prunes(const PrunerOptions& o, const Curve& trial, const std::vector<Curve>& others, std::string& reason) {
  if (trial.values.empty()) return false;
  const std::int64_t step = trial.values.rbegin()->first;
  if (step < o.min_step) return false;
  int completed = 0;
  std::vector<double> at_step;
  for (const auto& c : others) {
    if (!c.completed) continue;
    ++completed;
    if (auto it = c.values.find(step); it != c.values.end() && std::isfinite(it->second)) at_step.push_back(it->second);
  }
  if (completed < o.startup_trials || at_step.empty()) return false;
  double best = INFINITY;
  for (const auto& [s, v] : trial.values) best = std::min(best, v);
  const double m = median(at_step);
  if (!(best > m) && std::isfinite(best)) return false;
  reason = fmt::format("median rule at step {}: best so far {:.6g} is worse than the median {:.6g} of {} completed trials",
                       step, best, m, at_step.size());
  return true;
}

std::vector<std::int64_t> asha_rungs(const PrunerOptions& o, std::int64_t last) {
  std::vector<std::int64_t> rungs;
  for (double r = static_cast<double>(std::max<std::int64_t>(o.min_step, 1)); r <= static_cast<double>(last); r *= o.reduction)
    rungs.push_back(static_cast<std::int64_t>(std::llround(r)));
  return rungs;
}

bool value_at_rung(const Curve& c, std::int64_t rung, double& value) {
  const auto it = c.values.lower_bound(rung);
  if (it == c.values.end()) return false;
  value = it->second;
  return true;
}

bool asha_prunes(const PrunerOptions& o, const Curve& trial, const std::vector<Curve>& others, std::int64_t since,
                 std::string& reason) {
  if (trial.values.empty()) return false;
  for (const std::int64_t rung : asha_rungs(o, trial.values.rbegin()->first)) {
    if (rung <= since) continue;  // decided when the trial passed it
    double mine = 0;
    value_at_rung(trial, rung, mine);
    std::vector<double> competing{mine};
    for (const auto& c : others) {
      double v = 0;
      if (value_at_rung(c, rung, v)) competing.push_back(v);
    }
    std::sort(competing.begin(), competing.end());
    // The best len / reduction go on (at least the best one).
    const auto promoted = std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(competing.size()) / o.reduction));
    const double threshold = competing[promoted - 1];
    if (std::isfinite(mine) && mine <= threshold) continue;
    reason = fmt::format("ASHA rung at step {}: {:.6g} is not among the best {} of {} values there (threshold {:.6g})", rung,
                         mine, promoted, competing.size(), threshold);
    return true;
  }
  return false;
}

bool should_prune(const PrunerOptions& o, const Curve& trial, const std::vector<Curve>& others, std::int64_t since,
                  std::string& reason) {
  if (o.type == "median") return median_prunes(o, trial, others, reason);
  if (o.type == "asha") return asha_prunes(o, trial, others, since, reason);
  return false;
}

}  // namespace nexp::samplers
