// Sweeps: grammar, expansion, the sweep folder, trial state, results (nexp/runtime/sweep.hpp).
#include "nexp/runtime/sweep.hpp"

#include <signal.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- grammar

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Splits at commas outside brackets, braces, parentheses and quotes.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(trim(cur));
  return out;
}

// "name(args)" -> args, when s is exactly a call of `name`.
std::optional<std::string> call_args(const std::string& s, const std::string& name) {
  if (s.size() < name.size() + 2 || s.compare(0, name.size() + 1, name + "(") != 0 || s.back() != ')') return std::nullopt;
  return s.substr(name.size() + 1, s.size() - name.size() - 2);
}

double number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw ConfigError(fmt::format("{}: expected a number, found '{}'", what, text));
  return v;
}

std::string format_value(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  return fmt::format("{:.6g}", v);
}

}  // namespace

bool is_sweep_expression(const std::string& value) {
  const std::string v = trim(value);
  for (const char* f : {"range", "choice", "uniform", "loguniform", "int"})
    if (call_args(v, f)) return true;
  return split_top(v).size() > 1;
}

SweepAxis parse_axis(const std::string& key, const std::string& expression, const std::string& origin) {
  SweepAxis axis;
  axis.key = key;
  axis.expression = trim(expression);
  const std::string what = fmt::format("{}: sweep axis '{}={}'", origin, key, axis.expression);
  std::string e = axis.expression;
  if (auto inner = call_args(e, "int")) {
    axis.integer = true;
    e = trim(*inner);
  }
  auto bounds = [&](const std::string& args) {
    auto parts = split_top(args);
    if (parts.size() != 2) throw ConfigError(fmt::format("{}: expected two bounds (lo, hi), found {}", what, parts.size()));
    axis.lo = number(parts[0], what);
    axis.hi = number(parts[1], what);
    if (!(axis.lo < axis.hi)) throw ConfigError(fmt::format("{}: the lower bound must be below the upper bound", what));
  };
  if (auto args = call_args(e, "loguniform")) {
    axis.kind = SweepAxis::Kind::LogUniform;
    bounds(*args);
    if (axis.lo <= 0) throw ConfigError(fmt::format("{}: loguniform needs positive bounds", what));
    return axis;
  }
  if (auto args = call_args(e, "uniform")) {
    axis.kind = SweepAxis::Kind::Uniform;
    bounds(*args);
    return axis;
  }
  if (axis.integer)
    throw ConfigError(fmt::format("{}: int(...) wraps a distribution: int(uniform(lo,hi)) or int(loguniform(lo,hi))", what));
  if (auto args = call_args(e, "range")) {
    auto parts = split_top(*args);
    if (parts.size() < 2 || parts.size() > 3)
      throw ConfigError(fmt::format("{}: range takes (start, stop) or (start, stop, step)", what));
    double start = number(parts[0], what), stop = number(parts[1], what);
    double step = parts.size() == 3 ? number(parts[2], what) : 1.0;
    bool ints = std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return p.find_first_of(".eE") == std::string::npos; });
    if (step == 0) throw ConfigError(fmt::format("{}: the step of a range cannot be 0", what));
    for (int i = 0;; ++i) {
      double v = start + i * step;
      if ((step > 0 && v >= stop - 1e-12 * std::fabs(step)) || (step < 0 && v <= stop + 1e-12 * std::fabs(step))) break;
      axis.values.push_back(format_value(v, ints));
      if (axis.values.size() > 100000) throw ConfigError(fmt::format("{}: more than 100000 values", what));
    }
    if (axis.values.empty()) throw ConfigError(fmt::format("{}: the range is empty (stop excluded, as in Python)", what));
    return axis;
  }
  if (auto args = call_args(e, "choice")) e = *args;
  axis.values = split_top(e);
  for (const auto& v : axis.values)
    if (v.empty()) throw ConfigError(fmt::format("{}: an empty value (two commas in a row?)", what));
  return axis;
}

// ---------------------------------------------------------------- plan

std::string SweepTrial::value(const std::string& key) const {
  for (const auto& [k, v] : assignment)
    if (k == key) return v;
  return "";
}

std::string SweepPlan::definition() const {
  YAML::Node d(YAML::NodeType::Map);
  d["experiment"] = experiment;
  d["base_config"] = base_config;
  YAML::Node a(YAML::NodeType::Sequence);
  for (const auto& axis : axes) {
    YAML::Node x(YAML::NodeType::Map);
    x["key"] = axis.key;
    x["expression"] = axis.expression;
    a.push_back(x);
  }
  d["axes"] = a;
  d["samples"] = samples;
  d["seed"] = sampling_seed;
  YAML::Emitter em;
  em << d;
  return em.c_str();
}

namespace {

std::string yaml_text(const YAML::Node& n) {
  YAML::Emitter em;
  em << YAML::Flow << n;
  return em.c_str();
}

fs::path existing_trial_folder(const fs::path& folder, const std::string& hash) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("trial-", 0) == 0 && name.size() > 8 && name.substr(name.size() - 8) == hash.substr(0, 8))
      return entry.path();
  }
  return {};
}

}  // namespace

SplitOverrides split_overrides(const std::vector<std::string>& texts, bool multirun) {
  SplitOverrides out;
  for (const auto& text : texts) {
    Override o = parse_override(text);
    if (o.kind == Override::Kind::Set && is_sweep_expression(o.value)) {
      if (!multirun)
        throw ConfigError(fmt::format("override '{}' looks like a sweep ({} values or a range/distribution); add -m "
                                      "to run one trial per value, or quote a plain text value: {}='\"{}\"'",
                                      text, o.key, o.key, o.value));
      out.axes.push_back(text);
    } else {
      out.overrides.push_back(std::move(o));
    }
  }
  return out;
}

bool config_has_sweep(const fs::path& config) {
  YAML::Node root = read_yaml_file(config);
  const YAML::Node s = root["sweep"];
  return s.IsDefined() && !s.IsNull() && !(s.IsMap() && s.size() == 0);
}

SweepPlan plan_sweep(const fs::path& config, const std::vector<Override>& overrides,
                     const std::vector<std::string>& axes_text, const Registry& registry, std::optional<int> samples) {
  YAML::Node root = read_yaml_file(config);
  SweepPlan plan;
  std::vector<SweepAxis> axes;
  auto add_axis = [&](SweepAxis axis) {
    for (auto& a : axes)
      if (a.key == axis.key) {
        a = std::move(axis);
        return;
      }
    axes.push_back(std::move(axis));
  };
  // The YAML block first, then the command line (which wins for the same key).
  if (const YAML::Node s = root["sweep"]; s.IsDefined() && !s.IsNull()) {
    const std::string where = fmt::format("config '{}', line {}", config.string(), s.Mark().line + 1);
    if (!s.IsMap())
      throw ConfigError(fmt::format("{}: 'sweep' must be a map with params: (and samples:, seed:)", where));
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      if (k != "params" && k != "samples" && k != "seed")
        throw ConfigError(fmt::format("{}: unknown key 'sweep.{}'; a sweep block has params, samples and seed.{}", where, k,
                                      closest(k, {"params", "samples", "seed"}).empty() ? "" : fmt::format(" Did you mean '{}'?", closest(k, {"params", "samples", "seed"}))));
    }
    if (s["samples"]) plan.samples = s["samples"].as<int>();
    if (s["seed"]) plan.sampling_seed = s["seed"].as<std::uint64_t>();
    if (const YAML::Node p = s["params"]; p.IsMap()) {
      for (auto it = p.begin(); it != p.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        const std::string at = fmt::format("config '{}', line {}", config.string(), it->second.Mark().line + 1);
        if (it->second.IsSequence()) {
          SweepAxis axis;
          axis.key = key;
          axis.expression = yaml_text(it->second);
          for (const auto& v : it->second) axis.values.push_back(v.IsScalar() ? v.Scalar() : yaml_text(v));
          if (axis.values.empty()) throw ConfigError(fmt::format("{}: sweep axis '{}' has no values", at, key));
          add_axis(std::move(axis));
        } else if (it->second.IsScalar()) {
          add_axis(parse_axis(key, it->second.Scalar(), at));
        } else {
          throw ConfigError(fmt::format("{}: sweep axis '{}' must be a list or an expression such as range(0,3)", at, key));
        }
      }
    } else if (p.IsDefined() && !p.IsNull()) {
      throw ConfigError(fmt::format("{}: 'sweep.params' must map keys to value lists or expressions", where));
    }
  }
  for (const auto& text : axes_text) {
    Override o = parse_override(text);
    if (o.kind != Override::Kind::Set)
      throw ConfigError(fmt::format("sweep axis '{}': axes set values (key=a,b); + and ~ are for plain overrides", text));
    add_axis(parse_axis(o.key, o.value, fmt::format("command line '{}'", text)));
  }
  if (samples) plan.samples = *samples;
  if (plan.samples < 0) throw ConfigError("sweep.samples must be >= 0");
  const bool any_sampled = std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) { return a.sampled(); });
  if (any_sampled && plan.samples == 0)
    throw ConfigError(fmt::format("the sweep samples '{}' from a distribution but says not how many draws: set "
                                  "`sweep: {{samples: N}}` or pass --samples N",
                                  std::find_if(axes.begin(), axes.end(), [](const SweepAxis& a) { return a.sampled(); })->key));
  if (!any_sampled) plan.samples = 0;

  // The base config, validated, without its sweep block.
  root.remove("sweep");
  Experiment base = resolve_experiment(YAML::Clone(root), config, overrides, registry);
  plan.experiment = base.experiment;
  plan.method = base.method;
  plan.objective = base.objective;
  plan.slurm = base.slurm;
  plan.runs_dir = fs::absolute(base.runs_dir).lexically_normal();
  plan.folder = plan.runs_dir / base.experiment / "sweep";
  plan.base_config = base.to_yaml_text();
  plan.axes = axes;

  // Grid over the value axes (in the order given), then the draws of the sampled axes.
  std::vector<std::vector<std::pair<std::string, std::string>>> points{{}};
  for (const auto& a : axes) {
    if (a.sampled()) continue;
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& p : points)
      for (const auto& v : a.values) {
        auto q = p;
        q.emplace_back(a.key, v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  if (any_sampled) {
    std::mt19937_64 rng(plan.sampling_seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& p : points)
      for (int s = 0; s < plan.samples; ++s) {
        auto q = p;
        for (const auto& a : axes) {
          if (!a.sampled()) continue;
          double lo = a.lo, hi = a.hi;
          if (a.integer) hi += 1;  // int(uniform(1,8)) draws 1..8
          double v = a.kind == SweepAxis::Kind::Uniform ? lo + (hi - lo) * u(rng)
                                                        : std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * u(rng));
          if (a.integer) v = std::min(std::floor(v), a.hi);
          q.emplace_back(a.key, format_value(v, a.integer));
        }
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  if (points.size() > 100000) throw ConfigError(fmt::format("the sweep expands to {} trials; that is too many", points.size()));

  std::set<std::string> seen;
  for (const auto& assignment : points) {
    std::vector<Override> trial_overrides = overrides;
    std::string described;
    for (const auto& [k, v] : assignment) {
      trial_overrides.push_back(parse_override(k + "=" + v));
      described += (described.empty() ? "" : " ") + k + "=" + v;
    }
    Experiment e;
    try {
      e = resolve_experiment(YAML::Clone(root), config, trial_overrides, registry);
    } catch (const ConfigError& err) {
      throw ConfigError(fmt::format("sweep trial {} ({}): {}", plan.trials.size(), described, err.what()));
    }
    SweepTrial t;
    t.hash = e.config_hash();
    if (!seen.insert(t.hash).second) continue;  // two assignments that resolve to the same config run once
    t.index = static_cast<int>(plan.trials.size());
    t.assignment = assignment;
    t.config = e.to_yaml_text();
    fs::path existing = existing_trial_folder(plan.folder, t.hash);
    t.folder = existing.empty() ? plan.folder / fmt::format("trial-{:04}-{}", t.index, t.hash.substr(0, 8)) : existing;
    plan.trials.push_back(std::move(t));
  }
  return plan;
}

// ---------------------------------------------------------------- the folder

namespace {

// A line diff (longest common subsequence), for the "changed sweep" message.
std::string line_diff(const std::string& a, const std::string& b) {
  auto lines = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string l;
    while (std::getline(ss, l)) out.push_back(l);
    return out;
  };
  auto x = lines(a), y = lines(b);
  std::vector<std::vector<int>> lcs(x.size() + 1, std::vector<int>(y.size() + 1, 0));
  for (size_t i = x.size(); i-- > 0;)
    for (size_t j = y.size(); j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (i < x.size() && j < y.size() && x[i] == y[j]) ++i, ++j;
    else if (i < x.size() && (j == y.size() || lcs[i + 1][j] >= lcs[i][j + 1])) out += "  - " + x[i++] + "\n";
    else out += "  + " + y[j++] + "\n";
  }
  return out;
}

}  // namespace

void prepare_sweep_folder(const SweepPlan& plan, bool force) {
  fs::create_directories(plan.folder);
  const fs::path file = plan.folder / "sweep.yaml";
  if (fs::exists(file) && !force) {
    YAML::Node old = YAML::LoadFile(file.string());
    const std::string before = old["definition"] ? old["definition"].as<std::string>() : "";
    if (before != plan.definition())
      throw ConfigError(fmt::format("the sweep in '{}' was started with another definition; its completed trials "
                                    "would not match. Differences (- before, + now):\n{}Run with --force to continue "
                                    "there anyway (trials with the same config are still reused), or set "
                                    "experiment=<new name> for a separate sweep",
                                    plan.folder.string(), line_diff(before, plan.definition())));
  }
  YAML::Node out(YAML::NodeType::Map);
  out["experiment"] = plan.experiment;
  out["method"] = plan.method;
  out["runs_dir"] = plan.runs_dir.string();
  out["created"] = now_iso8601();
  if (plan.objective) {
    out["objective"]["metric"] = plan.objective->metric;
    out["objective"]["mode"] = plan.objective->mode == Direction::Minimize ? "min" : "max";
  }
  if (plan.slurm.IsDefined() && !plan.slurm.IsNull()) out["slurm"] = plan.slurm;
  for (const auto& a : plan.axes) {
    YAML::Node x(YAML::NodeType::Map);
    x["key"] = a.key;
    x["expression"] = a.expression;
    out["axes"].push_back(x);
  }
  out["samples"] = plan.samples;
  out["seed"] = plan.sampling_seed;
  out["definition"] = plan.definition();
  out["base_config"] = plan.base_config;
  for (const auto& t : plan.trials) {
    YAML::Node n(YAML::NodeType::Map);
    n["index"] = t.index;
    n["folder"] = t.folder.filename().string();
    n["hash"] = t.hash;
    for (const auto& [k, v] : t.assignment) n["assignment"][k] = v;
    n["config"] = t.config;
    out["trials"].push_back(n);
  }
  YAML::Emitter em;
  em << out;
  write_file_atomic(file, std::string(em.c_str()) + "\n");
}

SweepPlan load_sweep(const fs::path& folder) {
  const fs::path file = folder / "sweep.yaml";
  if (!fs::exists(file))
    throw ConfigError(fmt::format("'{}' is not a sweep folder (no sweep.yaml); sweeps live in "
                                  "runs/<experiment>/sweep/",
                                  folder.string()));
  YAML::Node n = YAML::LoadFile(file.string());
  SweepPlan plan;
  plan.folder = fs::absolute(folder).lexically_normal();
  plan.experiment = n["experiment"].as<std::string>();
  plan.method = n["method"].as<std::string>();
  plan.runs_dir = n["runs_dir"].as<std::string>();
  if (n["objective"]) {
    Objective o;
    o.metric = n["objective"]["metric"].as<std::string>();
    o.mode = n["objective"]["mode"].as<std::string>() == "min" ? Direction::Minimize : Direction::Maximize;
    plan.objective = o;
  }
  if (n["slurm"]) plan.slurm = n["slurm"];
  for (const auto& a : n["axes"]) {
    SweepAxis axis;
    axis.key = a["key"].as<std::string>();
    axis.expression = a["expression"].as<std::string>();
    plan.axes.push_back(axis);
  }
  plan.samples = n["samples"].as<int>();
  plan.sampling_seed = n["seed"].as<std::uint64_t>();
  plan.base_config = n["base_config"].as<std::string>();
  for (const auto& t : n["trials"]) {
    SweepTrial trial;
    trial.index = t["index"].as<int>();
    trial.folder = plan.folder / t["folder"].as<std::string>();
    trial.hash = t["hash"].as<std::string>();
    if (t["assignment"])
      for (auto it = t["assignment"].begin(); it != t["assignment"].end(); ++it)
        trial.assignment.emplace_back(it->first.as<std::string>(), it->second.as<std::string>());
    // Keep the axis order of the definition.
    std::stable_sort(trial.assignment.begin(), trial.assignment.end(), [&](const auto& a, const auto& b) {
      auto pos = [&](const std::string& k) {
        for (size_t i = 0; i < plan.axes.size(); ++i)
          if (plan.axes[i].key == k) return i;
        return plan.axes.size();
      };
      return pos(a.first) < pos(b.first);
    });
    trial.config = t["config"].as<std::string>();
    plan.trials.push_back(std::move(trial));
  }
  return plan;
}

// ---------------------------------------------------------------- trial state

const char* trial_state_name(TrialState state) {
  switch (state) {
    case TrialState::Pending: return "pending";
    case TrialState::Running: return "running";
    case TrialState::Completed: return "completed";
    case TrialState::Failed: return "failed";
    case TrialState::Interrupted: return "interrupted";
  }
  return "?";
}

TrialStatus trial_status(const SweepTrial& trial) {
  TrialStatus s;
  std::ifstream in(trial.folder / "status.json");
  if (!in) return s;
  json j = json::parse(in, nullptr, false);
  if (!j.is_object()) return s;
  const std::string status = j.value("status", "");
  s.error = j.value("error", "");
  s.seconds = j.contains("seconds") && j["seconds"].is_number() ? j["seconds"].get<double>() : 0.0;
  s.has_checkpoint = fs::exists(trial.folder / "checkpoints" / "LATEST");
  if (j.contains("summary") && j["summary"].is_object())
    for (auto& [k, v] : j["summary"].items()) s.summary[k] = v.is_number() ? v.get<double>() : std::nan("");
  s.reason = j.value("reason", "");
  switch (parse_run_status(status).value_or(RunStatus::Created)) {
    case RunStatus::Completed: s.state = TrialState::Completed; break;
    case RunStatus::Failed: s.state = TrialState::Failed; break;
    case RunStatus::Interrupted: s.state = TrialState::Interrupted; break;
    case RunStatus::Running:
      // A process that is gone left its trial behind: it resumes like an interrupted one.
      s.state = process_gone(j) ? TrialState::Interrupted : TrialState::Running;
      if (s.state == TrialState::Interrupted) s.reason = reason::process_gone;
      break;
    case RunStatus::Created: break;
  }
  return s;
}

std::vector<int> pending_trials(const SweepPlan& plan, bool retry_failed) {
  std::vector<int> out;
  for (const auto& t : plan.trials) {
    TrialState s = trial_status(t).state;
    if (s == TrialState::Completed || s == TrialState::Running) continue;
    if (s == TrialState::Failed && !retry_failed) continue;
    out.push_back(t.index);
  }
  return out;
}

RunResult run_trial(const SweepPlan& plan, int index, int threads, const RunOptions& base_options, Registry& registry) {
  if (index < 0 || index >= static_cast<int>(plan.trials.size()))
    throw ConfigError(fmt::format("sweep '{}' has trials 0..{}; there is no trial {}", plan.folder.string(),
                                  plan.trials.size() - 1, index));
  const SweepTrial& trial = plan.trials[static_cast<size_t>(index)];
  RunOptions options = base_options;
  options.folder = trial.folder;
  options.sweep = plan.folder.string();
  options.trial = index;
  options.max_threads = threads;  // the launcher's share of the cores; a smaller `threads:` wins
  TrialStatus s = trial_status(trial);
  if (s.state == TrialState::Completed) {
    RunResult r;
    r.id = trial.folder.filename().string();
    r.folder = trial.folder;
    r.status = RunStatus::Completed;
    r.summary = s.summary;
    logger().info("trial {} already completed; skipped", index);
    return r;
  }
  if (s.state == TrialState::Interrupted && fs::exists(trial.folder / "config.yaml"))
    return resume_run(trial.folder, options, registry);
  Experiment e = resolve_experiment(YAML::Load(trial.config), plan.folder / "sweep.yaml", {}, registry);
  return run_experiment(e, options, registry);
}

// ---------------------------------------------------------------- results

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
  std::ostringstream csv;
  csv << "trial,status";
  for (const auto& a : plan.axes) csv << "," << csv_cell(a.key);
  csv << ",objective";
  for (const auto& m : metric_names) csv << "," << csv_cell(m);
  csv << ",seconds,folder,error\n";
  std::vector<const Row*> by_index;
  for (const auto& r : rows) by_index.push_back(&r);
  std::sort(by_index.begin(), by_index.end(), [](const Row* a, const Row* b) { return a->trial->index < b->trial->index; });
  for (const Row* r : by_index) {
    csv << r->trial->index << "," << trial_state_name(r->status.state);
    for (const auto& a : plan.axes) csv << "," << csv_cell(r->trial->value(a.key));
    csv << "," << num(r->objective);
    for (const auto& m : metric_names) csv << "," << (r->status.summary.count(m) ? num(r->status.summary.at(m)) : "");
    csv << "," << fmt::format("{:.3f}", r->status.seconds) << "," << csv_cell(r->trial->folder.filename().string()) << ","
        << csv_cell(r->status.error) << "\n";
  }
  write_file_atomic(plan.folder / "trials.csv", csv.str());

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
  out << fmt::format("sweep {}: {} trials, {} completed, {} running, {} failed, {} interrupted, {} pending\n",
                     plan.folder.string(), plan.trials.size(), counts[TrialState::Completed], counts[TrialState::Running],
                     counts[TrialState::Failed], counts[TrialState::Interrupted], counts[TrialState::Pending]);
  print_rows(plan, ranked_rows(plan), out, 3);
}

}  // namespace nexp
