// Reading a row's numbers back from its run or sweep folder, the command as text, and the record of a
// reproduction that the report page shows (nexp/runtime/reproduce.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nexp/error.hpp"
#include "nexp/stats.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ------------------------------------------------------------------ the command

namespace {

// A word as the README shows it: quoted when the shell would read it otherwise.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t[](){}*?$\"'\\;&|<>!#`") == std::string::npos && s[0] != '~') return s;
  if (s.find('\'') == std::string::npos) return "'" + s + "'";
  // Single quotes inside (a quoted override value): double quotes read easier, where nothing expands.
  if (s.find_first_of("\"$`\\!") == std::string::npos) return "\"" + s + "\"";
  return shell_quote(s);
}

}  // namespace

std::string ResultCommand::text() const {
  if (is_external()) return external;
  std::string out = "nexp run " + shell_word(config);
  if (!sweep.empty()) out += " -m";
  for (const auto& o : overrides) out += " " + shell_word(o);
  for (const auto& a : sweep) out += " " + shell_word(a);
  if (jobs > 0) out += fmt::format(" --jobs {}", jobs);
  return out;
}

std::string ResultCommand::key() const { return text(); }

// ------------------------------------------------------------------ CSV artifacts

namespace {

using Csv = std::vector<std::map<std::string, std::string>>;

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  return out;
}

Csv read_csv(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw DataError(fmt::format("{} does not exist", file.string()));
  std::string line;
  std::getline(in, line);
  const auto header = csv_fields(line);
  Csv rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto fields = csv_fields(line);
    auto& row = rows.emplace_back();
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
  }
  return rows;
}

bool as_number(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0';
}

// "32" matches "32.0"; text matches text.
bool same_value(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (as_number(a, x) && as_number(b, y)) return x == y;
  return a == b;
}

bool any_of(const std::string& value, const std::vector<std::string>& wanted) {
  return std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) { return same_value(value, w); });
}

std::string selection_text(const ResultCheck::Selection& s) {
  std::string out;
  for (const auto& [k, values] : s) out += fmt::format(" {}={}", k, fmt::join(values, "|"));
  return out;
}

// The column's numbers on the rows that match `where` (throws with the reason when absent).
std::vector<double> column_values(const ResultCheck& check, const fs::path& run) {
  const Csv rows = read_csv(run / "artifacts" / check.artifact);
  std::vector<double> out;
  for (const auto& row : rows) {
    bool match = true;
    for (const auto& [k, v] : check.where) {
      auto it = row.find(k);
      if (it == row.end()) throw DataError(fmt::format("{} has no column '{}' (where:)", check.artifact, k));
      match = match && any_of(it->second, v);
    }
    if (!match) continue;
    auto it = row.find(check.column);
    if (it == row.end()) throw DataError(fmt::format("{} has no column '{}'", check.artifact, check.column));
    double v = 0;
    if (!as_number(it->second, v)) throw DataError(fmt::format("{}: '{}' is not a number", check.artifact, it->second));
    out.push_back(v);
  }
  return out;
}

std::vector<double> run_values(const ResultCheck& check, const fs::path& run) {
  if (!check.artifact.empty()) return column_values(check, run);
  const RunRecord record = read_run_folder(run);
  if (record.status != RunStatus::Completed)
    throw DataError(fmt::format("the run is {}, not completed", to_string(record.status)));
  auto it = record.summary.find(check.metric);
  if (it == record.summary.end()) throw DataError(fmt::format("the run's summary has no '{}'", check.metric));
  return {it->second};
}

// The trials a selection picks (throws when none does).
std::vector<const SweepTrial*> selected_trials(const SweepPlan& plan, const ResultCheck::Selection& select) {
  std::vector<const SweepTrial*> out;
  for (const auto& t : plan.trials) {
    bool match = true;
    for (const auto& [k, v] : select) match = match && any_of(t.value(k), v);
    if (match) out.push_back(&t);
  }
  if (out.empty()) throw DataError("no trial of the sweep matches `trials:`");
  return out;
}

std::vector<double> trial_values(const ResultCheck& check, const SweepTrial& t) {
  if (trial_status(t).state != TrialState::Completed)
    throw DataError(fmt::format("trial {} is {}", t.index, trial_state_name(trial_status(t).state)));
  return run_values(check, t.folder);
}

std::vector<double> sweep_values(const ResultCheck& check, const SweepPlan& plan,
                                 const ResultCheck::Selection& select) {
  std::vector<double> out;
  for (const SweepTrial* t : selected_trials(plan, select))
    for (double v : trial_values(check, *t)) out.push_back(v);
  return out;
}

// `aggregate: paired_lo|paired_hi`: the 95% t interval of the mean of (trial - its baseline partner), the
// partner being the baseline trial that gives every axis neither selection names (the seed, typically)
// the same value. Each trial's value is the mean of what it matches.
double paired_bound(const ResultCheck& check, const SweepPlan& plan) {
  auto partner_key = [&](const SweepTrial& t) {
    std::string key;
    for (const auto& [k, v] : t.assignment)
      if (!check.trials.count(k) && !check.baseline.count(k)) key += k + "=" + v + " ";
    return key;
  };
  auto values_by_key = [&](const ResultCheck::Selection& select) {
    std::map<std::string, double> out;
    for (const SweepTrial* t : selected_trials(plan, select)) {
      const std::vector<double> v = trial_values(check, *t);
      if (v.empty()) throw DataError(fmt::format("trial {}: no value matches", t->index));
      if (!out.emplace(partner_key(*t), stats::mean(v)).second)
        throw DataError(fmt::format("trial {} has no partner of its own: several trials agree on every axis "
                                    "that `trials:` and `baseline:` leave free; name more axes in both",
                                    t->index));
    }
    return out;
  };
  const auto a = values_by_key(check.trials), b = values_by_key(check.baseline);
  std::vector<double> va, vb;
  for (const auto& [key, v] : a) {
    auto it = b.find(key);
    if (it == b.end()) throw DataError(fmt::format("no baseline trial pairs with the trial at {}", key));
    va.push_back(v);
    vb.push_back(it->second);
  }
  if (va.size() < 2) throw DataError("a paired interval needs two pairs or more");
  const stats::Interval ci = stats::paired_t_interval(va, vb);
  return check.aggregate == "paired_lo" ? ci.low : ci.high;
}

double aggregate(const ResultCheck& check, std::vector<double> v) {
  const std::string& a = check.aggregate;
  if (a == "count") return static_cast<double>(v.size());
  if (v.empty()) throw DataError("no value matches");
  if (a == "only") {
    if (v.size() != 1)
      throw DataError(fmt::format("{} values match; narrow `where:`/`trials:` or give `aggregate:`", v.size()));
    return v[0];
  }
  if (a == "sum") return std::accumulate(v.begin(), v.end(), 0.0);
  if (a == "mean") return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (check.mean_bound()) {  // the 95% t interval of the mean of what matches (seeds, say)
    if (v.size() < 2) throw DataError("an interval of the mean needs two values or more");
    const stats::Interval ci = stats::mean_t_interval(v);
    return a == "mean_lo" ? ci.low : ci.high;
  }
  if (a == "min") return *std::min_element(v.begin(), v.end());
  if (a == "max") return *std::max_element(v.begin(), v.end());
  std::sort(v.begin(), v.end());  // median
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::optional<double> read_check(const ResultCheck& check, const fs::path& folder, std::string* why) {
  try {
    if (!fs::exists(folder / "sweep.yaml")) {
      if (!check.trials.empty() || !check.baseline.empty())
        throw DataError("`trials:` and `baseline:` select sweep trials, but the command is a single run");
      return aggregate(check, run_values(check, folder));
    }
    const SweepPlan plan = load_sweep(folder);
    if (check.paired()) return paired_bound(check, plan);
    double value = aggregate(check, sweep_values(check, plan, check.trials));
    if (!check.baseline.empty()) value -= aggregate(check, sweep_values(check, plan, check.baseline));
    return value;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

// ------------------------------------------------------------------ the record

namespace {

json row_json(const ResultRow& row, const RowOutcome& o) {
  json j = {{"id", row.id},          {"table", row.table},       {"claim", row.claim},
            {"paper", row.paper},    {"command", row.command.text()}, {"verdict", o.verdict},
            {"reason", o.reason},    {"folder", o.folder.string()},   {"run_id", o.run_id},
            {"reused", o.reused},    {"cost", row.cost},         {"time", now_iso8601()}};
  j["cpu_seconds"] = o.cpu_seconds >= 0 ? json(o.cpu_seconds) : json(nullptr);
  j["checks"] = json::array();
  for (const auto& c : row.checks) {
    json cj = {{"id", c.id}, {"source", c.source()}, {"recorded", c.recorded}, {"shown", format_recorded(c)},
               {"compare", c.compare.describe()}};
    cj["paper"] = c.paper ? json(*c.paper) : json(nullptr);
    for (const auto& co : o.checks)
      if (co.id == c.id) {
        cj["now"] = co.now ? json_number(*co.now) : json(nullptr);
        cj["ok"] = co.ok;
        cj["note"] = co.note;
      }
    j["checks"].push_back(cj);
  }
  return j;
}

}  // namespace

std::string ResultCheck::source() const {
  std::string s = (metric.empty() ? artifact + ": " + column : "summary " + metric) + selection_text(where);
  if (!trials.empty()) s += " over trials" + selection_text(trials);
  if (paired()) return s + " minus their partners in trials" + selection_text(baseline) + " (" + aggregate + ")";
  if (aggregate != "only") s += " (" + aggregate + ")";
  if (!baseline.empty()) s += " minus trials" + selection_text(baseline);
  return s;
}

fs::path save_reproduction(const ResultsFile& results, const std::vector<RowOutcome>& outcomes, const fs::path& runs_dir) {
  const fs::path file = runs_dir / "reproduce" / (results.plugin + ".json");
  json before = json::object();
  if (fs::exists(file)) before = json::parse(read_file(file), nullptr, false);
  std::map<std::string, json> old_rows;
  if (before.is_object() && before.contains("rows"))
    for (const auto& r : before["rows"]) old_rows[r.value("id", "")] = r;
  json out = {{"plugin", results.plugin}, {"results", results.file.string()}, {"updated", now_iso8601()},
              {"runs_dir", fs::absolute(runs_dir).string()}, {"rows", json::array()}};
  for (const auto& row : results.rows) {
    auto it = std::find_if(outcomes.begin(), outcomes.end(),
                           [&](const RowOutcome& o) { return o.plugin == results.plugin && o.row == row.id; });
    // A row skipped this time keeps its earlier measurement, if it has one.
    const bool keep = old_rows.count(row.id) && (it == outcomes.end() || (it->verdict == "skipped" &&
                                                                          old_rows[row.id].value("verdict", "") != "skipped"));
    if (keep) out["rows"].push_back(old_rows[row.id]);
    else if (it != outcomes.end()) out["rows"].push_back(row_json(row, *it));
  }
  fs::create_directories(file.parent_path());
  write_file_atomic(file, out.dump(2) + "\n");
  return file;
}

}  // namespace nexp
