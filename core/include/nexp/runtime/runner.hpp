#pragma once
// Runs one experiment in this process: creates the run folder, writes its files, drives the method
// through a RunContext, and indexes the result.
//
// Run folder: <runs_dir>/<experiment>/<run-id>/ with config.yaml (resolved), overrides.txt, meta.json,
// status.json (atomic rename), metrics.jsonl (append-only, flushed), log.txt, artifacts/, checkpoints/.
//
// Once the folder exists, a run always ends in a terminal state: whatever escapes the method, the
// dataset factory or core (any exception type, even one thrown while writing the status), status.json
// ends `failed` with a readable error (as plain ASCII if the usual write fails), the index row follows,
// and the result comes back to the caller. Stop signals: see core/src/run_signals.hpp.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/registry.hpp"
#include "nexp/runtime/tracking.hpp"

namespace nexp {

struct RunResult;

struct NEXP_API RunOptions {
  std::string command_line;                 // recorded in meta.json
  std::vector<std::string> overrides;       // as typed, recorded in overrides.txt
  std::optional<std::filesystem::path> folder;  // use this folder (sweep trials); else a new one
  std::string sweep;                        // the sweep folder this run belongs to, if any
  int trial = -1;                           // its index in the sweep
  bool handle_signals = true;               // SIGINT/SIGTERM/SIGUSR1 request a stop
  int threads = 0;                          // > 0: use this many threads whatever the config says
  int max_threads = 0;                      // > 0: at most this many (a sweep's share of the cores)
  // The nexp executable and its global options (--plugin-dir ...), for the ranks of a distributed run
  // (empty: this executable alone).
  std::vector<std::string> nexp_command;
  // For tests of resume: request a stop right after the n-th checkpoint is committed (0: never).
  int stop_after_checkpoints = 0;
  // For tests of the stop signals: called once the final status is written and indexed, while the
  // run's signal handling is still in force.
  std::function<void(const RunResult&)> on_finished;
};

struct NEXP_API RunResult {
  std::string id;
  std::filesystem::path folder;
  RunStatus status = RunStatus::Failed;  // completed, failed or interrupted
  std::string error;                     // valid UTF-8
  std::string reason;                    // why it is interrupted (nexp::reason)
  std::map<std::string, double> summary;
  double seconds = 0;
  bool config_error = false;  // a config or data error (the user's input), not the method's failure
  bool aborted = false;       // a second stop signal came while core closed the run
  int exit_code() const;      // 0 completed, 1 failed or interrupted, 2 config/data error, 130 aborted
};

// Runs `experiment` from the start.
NEXP_API RunResult run_experiment(const Experiment& experiment, const RunOptions& options,
                                  Registry& registry);

// Continues the run in `folder` from its latest checkpoint (or from the start when it has none),
// with the config saved in the folder.
NEXP_API RunResult resume_run(const std::filesystem::path& folder, const RunOptions& options,
                              Registry& registry);

// One rank of a distributed run whose parent prepared `folder` (`nexp run-rank`; the rank, world
// size and rendezvous come from the environment the parent set). Rank 0 writes the run's status.
NEXP_API RunResult run_rank(const std::filesystem::path& folder, const RunOptions& options, Registry& registry);


}  // namespace nexp
