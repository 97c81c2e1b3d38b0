// nexp runs, nexp show, nexp compare, nexp export.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <set>

#include "app.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/text.hpp"

namespace nexp::cli {

namespace {

using json = nlohmann::json;

struct Filters {
  RunQuery query;
  std::string status;
  std::string runs_dir;
  bool ascending = false;
};

void add_filters(CLI::App* cmd, Filters& f) {
  cmd->add_option("--experiment,-e", f.query.experiment, "only this experiment ('name*' matches a prefix)");
  cmd->add_option("--method", f.query.method, "only this method ('htc.*' matches a prefix)");
  cmd->add_option("--status", f.status, "only runs with this status")
      ->check(CLI::IsMember({"created", "running", "completed", "failed", "interrupted"}));
  cmd->add_option("--sweep", f.query.sweep, "only the trials of this sweep folder");
  cmd->add_option("--sort", f.query.sort_metric, "sort by this summary metric (largest first)");
  cmd->add_flag("--asc", f.ascending, "sort smallest first");
  cmd->add_option("--limit", f.query.limit, "at most this many runs");
  cmd->add_option("--runs-dir", f.runs_dir, "the runs folder (default: $NEXP_RUNS_DIR or ./runs)");
}

std::string runs_dir_of(const Filters& f) { return f.runs_dir.empty() ? default_runs_dir() : f.runs_dir; }

// The runs that match, after the rows of runs that ended (or whose process is gone) since they were
// indexed as running are brought up to date.
std::vector<RunRecord> query(Filters f) {
  f.query.descending = !f.ascending;
  if (!f.status.empty()) f.query.status = parse_run_status(f.status);
  const std::string dir = runs_dir_of(f);
  if (!std::filesystem::exists(std::filesystem::path(dir) / "nexp.db") && !std::filesystem::exists(dir))
    throw ConfigError(fmt::format("no runs folder '{}' here; run an experiment first, or pass --runs-dir", dir));
  RunIndex index(dir);
  index.refresh_running();
  return index.query(f.query);
}

std::string short_time(const std::string& iso) { return iso.size() >= 19 ? iso.substr(0, 10) + " " + iso.substr(11, 8) : iso; }

std::string value_or_blank(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? "" : format_number(it->second);
}

void runs(const Filters& f, bool reindex, std::vector<std::string> columns, bool as_json) {
  if (reindex) {
    int n = RunIndex(runs_dir_of(f)).reindex();
    logger().info("reindexed {} runs from the folders under {}", n, runs_dir_of(f));
  }
  auto records = query(f);
  if (as_json) {
    json j = json::array();
    for (const auto& r : records) j.push_back(run_to_json(r));
    std::cout << json_dump(j, 2) << std::endl;
    return;
  }
  if (columns.empty()) {
    if (!f.query.sort_metric.empty()) columns.push_back(f.query.sort_metric);
    std::set<std::string> seen(columns.begin(), columns.end());
    for (const auto& r : records)
      for (const auto& [k, _] : r.summary)
        if (columns.size() < 4 && seen.insert(k).second) columns.push_back(k);
  }
  std::vector<std::string> header{"id", "experiment", "method", "status", "ended", "seconds"};
  header.insert(header.end(), columns.begin(), columns.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : records) {
    std::vector<std::string> row{r.id, r.experiment, r.method, r.status_text(), short_time(r.ended),
                                 format_number(r.seconds)};
    for (const auto& c : columns) row.push_back(value_or_blank(r.summary, c));
    rows.push_back(row);
  }
  print_table(std::cout, header, rows);
  if (records.empty()) logger().info("no runs match in {} (`nexp runs --reindex` rebuilds the index from the folders)", runs_dir_of(f));
}

void show(const std::string& id, const std::string& runs_dir, bool as_json) {
  auto folder = locate_run(id, runs_dir.empty() ? default_runs_dir() : runs_dir);
  RunRecord r = read_run_folder(folder);
  if (as_json) {
    json j = run_to_json(r);
    std::ifstream meta(folder / "meta.json");
    json m = json::parse(meta, nullptr, false);
    if (m.is_object()) j["meta"] = m;
    std::cout << json_dump(j, 2) << std::endl;
    return;
  }
  std::cout << "run " << r.id << "  " << r.status_text() << (r.error.empty() ? "" : ": " + r.error) << "\n"
            << "experiment " << r.experiment << ", method " << r.method
            << (r.dataset.empty() ? "" : ", dataset " + r.dataset) << ", device " << r.device << ", seed " << r.seed << "\n"
            << "created " << short_time(r.created) << ", ended " << short_time(r.ended) << ", "
            << format_number(r.seconds) << " s\nfolder " << r.folder.string() << "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, v] : r.params) rows.push_back({k, v});
  print_table(std::cout, {"parameter", "value"}, rows);
  rows.clear();
  for (const auto& [k, v] : r.summary) rows.push_back({k, format_number(v)});
  if (!rows.empty()) std::cout << "\n", print_table(std::cout, {"metric", "value"}, rows);
}

void compare(const std::vector<std::string>& ids, const std::string& runs_dir, bool all, bool as_json) {
  const std::string dir = runs_dir.empty() ? default_runs_dir() : runs_dir;
  std::vector<RunRecord> records;
  for (const auto& id : ids) records.push_back(read_run_folder(locate_run(id, dir)));
  if (as_json) {
    json j = json::array();
    for (const auto& r : records) j.push_back(run_to_json(r));
    std::cout << json_dump(j, 2) << std::endl;
    return;
  }
  std::set<std::string> keys, metrics;
  for (const auto& r : records) {
    for (const auto& [k, _] : r.params) keys.insert(k);
    for (const auto& [k, _] : r.summary) metrics.insert(k);
  }
  std::vector<std::string> header{""};
  for (const auto& r : records) header.push_back(r.id.size() > 24 ? r.id.substr(0, 24) : r.id);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"method"});
  rows.push_back({"status"});
  for (const auto& r : records) rows[0].push_back(r.method), rows[1].push_back(r.status_text());
  for (const auto& k : keys) {
    std::vector<std::string> row{k};
    std::set<std::string> distinct;
    for (const auto& r : records) {
      auto it = r.params.find(k);
      row.push_back(it == r.params.end() ? "-" : it->second);
      distinct.insert(row.back());
    }
    if (all || distinct.size() > 1) rows.push_back(row);
  }
  for (const auto& m : metrics) {
    std::vector<std::string> row{m};
    for (const auto& r : records) row.push_back(value_or_blank(r.summary, m));
    rows.push_back(row);
  }
  print_table(std::cout, header, rows);
}

void export_runs(const Filters& f, bool as_json, const std::string& output) {
  auto records = query(f);
  std::ostringstream out;
  if (as_json) {
    json j = json::array();
    for (const auto& r : records) j.push_back(run_to_json(r));
    out << json_dump(j, 2) << "\n";
  } else {
    std::set<std::string> keys, metrics;
    for (const auto& r : records) {
      for (const auto& [k, _] : r.params) keys.insert(k);
      for (const auto& [k, _] : r.summary) metrics.insert(k);
    }
    std::vector<std::string> header{"id",   "experiment", "method",  "dataset", "status",
                                    "reason", "seed", "seconds", "created", "folder"};
    for (const auto& k : keys) header.push_back(k);
    for (const auto& m : metrics) header.push_back("summary." + m);
    for (size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << csv_cell(header[i]);
    out << "\n";
    for (const auto& r : records) {
      std::vector<std::string> row{r.id, r.experiment, r.method, r.dataset, to_string(r.status), r.reason, std::to_string(r.seed),
                                   format_number(r.seconds), r.created, r.folder.string()};
      for (const auto& k : keys) row.push_back(r.params.count(k) ? r.params.at(k) : "");
      for (const auto& m : metrics) row.push_back(value_or_blank(r.summary, m));
      for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_cell(row[i]);
      out << "\n";
    }
  }
  if (output.empty() || output == "-") {
    std::cout << out.str();
  } else {
    write_file_atomic(output, out.str());
    logger().info("wrote {} runs to {}", records.size(), output);
  }
}

}  // namespace

void add_runs_commands(CLI::App& cli, App&) {
  {
    auto f = std::make_shared<Filters>();
    auto reindex = std::make_shared<bool>(false);
    auto as_json = std::make_shared<bool>(false);
    auto columns = std::make_shared<std::vector<std::string>>();
    auto* c = cli.add_subcommand("runs", "List runs from the index (runs/nexp.db)");
    add_filters(c, *f);
    c->add_option("--metric,-c", *columns, "summary metrics to show as columns (repeatable)");
    c->add_flag("--reindex", *reindex, "rebuild the index from the run folders first");
    c->add_flag("--json", *as_json, "machine-readable output");
    c->callback([=] { runs(*f, *reindex, *columns, *as_json); });
  }
  {
    auto id = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto as_json = std::make_shared<bool>(false);
    auto* c = cli.add_subcommand("show", "Show one run: status, parameters, summary metrics");
    c->add_option("run", *id, "run id, unique id prefix, or run folder")->required();
    c->add_option("--runs-dir", *dir, "the runs folder (default: $NEXP_RUNS_DIR or ./runs)");
    c->add_flag("--json", *as_json, "status, params and summary metrics as JSON");
    c->callback([=] { show(*id, *dir, *as_json); });
  }
  {
    auto ids = std::make_shared<std::vector<std::string>>();
    auto dir = std::make_shared<std::string>();
    auto all = std::make_shared<bool>(false);
    auto as_json = std::make_shared<bool>(false);
    auto* c = cli.add_subcommand("compare", "Compare runs side by side: differing parameters and all metrics");
    c->add_option("runs", *ids, "two or more run ids or folders")->required()->expected(2, -1);
    c->add_option("--runs-dir", *dir, "the runs folder (default: $NEXP_RUNS_DIR or ./runs)");
    c->add_flag("--all", *all, "show every parameter, not only those that differ");
    c->add_flag("--json", *as_json, "machine-readable output");
    c->callback([=] { compare(*ids, *dir, *all, *as_json); });
  }
  {
    auto f = std::make_shared<Filters>();
    auto as_json = std::make_shared<bool>(false);
    auto output = std::make_shared<std::string>();
    auto* c = cli.add_subcommand("export", "Export runs (params and summary metrics) as CSV or JSON");
    add_filters(c, *f);
    auto* j = c->add_flag("--json", *as_json, "JSON array of runs");
    c->add_flag("--csv", "one CSV row per run (the default)")->excludes(j);  // bound to nothing: the default
    c->add_option("-o,--output", *output, "write to this file instead of stdout");
    c->callback([=] { export_runs(*f, *as_json, *output); });
  }
}

}  // namespace nexp::cli
