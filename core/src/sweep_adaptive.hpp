#pragma once
// Core-internal pieces of adaptive sweeps shared by the planner (sweep_plan.cpp) and AdaptiveSweep
// (sweep_adaptive.cpp). Not part of the SDK.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nexp/runtime/sweep.hpp"
#include "samplers/sampler.hpp"

namespace nexp::detail {

using Assignment = std::vector<std::pair<std::string, std::string>>;

// The axes as a sampler's search space: value lists, range(...) and choice(...) are categorical,
// uniform/loguniform numeric, int(...) integer. Throws ConfigError for what cannot be searched.
samplers::Space search_space(const std::vector<SweepAxis>& axes);
// A point as the trial's assignment (the text each override gets), and back; none when a value of
// the assignment lies outside the space (a trial of an earlier definition, kept with --force).
Assignment assignment_of(const samplers::Space& space, const samplers::Point& x);
std::optional<samplers::Point> point_of(const samplers::Space& space, const SweepTrial& trial);

// The trial that `assignment` makes of the plan's config: resolved, hashed, with its folder, as the
// plan's next index (plan_sweep and AdaptiveSweep::propose both make their trials here).
SweepTrial resolve_trial(const SweepPlan& plan, const std::filesystem::path& config,
                         const std::vector<Override>& overrides, const Assignment& assignment, const Registry& registry);

// The pruner's settings as sweep.yaml (and the definition) hold them, and back.
YAML::Node pruner_yaml(const SweepPruner& p);
SweepPruner pruner_from_yaml(const YAML::Node& n);

// sweep.yaml, written atomically (prepare_sweep_folder, and each proposal of an adaptive sweep).
void write_sweep_yaml(const SweepPlan& plan, const std::string& created);

}  // namespace nexp::detail
