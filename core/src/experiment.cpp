// Experiment configs: resolution of a config tree into a validated Experiment, and its resolved form
// (nexp/runtime/experiment.hpp). Values, interpolation, overrides and schema checks have their own files.
#include "nexp/runtime/experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "nexp/error.hpp"
#include "nexp/runtime/sections.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "yaml_values.hpp"

namespace nexp {

namespace fs = std::filesystem;
using namespace detail;

// ---------------------------------------------------------------- resolution
//
// Every section is checked even when an earlier one is wrong, and every problem is reported at once.

namespace {

const char* kDatasetKey = "name";  // `dataset: {name: ..., params...}`
const char* kDeviceKey = "id";     // `device: {id: ..., options...}`

Origins origins_of(const fs::path& source, const std::vector<Override>& overrides) {
  std::map<std::string, std::string> overridden;
  for (const auto& o : overrides)
    overridden[o.key] = o.origin.empty() ? fmt::format("command-line override '{}'", o.text) : o.origin;
  return Origins(source, overridden);
}

// A key written twice in one mapping: yaml-cpp keeps both and reads the first; nexp refuses. A key
// that is a list or a map (`[a, b]: 1`, `? {a: 1}`) names nothing: refused too. Returns false when
// such a key was found (nothing after this can walk the tree).
bool check_keys(const YAML::Node& node, const std::string& path, const Origins& origins, Problems& problems) {
  bool named = true;
  if (node.IsSequence())
    for (std::size_t i = 0; i < node.size(); ++i)
      named = check_keys(node[i], join_path(path, std::to_string(i)), origins, problems) && named;
  if (!node.IsMap()) return named;
  std::map<std::string, YAML::Node> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar() && !it->first.IsNull()) {
      problems.add(fmt::format("{}: a key of '{}' is {}; keys are names such as lr or dataset",
                               origins.at(path, it->first), path.empty() ? "the config" : path,
                               describe_node(it->first)));
      named = false;
      continue;
    }
    const std::string key = it->first.as<std::string>();
    const std::string at = join_path(path, key);
    if (auto [first, fresh] = seen.emplace(key, it->first); !fresh)
      problems.add(fmt::format("{}: key '{}' is written twice in one map (first at line {}); YAML keeps only one of "
                               "them, so delete the one you did not mean",
                               origins.at(at, it->first), at, first->second.Mark().line + 1));
    named = check_keys(it->second, at, origins, problems) && named;
  }
  return named;
}

void check_top_level(YAML::Node root, const Origins& origins, Problems& problems) {
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(top_level_keys().begin(), top_level_keys().end(), key) == top_level_keys().end())
      problems.add(fmt::format("{}: unknown top-level key '{}'.{}", origins.at(key, it->first), key,
                               suggestion(key, top_level_keys())));
  }
}

// experiment, seed, threads, runs_dir.
void resolve_scalars(YAML::Node root, const Origins& origins, Experiment& e, Problems& problems) {
  YAML::Node scalars(YAML::NodeType::Map);
  for (const char* k : {"experiment", "seed", "threads", "runs_dir"})
    if (root[k].IsDefined()) scalars[k] = root[k];
  auto run = bind<RunSection>(params_from_node(scalars, options_schema<RunSection>(), "", "the config", origins, problems));
  e.experiment = run.experiment.empty() ? origins.source().stem().string() : run.experiment;
  e.seed = static_cast<std::uint64_t>(run.seed);
  e.threads = run.threads;
  e.runs_dir = scalars["runs_dir"].IsDefined() ? run.runs_dir : default_runs_dir();  // NEXP_RUNS_DIR, else runs
  if (e.experiment.empty() ||
      e.experiment.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos ||
      e.experiment[0] == '.')
    problems.add(fmt::format("{}: experiment name '{}' names a folder under runs/, so it may hold only letters, "
                             "digits, '_', '-' and '.'",
                             origins.at("experiment", root["experiment"]), e.experiment));
}

std::string why_method_missing(const std::string& method, const Registry& registry) {
  auto slug = method.substr(0, method.find('.'));
  for (const auto& f : registry.failures())
    if (f.path.find("libnexp_plugin_" + slug + ".so") != std::string::npos)
      return fmt::format(" Plugin '{}' failed to load: {}", slug, f.message);
  if (!registry.plugin(slug) && slug != method)
    return fmt::format(" No plugin '{}' is loaded; build it, or point --plugin-dir / NEXP_PLUGIN_PATH at its folder.", slug);
  return "";
}

const MethodSpec* resolve_method(YAML::Node root, const Origins& origins, const Registry& registry,
                                 Experiment& e, Problems& problems) {
  const YAML::Node m = root["method"];
  if (!m.IsDefined() || m.IsNull()) {
    problems.add(fmt::format("{}: no 'method:' key. Every experiment names the method to run, e.g. `method: "
                             "htc.decide`; `nexp list` shows them",
                             origins.at("method", root)));
    return nullptr;
  }
  if (!m.IsScalar()) {
    problems.add(fmt::format("{}: 'method' must be a method name such as htc.decide, found {}", origins.at("method", m),
                             describe_node(m)));
    return nullptr;
  }
  const MethodSpec* spec = registry.find_method(m.Scalar());
  if (!spec) {
    std::vector<std::string> names;
    for (const auto* x : registry.methods()) names.push_back(x->name);
    problems.add(fmt::format("{}: unknown method '{}'.{}{} `nexp list` shows the methods there are",
                             origins.at("method", m), m.Scalar(), suggestion(m.Scalar(), names),
                             why_method_missing(m.Scalar(), registry)));
    return nullptr;
  }
  e.method = spec->name;
  e.params = params_from_node(root["params"], spec->schema, "params", spec->name, origins, problems);
  e.schemas.params = spec->schema;
  return spec;
}

// `name` or `{<key>: name, ...options}`: the name, and the options less the key. Empty name: invalid.
std::pair<std::string, YAML::Node> named_section(const YAML::Node& d, const char* section, const char* key,
                                                 const Origins& origins, Problems& problems) {
  YAML::Node options(YAML::NodeType::Map);
  if (d.IsScalar()) return {d.Scalar(), options};
  if (d.IsMap() && d[key].IsDefined() && d[key].IsScalar()) {
    for (auto it = d.begin(); it != d.end(); ++it)
      if (it->first.as<std::string>() != key) options[it->first] = it->second;
    return {d[key].Scalar(), options};
  }
  problems.add(fmt::format("{}: '{}' must be a name or a map with '{}:' and its options, e.g. `{}: {{{}: <name>, "
                           "...}}`; found {}",
                           origins.at(section, d), section, key, section, key, describe_node(d)));
  return {"", options};
}

bool accepts_dataset(const MethodSpec& spec, const std::string& dataset) {
  if (spec.datasets.empty()) return true;
  return std::any_of(spec.datasets.begin(), spec.datasets.end(), [&](const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '*') return dataset.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
    return dataset == pattern;
  });
}

void resolve_dataset(YAML::Node root, const Origins& origins, const Registry& registry, const MethodSpec* spec,
                     Experiment& e, Problems& problems) {
  const YAML::Node d = root["dataset"];
  if (!d.IsDefined() || d.IsNull()) {
    if (spec && !spec->datasets.empty())
      problems.add(fmt::format("{}: method '{}' needs a dataset ({}); add `dataset: <name>`", origins.at("dataset", root),
                               spec->name, fmt::join(spec->datasets, ", ")));
    return;
  }
  auto [name, params] = named_section(d, "dataset", kDatasetKey, origins, problems);
  if (name.empty()) return;
  e.dataset = name;
  const DatasetSpec* ds = registry.find_dataset(name);
  if (!ds) {
    std::vector<std::string> names;
    for (const auto* x : registry.datasets()) names.push_back(x->name);
    problems.add(fmt::format("{}: unknown dataset '{}'.{} `nexp list` shows the datasets there are",
                             origins.at("dataset.name", d.IsMap() ? d[kDatasetKey] : d), name, suggestion(name, names)));
    return;
  }
  if (spec && !accepts_dataset(*spec, name))
    problems.add(fmt::format("{}: method '{}' does not take dataset '{}'; it accepts {}", origins.at("dataset", d),
                             spec->name, name, fmt::join(spec->datasets, ", ")));
  e.dataset_params = params_from_node(params, ds->schema, "dataset", ds->name, origins, problems);
  e.schemas.dataset = ds->schema;
}

// The backend of a device id, or null (with the problem said) when the id is malformed or unknown.
const DeviceBackendSpec* device_backend(const std::string& id, const std::string& at, const Registry& registry,
                                        Problems& problems) {
  const auto colon = id.find(':');
  const std::string backend = id.substr(0, colon);
  const bool index_ok = colon == std::string::npos ||
                        (colon + 1 < id.size() && id.find_first_not_of("0123456789", colon + 1) == std::string::npos);
  const DeviceBackendSpec* b = registry.find_backend(backend);
  if (b && index_ok) return b;
  std::vector<std::string> names{"auto"};
  for (const auto* x : registry.backends()) names.push_back(x->name);
  problems.add(fmt::format("{}: device '{}' is not of the form auto, <backend> or <backend>:<index> with a known "
                           "backend ({}).{}",
                           at, id, fmt::join(names, ", "), b ? "" : suggestion(backend, names)));
  return nullptr;
}

// `device: [cpu, simaccel:0, simaccel:1]`: every device a run may use (ctx.devices()); the first is
// device(). Ids only: a device with options is written as a map, alone.
void resolve_device_list(const YAML::Node& d, const Origins& origins, const Registry& registry, Experiment& e,
                         Problems& problems) {
  for (size_t i = 0; i < d.size(); ++i) {
    const std::string at = origins.at(fmt::format("device.{}", i), d[i]);
    if (!d[i].IsScalar() || d[i].Scalar() == "auto") {
      problems.add(fmt::format("{}: a device list holds device ids such as cpu or simaccel:1, found {}", at,
                               describe_node(d[i])));
      continue;
    }
    if (device_backend(d[i].Scalar(), at, registry, problems)) e.devices.push_back(d[i].Scalar());
  }
  if (d.size() == 0) problems.add(fmt::format("{}: the device list is empty", origins.at("device", d)));
  if (!e.devices.empty()) e.device = e.devices.front();
}

void resolve_device(YAML::Node root, const Origins& origins, const Registry& registry, Experiment& e,
                    Problems& problems) {
  const YAML::Node d = root["device"];
  if (!d.IsDefined() || d.IsNull()) return;
  if (d.IsSequence()) return resolve_device_list(d, origins, registry, e, problems);
  auto [id, options] = named_section(d, "device", kDeviceKey, origins, problems);
  if (id.empty()) return;
  e.device = id;
  if (id == "auto") {
    if (options.size() > 0)
      problems.add(fmt::format("{}: 'device: auto' takes no options; name the backend (e.g. id: simaccel:0) to pass "
                               "options",
                               origins.at("device", d)));
    return;
  }
  const DeviceBackendSpec* b = device_backend(id, origins.at("device", d), registry, problems);
  if (!b) return;
  e.device_options = params_from_node(options, b->schema, "device", b->name, origins, problems);
  e.schemas.device = b->schema;
}

// What a method can report: its own metrics, and core's prediction metrics ("<prefix>_<metric>").
struct Producible {
  const MethodSpec& spec;
  const Registry& registry;

  bool has(const std::string& name) const {
    if (std::find(spec.metrics.begin(), spec.metrics.end(), name) != spec.metrics.end()) return true;
    if (!spec.predictions) return false;
    if (const MetricSpec* m = registry.find_metric(name); m && m->from_predictions) return true;
    auto us = name.rfind('_');  // e.g. test_accuracy
    if (us == std::string::npos) return false;
    const MetricSpec* m = registry.find_metric(name.substr(us + 1));
    return m && m->from_predictions;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out = spec.metrics;
    if (spec.predictions)
      for (const auto* m : registry.metrics())
        if (m->from_predictions) out.push_back(m->name);
    return out;
  }
  std::string unknown(const std::string& name) const {
    return fmt::format("method '{}' cannot produce metric '{}'. It produces: {}.{}", spec.name, name,
                       fmt::join(names(), ", "), suggestion(name, names()));
  }
};

void resolve_metrics(YAML::Node root, const Origins& origins, const Producible& can, Experiment& e,
                     Problems& problems) {
  const YAML::Node m = root["metrics"];
  if (!m.IsDefined() || m.IsNull()) {
    e.metrics = can.spec.metrics;
    return;
  }
  std::vector<YAML::Node> items;
  if (m.IsSequence()) for (const auto& x : m) items.push_back(x);
  else if (m.IsScalar()) items.push_back(m);
  else return problems.add(fmt::format("{}: 'metrics' must be a list of metric names, found {}", origins.at("metrics", m), describe_node(m)));
  for (const auto& x : items) {
    if (!x.IsScalar())
      problems.add(fmt::format("{}: each entry of 'metrics' must be a name, found {}", origins.at("metrics", x), describe_node(x)));
    else if (!can.has(x.Scalar()))
      problems.add(fmt::format("{}: {}", origins.at("metrics", x), can.unknown(x.Scalar())));
    else
      e.metrics.push_back(x.Scalar());
  }
}

// One objective: `{metric, mode}` or just the metric's name; the mode defaults to the metric's direction.
std::optional<Objective> one_objective(const YAML::Node& o, const Origins& origins, const Producible& can,
                                       const Registry& registry, Problems& problems) {
  Objective obj;
  std::string mode;
  if (o.IsScalar()) {
    obj.metric = o.Scalar();
  } else if (o.IsMap() && o["metric"].IsDefined() && o["metric"].IsScalar()) {
    obj.metric = o["metric"].Scalar();
    if (o["mode"].IsDefined()) mode = o["mode"].IsScalar() ? o["mode"].Scalar() : "?";
    for (auto it = o.begin(); it != o.end(); ++it)
      if (auto k = it->first.as<std::string>(); k != "metric" && k != "mode")
        problems.add(fmt::format("{}: unknown key 'objective.{}'; objective takes metric and mode (min|max)",
                                 origins.at("objective." + k, it->first), k));
  } else {
    problems.add(fmt::format("{}: 'objective' must be {{metric: <name>, mode: min|max}} (or a list of them), found {}",
                             origins.at("objective", o), describe_node(o)));
    return std::nullopt;
  }
  if (!can.has(obj.metric)) {
    problems.add(fmt::format("{}: the objective: {}", origins.at("objective", o), can.unknown(obj.metric)));
    return std::nullopt;
  }
  if (mode.empty()) {
    const std::string slug = can.spec.name.substr(0, can.spec.name.find('.'));
    const MetricSpec* ms = registry.find_metric(obj.metric, slug);
    if (!ms) ms = registry.find_metric(obj.metric.substr(obj.metric.rfind('_') + 1));
    if (!ms || ms->direction == Direction::None) {
      problems.add(fmt::format("{}: metric '{}' has no direction; say `objective: {{metric: {}, mode: min}}` or "
                               "`mode: max`",
                               origins.at("objective", o), obj.metric, obj.metric));
      return std::nullopt;
    }
    obj.mode = ms->direction;
  } else if (mode == "min" || mode == "max") {
    obj.mode = mode == "min" ? Direction::Minimize : Direction::Maximize;
  } else {
    problems.add(fmt::format("{}: objective.mode must be 'min' or 'max', found {}",
                             origins.at("objective.mode", o["mode"]), describe_node(o["mode"])));
    return std::nullopt;
  }
  return obj;
}

// `objective:` one objective, or a list of them (a multi-objective sweep; `objective` is the first).
void resolve_objective(YAML::Node root, const Origins& origins, const Producible& can, const Registry& registry,
                       Experiment& e, Problems& problems) {
  const YAML::Node o = root["objective"];
  if (!o.IsDefined() || o.IsNull()) return;
  if (o.IsSequence() && o.size() == 0)
    return problems.add(fmt::format("{}: 'objective' is an empty list; name at least one metric", origins.at("objective", o)));
  const std::vector<YAML::Node> items = o.IsSequence() ? std::vector<YAML::Node>(o.begin(), o.end()) : std::vector<YAML::Node>{o};
  for (const auto& item : items)
    if (auto obj = one_objective(item, origins, can, registry, problems)) e.objectives.push_back(*obj);
  if (e.objectives.size() == items.size()) e.objective = e.objectives.front();
  else e.objectives.clear();
}

// `sweep:` is checked here for its own keys and the grammar of its axes; the planner checks that every
// axis value makes a valid config (sweep.hpp).
void resolve_sweep(YAML::Node root, const Origins& origins, Experiment& e, Problems& problems) {
  YAML::Node s = root["sweep"];
  if (!s.IsDefined() || s.IsNull()) return;
  if (!s.IsMap())
    return problems.add(fmt::format("{}: 'sweep' must be a map with params: (and samples:, seed:), found {}",
                                    origins.at("sweep", s), describe_node(s)));
  YAML::Node rest(YAML::NodeType::Map);
  for (auto it = s.begin(); it != s.end(); ++it)
    if (it->first.as<std::string>() != "params") rest[it->first] = it->second;
  params_from_node(rest, options_schema<SweepOptions>(), "sweep", "the sweep block", origins, problems);
  YAML::Node p = s["params"];
  if (p.IsDefined() && !p.IsNull() && !p.IsMap())
    problems.add(fmt::format("{}: 'sweep.params' must map config keys to value lists or expressions such as "
                             "range(0,3), found {}",
                             origins.at("sweep.params", p), describe_node(p)));
  if (p.IsDefined() && p.IsMap())
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string key = it->first.as<std::string>(), path = "sweep.params." + key;
      const std::string at = origins.at(path, it->second);
      if (it->second.IsSequence() && it->second.size() == 0)
        problems.add(fmt::format("{}: sweep axis '{}' has no values", at, key));
      else if (it->second.IsScalar())
        problems.attempt([&] { parse_axis(key, it->second.Scalar(), at); });
      else if (!it->second.IsSequence())
        problems.add(fmt::format("{}: sweep axis '{}' must be a list or an expression such as range(0,3), found {}", at,
                                 key, describe_node(it->second)));
    }
  e.sweep = s;  // not a clone: the planner reads the lines of its axes
}

void resolve_slurm(YAML::Node root, const Origins& origins, Experiment& e, Problems& problems) {
  const YAML::Node s = root["slurm"];
  if (!s.IsDefined() || s.IsNull()) return;
  const Schema schema = options_schema<SlurmOptions>();
  e.slurm = params_to_yaml(params_from_node(s, schema, "slurm", "the slurm block", origins, problems), schema);
}

void resolve_distributed(YAML::Node root, const Origins& origins, Experiment& e, Problems& problems) {
  const YAML::Node d = root["distributed"];
  if (!d.IsDefined() || d.IsNull()) return;
  const Schema schema = options_schema<DistributedOptions>();
  const Params p = params_from_node(d, schema, "distributed", "the distributed block", origins, problems);
  if (!d.IsMap()) return;  // params_from_node has said what is wrong
  const auto o = bind<DistributedOptions>(p);
  e.distributed = params_to_yaml(p, schema);
  e.processes = o.processes;
  e.timeout_seconds = parse_duration_seconds(o.timeout);
  if (e.timeout_seconds <= 0)
    problems.add(fmt::format("{}: distributed.timeout: expected a positive duration such as 60s, 5m, 500ms or 1h, "
                             "found '{}'",
                             origins.at("distributed.timeout", d["timeout"]), o.timeout));
}

}  // namespace

double parse_duration_seconds(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> units{{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  double scale = 1;
  std::string number = text;
  for (const auto& [suffix, s] : units)
    if (text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        std::isdigit(static_cast<unsigned char>(text[text.size() - suffix.size() - 1]))) {
      number = text.substr(0, text.size() - suffix.size());
      scale = s;
      break;
    }
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !std::isfinite(v) || v <= 0) return -1;
  return v * scale;
}

Experiment resolve_experiment(YAML::Node root, const fs::path& source, const std::vector<Override>& overrides,
                              const Registry& registry) {
  const Origins origins = origins_of(source, overrides);
  Problems problems;
  if (!check_keys(root, "", origins, problems)) problems.raise();
  apply_overrides(root, overrides, source, registry);
  interpolate(root, origins);
  check_top_level(root, origins, problems);

  Experiment e;
  e.source = source;
  resolve_scalars(root, origins, e, problems);
  const MethodSpec* spec = resolve_method(root, origins, registry, e, problems);
  resolve_dataset(root, origins, registry, spec, e, problems);
  resolve_device(root, origins, registry, e, problems);
  if (spec) {
    const Producible can{*spec, registry};
    resolve_metrics(root, origins, can, e, problems);
    resolve_objective(root, origins, can, registry, e, problems);
  }
  resolve_sweep(root, origins, e, problems);
  resolve_slurm(root, origins, e, problems);
  resolve_distributed(root, origins, e, problems);
  problems.attempt([&] { e.llm = parse_llm_config(root["llm"], source); });
  problems.raise();
  return e;
}

Experiment load_experiment(const fs::path& file, const std::vector<Override>& overrides, const Registry& registry) {
  return resolve_experiment(read_yaml_file(file), file, overrides, registry);
}

// ---------------------------------------------------------------- the resolved form

YAML::Node Experiment::to_yaml() const {
  YAML::Node out(YAML::NodeType::Map);
  out["experiment"] = experiment;
  out["method"] = method;
  out["params"] = params_to_yaml(params, schemas.params);
  if (!dataset.empty()) {
    YAML::Node d(YAML::NodeType::Map);
    d["name"] = dataset;
    YAML::Node p = params_to_yaml(dataset_params, schemas.dataset);
    for (auto it = p.begin(); it != p.end(); ++it) d[it->first] = it->second;
    out["dataset"] = d;
  }
  if (devices.size() > 0) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& id : devices) list.push_back(id);
    list.SetStyle(YAML::EmitterStyle::Flow);
    out["device"] = list;
  } else if (device_options.values().empty()) {
    out["device"] = device;
  } else {
    YAML::Node d(YAML::NodeType::Map);
    d["id"] = device;
    YAML::Node p = params_to_yaml(device_options, schemas.device);
    for (auto it = p.begin(); it != p.end(); ++it) d[it->first] = it->second;
    out["device"] = d;
  }
  out["seed"] = seed;
  YAML::Node m(YAML::NodeType::Sequence);
  for (const auto& x : metrics) m.push_back(x);
  m.SetStyle(YAML::EmitterStyle::Flow);
  out["metrics"] = m;
  auto objective_yaml = [](const Objective& x) {
    YAML::Node o(YAML::NodeType::Map);
    o["metric"] = x.metric;
    o["mode"] = x.mode == Direction::Minimize ? "min" : "max";
    return o;
  };
  if (objectives.size() > 1)
    for (const auto& x : objectives) out["objective"].push_back(objective_yaml(x));
  else if (objective)
    out["objective"] = objective_yaml(*objective);
  out["threads"] = threads;
  out["runs_dir"] = runs_dir;
  if (sweep.IsDefined() && !sweep.IsNull()) out["sweep"] = sweep;
  if (slurm.IsDefined() && !slurm.IsNull()) out["slurm"] = slurm;
  if (distributed.IsDefined() && !distributed.IsNull()) out["distributed"] = distributed;
  if (llm.present) out["llm"] = llm.to_yaml();
  return out;
}

std::string Experiment::to_yaml_text() const {
  YAML::Emitter em;
  em << to_yaml();
  return std::string(em.c_str()) + "\n";
}

std::string Experiment::config_hash() const {
  YAML::Node n = to_yaml();
  for (const char* k : {"experiment", "runs_dir", "threads", "sweep", "slurm"}) n.remove(k);
  YAML::Emitter em;
  em << n;
  return sha256_hex(em.c_str());
}

}  // namespace nexp
