// Sweep planning: a config, overrides and axes expand into trials (nexp/runtime/sweep.hpp).
#include "nexp/runtime/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "nexp/error.hpp"
#include "nexp/random.hpp"
#include "nexp/runtime/util.hpp"
#include "override_grammar.hpp"
#include "sweep_adaptive.hpp"
#include "sweep_grammar.hpp"

namespace nexp {

namespace fs = std::filesystem;
using namespace detail;

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
  if (adaptive()) d["sampler"] = sampler;  // grid and random sweeps keep the definition they always had
  if (pruner.active()) d["pruner"] = detail::pruner_yaml(pruner);
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

// A YAML value as override text that reads back the same (text with commas or brackets is quoted).
std::string override_text(const YAML::Node& n) {
  if (!n.IsScalar()) return yaml_text(n);
  Element e;
  e.text = n.Scalar();
  return canonical_text(e);
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

bool config_has_sweep(const fs::path& config, const std::vector<std::string>& overrides) {
  const YAML::Node root = read_yaml_file(config);
  YAML::Node s = root["sweep"];
  for (const auto& text : overrides) {  // `~sweep`, `sweep=null` (or `~`) drop the block; `sweep=...` sets it
    const Override o = parse_override(text);
    if (o.key != "sweep") continue;
    try {
      s = o.has_value ? YAML::Load(o.value) : YAML::Node(YAML::NodeType::Null);
    } catch (const YAML::Exception&) {
      s = YAML::Node(o.value);  // not YAML: resolution reports it; here it only counts as a block
    }
  }
  return s.IsDefined() && !s.IsNull() && !(s.IsMap() && s.size() == 0);
}

namespace {

// Keys a sweep may not vary: they name where runs go, or configure the sweep itself.
void check_axis_key(const SweepAxis& axis) {
  const std::string top = axis.key.substr(0, axis.key.find('.'));
  if (top == "experiment" || top == "runs_dir" || top == "sweep" || top == "slurm")
    throw ConfigError(fmt::format("{}: sweep axis '{}': '{}' names where runs go or how the sweep runs, not what a "
                                  "trial computes, so it cannot be an axis; set it once (e.g. {}=...)",
                                  axis.origin, axis.key, top, top));
}

// The axes of the config's (already validated) `sweep:` block, each with the line it came from.
std::vector<SweepAxis> block_axes(const YAML::Node& sweep, const fs::path& config) {
  std::vector<SweepAxis> axes;
  if (!sweep.IsDefined() || !sweep.IsMap() || !sweep["params"].IsDefined() || !sweep["params"].IsMap()) return axes;
  const YAML::Node p = sweep["params"];
  for (auto it = p.begin(); it != p.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const std::string at = fmt::format("config '{}', line {} (sweep axis '{}')", config.string(), it->second.Mark().line + 1, key);
    if (it->second.IsSequence()) {
      SweepAxis axis;
      axis.key = key;
      axis.expression = yaml_text(it->second);
      const YAML::Node values = it->second;  // a named node: ranging over the iterator's member dangles
      for (const auto& v : values) axis.values.push_back(override_text(v));
      axis.origin = at;
      axes.push_back(std::move(axis));
    } else {
      axes.push_back(parse_axis(key, it->second.Scalar(), at));
    }
  }
  return axes;
}

// The YAML block's axes, then the command line's (which win for the same key). A plain override of a
// key the block sweeps pins it: `nexp run cfg.yaml -m seed=0` runs the block's other axes at seed 0.
std::vector<SweepAxis> collect_axes(const Experiment& base, const std::vector<Override>& overrides,
                                    const std::vector<std::string>& axes_text) {
  std::vector<SweepAxis> axes = block_axes(base.sweep, base.source);
  const auto pinned = [&](const SweepAxis& a) {
    return std::any_of(overrides.begin(), overrides.end(), [&](const Override& o) { return o.key == a.key; });
  };
  axes.erase(std::remove_if(axes.begin(), axes.end(), pinned), axes.end());
  for (const auto& text : axes_text) {
    Override o = parse_override(text);
    if (o.kind == Override::Kind::Remove)
      throw ConfigError(fmt::format("sweep axis '{}': an axis sets values (key=a,b or +key=a,b); ~ deletes, it does not sweep", text));
    SweepAxis axis = parse_axis(o.key, o.value, fmt::format("command line '{}'", text));
    axis.prefix = o.kind == Override::Kind::Add ? "+" : o.kind == Override::Kind::ForceAdd ? "++" : "";
    auto same = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == axis.key; });
    if (same != axes.end()) *same = std::move(axis);
    else axes.push_back(std::move(axis));
  }
  for (const auto& axis : axes) check_axis_key(axis);
  return axes;
}

// The Cartesian product of the value axes, in the order given.
std::vector<Assignment> grid_points(const std::vector<SweepAxis>& axes) {
  std::vector<Assignment> points{{}};
  for (const auto& a : axes) {
    if (a.sampled()) continue;
    std::vector<Assignment> next;
    for (const auto& p : points)
      for (const auto& v : a.values) {
        auto q = p;
        q.emplace_back(a.key, v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

// `samples` draws of the sampled axes for each grid point, from a generator seeded by the sweep:
// nexp::Random, not <random>'s distributions, whose output differs between standard libraries, so a
// sweep expands to the same trials everywhere.
std::vector<Assignment> sample_points(const std::vector<Assignment>& grid, const std::vector<SweepAxis>& axes,
                                      int samples, std::uint64_t seed) {
  Random rng(seed);
  std::vector<Assignment> points;
  for (const auto& p : grid)
    for (int s = 0; s < samples; ++s) {
      auto q = p;
      for (const auto& a : axes) {
        if (!a.sampled()) continue;
        double lo = a.lo, hi = a.hi;
        if (a.integer) hi += 1;  // int(uniform(1,8)) draws 1..8
        double v = a.kind == SweepAxis::Kind::Uniform ? rng.uniform(lo, hi)
                                                      : std::exp(rng.uniform(std::log(lo), std::log(hi)));
        if (a.integer) v = std::min(std::floor(v), a.hi);
        q.emplace_back(a.key, format_value(v, a.integer));
      }
      points.push_back(std::move(q));
    }
  return points;
}

// A trial's identity: its config's hash, and the thread count when the sweep varies it (threads leave
// the result unchanged, so the config hash leaves them out; a thread-scaling sweep still wants one
// trial per count).
std::string trial_identity(const Experiment& e, const Assignment& assignment) {
  const std::string hash = e.config_hash();
  for (const auto& [k, v] : assignment)
    if (k == "threads") return sha256_hex(hash + "\nthreads=" + std::to_string(e.threads));
  return hash;
}

// The config without its sweep block, read afresh (a clone would lose the lines errors cite).
YAML::Node base_tree(const fs::path& config) {
  YAML::Node root = read_yaml_file(config);
  root.remove("sweep");
  return root;
}

}  // namespace

SweepTrial detail::resolve_trial(const SweepPlan& plan, const fs::path& config, const std::vector<Override>& overrides,
                                 const Assignment& assignment, const Registry& registry) {
  std::vector<Override> trial_overrides = overrides;
  std::string described;
  for (const auto& [k, v] : assignment) {
    const std::string& key = k;  // C++17 lambdas cannot capture a structured binding (clang refuses it)
    const auto axis = std::find_if(plan.axes.begin(), plan.axes.end(), [&](const SweepAxis& a) { return a.key == key; });
    Override o = parse_override((axis != plan.axes.end() ? axis->prefix : "") + k + "=" + v);
    if (axis != plan.axes.end() && axis->origin.rfind("config ", 0) == 0) o.origin = axis->origin;
    trial_overrides.push_back(std::move(o));
    described += (described.empty() ? "" : " ") + k + "=" + v;
  }
  Experiment e;
  try {
    e = resolve_experiment(base_tree(config), config, trial_overrides, registry);
  } catch (const ConfigError& err) {
    throw ConfigError(fmt::format("sweep trial {} ({}): {}", plan.trials.size(), described, err.what()));
  }
  SweepTrial t;
  t.hash = trial_identity(e, assignment);
  t.index = static_cast<int>(plan.trials.size());
  t.assignment = assignment;
  t.config = e.to_yaml_text();
  t.folder = plan.folder / fmt::format("trial-{:04}-{}", t.index, t.hash.substr(0, 8));
  return t;
}

namespace {

void add_trials(SweepPlan& plan, const fs::path& config, const std::vector<Override>& overrides,
                const std::vector<Assignment>& points, const Registry& registry) {
  std::set<std::string> seen;
  for (const auto& assignment : points) {
    SweepTrial t = detail::resolve_trial(plan, config, overrides, assignment, registry);
    if (!seen.insert(t.hash).second) continue;  // two assignments that resolve to the same config run once
    fs::path existing = existing_trial_folder(plan.folder, t.hash);
    if (!existing.empty()) t.folder = existing;
    plan.trials.push_back(std::move(t));
  }
}

// The run-level part of a plan: where it goes, the method, the objective, the base config.
void describe_base(SweepPlan& plan, const fs::path& config, const std::vector<Override>& overrides,
                   const Registry& registry) {
  Experiment base = resolve_experiment(base_tree(config), config, overrides, registry);
  plan.experiment = base.experiment;
  plan.method = base.method;
  plan.objective = base.objective;
  plan.objectives = base.objectives;
  plan.slurm = base.slurm;
  plan.runs_dir = fs::absolute(base.runs_dir).lexically_normal();
  plan.folder = plan.runs_dir / base.experiment / "sweep";
  plan.base_config = base.to_yaml_text();
}

// The sampler and trial budget: the command line's, else the block's.
struct SamplerChoice {
  std::string name = "grid";
  int trials = 0;
  std::string origin;  // where the sampler was chosen, for messages
};

SamplerChoice sampler_choice(const YAML::Node& block, const fs::path& config, const SweepSampling& sampling) {
  SamplerChoice c;
  c.origin = "the command line";
  if (block.IsDefined() && block["sampler"]) {
    c.name = block["sampler"].as<std::string>();
    c.origin = fmt::format("config '{}', line {}", config.string(), block["sampler"].Mark().line + 1);
  }
  if (block.IsDefined() && block["trials"]) c.trials = block["trials"].as<int>();
  if (!sampling.sampler.empty()) c.name = sampling.sampler, c.origin = "--sampler";
  if (sampling.trials) c.trials = *sampling.trials;
  const auto& adaptive = samplers::adaptive_sampler_names();
  if (c.name != "grid" && c.name != "random" && std::find(adaptive.begin(), adaptive.end(), c.name) == adaptive.end())
    throw ConfigError(fmt::format("{}: unknown sampler '{}'; sweeps use grid, random or one of the adaptive samplers: {}",
                                  c.origin, c.name, fmt::join(adaptive, ", ")));
  if (c.trials < 0) throw ConfigError(fmt::format("--trials must be >= 0, found {}", c.trials));
  return c;
}

// `sweep: {pruner: ...}` (validated with the config), its metric and mode defaulting to the objective's.
SweepPruner pruner_of(const YAML::Node& block, const Experiment& e, const fs::path& config) {
  SweepPruner p;
  const YAML::Node n = block.IsDefined() ? block["pruner"] : YAML::Node();
  if (!n.IsDefined() || !n.IsMap()) return p;
  p.type = n["type"] ? n["type"].as<std::string>() : "none";
  if (!p.active()) return p;
  const std::string at = fmt::format("config '{}', line {} (sweep.pruner)", config.string(), n.Mark().line + 1);
  p.metric = n["metric"] ? n["metric"].as<std::string>() : "";
  const std::string mode = n["mode"] ? n["mode"].as<std::string>() : "auto";
  if ((p.metric.empty() || mode == "auto") && !e.objective)
    throw ConfigError(fmt::format("{}: the pruner reads the objective's metric and mode by default, and the config has no "
                                  "objective; add `objective: {{metric: <name>, mode: min|max}}` or set sweep.pruner.metric "
                                  "and sweep.pruner.mode",
                                  at));
  if (p.metric.empty()) p.metric = e.objective->metric;
  p.mode = mode == "auto" ? e.objective->mode : mode == "min" ? Direction::Minimize : Direction::Maximize;
  if (n["min_step"]) p.min_step = n["min_step"].as<std::int64_t>();
  if (n["reduction"]) p.reduction = n["reduction"].as<double>();
  if (n["startup_trials"]) p.startup_trials = n["startup_trials"].as<int>();
  return p;
}

// The parts of an adaptive plan its config decides: the sampler, the budget, the objective.
void plan_adaptive(SweepPlan& plan, const Experiment& e, const SamplerChoice& choice) {
  if (!e.objective)
    throw ConfigError(fmt::format("{}: the {} sampler optimises the config's objective, and it has none; add "
                                  "`objective: {{metric: <name>, mode: min|max}}`",
                                  choice.origin, choice.name));
  if (choice.trials <= 0)
    throw ConfigError(fmt::format("{}: the {} sampler needs a trial budget; set `sweep: {{trials: N}}` or pass --trials N",
                                  choice.origin, choice.name));
  if (plan.axes.empty())
    throw ConfigError(fmt::format("{}: the {} sampler needs a search space: axes such as -m 'params.lr=loguniform(1e-4,1e-1)' "
                                  "or `sweep: {{params: {{...}}}}`",
                                  choice.origin, choice.name));
  if (choice.name != "nsga2" && e.objectives.size() > 1)
    throw ConfigError(fmt::format("{}: the {} sampler optimises one objective, and the config names {}; use --sampler "
                                  "nsga2 for several",
                                  choice.origin, choice.name, e.objectives.size()));
  if (choice.name == "cmaes" && std::none_of(plan.axes.begin(), plan.axes.end(), [](const SweepAxis& a) { return a.sampled(); }))
    throw ConfigError(fmt::format("{}: cmaes searches numeric axes (uniform, loguniform, int(...)), and this sweep has "
                                  "none; use --sampler tpe for value lists and choices",
                                  choice.origin));
  plan.sampler = choice.name;
  plan.budget = choice.trials;
  plan.samples = 0;
  detail::search_space(plan.axes);  // refuses what the sampler cannot search, before anything runs
}

// Every bound and every choice of the space must make a valid config: checked before anything runs,
// as a grid is by resolving each of its trials.
void check_space(const SweepPlan& plan, const fs::path& config, const std::vector<Override>& overrides,
                 const Registry& registry) {
  const samplers::Space space = detail::search_space(plan.axes);
  std::size_t probes = 2;
  for (const auto& d : space) probes = std::max(probes, d.choices.size());
  for (std::size_t p = 0; p < probes; ++p) {
    samplers::Point x;
    for (const auto& d : space)
      x.push_back(d.kind == samplers::Dimension::Kind::Categorical ? static_cast<double>(std::min(p, d.choices.size() - 1))
                                                                   : (p % 2 ? d.hi : d.lo));
    try {
      detail::resolve_trial(plan, config, overrides, detail::assignment_of(space, x), registry);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("the {} sampler's search space holds configs that are not valid (shown at a corner "
                                    "of the space): {}",
                                    plan.sampler, e.what()));
    }
  }
}

}  // namespace

SweepPlan plan_sweep(const fs::path& config, const std::vector<Override>& overrides,
                     const std::vector<std::string>& axes_text, const Registry& registry, std::optional<int> samples) {
  SweepSampling sampling;
  sampling.samples = samples;
  return plan_sweep(config, overrides, axes_text, registry, sampling);
}

SweepPlan plan_sweep(const fs::path& config, const std::vector<Override>& overrides,
                     const std::vector<std::string>& axes_text, const Registry& registry, const SweepSampling& sampling) {
  // The whole config is validated first, its sweep block included (keys, axis grammar, with lines).
  const Experiment with_block = resolve_experiment(read_yaml_file(config), config, overrides, registry);
  SweepPlan plan;
  plan.axes = collect_axes(with_block, overrides, axes_text);
  const YAML::Node block = with_block.sweep.IsDefined() && with_block.sweep.IsMap() ? with_block.sweep : YAML::Node();
  if (block.IsDefined()) {
    plan.samples = block["samples"] ? block["samples"].as<int>() : 0;
    plan.sampling_seed = block["seed"] ? block["seed"].as<std::uint64_t>() : 0;
  }
  if (sampling.samples) plan.samples = *sampling.samples;
  if (plan.samples < 0) throw ConfigError("--samples must be >= 0");
  const SamplerChoice choice = sampler_choice(block, config, sampling);
  plan.pruner = pruner_of(block, with_block, config);
  if (choice.name == "random" && choice.trials > 0 && !sampling.samples && !(block.IsDefined() && block["samples"]))
    plan.samples = choice.trials;
  if (choice.name != "grid" && choice.name != "random") {
    plan_adaptive(plan, with_block, choice);
    describe_base(plan, config, overrides, registry);
    check_space(plan, config, overrides, registry);
    // The trials an earlier run of the same sweep proposed (prepare_sweep_folder refuses another one).
    if (fs::exists(plan.folder / "sweep.yaml")) {
      SweepPlan before = load_sweep(plan.folder);
      if (before.definition() == plan.definition()) plan.trials = std::move(before.trials);
    }
    return plan;
  }
  const auto sampled = std::find_if(plan.axes.begin(), plan.axes.end(), [](const SweepAxis& a) { return a.sampled(); });
  if (sampled != plan.axes.end() && plan.samples == 0)
    throw ConfigError(fmt::format("the sweep samples '{}' from a distribution but says not how many draws: set "
                                  "`sweep: {{samples: N}}` or pass --samples N",
                                  sampled->key));
  if (sampled == plan.axes.end()) plan.samples = 0;

  describe_base(plan, config, overrides, registry);
  std::vector<Assignment> points = grid_points(plan.axes);
  if (sampled != plan.axes.end()) points = sample_points(points, plan.axes, plan.samples, plan.sampling_seed);
  if (points.size() > 100000) throw ConfigError(fmt::format("the sweep expands to {} trials; that is too many", points.size()));
  add_trials(plan, config, overrides, points, registry);
  return plan;
}

}  // namespace nexp
