// Trial state from each trial's own status.json, and running one trial (nexp/runtime/sweep.hpp).
#include "nexp/runtime/sweep.hpp"

#include <signal.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "json_fields.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* trial_state_name(TrialState state) {
  switch (state) {
    case TrialState::Pending: return "pending";
    case TrialState::Running: return "running";
    case TrialState::Completed: return "completed";
    case TrialState::Failed: return "failed";
    case TrialState::Interrupted: return "interrupted";
    case TrialState::Pruned: return "pruned";
  }
  return "?";
}

TrialStatus trial_status(const SweepTrial& trial) {
  TrialStatus s;
  std::ifstream in(trial.folder / "status.json");
  if (!in) return s;
  json j = json::parse(in, nullptr, false);
  if (!j.is_object()) return s;
  const std::string status = detail::text_field(j, "status");
  s.error = detail::text_field(j, "error");
  s.seconds = detail::real_field(j, "seconds");
  s.has_checkpoint = fs::exists(trial.folder / "checkpoints" / "LATEST");
  if (j.contains("summary") && j["summary"].is_object())
    for (auto& [k, v] : j["summary"].items()) s.summary[k] = v.is_number() ? v.get<double>() : std::nan("");
  s.reason = detail::text_field(j, "reason");
  switch (parse_run_status(status).value_or(RunStatus::Created)) {
    case RunStatus::Completed: s.state = TrialState::Completed; break;
    case RunStatus::Failed: s.state = TrialState::Failed; break;
    case RunStatus::Interrupted: s.state = TrialState::Interrupted; break;
    case RunStatus::Pruned: s.state = TrialState::Pruned; break;
    case RunStatus::Running:
      // A process that is gone left its trial behind: it resumes like an interrupted one.
      s.state = process_gone(j) ? TrialState::Interrupted : TrialState::Running;
      if (s.state == TrialState::Interrupted) s.reason = reason::process_gone;
      break;
    case RunStatus::Created: break;
  }
  return s;
}

std::vector<int> pending_trials(const SweepPlan& plan, bool retry_failed) {
  std::vector<int> out;
  for (const auto& t : plan.trials) {
    TrialState s = trial_status(t).state;
    if (s == TrialState::Completed || s == TrialState::Running || s == TrialState::Pruned) continue;
    if (s == TrialState::Failed && !retry_failed) continue;
    out.push_back(t.index);
  }
  return out;
}

RunResult run_trial(const SweepPlan& plan, int index, int threads, const RunOptions& base_options, Registry& registry) {
  if (index < 0 || index >= static_cast<int>(plan.trials.size()))
    throw ConfigError(fmt::format("sweep '{}' has trials 0..{}; there is no trial {}", plan.folder.string(),
                                  plan.trials.size() - 1, index));
  const SweepTrial& trial = plan.trials[static_cast<size_t>(index)];
  RunOptions options = base_options;
  options.folder = trial.folder;
  options.sweep = plan.folder.string();
  options.trial = index;
  options.max_threads = threads;  // the launcher's share of the cores; a smaller `threads:` wins
  TrialStatus s = trial_status(trial);
  if (s.state == TrialState::Completed || s.state == TrialState::Pruned) {
    RunResult r;
    r.id = trial.folder.filename().string();
    r.folder = trial.folder;
    r.status = s.state == TrialState::Pruned ? RunStatus::Pruned : RunStatus::Completed;
    r.summary = s.summary;
    logger().info("trial {} already {}; skipped", index, trial_state_name(s.state));
    return r;
  }
  if (s.state == TrialState::Interrupted && fs::exists(trial.folder / "config.yaml"))
    return resume_run(trial.folder, options, registry);
  Experiment e = resolve_experiment(YAML::Load(trial.config), plan.folder / "sweep.yaml", {}, registry);
  return run_experiment(e, options, registry);
}
}  // namespace nexp
