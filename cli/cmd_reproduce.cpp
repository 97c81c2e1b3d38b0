// nexp reproduce: re-run a plugin's results table (plugins/<slug>/results.yaml) and compare.
#include <fmt/format.h>

#include <iostream>

#include "app.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp::cli {

namespace {

struct ReproduceArgs {
  std::vector<std::string> plugins;
  std::vector<std::string> rows;
  bool all = false, quick = false, fresh = false, write_readme = false, check_readme = false, record = false;
  int jobs = 1;
  double budget = 0;
  std::string runs_dir;
};

// What names this file on the command line: the slug for plugins/<slug>/results.yaml, else the path.
std::string arg_of(const ResultsFile& f) {
  const auto canonical = std::filesystem::path("plugins") / f.plugin / "results.yaml";
  return f.file.lexically_normal() == canonical ? f.plugin : f.file.string();
}

std::string shown_now(const std::optional<double>& now) {
  if (!now) return "-";
  return fmt::format("{:.6g}", *now);
}

void print_row(const ResultsFile& file, const ResultRow& row, const RowOutcome& o) {
  std::cout << "\n" << file.plugin << "/" << row.id << ": " << row.claim << "\n";
  if (!row.paper.empty()) std::cout << "  paper: " << row.paper << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : row.checks) {
    auto it = std::find_if(o.checks.begin(), o.checks.end(), [&](const CheckOutcome& x) { return x.id == c.id; });
    const bool measured = it != o.checks.end();
    std::string verdict = !measured ? "-" : it->ok ? "ok" : it->now ? "OUT" : "no value: " + it->note;
    rows.push_back({c.id, c.paper ? fmt::format("{:g}", *c.paper) : "-", c.recorded_text,
                    measured ? shown_now(it->now) : "-", c.compare.describe(), verdict});
  }
  if (!rows.empty()) {
    std::string table = format_table({"check", "paper", "README", "now", "compare", "verdict"}, rows);
    for (std::size_t at = 0, next; at < table.size(); at = next + 1) {
      next = table.find('\n', at);
      if (next == std::string::npos) next = table.size();
      std::cout << "  " << table.substr(at, next - at) << "\n";
    }
  }
  std::string where = o.run_id.empty() ? o.folder.string() : o.run_id + " " + o.folder.string();
  std::string cost = o.reused ? "reused, ran before with this plugin build"
                     : o.cpu_seconds >= 0 ? fmt::format("{:.1f} CPU-s, recorded {:g}", o.cpu_seconds, row.cost)
                                          : "";
  std::cout << "  => " << o.verdict;
  if (!o.reason.empty()) std::cout << ": " << o.reason;
  if (!where.empty()) std::cout << "\n     " << where;
  if (!cost.empty()) std::cout << " (" << cost << ")";
  std::cout << "\n";
}

// What failed, with the old and new values side by side and what to do.
void print_failures(const ResultsFile& file, const std::vector<RowOutcome>& outcomes) {
  for (const auto& o : outcomes) {
    if (o.plugin != file.plugin || o.verdict != "failed") continue;
    const ResultRow& row = *file.row(o.row);
    for (const auto& co : o.checks) {
      if (co.ok) continue;
      const ResultCheck& c = *row.check(co.id);
      if (!co.now) {
        logger().error("{}/{} check '{}': no value ({})", file.plugin, row.id, c.id, co.note);
        continue;
      }
      logger().error("{}/{} check '{}' ({}): README {}, now {:.6g} ({}). If the change is intended, `nexp reproduce {} "
                     "--row {} --record` records it in results.yaml and regenerates the README",
                     file.plugin, row.id, c.id, c.source(), c.recorded_text, *co.now, c.compare.describe(), arg_of(file),
                     row.id);
    }
  }
}

// The measured values of every row that has them all, for --record. Returns the failed rows it could not
// record (a check without a value).
int record(const ResultsFile& file, const std::vector<RowOutcome>& outcomes) {
  std::map<std::pair<std::string, std::string>, double> values;
  std::map<std::string, double> costs;
  int left = 0;
  for (const auto& o : outcomes) {
    if (o.plugin != file.plugin || (o.verdict != "passed" && o.verdict != "failed")) continue;
    const ResultRow& row = *file.row(o.row);
    if (std::any_of(o.checks.begin(), o.checks.end(), [](const CheckOutcome& c) { return !c.now; })) {
      left += o.verdict == "failed";
      continue;
    }
    for (const auto& co : o.checks) {
      const ResultCheck& c = *row.check(co.id);
      if (format_like(c.recorded_text, *co.now) != c.recorded_text)
        std::cout << fmt::format("recorded {}/{} {}: {} -> {}\n", file.plugin, row.id, c.id, c.recorded_text,
                                 format_like(c.recorded_text, *co.now));
      values[{row.id, co.id}] = *co.now;
    }
    if (o.cpu_seconds >= 0) costs[row.id] = o.cpu_seconds;
  }
  write_file_atomic(file.file, record_values(file, read_file(file.file), values, costs));
  return left;
}

bool write_readme(const ResultsFile& file) {
  const std::string before = read_file(file.readme);
  const std::string after = regenerate_readme(file, before);
  if (after != before) write_file_atomic(file.readme, after);
  std::cout << fmt::format("{}: {}\n", file.readme.string(), after != before ? "results tables regenerated" : "up to date");
  return after != before;
}

std::vector<ResultsFile> load_files(const ReproduceArgs& a) {
  if (a.all == !a.plugins.empty())
    throw ConfigError("name the plugins to reproduce (`nexp reproduce htc`) or give --all, not both");
  std::vector<std::filesystem::path> paths;
  if (a.all) paths = find_results_files("");
  for (const auto& p : a.plugins) paths.push_back(results_file_for(p, ""));
  if (paths.empty()) throw ConfigError("no plugins/<slug>/results.yaml below the working directory; run from the repository root");
  std::vector<ResultsFile> files;
  for (const auto& p : paths) files.push_back(load_results(p));
  for (const auto& id : a.rows)
    if (std::none_of(files.begin(), files.end(), [&](const ResultsFile& f) { return f.row(id) != nullptr; }))
      throw ConfigError(fmt::format("--row {}: no such row in {}", id, files.front().file.string()));
  return files;
}

int run(App& app, const ReproduceArgs& a) {
  const std::vector<ResultsFile> files = load_files(a);
  int stale = 0;
  for (const auto& f : files) {
    const auto tables = stale_tables(f, read_file(f.readme));
    if (tables.empty() || a.write_readme) continue;
    ++stale;
    logger().warn("{}: the results table{} {} differ{} from {}; `nexp reproduce {} --write-readme` regenerates {}",
                  f.readme.string(), tables.size() == 1 ? "" : "s", fmt::join(tables, ", "), tables.size() == 1 ? "s" : "",
                  f.file.string(), arg_of(f), tables.size() == 1 ? "it" : "them");
  }
  if (a.check_readme) return stale ? 1 : 0;
  if (a.write_readme && !a.record) {
    for (const auto& f : files) write_readme(f);
    return 0;
  }
  ReproduceOptions options;
  options.nexp_command = app.child_command();
  options.rows = a.rows;
  options.quick = a.quick;
  options.jobs = a.jobs;
  options.budget = a.budget;
  options.fresh = a.fresh;
  options.runs_dir = a.runs_dir.empty() ? default_runs_dir() : a.runs_dir;
  const std::vector<RowOutcome> outcomes = reproduce(files, options, app.with_all_plugins());  // rows may name any plugin
  std::map<std::string, int> counts;
  int unrecorded = 0;
  for (const auto& f : files) {
    for (const auto& o : outcomes)
      if (o.plugin == f.plugin) print_row(f, *f.row(o.row), o), ++counts[o.verdict];
    const auto record_file = save_reproduction(f, outcomes, options.runs_dir);
    std::cout.flush();  // the rows first, then what failed (stderr)
    print_failures(f, outcomes);
    if (a.record) {
      unrecorded += record(f, outcomes);
      write_readme(load_results(f.file));
    }
    logger().info("{}: record {}; `nexp report --reproduction {}` shows it", f.plugin, record_file.string(), f.plugin);
  }
  std::cout << fmt::format("\nreproduce: {} passed, {} failed, {} errors, {} skipped\n", counts["passed"],
                           counts["failed"], counts["error"], counts["skipped"]);
  if (outcomes.empty()) logger().warn("no row selected{}", a.quick ? " (no quick rows)" : "");
  // With --record a failed row is a new recorded value, not a failure (unless a check had no value).
  const int failed = a.record ? unrecorded : counts["failed"];
  return failed + counts["error"] > 0 ? 1 : 0;
}

}  // namespace

void add_reproduce_command(CLI::App& cli, App& app) {
  auto a = std::make_shared<ReproduceArgs>();
  auto* c = cli.add_subcommand("reproduce", "Re-run a plugin's results table (plugins/<slug>/results.yaml) and compare "
                                            "every number with the README's");
  c->add_option("plugins", a->plugins, "plugin slugs (or paths to results.yaml files)");
  c->add_flag("--all", a->all, "every plugin with a results.yaml");
  c->add_option("--row", a->rows, "only this row (repeatable)")->allow_extra_args(false);
  c->add_flag("--quick", a->quick, "only the rows marked quick (seconds each; what CI runs)");
  c->add_option("--jobs,-j", a->jobs, "commands at once (a sweep row runs alone, with its own --jobs)")
      ->check(CLI::PositiveNumber);
  c->add_option("--budget", a->budget, "run rows while their recorded costs add up to at most this many CPU-seconds; "
                                       "skip the rest")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--fresh", a->fresh, "run every row again, even when a completed run of the same command and plugin "
                                   "build exists");
  c->add_option("--runs-dir", a->runs_dir, "where the runs go (default: $NEXP_RUNS_DIR or ./runs)");
  c->add_flag("--write-readme", a->write_readme, "regenerate the README's results tables from results.yaml (runs "
                                                 "nothing unless --record)");
  c->add_flag("--record", a->record, "run the rows, write the measured values (and costs) into results.yaml, and "
                                     "regenerate the README");
  c->add_flag("--check-readme", a->check_readme, "exit 1 when a README's results table differs from what its "
                                                 "results.yaml generates; runs nothing");
  c->callback([a, &app] {
    if (int rc = run(app, *a); rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace nexp::cli
