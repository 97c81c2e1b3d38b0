// nexp run, nexp validate.
#include <fmt/format.h>

#include <iostream>

#include "app.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/runner.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"

namespace nexp::cli {

namespace {

struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string resume;
  std::string runs_dir;
  bool multirun = false;
  SweepArgs sweep;
};

Experiment load(const RunArgs& args, App& app) {
  auto overrides = split_overrides(args.overrides, /*multirun=*/false).overrides;
  if (!args.runs_dir.empty()) overrides.push_back(parse_override("runs_dir=" + args.runs_dir));
  return load_experiment(args.config, overrides, app.with_plugins_for(args.config, args.overrides));
}

bool has_sweep_block(const RunArgs& args) { return config_has_sweep(args.config, args.overrides); }

void print_result(const RunResult& r, const std::vector<std::string>& selected) {
  std::vector<std::vector<std::string>> rows;
  // The config's metrics first, then the rest of the summary.
  for (const auto& name : selected)
    if (auto it = r.summary.find(name); it != r.summary.end()) rows.push_back({name, format_number(it->second)});
  for (const auto& [name, value] : r.summary)
    if (std::find(selected.begin(), selected.end(), name) == selected.end()) rows.push_back({name, format_number(value)});
  if (!rows.empty()) print_table(std::cout, {"metric", "value"}, rows);
  std::cout << "run: " << r.id << " " << r.folder.string() << std::endl;
}

}  // namespace

void add_run_commands(CLI::App& cli, App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run = cli.add_subcommand("run", "Run an experiment: nexp run CONFIG [key=value ...]");
  run->add_option("config", args->config, "the experiment's YAML file");
  run->add_option("overrides", args->overrides, "overrides: a.b=v (set), +a.b=v (add), ~a.b (delete)");
  run->add_option("--resume", args->resume, "continue an interrupted run (id, id prefix or folder) from its checkpoint");
  run->add_option("--runs-dir", args->runs_dir, "where runs go (default: the config's runs_dir, else ./runs)");
  auto& sw = args->sweep;
  run->add_flag("-m,--multirun", args->multirun, "sweep: overrides like a=1,2 or a=range(0,5) become axes");
  run->add_flag("--dry-run", sw.dry_run, "sweep: print the expanded trials, run nothing");
  run->add_option("--jobs,-j", sw.jobs, "sweep: trials at once (local), or the array's parallel limit (slurm)")->check(CLI::PositiveNumber);
  run->add_option("--launcher", sw.launcher, "sweep: local (child processes) or slurm (one job array)")
      ->check(CLI::IsMember({"local", "slurm"}));
  run->add_option("--trial-timeout", sw.trial_timeout, "sweep: seconds after which a trial is stopped and marked failed");
  run->add_option("--samples", sw.samples, "sweep: draws of the sampled axes per grid point (overrides sweep.samples)");
  run->add_option("--sampler", sw.sampler, "sweep: grid, random, tpe, cmaes or nsga2 (the last three propose each trial from the results so far; overrides sweep.sampler)");
  run->add_option("--trials", sw.trials, "sweep: trials in all for random and tpe (overrides sweep.trials)");
  run->add_flag("--retry-failed", sw.retry_failed, "sweep: run failed trials again");
  run->add_flag("--force", sw.force, "sweep: continue in a sweep folder whose definition changed");
  run->add_flag("--requeue", sw.requeue, "slurm: requeue a task stopped by pre-emption or the time limit");
  run->add_option("--signal", sw.signal, "slurm: signal and lead time before the limit, SIG@seconds (default USR1@90)");
  run->add_flag("--no-wait", sw.no_wait, "slurm: return after submitting");
  run->callback([args, &app] {
    if (args->resume.empty() && !args->config.empty() && (args->multirun || !args->sweep.sampler.empty() || has_sweep_block(*args))) {
      args->sweep.config = args->config;
      args->sweep.overrides = args->overrides;
      args->sweep.runs_dir = args->runs_dir;
      if (int rc = run_sweep(app, args->sweep); rc != 0) throw CLI::RuntimeError(rc);
      return;
    }
    RunOptions options;
    options.command_line = app.argv_text;
    options.overrides = args->overrides;
    options.nexp_command = app.child_command();
    RunResult result;
    std::vector<std::string> selected;
    if (!args->resume.empty()) {
      if (!args->config.empty() && args->config != args->resume)
        throw ConfigError("`nexp run --resume RUN` continues a run with its saved config; give no config file or "
                          "overrides with it");
      const std::string runs_dir = args->runs_dir.empty() ? default_runs_dir() : args->runs_dir;
      auto folder = locate_run(args->resume, runs_dir);
      result = resume_run(folder, options, app.with_plugins_for(folder / "config.yaml", {}));
    } else {
      if (args->config.empty())
        throw ConfigError("`nexp run` needs a config file: nexp run configs/<plugin>/<experiment>.yaml [key=value ...]");
      Experiment e = load(*args, app);
      selected = e.metrics;
      result = run_experiment(e, options, app.registry());
    }
    print_result(result, selected);
    if (result.exit_code() != 0) throw CLI::RuntimeError(result.exit_code());
  });

  auto rank_folder = std::make_shared<std::string>();
  auto* rank = cli.add_subcommand("run-rank", "Run one rank of a distributed run (what `nexp run` starts per rank)");
  rank->add_option("folder", *rank_folder, "the run folder its parent prepared")->required();
  rank->callback([rank_folder, &app] {
    RunOptions options;
    options.command_line = app.argv_text;
    const std::filesystem::path folder = *rank_folder;
    RunResult r = run_rank(folder, options, app.with_plugins_for(folder / "config.yaml", {}));
    // An interrupted rank is no failure: the parent reads the run's state from rank 0's status.
    if (r.status == RunStatus::Failed) throw CLI::RuntimeError(r.config_error ? 2 : 1);
  });

  auto vargs = std::make_shared<RunArgs>();
  auto* validate = cli.add_subcommand("validate", "Check a config and its overrides against the schemas; print the resolved config");
  validate->add_option("config", vargs->config, "the experiment's YAML file")->required();
  validate->add_option("overrides", vargs->overrides, "overrides as for `nexp run`");
  validate->callback([vargs, &app] {
    Experiment e = load(*vargs, app);
    std::cout << e.to_yaml_text();
    logger().info("{} is valid ({} on {}, config hash {})", vargs->config, e.method, e.device, e.config_hash().substr(0, 12));
    if (has_sweep_block(*vargs)) {  // every trial of its sweep block must be a valid config too
      auto overrides = split_overrides(vargs->overrides, false).overrides;
      const SweepPlan plan = plan_sweep(vargs->config, overrides, {}, app.registry());
      if (plan.adaptive())
        logger().info("its sweep block is valid: {} trials proposed by {} (the bounds of its space checked)", plan.budget,
                      plan.sampler);
      else
        logger().info("its sweep block expands to {} valid trials", plan.trials.size());
    }
  });
}

}  // namespace nexp::cli
