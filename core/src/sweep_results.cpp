// Sweep results: trials ranked by the objective, trials.csv, best.yaml, status (nexp/runtime/sweep.hpp).
#include "nexp/runtime/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "nexp/runtime/util.hpp"
#include "nexp/table.hpp"

namespace nexp {

namespace fs = std::filesystem;

namespace {

struct Row {
  const SweepTrial* trial;
  TrialStatus status;
  double objective = std::nan("");
};

std::vector<Row> ranked_rows(const SweepPlan& plan) {
  std::vector<Row> rows;
  for (const auto& t : plan.trials) {
    Row r{&t, trial_status(t)};
    if (plan.objective)
      if (auto it = r.status.summary.find(plan.objective->metric); it != r.status.summary.end()) r.objective = it->second;
    rows.push_back(std::move(r));
  }
  if (plan.objective) {
    const bool maximize = plan.objective->mode == Direction::Maximize;
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      const bool ha = a.status.state == TrialState::Completed && std::isfinite(a.objective);
      const bool hb = b.status.state == TrialState::Completed && std::isfinite(b.objective);
      if (ha != hb) return ha;
      if (!ha) return false;
      return maximize ? a.objective > b.objective : a.objective < b.objective;
    });
  }
  return rows;
}

std::string num(double v) {
  if (std::isnan(v)) return "";
  return fmt::format("{:.6g}", v);
}

void print_rows(const SweepPlan& plan, const std::vector<Row>& rows, std::ostream& out, size_t max_metrics) {
  std::vector<std::string> header{"rank", "trial", "status"};
  for (const auto& a : plan.axes) header.push_back(a.key);
  if (plan.objective) header.push_back(plan.objective->metric);
  // The config's metrics in their order (the method's own order by default), then any others.
  std::vector<std::string> metrics;
  auto add = [&](const std::string& k) {
    if ((!plan.objective || k != plan.objective->metric) && std::find(metrics.begin(), metrics.end(), k) == metrics.end())
      metrics.push_back(k);
  };
  if (YAML::Node listed = YAML::Load(plan.base_config)["metrics"]; listed.IsSequence())
    for (const auto& m : listed) add(m.as<std::string>());
  std::set<std::string> others;
  for (const auto& r : rows)
    for (const auto& [k, _] : r.status.summary) others.insert(k);
  metrics.erase(std::remove_if(metrics.begin(), metrics.end(), [&](const std::string& m) { return !others.count(m); }),
                metrics.end());
  for (const auto& k : others) add(k);
  if (metrics.size() > max_metrics) metrics.resize(max_metrics);
  for (const auto& m : metrics) header.push_back(m);
  header.push_back("seconds");
  std::vector<std::vector<std::string>> cells;
  int rank = 0;
  for (const auto& r : rows) {
    std::vector<std::string> row{r.status.state == TrialState::Completed ? std::to_string(++rank) : "-",
                                 std::to_string(r.trial->index), trial_state_name(r.status.state)};
    for (const auto& a : plan.axes) row.push_back(r.trial->value(a.key));
    if (plan.objective) row.push_back(num(r.objective));
    for (const auto& m : metrics) row.push_back(r.status.summary.count(m) ? num(r.status.summary.at(m)) : "");
    row.push_back(fmt::format("{:.1f}", r.status.seconds));
    cells.push_back(std::move(row));
  }
  out << format_table(header, cells);
}

}  // namespace

void write_sweep_results(const SweepPlan& plan, std::ostream& out) {
  auto rows = ranked_rows(plan);
  // trials.csv: one row per trial, in trial order.
  std::set<std::string> metric_names;
  for (const auto& r : rows)
    for (const auto& [k, _] : r.status.summary) metric_names.insert(k);
  // Values in full (shortest round-trip text): the table is for analysis; the terminal shows 6 digits.
  std::vector<CsvColumn> columns{CsvColumn::integer("trial"), CsvColumn::text("status")};
  for (const auto& a : plan.axes) columns.push_back(CsvColumn::text(a.key));
  columns.push_back(CsvColumn::real("objective"));
  for (const auto& m : metric_names) columns.push_back(CsvColumn::real(m));
  columns.insert(columns.end(), {CsvColumn::real("seconds").fixed(3), CsvColumn::text("folder"), CsvColumn::text("error")});
  std::ostringstream text;
  CsvWriter csv(text, columns);
  std::vector<const Row*> by_index;
  for (const auto& r : rows) by_index.push_back(&r);
  std::sort(by_index.begin(), by_index.end(), [](const Row* a, const Row* b) { return a->trial->index < b->trial->index; });
  for (const Row* r : by_index) {
    std::vector<CsvCell> cells{std::int64_t{r->trial->index}, std::string(trial_state_name(r->status.state))};
    for (const auto& a : plan.axes) cells.emplace_back(r->trial->value(a.key));
    cells.emplace_back(r->objective);
    for (const auto& m : metric_names)
      cells.push_back(r->status.summary.count(m) ? CsvCell{r->status.summary.at(m)} : CsvCell{});
    cells.insert(cells.end(), {r->status.seconds, r->trial->folder.filename().string(), r->status.error});
    csv.row(cells);
  }
  write_file_atomic(plan.folder / "trials.csv", text.str());

  print_rows(plan, rows, out, plan.objective ? 3 : 4);
  if (plan.objective && !rows.empty() && rows.front().status.state == TrialState::Completed &&
      std::isfinite(rows.front().objective)) {
    const Row& best = rows.front();
    std::string assignment;
    for (const auto& [k, v] : best.trial->assignment) assignment += " " + k + "=" + v;
    write_file_atomic(plan.folder / "best.yaml",
                      fmt::format("# Best trial of the sweep by {} ({}): trial {},{}; {} = {}\n# Re-run: nexp run {}\n{}",
                                  plan.objective->metric, plan.objective->mode == Direction::Minimize ? "min" : "max",
                                  best.trial->index, assignment, plan.objective->metric, num(best.objective),
                                  (plan.folder / "best.yaml").string(), best.trial->config));
    out << "\nbest: trial " << best.trial->index << assignment << "  " << plan.objective->metric << " = "
        << num(best.objective) << "\nits config, ready to re-run: " << (plan.folder / "best.yaml").string() << "\n";
  } else if (!plan.objective) {
    out << "\n(no objective in the config: add `objective: {metric: <name>, mode: min|max}` to rank the trials)\n";
  }
  out << "trials.csv: " << (plan.folder / "trials.csv").string() << "\n";
}

void print_sweep_status(const SweepPlan& plan, std::ostream& out) {
  std::map<TrialState, int> counts;
  for (const auto& t : plan.trials) ++counts[trial_status(t).state];
  out << fmt::format("sweep {}: {} trials, {} completed, {} running, {} failed, {} interrupted, {} pending{}{}\n",
                     plan.folder.string(), plan.trials.size(), counts[TrialState::Completed], counts[TrialState::Running],
                     counts[TrialState::Failed], counts[TrialState::Interrupted], counts[TrialState::Pending],
                     counts[TrialState::Pruned] ? fmt::format(", {} pruned", counts[TrialState::Pruned]) : "",
                     plan.adaptive() ? fmt::format(" (budget {} for {})", plan.budget, plan.sampler) : "");
  print_rows(plan, ranked_rows(plan), out, 3);
}

}  // namespace nexp
