// core/src/sweep_adaptive.cpp: adaptive sweeps proposed one trial at a time, their history in the sweep
// folder, and a resumed sweep that proposes exactly the trials of an uninterrupted one.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "nexp/runtime/overrides.hpp"
#include "nexp/runtime/sweep.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
namespace fs = std::filesystem;

namespace {

const char* const kConfig = R"(method: scaffold_check.fit
dataset: scaffold_check.linear
objective: {metric: mse, mode: min}
sweep:
  sampler: tpe
  trials: 16
  seed: 4
  params:
    params.lr: loguniform(1e-3, 0.5)
    params.steps: int(uniform(10, 40))
    seed: [0, 1, 2]
)";

// A trial "ran": its status.json says completed, with an mse that depends on its parameters.
void finish(const SweepTrial& t) {
  const double lr = std::stod(t.value("params.lr")), steps = std::stod(t.value("params.steps"));
  const double mse = std::pow(std::log10(lr) + 2, 2) + std::pow(steps - 25, 2) / 100 + 0.1 * std::stod(t.value("seed"));
  fs::create_directories(t.folder);
  std::ofstream(t.folder / "status.json") << R"({"status": "completed", "summary": {"mse": )" << mse << "}}";
}

std::vector<Override> runs_in(const fs::path& runs) { return {parse_override("runs_dir=" + runs.string())}; }

// Runs the sweep in `runs` (as a launcher with one slot would) until it has `until` trials, and
// returns every trial's assignment. `observe`: report each trial's end (false: as if the launcher
// died before it could).
std::vector<std::string> drive(const fs::path& cfg, const fs::path& runs, int until, SweepSampling sampling = {},
                               bool observe = true) {
  SweepPlan plan = plan_sweep(cfg, runs_in(runs), {}, registry_with_scaffold(), sampling);
  prepare_sweep_folder(plan, false);
  AdaptiveSweep sweep(plan, cfg, runs_in(runs), registry_with_scaffold());
  while (static_cast<int>(plan.trials.size()) < until) {
    const auto i = sweep.propose();
    if (!i) break;
    finish(plan.trials[static_cast<std::size_t>(*i)]);
    if (observe) sweep.observe(*i);
  }
  std::vector<std::string> out;
  for (const auto& t : plan.trials) {
    std::string s;
    for (const auto& [k, v] : t.assignment) s += k + "=" + v + " ";
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST(AdaptiveSweep, AResumedSweepProposesExactlyTheTrialsOfAnUninterruptedOne) {
  TempDir dir;
  const fs::path cfg = dir.write("s.yaml", kConfig);
  const auto whole = drive(cfg, dir.path / "a", 100);
  ASSERT_EQ(whole.size(), 16u) << "the budget";
  // Stopped after 6 trials, then run again.
  drive(cfg, dir.path / "b", 6);
  EXPECT_EQ(drive(cfg, dir.path / "b", 100), whole);
  // Trials that ended while no launcher watched join the history in index order when the sweep resumes.
  drive(cfg, dir.path / "c", 10, {}, false);
  EXPECT_EQ(drive(cfg, dir.path / "c", 100), whole);
  // The history the sampler saw, in the folder.
  const YAML::Node state = YAML::LoadFile((dir.path / "b" / "s" / "sweep" / "sampler.yaml").string());
  EXPECT_EQ(state["sampler"].as<std::string>(), "tpe");
  EXPECT_EQ(state["observed"].size(), 16u);
  // TPE learned: the last 6 trials (after 10 startup draws) are better on average than the first 10.
  const SweepPlan plan = load_sweep(dir.path / "a" / "s" / "sweep");
  double early = 0, late = 0;
  for (const auto& t : plan.trials) (t.index < 10 ? early : late) += trial_status(t).summary.at("mse") / (t.index < 10 ? 10 : 6);
  EXPECT_LT(late, early);
}

TEST(AdaptiveSweep, ALargerBudgetContinuesTheSameSweep) {
  TempDir dir;
  const fs::path cfg = dir.write("s.yaml", kConfig);
  const auto first = drive(cfg, dir.path / "a", 100);
  SweepSampling more;
  more.trials = 20;
  const auto extended = drive(cfg, dir.path / "a", 100, more);
  ASSERT_EQ(extended.size(), 20u);
  EXPECT_EQ(std::vector<std::string>(extended.begin(), extended.begin() + 16), first);
  EXPECT_EQ(drive(cfg, dir.path / "b", 100, more), extended) << "the same as a sweep of 20 from the start";
}

TEST(AdaptiveSweep, ConfigErrorsSayWhatToDo) {
  TempDir dir;
  auto error_of = [&](const std::string& yaml, SweepSampling s = {}) -> std::string {
    const fs::path cfg = dir.write("e.yaml", yaml);
    try {
      plan_sweep(cfg, runs_in(dir.path), {}, registry_with_scaffold(), s);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  const std::string base = "method: scaffold_check.fit\ndataset: scaffold_check.linear\n";
  EXPECT_HAS(error_of(base + "sweep:\n  sampler: tpe\n  trials: 5\n  params:\n    params.lr: uniform(0.01, 0.1)\n"),
             "add `objective:");
  EXPECT_HAS(error_of(base + "objective: mse\nsweep:\n  sampler: tpe\n  params:\n    params.lr: uniform(0.01, 0.1)\n"),
             "--trials N");
  const std::string bad = error_of(base + "objective: mse\nsweep:\n  sampler: tpee\n  trials: 5\n");
  EXPECT_HAS(bad, "line 5");
  EXPECT_HAS(bad, "tpe");
  // A bound the method refuses (lr is at most 1) is found before anything runs.
  EXPECT_HAS(error_of(base + "objective: mse\nsweep:\n  sampler: tpe\n  trials: 5\n  params:\n    params.lr: uniform(0.01, 2)\n"),
             "search space");
  SweepSampling cli;
  cli.sampler = "tpe";
  cli.trials = 4;
  EXPECT_HAS(error_of(base + "objective: mse\n", cli), "search space");
}

TEST(AdaptiveSweep, GridAndRandomSweepsKeepTheirDefinition) {
  TempDir dir;
  const fs::path cfg = dir.write("g.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\n"
                                           "sweep:\n  params:\n    params.lr: [0.01, 0.1]\n");
  const SweepPlan grid = plan_sweep(cfg, runs_in(dir.path), {}, registry_with_scaffold());
  EXPECT_FALSE(grid.adaptive());
  EXPECT_EQ(grid.definition().find("sampler"), std::string::npos) << "sweep folders made before samplers still match";
  // sampler: random with trials: N draws N points of the sampled axes.
  const fs::path r = dir.write("r.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\n"
                                         "sweep:\n  sampler: random\n  trials: 7\n  params:\n    params.lr: uniform(0.01, 0.1)\n");
  EXPECT_EQ(plan_sweep(r, runs_in(dir.path), {}, registry_with_scaffold()).trials.size(), 7u);
}

TEST(AdaptiveSweep, SeveralObjectivesForNsga2) {
  TempDir dir;
  const fs::path cfg = dir.write("m.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\n"
                                           "objective: [mse, {metric: weight_error, mode: min}]\n"
                                           "sweep:\n  sampler: nsga2\n  trials: 4\n  params:\n    params.lr: uniform(0.01, 0.1)\n");
  SweepPlan plan = plan_sweep(cfg, runs_in(dir.path), {}, registry_with_scaffold());
  ASSERT_EQ(plan.objectives.size(), 2u);
  EXPECT_EQ(plan.objective->metric, "mse");
  EXPECT_EQ(plan.objectives[1].metric, "weight_error");
  prepare_sweep_folder(plan, false);
  EXPECT_EQ(load_sweep(plan.folder).objectives.size(), 2u) << "sweep.yaml keeps both";
  // The resolved config writes the list back, and reads the same.
  const Experiment e = pipeline::load("method: scaffold_check.fit\ndataset: scaffold_check.linear\nobjective: [mse, weight_error]\n");
  ASSERT_EQ(e.objectives.size(), 2u);
  EXPECT_HAS(e.to_yaml_text(), "objective:\n  - metric: mse\n    mode: min\n  - metric: weight_error\n    mode: min");
  EXPECT_HAS(pipeline::error_of("method: scaffold_check.fit\ndataset: scaffold_check.linear\nobjective: []\n"), "empty list");
  EXPECT_HAS(pipeline::error_of("method: scaffold_check.fit\ndataset: scaffold_check.linear\nobjective: [mse, nope]\n"),
             "nope");
}
