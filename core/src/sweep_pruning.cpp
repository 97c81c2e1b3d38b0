// Pruning in the local launcher (sweep_pruning.hpp).
#include "sweep_pruning.hpp"

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

namespace nexp::detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Each complete line of a metrics.jsonl (a line being written is left for the next read).
template <class F>
void for_each_line(const fs::path& run_folder, F&& f) {
  std::ifstream in(run_folder / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: still being written
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("step") && j["step"].is_number_integer()) f(j);
  }
}

}  // namespace

LastLogged last_logged(const fs::path& run_folder) {
  LastLogged out;
  for_each_line(run_folder, [&](const json& j) {
    out.step = j["step"].get<std::int64_t>();
    for (const auto& [k, v] : j.items())
      if (k != "step" && k != "time" && v.is_number()) out.values[k] = v.get<double>();
  });
  return out;
}

samplers::Curve read_curve(const fs::path& run_folder, const std::string& metric, Direction mode) {
  samplers::Curve c;
  for_each_line(run_folder, [&](const json& j) {
    if (!j.contains(metric) || !j[metric].is_number()) return;
    const double v = j[metric].get<double>();
    c.values[j["step"].get<std::int64_t>()] = mode == Direction::Minimize ? v : -v;
  });
  return c;
}

PruneWatch::PruneWatch(const SweepPlan& plan) : plan_(plan) {
  options_.type = plan.pruner.type;
  options_.min_step = plan.pruner.min_step;
  options_.reduction = plan.pruner.reduction;
  options_.startup_trials = plan.pruner.startup_trials;
}

std::optional<std::string> PruneWatch::check(int index) {
  const SweepPruner& p = plan_.pruner;
  samplers::Curve mine = read_curve(plan_.trials[static_cast<std::size_t>(index)].folder, p.metric, p.mode);
  if (mine.values.empty()) return std::nullopt;
  const std::int64_t last = mine.values.rbegin()->first;
  std::int64_t& since = checked_.emplace(index, 0).first->second;
  if (last <= since) return std::nullopt;
  std::vector<samplers::Curve> others;
  for (const auto& t : plan_.trials) {
    if (t.index == index) continue;
    if (auto it = ended_.find(t.index); it != ended_.end()) {
      others.push_back(it->second);
      continue;
    }
    const TrialState s = trial_status(t).state;
    if (s == TrialState::Pending) continue;
    samplers::Curve c = read_curve(t.folder, p.metric, p.mode);
    c.number = t.index;
    c.completed = s == TrialState::Completed;
    if (s == TrialState::Completed || s == TrialState::Pruned || s == TrialState::Failed) ended_[t.index] = c;
    others.push_back(std::move(c));
  }
  std::string reason;
  const bool prune = samplers::should_prune(options_, mine, others, since, reason);
  since = last;
  if (!prune) return std::nullopt;
  return reason;
}

}  // namespace nexp::detail
