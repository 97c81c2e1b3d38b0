#pragma once
// Sweeps: the grammar, the expansion into trials, the sweep folder, and the launchers.
//
// Grammar (on the command line after -m, or as values of a YAML `sweep: {params: {...}}` block):
//   a=1,2,3   a=choice(x,y)   a=range(start,stop[,step])   (grid axes; a YAML list in the block too)
//   a=uniform(lo,hi)   a=loguniform(lo,hi)   a=int(uniform(lo,hi))   a=int(loguniform(lo,hi)) (sampled)
// Grid axes form a Cartesian product; for each grid point, `samples` draws of the sampled axes (with a
// fixed sampling seed, so the same sweep always expands to the same trials).
//
// Adaptive sweeps (`sweep: {sampler: tpe, trials: N}`, or -m ... --sampler tpe --trials N): the axes
// are a search space (value lists and choice(...) are categorical, uniform/loguniform/int(...) are
// numeric), and a sampler proposes each trial from the results of the trials that have ended, as the
// launcher asks for one (AdaptiveSweep). The objective (`objective:`) is what it optimises. The trial
// budget is not part of the definition: running the same sweep with a larger --trials continues it.
//
// Folder: <runs_dir>/<experiment>/sweep/ with sweep.yaml (the definition and every trial's resolved
// config), trial-<index>-<hash8>/ (each a normal run folder), trials.csv, best.yaml, slurm/.
// A trial is identified by the hash of its resolved config: re-running a sweep skips completed trials.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/runner.hpp"

namespace nexp {

struct NEXP_API SweepAxis {
  enum class Kind { Values, Uniform, LogUniform };
  std::string key;
  std::string expression;           // as written
  Kind kind = Kind::Values;
  std::vector<std::string> values;  // Values: each as YAML text
  double lo = 0, hi = 0;            // Uniform, LogUniform
  bool integer = false;             // int(...): draws are integers in [lo, hi]
  std::string origin;               // where it was written, for messages
  std::string prefix;               // "+" or "++" when the axis adds its key (-m +key=a,b)
  bool sampled() const { return kind != Kind::Values; }
};

// True when `value` is a sweep expression (a top-level comma, or one of the functions above).
NEXP_API bool is_sweep_expression(const std::string& value);
// Parses one axis; `origin` names where it came from, for errors.
NEXP_API SweepAxis parse_axis(const std::string& key, const std::string& expression, const std::string& origin);

struct NEXP_API SweepTrial {
  int index = 0;
  std::vector<std::pair<std::string, std::string>> assignment;  // key -> value, in axis order
  std::string hash;                                             // the resolved config's hash
  std::string config;                                           // the resolved config (YAML text)
  std::filesystem::path folder;
  std::string value(const std::string& key) const;  // the value this trial gives an axis ("" if none)
};

// `sweep: {pruner: {...}}`: stops trials early from the intermediate values they log (samplers/pruner.hpp
// in core's sources states both rules). Works with every sampler and the local launcher.
struct NEXP_API SweepPruner {
  std::string type = "none";  // none, median, asha
  std::string metric;         // the logged metric it reads (default: the objective's)
  Direction mode = Direction::Minimize;
  std::int64_t min_step = 1;  // median: no pruning before this step; asha: the first rung
  double reduction = 3;       // asha: rungs at min_step * reduction^k, the best 1/reduction go on
  int startup_trials = 5;     // median: completed trials before it prunes
  bool active() const { return type != "none"; }
};

struct NEXP_API SweepPlan {
  std::string experiment;
  std::filesystem::path folder;
  std::filesystem::path runs_dir;
  std::string method;
  std::vector<SweepAxis> axes;
  int samples = 0;
  std::uint64_t sampling_seed = 0;
  std::optional<Objective> objective;  // the first of `objectives`
  std::vector<Objective> objectives;   // several: a multi-objective sweep (nsga2)
  YAML::Node slurm;
  std::string base_config;  // resolved, without the sweep block
  std::vector<SweepTrial> trials;
  std::string sampler;  // adaptive sweeps: tpe, cmaes or nsga2; empty for grid and random expansion
  int budget = 0;       // adaptive sweeps: trials in all
  SweepPruner pruner;
  bool adaptive() const { return !sampler.empty(); }
  // What must match for a re-run to continue this sweep: base config, axes, samples, seed (and the
  // sampler of an adaptive sweep).
  std::string definition() const;
};

// How a sweep draws its trials, from the command line (each replaces the `sweep:` block's own).
struct NEXP_API SweepSampling {
  std::optional<int> samples;  // --samples
  std::string sampler;         // --sampler: grid, random, or an adaptive sampler (tpe, cmaes, nsga2)
  std::optional<int> trials;   // --trials
};

// Expands a config plus overrides into trials. `axes_text` are the -m expressions ("a=1,2"); the
// config's own `sweep:` block adds its axes (the command line wins for the same key).
// `samples` (--samples) replaces the block's samples when given. An adaptive sweep's plan holds the
// trials its folder already has (none in a new folder); AdaptiveSweep adds the others.
NEXP_API SweepPlan plan_sweep(const std::filesystem::path& config, const std::vector<Override>& overrides,
                              const std::vector<std::string>& axes_text, const Registry& registry,
                              std::optional<int> samples = std::nullopt);
NEXP_API SweepPlan plan_sweep(const std::filesystem::path& config, const std::vector<Override>& overrides,
                              const std::vector<std::string>& axes_text, const Registry& registry,
                              const SweepSampling& sampling);

// Whether the config file has a non-empty `sweep:` block once the overrides that name `sweep` are applied
// (`~sweep` or `sweep=null` run a sweep config as one plain run).
NEXP_API bool config_has_sweep(const std::filesystem::path& config, const std::vector<std::string>& overrides = {});

// Creates the folder and writes sweep.yaml. When sweep.yaml exists with another definition, throws
// ConfigError showing the difference unless `force`.
NEXP_API void prepare_sweep_folder(const SweepPlan& plan, bool force);
// Reads a prepared sweep back (run-trial, sweep status, report).
NEXP_API SweepPlan load_sweep(const std::filesystem::path& folder);

enum class TrialState { Pending, Running, Completed, Failed, Interrupted, Pruned };
NEXP_API const char* trial_state_name(TrialState state);

struct NEXP_API TrialStatus {
  TrialState state = TrialState::Pending;
  std::string error;
  std::string reason;  // why it is interrupted (nexp::reason): checkpointed, aborted, process gone, ...
  std::map<std::string, double> summary;
  double seconds = 0;
  bool has_checkpoint = false;
};
// From the trial's own status.json. A "running" trial whose process is gone (same host) counts as
// interrupted: it resumes.
NEXP_API TrialStatus trial_status(const SweepTrial& trial);

// Runs one trial in this process (`nexp run-trial`): skips it if completed, resumes it if interrupted,
// else runs it from the start.
NEXP_API RunResult run_trial(const SweepPlan& plan, int index, int threads, const RunOptions& options,
                             Registry& registry);

// The trials of an adaptive sweep, proposed one at a time. The launcher asks for a trial whenever it
// has a free slot and reports each trial that ends; the order of those reports is the sampler's
// history, kept in the sweep folder's sampler.yaml so that a re-run continues the same search.
class NEXP_API AdaptiveSweep {
 public:
  // `plan` (prepared with prepare_sweep_folder) grows by one trial per proposal; `config`, `overrides`
  // and `registry` resolve each proposal into a trial config, as plan_sweep did.
  AdaptiveSweep(SweepPlan& plan, std::filesystem::path config, std::vector<Override> overrides,
                const Registry& registry);
  ~AdaptiveSweep();
  AdaptiveSweep(const AdaptiveSweep&) = delete;
  AdaptiveSweep& operator=(const AdaptiveSweep&) = delete;
  // The next trial (added to the plan and to sweep.yaml), or none when the budget is spent.
  std::optional<int> propose();
  int remaining() const;  // proposals left in the budget
  // Trial `index` ended (completed, failed, pruned): its result joins the history.
  void observe(int index);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct NEXP_API LaunchOptions {
  std::vector<std::string> nexp_command;  // the nexp executable and its global flags
  int jobs = 1;
  double trial_timeout = 0;  // seconds; 0: none
  bool retry_failed = false;
  AdaptiveSweep* adaptive = nullptr;  // asked for trials once the plan's own are started
  // slurm
  bool requeue = false;
  std::string signal = "USR1@90";  // --signal: which signal, how many seconds before the time limit
  bool wait = true;                // wait for the array to finish, showing progress
};

struct NEXP_API SweepOutcome {
  int total = 0, completed = 0, failed = 0, interrupted = 0, skipped = 0, pruned = 0;
  bool stopped = false;  // Ctrl-C
};

// Each trial a child process (`nexp run-trial`), `jobs` at once, threads split between them.
NEXP_API SweepOutcome launch_local(const SweepPlan& plan, const LaunchOptions& options);
// One `sbatch --array` job; tasks run `nexp run-trial`. Returns after submission unless options.wait.
NEXP_API SweepOutcome launch_slurm(const SweepPlan& plan, const LaunchOptions& options);
// The trial index on line `task` (0-based) of a Slurm array file (what `run-trial --array-file` reads).
NEXP_API int trial_of_array_task(const std::filesystem::path& array_file, int task);
// In a Slurm array task (`run-trial --requeue-on-stop`): a trial that a signal interrupted asks Slurm
// to requeue its task, which then resumes it from its checkpoint. Returns whether it was requeued.
NEXP_API bool requeue_slurm_task(const RunResult& result);

// The trials that still need running (not completed or pruned; failed only with retry_failed).
NEXP_API std::vector<int> pending_trials(const SweepPlan& plan, bool retry_failed);

// trials.csv and best.yaml in the sweep folder; prints the trials ranked by the objective.
NEXP_API void write_sweep_results(const SweepPlan& plan, std::ostream& out);
// Progress from the trials' own status files (`nexp sweep status`).
NEXP_API void print_sweep_status(const SweepPlan& plan, std::ostream& out);

}  // namespace nexp
