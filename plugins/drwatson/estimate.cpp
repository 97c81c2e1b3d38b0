#include "estimate.hpp"

#include <fmt/format.h>
#include <nexp/random.hpp>
#include <nexp/stats.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "policies.hpp"
#include "simulator.hpp"

namespace drwatson {

void RepairHistory::append(const RepairHistory& other) {
  rounds.insert(rounds.end(), other.rounds.begin(), other.rounds.end());
  tests.insert(tests.end(), other.tests.begin(), other.tests.end());
  sweeps.insert(sweeps.end(), other.sweeps.begin(), other.sweeps.end());
}

std::pair<double, double> Count::interval(double level) const {
  // Equal-tailed, except at the edges: with no successes (no failures) the lower (upper) bound is 0
  // (1), as in Clopper and Pearson's interval, so that a probability that is exactly 0 is covered.
  const double a = hits + 1.0, b = trials - hits + 1.0, tail = (1.0 - level) / 2;
  return {hits > 0 ? nexp::stats::beta_quantile(tail, a, b) : 0.0,
          hits < trials ? nexp::stats::beta_quantile(1.0 - tail, a, b) : 1.0};
}

FleetSpec public_view(const FleetSpec& fleet) {
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  FleetSpec f = fleet;
  for (auto& a : f.actions) a.p_fix = kUnknown;
  for (auto& t : f.tests) {
    std::fill(t.detect.begin(), t.detect.end(), kUnknown);
    t.false_alarm = kUnknown;
  }
  for (auto& c : f.causes) {
    c.sweep_find = kUnknown;
    c.recur_per_day = kUnknown;
    for (auto& s : c.symptoms) s.p = kUnknown;
    for (auto& x : c.fixes) x.share = kUnknown;
  }
  return f;
}

RepairHistory training_period(const FleetSpec& fleet, int platform, std::uint64_t seed, double days,
                              std::int64_t* incidents) {
  const IncumbentPolicy incumbent(fleet);
  RepairHistory history;
  std::int64_t seen = 0;
  double left = days;
  for (std::uint64_t r = 0; left > 1e-9; ++r) {
    SimOptions o;
    o.platform = platform;
    o.seed = nexp::Random::stream(seed, "training-fleet", r)();
    o.horizon_days = std::min(left, fleet.job.horizon_days);
    o.history = &history;
    seen += static_cast<std::int64_t>(simulate(fleet, incumbent, o).interruptions);
    left -= o.horizon_days;
  }
  if (incidents) *incidents = seen;
  return history;
}

CostParameters estimate_parameters(const FleetSpec& layout, const RepairHistory& history) {
  const ClassTable classes(layout);
  const std::size_t A = layout.actions.size(), T = layout.tests.size(), C = layout.causes.size();
  const auto K = static_cast<std::size_t>(classes.size());
  CostParameters p;
  p.fix_counts.assign(A, std::vector<Count>(K));
  p.detect_counts.assign(T, std::vector<Count>(C));
  p.false_alarm_counts.assign(T, Count{});
  p.sweep_counts.assign(C, Count{});
  for (const auto& r : history.rounds) {
    if (r.cause == kNoIndex) continue;  // a healthy node: nothing to fix
    Count& c = p.fix_counts[static_cast<std::size_t>(r.action)][static_cast<std::size_t>(classes.of(r.cause, r.fix))];
    c.trials += 1, c.hits += r.fixed;
  }
  for (const auto& t : history.tests) {
    Count& c = t.cause == kNoIndex ? p.false_alarm_counts[static_cast<std::size_t>(t.test)]
                                   : p.detect_counts[static_cast<std::size_t>(t.test)][static_cast<std::size_t>(t.cause)];
    c.trials += 1, c.hits += t.failed;
  }
  for (const auto& s : history.sweeps) {
    Count& c = p.sweep_counts[static_cast<std::size_t>(s.cause)];
    c.trials += 1, c.hits += s.found;
  }
  auto means = [](const std::vector<Count>& row) {
    std::vector<double> out;
    for (const auto& c : row) out.push_back(c.mean());
    return out;
  };
  for (const auto& row : p.fix_counts) p.fix.push_back(means(row));
  for (const auto& row : p.detect_counts) p.detect.push_back(means(row));
  p.false_alarm = means(p.false_alarm_counts);
  p.sweep_find = means(p.sweep_counts);
  return p;
}

CostParameters oracle_parameters(const FleetSpec& fleet) {
  const ClassTable classes(fleet);
  CostParameters p;
  p.source = "oracle";
  for (std::size_t a = 0; a < fleet.actions.size(); ++a) {
    std::vector<double> row(static_cast<std::size_t>(classes.size()), 1.0);
    for (std::size_t k = 1; k < row.size(); ++k) {
      const auto& e = classes.entries[k];
      row[k] = fleet.covers(static_cast<int>(a), e.cause, e.fix) ? fleet.actions[a].p_fix : 0.0;
    }
    p.fix.push_back(row);
  }
  for (const auto& t : fleet.tests) p.detect.push_back(t.detect), p.false_alarm.push_back(t.false_alarm);
  for (const auto& c : fleet.causes) p.sweep_find.push_back(c.sweep_find);
  return p;
}

}  // namespace drwatson
