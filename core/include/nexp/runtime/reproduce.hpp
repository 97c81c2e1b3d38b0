#pragma once
// `nexp reproduce`: a plugin's results table as data (plugins/<slug>/results.yaml) that re-runs itself.
//
// Each row of the README's results table is one entry: the paper's claim, the command that measures it
// (a config and overrides, or a sweep), the checks (a summary metric or an artifact's column, the value
// the README records, and how a new measurement is held against it), the measured cost in CPU-seconds,
// and `quick` for rows that run in seconds. `nexp reproduce <slug>` runs the rows as ordinary runs and
// sweeps and gives each a verdict; `--write-readme` regenerates the README's tables between the
// markers <!-- results:<table> --> and <!-- /results:<table> -->; `--record` writes the new numbers
// into results.yaml (in place, keeping comments and layout).
//
// The file (every key is checked; errors name the file, line, key, expected and found):
//
//   plugin: htc
//   tables:                                  # optional; default one table: claim | nexp measured | command
//     - id: main
//       columns: [{key: claim, title: "claim (paper)"}, {key: measured, title: nexp measured}, {key: command, title: command}]
//   rows:
//     - id: semid                            # unique in the file; --row semid
//       table: main                          # default: the first table
//       claim: HTC decides like SEMID        # the paper's claim (or the goal), as text
//       paper: "O(n^4)"                      # the paper's number, as text (optional)
//       command: {config: configs/htc/semid.yaml, overrides: [params.algorithm=classic], sweep: [seed=0,1], jobs: 2}
//                                            # or {external: "..."}: shown in the table, never run
//       needs: [{path: "${data}/mnist", hint: "scripts/setup installs it"}]   # ${data}, ${runs}
//       checks:
//         - id: agree
//           metric: agree_graphs             # a summary metric; or
//           artifact: slopes.csv             #   a CSV file under the run's artifacts/
//           column: slope                    #   and its column,
//           where: {family: dag_dense}       #   on the rows whose columns hold these values (or any of a list)
//           trials: {params.variant: ddr}    # sweeps: the trials whose axes take these values
//           aggregate: mean                  # only (default: exactly one value), mean, median, min, max, sum, count,
//                                            # mean_lo / mean_hi (the 95% t interval of the mean of the values),
//                                            # paired_lo / paired_hi (the 95% t interval of trials minus baseline,
//                                            # paired on the axes neither selection names, e.g. the seed)
//           baseline: {params.variant: ddr}  # sweeps: minus the same aggregate over these trials
//           paper: 0.183                     # the paper's number in the same units (optional)
//           recorded: 60                     # the README's number
//           compare: exact                   # exact (at the recorded digits), {abs: x}, {rel: x}, {ci: [lo, hi]}
//                                            # (numbers, or ids of this row's checks: their recorded values)
//           scale: -100                      # the README shows recorded * scale ...
//           show: "{:.1f}%"                  # ... formatted like this (default: as written)
//       text: {measured: "**{agree} of 60** graphs"}   # cells; {check id}, {id.lo}/{id.hi} of a ci,
//                                                      # {claim}, {paper}, {command}
//       cost: 4.2                            # CPU-seconds of the command, measured
//       quick: true                          # runs in seconds: part of `--quick` and CI
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

class Registry;

// ------------------------------------------------------------------ the file

struct NEXP_API ResultCompare {
  enum class Kind { Exact, Absolute, Relative, Interval };
  Kind kind = Kind::Exact;
  double amount = 0;  // Absolute, Relative
  // Interval: each bound is a number or the id of a check of the same row (its recorded value).
  std::string low_ref, high_ref;
  double low = 0, high = 0;
  std::string describe() const;  // "exact", "±0.01", "±5%", "in [0.2, 0.3]"
};

struct NEXP_API ResultCheck {
  std::string id;
  std::string metric;                         // a summary metric ...
  std::string artifact, column;               // ... or a CSV artifact's column
  // Selections: column (or sweep axis) -> the values that match (one, or any of a list).
  using Selection = std::map<std::string, std::vector<std::string>>;
  Selection where;     // artifact rows
  Selection trials;    // sweep trials
  Selection baseline;  // sweep trials whose value is subtracted
  std::string aggregate = "only";
  std::optional<double> paper;
  double recorded = 0;
  std::string recorded_text;  // as written in the file
  int recorded_line = -1, recorded_column = -1;  // 0-based position of the scalar, for --record
  ResultCompare compare;
  double scale = 1;
  std::string show;  // empty: the recorded text
  std::string source() const;  // "summary agree_graphs", "slopes.csv: slope where family=dag_dense"
  bool paired() const { return aggregate == "paired_lo" || aggregate == "paired_hi"; }
  bool mean_bound() const { return aggregate == "mean_lo" || aggregate == "mean_hi"; }
};

struct NEXP_API ResultCommand {
  std::string config;
  std::vector<std::string> overrides;
  std::vector<std::string> sweep;  // -m axes
  int jobs = 0;                    // --jobs, as the README runs it
  std::string external;            // a command nexp does not run (benchmarks, test suites)
  bool is_external() const { return !external.empty(); }
  // The shell command, as a user types it: nexp run CONFIG OVERRIDES [-m AXES] [--jobs N].
  std::string text() const;
  // What identifies the command within one reproduction (rows with the same command share a run).
  std::string key() const;
};

struct NEXP_API ResultNeed {
  std::string path;  // may use ${data} (the data cache) and ${runs} (the runs folder)
  std::string hint;
};

struct NEXP_API ResultRow {
  std::string id, table, claim, paper;
  ResultCommand command;
  std::vector<ResultNeed> needs;
  std::vector<ResultCheck> checks;
  std::map<std::string, std::string> text;  // column key -> cell template
  double cost = 0;
  int cost_line = -1, cost_column = -1;
  std::string cost_text;
  bool quick = false;
  int line = 0;  // 1-based, of the row's entry
  const ResultCheck* check(const std::string& id) const;
};

struct NEXP_API ResultTable {
  std::string id;
  std::vector<std::pair<std::string, std::string>> columns;  // key, title
};

struct NEXP_API ResultsFile {
  std::string plugin;
  std::filesystem::path file, readme;
  std::vector<ResultTable> tables;
  std::vector<ResultRow> rows;
  const ResultRow* row(const std::string& id) const;
};

// Reads and validates a results.yaml. Throws ConfigError naming the file, line, key, expected and found.
NEXP_API ResultsFile load_results(const std::filesystem::path& file);
// The same from text (tests); `file` names it in messages.
NEXP_API ResultsFile parse_results(const std::string& text, const std::filesystem::path& file);
// plugins/<slug>/results.yaml below `root`, for every plugin folder that has one, sorted by slug.
NEXP_API std::vector<std::filesystem::path> find_results_files(const std::filesystem::path& root);
// A slug (plugins/<slug>/results.yaml below root) or a path to a results.yaml.
NEXP_API std::filesystem::path results_file_for(const std::string& slug_or_file, const std::filesystem::path& root);

// ------------------------------------------------------------------ values and verdicts

// `value` as the README prints it: value * scale through `show` ("{:.1f}%"; "{:,.0f}" groups
// thousands; "{:.1u}" writes m·10ⁿ). An empty show prints the recorded text for the recorded value.
NEXP_API std::string format_value(const ResultCheck& check, double value);
NEXP_API std::string format_recorded(const ResultCheck& check);
// Whether `now` is within the check's tolerance of the recorded value. Exact: equal once rounded to the
// digits the recorded value is written with (half a unit of its last digit).
NEXP_API bool within_tolerance(const ResultRow& row, const ResultCheck& check, double now);
// `value` written with the precision of `like` (same decimals; same significant digits in e-notation).
NEXP_API std::string format_like(const std::string& like, double value);

// ------------------------------------------------------------------ the README

// One table as Markdown (header, rule, one line per row), cells filled from the recorded values.
NEXP_API std::string render_results_table(const ResultsFile& results, const ResultTable& table);
// `readme` with every table's block between its markers replaced. Throws ConfigError when a table's
// markers are missing (naming the markers to add).
NEXP_API std::string regenerate_readme(const ResultsFile& results, const std::string& readme);
// The tables whose block in `readme` differs from what the file generates (empty: in sync).
NEXP_API std::vector<std::string> stale_tables(const ResultsFile& results, const std::string& readme);

// results.yaml's text with new recorded values ({row id, check id} -> value) and costs (row id ->
// CPU-seconds) written in place of the old scalars; everything else is kept byte for byte.
NEXP_API std::string record_values(const ResultsFile& results, const std::string& text,
                                   const std::map<std::pair<std::string, std::string>, double>& values,
                                   const std::map<std::string, double>& costs);

// ------------------------------------------------------------------ reading a finished run

// The check's value from a run folder (summary in status.json, artifacts/<file>) or a sweep folder
// (its trials). nullopt with `why` set when the value is not there.
NEXP_API std::optional<double> read_check(const ResultCheck& check, const std::filesystem::path& folder,
                                          std::string* why);

// ------------------------------------------------------------------ running rows

struct NEXP_API ReproduceOptions {
  std::vector<std::string> nexp_command;  // the nexp executable and its global flags (child processes)
  std::vector<std::string> rows;          // only these row ids (empty: all)
  bool quick = false;                     // only quick rows
  int jobs = 1;                           // rows (or sweep trials) at once
  double budget = 0;                      // CPU-seconds of recorded cost to spend; 0: no limit
  bool fresh = false;                     // run again even when a matching completed run exists
  std::filesystem::path runs_dir = "runs";
};

struct NEXP_API CheckOutcome {
  std::string id;
  std::optional<double> now;
  bool ok = false;
  std::string note;  // why there is no value
};

struct NEXP_API RowOutcome {
  std::string plugin, row;
  // passed, failed (a check left its tolerance or has no value), error (the command failed),
  // skipped (not selected by --quick/--row, external, data missing, over the budget, interrupted)
  std::string verdict;
  std::string reason;                // skipped / error: why
  std::filesystem::path folder;      // the run or sweep folder read
  std::string run_id;
  bool reused = false;               // an earlier completed run of the same command and plugin build
  double cpu_seconds = -1;           // of the command this time (-1: did not run here)
  std::vector<CheckOutcome> checks;
};

// Runs the selected rows of every file (each as `nexp run ...` in a child process, `jobs` at once;
// rows with the same command share one run) and holds each check against its recorded value.
// Ctrl-C stops launching rows; those not run are skipped with the reason.
NEXP_API std::vector<RowOutcome> reproduce(const std::vector<ResultsFile>& files, const ReproduceOptions& options,
                                           Registry& registry);

// The reproduction's record, <runs_dir>/reproduce/<plugin>.json: the latest verdict of every row
// (rows not run or skipped this time keep their earlier measurement). The report page reads it.
NEXP_API std::filesystem::path save_reproduction(const ResultsFile& results, const std::vector<RowOutcome>& outcomes,
                                                 const std::filesystem::path& runs_dir);
// One self-contained HTML page: every row of the plugin's results with its claim, checks, verdict and
// a link to its run folder (relative to `output`).
NEXP_API std::string render_reproduction_report(const std::filesystem::path& record,
                                                const std::filesystem::path& output);

}  // namespace nexp
