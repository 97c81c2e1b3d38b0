#pragma once
// The run index: <runs_dir>/nexp.db (SQLite, WAL, busy timeout). The run folders are the truth; the
// index is for queries, is written by several processes at once during sweeps, and is rebuilt from
// the folders by reindex().
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nexp/export.hpp"

namespace nexp {

// A run's status, as status.json and the index store it (the lower-case names of to_string).
//   created      the folder exists, the run has not started
//   running      its process is working on it (status.json records pid, host and process start)
//   completed    the method returned normally
//   failed       an error ended it; `error` says which
//   interrupted  a stop signal ended it, or its process is gone; `reason` says which, and
//                `nexp run --resume` continues it from its last checkpoint
// Pruned: a sweep's pruner stopped the run early (its summary holds its last values); it is not run again.
enum class RunStatus { Created, Running, Completed, Failed, Interrupted, Pruned };
NEXP_API const char* to_string(RunStatus status);
NEXP_API std::optional<RunStatus> parse_run_status(const std::string& text);
NEXP_API std::ostream& operator<<(std::ostream& out, RunStatus status);

// Why a run is interrupted (status.json's "reason").
namespace reason {
inline constexpr const char* checkpointed = "checkpointed";  // stopped by a signal at a committed checkpoint
inline constexpr const char* stopped = "stopped";            // stopped by a signal; the method keeps no checkpoint
inline constexpr const char* aborted = "aborted";            // a second stop signal ended it at once
inline constexpr const char* process_gone = "process gone";  // marked running, but its process no longer exists
}  // namespace reason

// The process that runs a run, as status.json records it: a `running` status whose process is gone
// (killed, crashed, the machine rebooted) is recognised by its pid, host and start time.
struct NEXP_API RunProcess {
  long pid = 0;
  std::string host;
  std::uint64_t start = 0;  // clock ticks after boot (/proc/<pid>/stat), which tells a reused pid apart
  static RunProcess self();
  void write_to(nlohmann::json& status) const;
};
// True when `status` (a status.json) says running, was written on this host, and its process no
// longer exists (or its pid now belongs to another process). Runs of other hosts are never judged.
NEXP_API bool process_gone(const nlohmann::json& status);

struct NEXP_API RunRecord {
  std::string id, experiment, method, dataset, config_hash, device, error, sweep;
  RunStatus status = RunStatus::Created;
  std::string reason;  // why it is interrupted (see nexp::reason); empty otherwise
  std::filesystem::path folder;
  int trial = -1;
  std::uint64_t seed = 0;
  std::string created, started, ended;  // ISO 8601, UTC
  double seconds = 0;
  std::map<std::string, std::string> params;  // flattened resolved config: "params.lr", "dataset.n", "seed"
  std::map<std::string, double> summary;
  std::string status_text() const;  // "interrupted (process gone)", "completed", ...
};

// Reads a run folder's own files (status.json, meta.json, config.yaml). Throws DataError when the
// folder is not a run. A running run whose process is gone reads as interrupted (process gone).
NEXP_API RunRecord read_run_folder(const std::filesystem::path& folder);
// Every step of metrics.jsonl: name -> [(step, value)].
NEXP_API std::map<std::string, std::vector<std::pair<std::int64_t, double>>> read_metric_series(
    const std::filesystem::path& folder);
NEXP_API nlohmann::json run_to_json(const RunRecord& record);

struct NEXP_API RunQuery {
  std::string experiment, method, sweep;
  std::optional<RunStatus> status;
  std::string sort_metric;   // summary metric to sort by
  bool descending = true;
  int limit = 0;             // 0: all
};

class NEXP_API RunIndex {
 public:
  // Opens (and creates) <runs_dir>/nexp.db.
  explicit RunIndex(const std::filesystem::path& runs_dir);
  ~RunIndex();
  RunIndex(const RunIndex&) = delete;
  RunIndex& operator=(const RunIndex&) = delete;

  // Writes the run's row, its params and summaries, replacing what was there (one transaction).
  void upsert(const RunRecord& record);
  // Drops the index and rebuilds it from every run folder below runs_dir. Returns the run count.
  int reindex();
  // Reads again the folder of each run the index lists as running, and updates the rows that ended
  // or whose process is gone. Returns how many rows changed.
  int refresh_running();
  std::vector<RunRecord> query(const RunQuery& query) const;
  // A run by full id or unique prefix; nullopt when none; throws ConfigError when ambiguous.
  std::optional<RunRecord> find(const std::string& id) const;
  const std::filesystem::path& runs_dir() const { return runs_dir_; }

 private:
  struct Db;
  void add_missing_columns();
  std::filesystem::path runs_dir_;
  std::unique_ptr<Db> db_;
};

// Finds a run given an id, an id prefix or a folder path: the folder when it is one, else the index.
NEXP_API std::filesystem::path locate_run(const std::string& id_or_folder,
                                          const std::filesystem::path& runs_dir);
// Where runs go and are looked for when neither --runs-dir nor the config says: $NEXP_RUNS_DIR, else
// ./runs.
NEXP_API std::string default_runs_dir();

}  // namespace nexp
