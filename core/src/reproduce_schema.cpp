// results.yaml: reading and validating (nexp/runtime/reproduce.hpp). The schema is checked by the small
// table-driven helpers below, one function per kind of map, so that every error names the file, line,
// key, what was expected and what was found.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/sweep.hpp"

namespace nexp {

namespace fs = std::filesystem;

namespace {

// Where a node sits, for messages: the file and a path such as "rows[2] (semid) > checks[0]".
struct Ctx {
  const fs::path* file;
  std::string path;

  Ctx in(const std::string& part) const { return {file, path.empty() ? part : path + " > " + part}; }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
    const std::string line =
        node.IsDefined() && !node.Mark().is_null() ? fmt::format(", line {}", node.Mark().line + 1) : "";
    throw ConfigError(fmt::format("results file '{}'{}: {}{}{}", file->string(), line, path,
                                  path.empty() ? "" : ": ", what));
  }
};

std::string found(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Scalar: return fmt::format("'{}'", node.Scalar());
    default: return "nothing";
  }
}

// Unknown keys are errors with the closest valid key; `required` keys must be there.
void check_keys(const YAML::Node& map, const Ctx& ctx, const std::vector<std::string>& known,
                const std::vector<std::string>& required) {
  if (!map.IsMap()) ctx.fail(map, fmt::format("expected a map of keys ({}), found {}", fmt::join(known, ", "), found(map)));
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const auto near = closest(key, known);
    ctx.fail(kv.first, fmt::format("unknown key '{}'.{} Expected one of: {}", key,
                                   near.empty() ? "" : fmt::format(" Did you mean '{}'?", near), fmt::join(known, ", ")));
  }
  for (const auto& key : required)
    if (!map[key]) ctx.fail(map, fmt::format("key '{}' is required; add `{}: ...`", key, key));
}

std::string get_string(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  if (!node.IsScalar()) ctx.in(key).fail(node, fmt::format("expected text, found {}", found(node)));
  return node.Scalar();
}

std::string get_id(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  static const std::regex id("[a-z0-9][a-z0-9_.-]*");
  std::string s = get_string(node, ctx, key);
  if (!std::regex_match(s, id))
    ctx.in(key).fail(node, fmt::format("expected an id (lower-case letters, digits, '_', '-', '.'), found '{}'", s));
  return s;
}

double get_number(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0' && std::isfinite(v)) return v;
  }
  ctx.in(key).fail(node, fmt::format("expected a finite number, found {}", found(node)));
}

bool get_bool(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) return node.Scalar() == "true";
  ctx.in(key).fail(node, fmt::format("expected true or false, found {}", found(node)));
}

std::vector<std::string> get_strings(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  if (!node.IsSequence()) ctx.in(key).fail(node, fmt::format("expected a list of text, found {}", found(node)));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(get_string(node[i], ctx, fmt::format("{}[{}]", key, i)));
  return out;
}

std::map<std::string, std::string> get_string_map(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  if (!node.IsMap()) ctx.in(key).fail(node, fmt::format("expected a map of key: value, found {}", found(node)));
  std::map<std::string, std::string> out;
  for (const auto& kv : node) out[kv.first.as<std::string>()] = get_string(kv.second, ctx.in(key), kv.first.as<std::string>());
  return out;
}

// {column: value} or {column: [value, value]}: rows (or trials) that hold any of the values.
ResultCheck::Selection get_selection(const YAML::Node& node, const Ctx& ctx, const std::string& key) {
  if (!node.IsMap())
    ctx.in(key).fail(node, fmt::format("expected a map of column: value (or a list of values), found {}", found(node)));
  ResultCheck::Selection out;
  for (const auto& kv : node) {
    const auto name = kv.first.as<std::string>();
    out[name] = kv.second.IsSequence() ? get_strings(kv.second, ctx.in(key), name)
                                       : std::vector<std::string>{get_string(kv.second, ctx.in(key), name)};
  }
  return out;
}

ResultCompare parse_compare(const YAML::Node& node, const Ctx& ctx) {
  const std::string expected = "exact, {abs: X}, {rel: X} or {ci: [low, high]} (numbers or check ids)";
  ResultCompare c;
  if (node.IsScalar() && node.Scalar() == "exact") return c;
  if (!node.IsMap() || node.size() != 1)
    ctx.in("compare").fail(node, fmt::format("expected {}, found {}", expected, found(node)));
  const auto kind = node.begin()->first.as<std::string>();
  const YAML::Node value = node.begin()->second;
  if (kind == "abs" || kind == "rel") {
    c.kind = kind == "abs" ? ResultCompare::Kind::Absolute : ResultCompare::Kind::Relative;
    c.amount = get_number(value, ctx.in("compare"), kind);
    if (c.amount < 0) ctx.in("compare").in(kind).fail(value, "expected a tolerance >= 0");
    return c;
  }
  if (kind != "ci") ctx.in("compare").fail(node, fmt::format("expected {}, found '{}'", expected, kind));
  if (!value.IsSequence() || value.size() != 2)
    ctx.in("compare").in("ci").fail(value, fmt::format("expected [low, high], found {}", found(value)));
  c.kind = ResultCompare::Kind::Interval;
  auto bound = [&](const YAML::Node& b, std::string& ref, double& number) {
    char* end = nullptr;
    const std::string s = get_string(b, ctx.in("compare"), "ci");
    number = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') ref = s;
  };
  bound(value[0], c.low_ref, c.low);
  bound(value[1], c.high_ref, c.high);
  if (c.low_ref.empty() && c.high_ref.empty() && c.low > c.high)
    ctx.in("compare").in("ci").fail(value, fmt::format("low {} is above high {}", c.low, c.high));
  return c;
}

ResultCheck parse_check(const YAML::Node& node, const Ctx& ctx) {
  check_keys(node, ctx,
             {"id", "metric", "artifact", "column", "where", "trials", "baseline", "aggregate", "paper", "recorded",
              "compare", "scale", "show"},
             {"id", "recorded"});
  ResultCheck c;
  c.id = get_id(node["id"], ctx, "id");
  if (node["metric"]) c.metric = get_string(node["metric"], ctx, "metric");
  if (node["artifact"]) c.artifact = get_string(node["artifact"], ctx, "artifact");
  if (node["column"]) c.column = get_string(node["column"], ctx, "column");
  if (c.metric.empty() == c.artifact.empty())
    ctx.fail(node, "give either `metric:` (a summary metric) or `artifact:` with `column:` (a CSV file of the run)");
  if (!c.artifact.empty() && c.column.empty()) ctx.fail(node, "`artifact:` needs `column:`, the column to read");
  if (!c.metric.empty() && (node["column"] || node["where"]))
    ctx.fail(node, "`column:` and `where:` read an artifact; with `metric:` use `trials:` to select sweep trials");
  if (node["where"]) c.where = get_selection(node["where"], ctx, "where");
  if (node["trials"]) c.trials = get_selection(node["trials"], ctx, "trials");
  if (node["baseline"]) c.baseline = get_selection(node["baseline"], ctx, "baseline");
  if (node["aggregate"]) {
    static const std::vector<std::string> kinds = {"only",  "mean",    "median",    "min",      "max",      "sum",
                                                   "count", "mean_lo", "mean_hi",   "paired_lo", "paired_hi"};
    c.aggregate = get_string(node["aggregate"], ctx, "aggregate");
    if (std::find(kinds.begin(), kinds.end(), c.aggregate) == kinds.end())
      ctx.in("aggregate").fail(node["aggregate"], fmt::format("expected one of {}, found '{}'", fmt::join(kinds, ", "), c.aggregate));
  }
  if (c.paired() && c.baseline.empty())
    ctx.in("aggregate").fail(node["aggregate"], fmt::format("`{}` is a bound of the interval of trials minus their "
                                                            "partners in `baseline:`; give `baseline:`", c.aggregate));
  if (c.mean_bound() && !c.baseline.empty())
    ctx.in("aggregate").fail(node["aggregate"], fmt::format("`{}` bounds the mean of one selection; for an interval of "
                                                            "trials minus `baseline:` use `paired_lo`/`paired_hi`",
                                                            c.aggregate));
  if (node["paper"]) c.paper = get_number(node["paper"], ctx, "paper");
  c.recorded = get_number(node["recorded"], ctx, "recorded");
  c.recorded_text = node["recorded"].Scalar();
  c.recorded_line = node["recorded"].Mark().line;
  c.recorded_column = node["recorded"].Mark().column;
  if (node["compare"]) c.compare = parse_compare(node["compare"], ctx);
  if (node["scale"]) c.scale = get_number(node["scale"], ctx, "scale");
  if (node["show"]) {
    c.show = get_string(node["show"], ctx, "show");
    try {
      format_value(c, c.recorded);
    } catch (const std::exception& e) {
      ctx.in("show").fail(node["show"], fmt::format("'{}' is not a number format such as '{{:.2f}}' or '{{:.1f}}%' ({})",
                                                    c.show, e.what()));
    }
  }
  return c;
}

ResultCommand parse_command(const YAML::Node& node, const Ctx& ctx) {
  check_keys(node, ctx, {"config", "overrides", "sweep", "jobs", "external"}, {});
  ResultCommand c;
  if (node["external"]) c.external = get_string(node["external"], ctx, "external");
  if (node["config"]) c.config = get_string(node["config"], ctx, "config");
  if (c.config.empty() == c.external.empty())
    ctx.fail(node, "give either `config:` (an nexp config, with `overrides:` and `sweep:`) or `external:` (a command "
                   "nexp shows but does not run)");
  if (node["overrides"]) c.overrides = get_strings(node["overrides"], ctx, "overrides");
  if (node["sweep"]) c.sweep = get_strings(node["sweep"], ctx, "sweep");
  if (node["jobs"]) {
    c.jobs = static_cast<int>(get_number(node["jobs"], ctx, "jobs"));
    if (c.jobs < 1) ctx.in("jobs").fail(node["jobs"], "expected a positive number of parallel trials");
  }
  if (!c.external.empty() && (node["overrides"] || node["sweep"] || node["jobs"]))
    ctx.fail(node, "`external:` is a whole command; `overrides:`, `sweep:` and `jobs:` belong to `config:`");
  for (const auto& o : c.overrides) {
    try {
      parse_override(o);
    } catch (const ConfigError& e) {
      ctx.in("overrides").fail(node["overrides"], e.what());
    }
    if (const auto eq = o.find('='); eq != std::string::npos && is_sweep_expression(o.substr(eq + 1)))
      ctx.in("overrides").fail(node["overrides"], fmt::format("'{}' is a sweep axis; put it under `sweep:`", o));
  }
  return c;
}

std::vector<ResultNeed> parse_needs(const YAML::Node& node, const Ctx& ctx) {
  if (!node.IsSequence()) ctx.fail(node, fmt::format("expected a list of paths, found {}", found(node)));
  std::vector<ResultNeed> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const Ctx at = ctx.in(fmt::format("[{}]", i));
    if (node[i].IsScalar()) {
      out.push_back({node[i].Scalar(), ""});
      continue;
    }
    check_keys(node[i], at, {"path", "hint"}, {"path"});
    out.push_back({get_string(node[i]["path"], at, "path"), node[i]["hint"] ? get_string(node[i]["hint"], at, "hint") : ""});
  }
  return out;
}

ResultTable parse_table(const YAML::Node& node, const Ctx& ctx) {
  check_keys(node, ctx, {"id", "columns"}, {"id", "columns"});
  ResultTable t;
  t.id = get_id(node["id"], ctx, "id");
  const YAML::Node cols = node["columns"];
  if (!cols.IsSequence() || cols.size() == 0)
    ctx.in("columns").fail(cols, fmt::format("expected a list of {{key, title}}, found {}", found(cols)));
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const Ctx at = ctx.in(fmt::format("columns[{}]", i));
    check_keys(cols[i], at, {"key", "title"}, {"key", "title"});
    t.columns.emplace_back(get_id(cols[i]["key"], at, "key"), get_string(cols[i]["title"], at, "title"));
  }
  return t;
}

ResultRow parse_row(const YAML::Node& node, const Ctx& ctx) {
  check_keys(node, ctx, {"id", "table", "claim", "paper", "command", "needs", "checks", "text", "cost", "quick"},
             {"id", "claim", "command", "cost"});
  ResultRow r;
  r.line = node.Mark().line + 1;
  r.id = get_id(node["id"], ctx, "id");
  const Ctx at{ctx.file, fmt::format("{} ({})", ctx.path, r.id)};
  if (node["table"]) r.table = get_id(node["table"], at, "table");
  r.claim = get_string(node["claim"], at, "claim");
  if (node["paper"]) r.paper = get_string(node["paper"], at, "paper");
  r.command = parse_command(node["command"], at.in("command"));
  if (node["needs"]) r.needs = parse_needs(node["needs"], at.in("needs"));
  if (node["checks"]) {
    const YAML::Node checks = node["checks"];
    if (!checks.IsSequence()) at.in("checks").fail(checks, fmt::format("expected a list of checks, found {}", found(checks)));
    for (std::size_t i = 0; i < checks.size(); ++i) {
      r.checks.push_back(parse_check(checks[i], at.in(fmt::format("checks[{}]", i))));
      for (std::size_t j = 0; j + 1 < r.checks.size(); ++j)
        if (r.checks[j].id == r.checks.back().id)
          at.in(fmt::format("checks[{}]", i)).fail(checks[i], fmt::format("check id '{}' is used twice in this row", r.checks[j].id));
    }
  }
  if (node["text"]) r.text = get_string_map(node["text"], at, "text");
  r.cost = get_number(node["cost"], at, "cost");
  r.cost_text = node["cost"].Scalar();
  r.cost_line = node["cost"].Mark().line;
  r.cost_column = node["cost"].Mark().column;
  if (r.cost < 0) at.in("cost").fail(node["cost"], "expected CPU-seconds >= 0");
  if (node["quick"]) r.quick = get_bool(node["quick"], at, "quick");
  if (r.quick && r.command.is_external())
    at.in("quick").fail(node["quick"], "an external command is never run by nexp, so it cannot be quick");
  return r;
}

// The placeholders of a cell template: {name}; {{ and }} are literal braces.
std::vector<std::string> placeholders(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) { ++i; continue; }
    if (text[i] != '{') continue;
    const auto end = text.find('}', i);
    if (end == std::string::npos) break;
    out.push_back(text.substr(i + 1, end - i - 1));
    i = end;
  }
  return out;
}

// Cross-references: tables, ci bounds, every column filled, every placeholder known.
void check_references(const ResultsFile& f, const YAML::Node& rows, const Ctx& ctx) {
  std::set<std::string> ids;
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const ResultRow& r = f.rows[i];
    const Ctx at = ctx.in(fmt::format("rows[{}] ({})", i, r.id));
    if (!ids.insert(r.id).second) at.fail(rows[i], fmt::format("row id '{}' is used twice", r.id));
    auto table = std::find_if(f.tables.begin(), f.tables.end(), [&](const ResultTable& t) { return t.id == r.table; });
    if (table == f.tables.end()) at.fail(rows[i]["table"], fmt::format("no table '{}' in `tables:`", r.table));
    for (const auto& c : r.checks)
      for (const auto* ref : {&c.compare.low_ref, &c.compare.high_ref})
        if (!ref->empty() && !r.check(*ref))
          at.fail(rows[i], fmt::format("check '{}': ci bound '{}' is neither a number nor a check of this row", c.id, *ref));
    for (const auto& [key, _] : r.text)
      if (std::none_of(table->columns.begin(), table->columns.end(), [&key = key](const auto& c) { return c.first == key; }))
        at.in("text").fail(rows[i]["text"], fmt::format("table '{}' has no column '{}'", table->id, key));
    for (const auto& [key, title] : table->columns) {
      if (!r.text.count(key) && key != "claim" && key != "paper" && key != "command")
        at.in("text").fail(rows[i], fmt::format("no text for column '{}' ({}) of table '{}'", key, title, table->id));
      const std::string cell = r.text.count(key) ? r.text.at(key) : "";
      for (const auto& p : placeholders(cell)) {
        const auto dot = p.find('.');
        const std::string id = p.substr(0, dot), part = dot == std::string::npos ? "" : p.substr(dot + 1);
        const bool field = part.empty() && (id == "claim" || id == "paper" || id == "command");
        const ResultCheck* c = r.check(id);
        const bool bound = c && (part == "lo" || part == "hi") && c->compare.kind == ResultCompare::Kind::Interval;
        if (!field && !(c && part.empty()) && !bound)
          at.in("text").fail(rows[i]["text"], fmt::format("'{{{}}}' in column '{}' is not a check of this row (or "
                                                          "claim, paper, command, <ci check>.lo/.hi)", p, key));
      }
    }
  }
}

}  // namespace

ResultsFile parse_results(const std::string& text, const fs::path& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("results file '{}', line {}, column {}: malformed YAML: {}", file.string(),
                                  e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  const Ctx ctx{&file, ""};
  check_keys(root, ctx, {"plugin", "tables", "rows"}, {"plugin", "rows"});
  ResultsFile f;
  f.file = file;
  f.readme = file.parent_path() / "README.md";
  f.plugin = get_id(root["plugin"], ctx, "plugin");
  if (root["tables"]) {
    if (!root["tables"].IsSequence()) ctx.in("tables").fail(root["tables"], "expected a list of tables");
    for (std::size_t i = 0; i < root["tables"].size(); ++i)
      f.tables.push_back(parse_table(root["tables"][i], ctx.in(fmt::format("tables[{}]", i))));
  } else {
    f.tables.push_back({"main", {{"claim", "claim (paper)"}, {"measured", "nexp measured"}, {"command", "command"}}});
  }
  const YAML::Node rows = root["rows"];
  if (!rows.IsSequence()) ctx.in("rows").fail(rows, fmt::format("expected a list of rows, found {}", found(rows)));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    f.rows.push_back(parse_row(rows[i], ctx.in(fmt::format("rows[{}]", i))));
    if (f.rows.back().table.empty()) f.rows.back().table = f.tables.front().id;
  }
  check_references(f, rows, ctx);
  return f;
}

ResultsFile load_results(const fs::path& file) {
  std::ifstream in(file);
  if (!in)
    throw ConfigError(fmt::format("results file '{}' cannot be read (working directory '{}'); a plugin's results "
                                  "are plugins/<slug>/results.yaml",
                                  file.string(), fs::current_path().string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_results(ss.str(), file);
}

std::vector<fs::path> find_results_files(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "plugins", ec))
    if (fs::exists(entry.path() / "results.yaml")) out.push_back(entry.path() / "results.yaml");
  std::sort(out.begin(), out.end());
  return out;
}

fs::path results_file_for(const std::string& slug_or_file, const fs::path& root) {
  const bool yaml = slug_or_file.size() > 5 && slug_or_file.compare(slug_or_file.size() - 5, 5, ".yaml") == 0;
  if (yaml || slug_or_file.find('/') != std::string::npos) return slug_or_file;
  const fs::path file = root / "plugins" / slug_or_file / "results.yaml";
  if (fs::exists(file)) return file;
  std::vector<std::string> slugs;
  for (const auto& f : find_results_files(root)) slugs.push_back(f.parent_path().filename().string());
  const auto near = closest(slug_or_file, slugs);
  throw ConfigError(fmt::format("no results for plugin '{}': {} does not exist.{} Plugins with results: {}", slug_or_file,
                                file.string(), near.empty() ? "" : fmt::format(" Did you mean '{}'?", near),
                                slugs.empty() ? "none (run from the repository root)" : fmt::format("{}", fmt::join(slugs, ", "))));
}

const ResultCheck* ResultRow::check(const std::string& id) const {
  for (const auto& c : checks)
    if (c.id == id) return &c;
  return nullptr;
}

const ResultRow* ResultsFile::row(const std::string& id) const {
  for (const auto& r : rows)
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace nexp
