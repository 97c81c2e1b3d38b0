// Sweeps from the CLI: `nexp run -m` (dispatched from cmd_run.cpp), `nexp run-trial`, `nexp sweep status`.
#include <fmt/format.h>

#include <iostream>

#include "app.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp::cli {

std::vector<std::string> App::child_command() const {
  std::vector<std::string> cmd{(executable_dir() / "nexp").string()};
  for (const auto& d : plugin_dirs) cmd.insert(cmd.end(), {"--plugin-dir", std::filesystem::absolute(d).string()});
  return cmd;
}

int run_sweep(App& app, const SweepArgs& a) {
  SplitOverrides split = split_overrides(a.overrides, true);
  if (!a.runs_dir.empty()) split.overrides.push_back(parse_override("runs_dir=" + a.runs_dir));
  SweepSampling sampling;
  if (a.samples >= 0) sampling.samples = a.samples;
  if (a.trials >= 0) sampling.trials = a.trials;
  sampling.sampler = a.sampler;
  Registry& registry = app.with_plugins_for(a.config, a.overrides);
  SweepPlan plan = plan_sweep(a.config, split.overrides, split.axes, registry, sampling);
  if (plan.trials.empty() && !plan.adaptive()) throw ConfigError("the sweep expands to no trial");
  if (a.dry_run && plan.adaptive()) {
    std::cout << fmt::format("an adaptive sweep ({} sampler, {} trials of {}): each trial is proposed from the results "
                             "of those that ended, so none can be listed before they run; {} exist in {} "
                             "(dry run: nothing ran)\n",
                             plan.sampler, plan.budget, plan.method, plan.trials.size(), plan.folder.string());
    return 0;
  }
  if (a.dry_run) {
    std::vector<std::string> header{"trial"};
    for (const auto& axis : plan.axes) header.push_back(axis.key);
    header.insert(header.end(), {"config hash", "state"});
    std::vector<std::vector<std::string>> rows;
    for (const auto& t : plan.trials) {
      std::vector<std::string> row{std::to_string(t.index)};
      for (const auto& axis : plan.axes) row.push_back(t.value(axis.key));
      row.push_back(t.hash.substr(0, 12));
      row.push_back(std::filesystem::exists(plan.folder / "sweep.yaml") ? trial_state_name(trial_status(t).state) : "new");
      rows.push_back(std::move(row));
    }
    print_table(std::cout, header, rows);
    std::cout << fmt::format("{} trials of {} in {} (dry run: nothing ran)\n", plan.trials.size(), plan.method,
                             plan.folder.string());
    return 0;
  }
  prepare_sweep_folder(plan, a.force);
  std::unique_ptr<AdaptiveSweep> adaptive;
  if (plan.adaptive()) {
    adaptive = std::make_unique<AdaptiveSweep>(plan, a.config, split.overrides, registry);
    logger().info("sweep {}: {} trials of {} proposed by {} ({} done before; {})", plan.folder.string(), plan.budget,
                  plan.method, plan.sampler, plan.trials.size(), a.launcher);
  } else {
    logger().info("sweep {}: {} trials of {} ({})", plan.folder.string(), plan.trials.size(), plan.method, a.launcher);
  }
  LaunchOptions options;
  options.adaptive = adaptive.get();
  options.nexp_command = app.child_command();
  options.jobs = a.jobs;
  options.trial_timeout = a.trial_timeout;
  options.retry_failed = a.retry_failed;
  options.requeue = a.requeue;
  options.signal = a.signal;
  options.wait = !a.no_wait;
  SweepOutcome outcome = a.launcher == "slurm" ? launch_slurm(plan, options) : launch_local(plan, options);
  if (a.launcher == "slurm" && a.no_wait) {
    std::cout << "sweep: " << plan.folder.string() << std::endl;
    return 0;
  }
  write_sweep_results(plan, std::cout);
  std::cout << "sweep: " << plan.folder.string() << std::endl;
  if (outcome.stopped) logger().warn("stopped; run the same command again to resume");
  const auto pending = pending_trials(plan, false);
  int failed = 0;
  for (const auto& t : plan.trials) failed += trial_status(t).state == TrialState::Failed;
  if (failed > 0) logger().warn("{} trial{} failed; `--retry-failed` runs them again", failed, failed == 1 ? "" : "s");
  return outcome.stopped || failed > 0 || !pending.empty() ? 1 : 0;
}

void add_sweep_commands(CLI::App& cli, App& app) {
  struct TrialArgs {
    std::string folder, array_file;
    int index = -1, array_task = -1, threads = 0;
    bool requeue_on_stop = false;
  };
  auto t = std::make_shared<TrialArgs>();
  auto* rt = cli.add_subcommand("run-trial", "Run one trial of a prepared sweep (what launchers start)");
  rt->add_option("sweep", t->folder, "the sweep folder")->required();
  rt->add_option("index", t->index, "the trial's index");
  rt->add_option("--array-file", t->array_file, "a file of trial indices, one per line (Slurm arrays)");
  rt->add_option("--array-task", t->array_task, "the line of --array-file to run ($SLURM_ARRAY_TASK_ID)");
  rt->add_option("--threads", t->threads, "at most this many threads for this trial (the config's `threads:` when smaller; 0: the config's)");
  rt->add_flag("--requeue-on-stop", t->requeue_on_stop, "when stopped by a signal under Slurm, requeue the task");
  rt->callback([t, &app] {
    SweepPlan plan = load_sweep(t->folder);
    const int index = t->array_file.empty() ? t->index : trial_of_array_task(t->array_file, t->array_task);
    if (index < 0) throw ConfigError("run-trial needs a trial index (or --array-file and --array-task)");
    RunOptions options;
    options.command_line = app.argv_text;
    options.nexp_command = app.child_command();
    // The trial's resolved config names exactly the plugins it needs.
    const bool known = index < static_cast<int>(plan.trials.size());
    Registry& registry = app.with_plugins_for(known ? YAML::Load(plan.trials[index].config) : YAML::Node(), {});
    RunResult r = run_trial(plan, index, t->threads, options, registry);
    std::cout << "run: " << r.id << " " << r.folder.string() << std::endl;
    if (t->requeue_on_stop) requeue_slurm_task(r);
    if (r.exit_code() != 0) throw CLI::RuntimeError(r.exit_code());
  });

  auto* sweep = cli.add_subcommand("sweep", "Inspect sweeps");
  sweep->require_subcommand(1);
  auto folder = std::make_shared<std::string>();
  auto* status = sweep->add_subcommand("status", "Progress of a sweep, from its trials' own status files");
  status->add_option("folder", *folder, "the sweep folder (runs/<experiment>/sweep)")->required();
  status->callback([folder] { print_sweep_status(load_sweep(*folder), std::cout); });
}

}  // namespace nexp::cli
