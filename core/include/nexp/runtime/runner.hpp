#pragma once
// Runs one experiment in this process: creates the run folder, writes its files, drives the method
// through a RunContext, and indexes the result.
//
// Run folder: <runs_dir>/<experiment>/<run-id>/ with config.yaml (resolved), overrides.txt, meta.json,
// status.json (atomic rename), metrics.jsonl (append-only, flushed), log.txt, artifacts/, checkpoints/.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/registry.hpp"

namespace nexp {

struct NEXP_API RunOptions {
  std::string command_line;                 // recorded in meta.json
  std::vector<std::string> overrides;       // as typed, recorded in overrides.txt
  std::optional<std::filesystem::path> folder;  // use this folder (sweep trials); else a new one
  std::string sweep;                        // the sweep folder this run belongs to, if any
  int trial = -1;                           // its index in the sweep
  bool handle_signals = true;               // SIGINT/SIGTERM/SIGUSR1 request a stop
  int threads = 0;                          // > 0: use this many threads whatever the config says
  int max_threads = 0;                      // > 0: at most this many (a sweep's share of the cores)
  // For tests of resume: request a stop right after the n-th checkpoint is committed (0: never).
  int stop_after_checkpoints = 0;
};

struct NEXP_API RunResult {
  std::string id;
  std::filesystem::path folder;
  std::string status;  // completed, failed, interrupted
  std::string error;
  std::map<std::string, double> summary;
  double seconds = 0;
  int exit_code() const;  // 0 completed, 1 failed or interrupted, 2 config/data error
  bool config_error = false;
};

// Runs `experiment` from the start.
NEXP_API RunResult run_experiment(const Experiment& experiment, const RunOptions& options,
                                  Registry& registry);

// Continues the run in `folder` from its latest checkpoint (or from the start when it has none),
// with the config saved in the folder.
NEXP_API RunResult resume_run(const std::filesystem::path& folder, const RunOptions& options,
                              Registry& registry);

// A new run id: <yyyymmdd-HHMMSS>-<first 8 hex of the config hash>-<4 random hex>.
NEXP_API std::string new_run_id(const std::string& config_hash);

}  // namespace nexp
