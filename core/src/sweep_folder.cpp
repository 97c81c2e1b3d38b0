// The sweep folder: sweep.yaml written and read back (nexp/runtime/sweep.hpp).
#include "nexp/runtime/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/runtime/util.hpp"
#include "sweep_adaptive.hpp"

namespace nexp {

namespace fs = std::filesystem;

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

YAML::Node detail::pruner_yaml(const SweepPruner& p) {
  YAML::Node n(YAML::NodeType::Map);
  n["type"] = p.type;
  n["metric"] = p.metric;
  n["mode"] = p.mode == Direction::Minimize ? "min" : "max";
  n["min_step"] = p.min_step;
  n["reduction"] = p.reduction;
  n["startup_trials"] = p.startup_trials;
  return n;
}

SweepPruner detail::pruner_from_yaml(const YAML::Node& n) {
  SweepPruner p;
  p.type = n["type"].as<std::string>();
  p.metric = n["metric"].as<std::string>();
  p.mode = n["mode"].as<std::string>() == "min" ? Direction::Minimize : Direction::Maximize;
  p.min_step = n["min_step"].as<std::int64_t>();
  p.reduction = n["reduction"].as<double>();
  p.startup_trials = n["startup_trials"].as<int>();
  return p;
}

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
  detail::write_sweep_yaml(plan, now_iso8601());
}

void detail::write_sweep_yaml(const SweepPlan& plan, const std::string& created) {
  YAML::Node out(YAML::NodeType::Map);
  out["experiment"] = plan.experiment;
  out["method"] = plan.method;
  out["runs_dir"] = plan.runs_dir.string();
  out["created"] = created;
  if (plan.objective) {
    out["objective"]["metric"] = plan.objective->metric;
    out["objective"]["mode"] = plan.objective->mode == Direction::Minimize ? "min" : "max";
  }
  if (plan.objectives.size() > 1)
    for (const auto& o : plan.objectives) {
      YAML::Node x(YAML::NodeType::Map);
      x["metric"] = o.metric;
      x["mode"] = o.mode == Direction::Minimize ? "min" : "max";
      out["objectives"].push_back(x);
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
  if (plan.adaptive()) {
    out["sampler"] = plan.sampler;
    out["budget"] = plan.budget;
  }
  if (plan.pruner.active()) out["pruner"] = pruner_yaml(plan.pruner);
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
  write_file_atomic(plan.folder / "sweep.yaml", std::string(em.c_str()) + "\n");
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
    plan.objectives = {o};
  }
  if (n["objectives"]) {
    plan.objectives.clear();
    for (const auto& x : n["objectives"])
      plan.objectives.push_back({x["metric"].as<std::string>(),
                                 x["mode"].as<std::string>() == "min" ? Direction::Minimize : Direction::Maximize});
  }
  if (n["slurm"]) plan.slurm = n["slurm"];
  for (const auto& a : n["axes"]) {
    SweepAxis axis;
    axis.key = a["key"].as<std::string>();
    axis.expression = a["expression"].as<std::string>();
    plan.axes.push_back(axis);
  }
  if (n["pruner"]) plan.pruner = detail::pruner_from_yaml(n["pruner"]);
  if (n["sampler"]) {
    plan.sampler = n["sampler"].as<std::string>();
    plan.budget = n["budget"].as<int>();
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
}  // namespace nexp
