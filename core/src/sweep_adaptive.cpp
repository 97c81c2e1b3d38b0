// Adaptive sweeps: the axes as a search space, trials proposed by a sampler as the launcher asks, and
// the sampler's history in the sweep folder (nexp/runtime/sweep.hpp, sweep_adaptive.hpp).
#include "sweep_adaptive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>

#include "nexp/error.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/util.hpp"
#include "sweep_pruning.hpp"
#include "yaml_values.hpp"

namespace nexp {

namespace fs = std::filesystem;
using samplers::Dimension;

namespace detail {

samplers::Space search_space(const std::vector<SweepAxis>& axes) {
  samplers::Space space;
  for (const auto& a : axes) {
    Dimension d;
    d.key = a.key;
    if (!a.sampled()) {
      d.kind = Dimension::Kind::Categorical;
      d.choices = a.values;
    } else {
      d.kind = a.integer ? Dimension::Kind::Int : Dimension::Kind::Float;
      d.log = a.kind == SweepAxis::Kind::LogUniform;
      d.lo = a.integer ? std::ceil(a.lo) : a.lo;
      d.hi = a.integer ? std::floor(a.hi) : a.hi;
      if (d.lo > d.hi)
        throw ConfigError(fmt::format("{}: sweep axis '{}={}' holds no integer", a.origin, a.key, a.expression));
      if (a.integer && d.log && d.lo < 1)
        throw ConfigError(fmt::format("{}: sweep axis '{}={}': an adaptive sampler searches int(loguniform(lo, hi)) "
                                      "from lo >= 1; use int(uniform(...)) or raise lo",
                                      a.origin, a.key, a.expression));
    }
    space.push_back(std::move(d));
  }
  return space;
}

Assignment assignment_of(const samplers::Space& space, const samplers::Point& x) {
  Assignment out;
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Dimension& d = space[i];
    std::string text;
    if (d.kind == Dimension::Kind::Categorical) text = d.choices[static_cast<std::size_t>(x[i])];
    else if (d.kind == Dimension::Kind::Int) text = std::to_string(static_cast<long long>(x[i]));
    else text = fmt::format("{:.12g}", x[i]);  // what the trial runs with, and what the history reads back
    out.emplace_back(d.key, text);
  }
  return out;
}

std::optional<samplers::Point> point_of(const samplers::Space& space, const SweepTrial& trial) {
  samplers::Point x;
  for (const auto& d : space) {
    const std::string text = trial.value(d.key);
    if (d.kind == Dimension::Kind::Categorical) {
      const auto it = std::find(d.choices.begin(), d.choices.end(), text);
      if (it == d.choices.end()) return std::nullopt;
      x.push_back(static_cast<double>(it - d.choices.begin()));
      continue;
    }
    double v = 0;
    const double slack = 1e-9 * (d.hi - d.lo);
    if (!parse_float(text, v) || v < d.lo - slack || v > d.hi + slack) return std::nullopt;
    x.push_back(std::clamp(v, d.lo, d.hi));
  }
  return x;
}

}  // namespace detail

// ---------------------------------------------------------------- AdaptiveSweep

struct AdaptiveSweep::Impl {
  SweepPlan& plan;
  fs::path config;
  std::vector<Override> overrides;
  const Registry& registry;
  samplers::Space space;
  std::unique_ptr<samplers::Sampler> sampler;
  std::vector<int> observed;  // trial indices, in the order they ended
  std::string created;

  Impl(SweepPlan& p, fs::path c, std::vector<Override> o, const Registry& r)
      : plan(p), config(std::move(c)), overrides(std::move(o)), registry(r), space(detail::search_space(p.axes)),
        sampler(samplers::make_sampler(p.sampler, space, p.sampling_seed)) {}

  fs::path state_file() const { return plan.folder / "sampler.yaml"; }
  bool ended(int index) const {
    const TrialState s = trial_status(plan.trials[static_cast<std::size_t>(index)]).state;
    return s == TrialState::Completed || s == TrialState::Failed || s == TrialState::Pruned;
  }

  // The history as sampler.yaml left it, then the trials that ended while no launcher watched (in index order).
  void load_history() {
    std::set<int> seen;
    if (fs::exists(state_file())) {
      const YAML::Node n = YAML::LoadFile(state_file().string());
      for (const auto& i : n["observed"]) {
        const int index = i.as<int>();
        if (index >= 0 && index < static_cast<int>(plan.trials.size()) && ended(index) && seen.insert(index).second)
          observed.push_back(index);
      }
    }
    for (const auto& t : plan.trials)
      if (!seen.count(t.index) && ended(t.index)) observed.push_back(t.index);
    save_history();
  }

  void save_history() const {
    YAML::Emitter em;
    em << YAML::BeginMap << YAML::Key << "sampler" << YAML::Value << plan.sampler << YAML::Key << "seed" << YAML::Value
       << plan.sampling_seed << YAML::Key << "observed" << YAML::Value << YAML::Flow << observed << YAML::EndMap;
    write_file_atomic(state_file(), "# The trials of this sweep in the order they ended: the history its sampler proposes\n"
                                    "# from. A re-run reads it to continue the same search.\n" +
                                        std::string(em.c_str()) + "\n");
  }

  std::vector<Objective> objectives() const {
    return plan.objectives.empty() ? std::vector<Objective>{*plan.objective} : plan.objectives;
  }

  samplers::Observation observation(int index) const {
    const SweepTrial& t = plan.trials[static_cast<std::size_t>(index)];
    samplers::Observation o;
    o.number = index;
    const TrialStatus s = trial_status(t);
    bool valued = true;
    for (const auto& objective : objectives()) {
      const auto v = s.summary.find(objective.metric);
      valued = valued && v != s.summary.end() && std::isfinite(v->second);
      if (valued) o.values.push_back(objective.mode == Direction::Minimize ? v->second : -v->second);
    }
    if (!valued) o.values.clear();
    if (s.state == TrialState::Pruned && valued) {
      // Ranked by how far it got, then by its last value (samplers/tpe.hpp).
      o.outcome = samplers::Outcome::Pruned;
      o.step = detail::last_logged(t.folder).step;
    } else if (s.state != TrialState::Completed || !valued) {
      o.outcome = samplers::Outcome::Failed;
    }
    return o;
  }

  std::vector<samplers::Observation> history() const {
    std::vector<samplers::Observation> h;
    for (int index : observed) {
      auto x = detail::point_of(space, plan.trials[static_cast<std::size_t>(index)]);
      if (!x) continue;  // a trial of another search space (kept with --force)
      samplers::Observation o = observation(index);
      o.x = std::move(*x);
      h.push_back(std::move(o));
    }
    return h;
  }
};

AdaptiveSweep::AdaptiveSweep(SweepPlan& plan, fs::path config, std::vector<Override> overrides, const Registry& registry)
    : impl_(std::make_unique<Impl>(plan, std::move(config), std::move(overrides), registry)) {
  if (!plan.objective) throw ConfigError("an adaptive sweep needs an objective");
  const YAML::Node n = YAML::LoadFile((plan.folder / "sweep.yaml").string());
  impl_->created = n["created"] ? n["created"].as<std::string>() : now_iso8601();
  impl_->load_history();
}

AdaptiveSweep::~AdaptiveSweep() = default;

int AdaptiveSweep::remaining() const {
  return std::max(0, impl_->plan.budget - static_cast<int>(impl_->plan.trials.size()));
}

std::optional<int> AdaptiveSweep::propose() {
  if (remaining() == 0) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  SweepPlan& plan = impl_->plan;
  const int number = static_cast<int>(plan.trials.size());
  const samplers::Point x = impl_->sampler->ask(impl_->history(), number);
  SweepTrial t = detail::resolve_trial(plan, impl_->config, impl_->overrides, detail::assignment_of(impl_->space, x),
                                       impl_->registry);
  plan.trials.push_back(std::move(t));
  detail::write_sweep_yaml(plan, impl_->created);  // run-trial reads the trial from there
  logger().debug("trial {} proposed by {} in {:.1f} ms (history, sampler, config, sweep.yaml)", number, plan.sampler,
                 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return number;
}

void AdaptiveSweep::observe(int index) {
  auto& seen = impl_->observed;
  if (std::find(seen.begin(), seen.end(), index) != seen.end() || !impl_->ended(index)) return;
  seen.push_back(index);
  impl_->save_history();
}

}  // namespace nexp
