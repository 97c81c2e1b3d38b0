#pragma once
// The run index: <runs_dir>/nexp.db (SQLite, WAL, busy timeout). The run folders are the truth; the
// index is for queries, is written by several processes at once during sweeps, and is rebuilt from
// the folders by reindex().
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nexp/export.hpp"

namespace nexp {

struct NEXP_API RunRecord {
  std::string id, experiment, method, dataset, status, config_hash, device, error, sweep;
  std::filesystem::path folder;
  int trial = -1;
  std::uint64_t seed = 0;
  std::string created, started, ended;  // ISO 8601, UTC
  double seconds = 0;
  std::map<std::string, std::string> params;  // flattened resolved config: "params.lr", "dataset.n", "seed"
  std::map<std::string, double> summary;
};

// Reads a run folder's own files (status.json, meta.json, config.yaml). Throws DataError when the
// folder is not a run.
NEXP_API RunRecord read_run_folder(const std::filesystem::path& folder);
// Every step of metrics.jsonl: name -> [(step, value)].
NEXP_API std::map<std::string, std::vector<std::pair<std::int64_t, double>>> read_metric_series(
    const std::filesystem::path& folder);
NEXP_API nlohmann::json run_to_json(const RunRecord& record);

struct NEXP_API RunQuery {
  std::string experiment, method, status, sweep;
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
  std::vector<RunRecord> query(const RunQuery& query) const;
  // A run by full id or unique prefix; nullopt when none; throws ConfigError when ambiguous.
  std::optional<RunRecord> find(const std::string& id) const;
  const std::filesystem::path& runs_dir() const { return runs_dir_; }

 private:
  struct Db;
  std::filesystem::path runs_dir_;
  std::unique_ptr<Db> db_;
};

// Finds a run given an id, an id prefix or a folder path: the folder when it is one, else the index.
NEXP_API std::filesystem::path locate_run(const std::string& id_or_folder,
                                          const std::filesystem::path& runs_dir);

}  // namespace nexp
