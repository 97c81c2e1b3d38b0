#pragma once
// Sweeps: the grammar, the expansion into trials, the sweep folder, and the launchers.
//
// Grammar (on the command line after -m, or as values of a YAML `sweep: {params: {...}}` block):
//   a=1,2,3   a=choice(x,y)   a=range(start,stop[,step])   (grid axes; a YAML list in the block too)
//   a=uniform(lo,hi)   a=loguniform(lo,hi)   a=int(uniform(lo,hi))   a=int(loguniform(lo,hi)) (sampled)
// Grid axes form a Cartesian product; for each grid point, `samples` draws of the sampled axes (with a
// fixed sampling seed, so the same sweep always expands to the same trials).
//
// Folder: <runs_dir>/<experiment>/sweep/ with sweep.yaml (the definition and every trial's resolved
// config), trial-<index>-<hash8>/ (each a normal run folder), trials.csv, best.yaml, slurm/.
// A trial is identified by the hash of its resolved config: re-running a sweep skips completed trials.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
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

struct NEXP_API SweepPlan {
  std::string experiment;
  std::filesystem::path folder;
  std::filesystem::path runs_dir;
  std::string method;
  std::vector<SweepAxis> axes;
  int samples = 0;
  std::uint64_t sampling_seed = 0;
  std::optional<Objective> objective;
  YAML::Node slurm;
  std::string base_config;  // resolved, without the sweep block
  std::vector<SweepTrial> trials;
  // What must match for a re-run to continue this sweep: base config, axes, samples, seed.
  std::string definition() const;
};

// Expands a config plus overrides into trials. `axes_text` are the -m expressions ("a=1,2"); the
// config's own `sweep:` block adds its axes (the command line wins for the same key).
// `samples` (--samples) replaces the block's samples when given.
NEXP_API SweepPlan plan_sweep(const std::filesystem::path& config, const std::vector<Override>& overrides,
                              const std::vector<std::string>& axes_text, const Registry& registry,
                              std::optional<int> samples = std::nullopt);

// Whether the config file has a non-empty `sweep:` block once the overrides that name `sweep` are applied
// (`~sweep` or `sweep=null` run a sweep config as one plain run).
NEXP_API bool config_has_sweep(const std::filesystem::path& config, const std::vector<std::string>& overrides = {});

// Creates the folder and writes sweep.yaml. When sweep.yaml exists with another definition, throws
// ConfigError showing the difference unless `force`.
NEXP_API void prepare_sweep_folder(const SweepPlan& plan, bool force);
// Reads a prepared sweep back (run-trial, sweep status, report).
NEXP_API SweepPlan load_sweep(const std::filesystem::path& folder);

enum class TrialState { Pending, Running, Completed, Failed, Interrupted };
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

struct NEXP_API LaunchOptions {
  std::vector<std::string> nexp_command;  // the nexp executable and its global flags
  int jobs = 1;
  double trial_timeout = 0;  // seconds; 0: none
  bool retry_failed = false;
  // slurm
  bool requeue = false;
  std::string signal = "USR1@90";  // --signal: which signal, how many seconds before the time limit
  bool wait = true;                // wait for the array to finish, showing progress
};

struct NEXP_API SweepOutcome {
  int total = 0, completed = 0, failed = 0, interrupted = 0, skipped = 0;
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

// The trials that still need running (not completed; failed only with retry_failed).
NEXP_API std::vector<int> pending_trials(const SweepPlan& plan, bool retry_failed);

// trials.csv and best.yaml in the sweep folder; prints the trials ranked by the objective.
NEXP_API void write_sweep_results(const SweepPlan& plan, std::ostream& out);
// Progress from the trials' own status files (`nexp sweep status`).
NEXP_API void print_sweep_status(const SweepPlan& plan, std::ostream& out);

}  // namespace nexp
