// core/src/sweep_plan.cpp: a config and its axes expanded into trials, with fixed draws.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "nexp/random.hpp"
#include "nexp/runtime/overrides.hpp"
#include "nexp/runtime/sweep.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

TEST(SweepPlan, GridTimesSamplesWithFixedDraws) {
  TempDir dir;
  auto cfg = dir.write("s.yaml",
                       "method: scaffold_check.fit\ndataset: scaffold_check.linear\nruns_dir: " + (dir.path / "runs").string() +
                           "\nsweep:\n  params:\n    seed: [0, 1, 2]\n    params.lr: loguniform(1e-3, 0.5)\n"
                           "    params.steps: int(uniform(10, 12))\n  samples: 4\n");
  SweepPlan a = plan_sweep(cfg, {}, {}, registry_with_scaffold());
  ASSERT_EQ(a.trials.size(), 12u);  // 3 grid points x 4 draws
  std::set<std::string> steps;
  for (const auto& t : a.trials) {
    ASSERT_EQ(t.assignment.size(), 3u);
    const double lr = std::stod(t.assignment[1].second);
    EXPECT_GE(lr, 1e-3);
    EXPECT_LE(lr, 0.5);
    steps.insert(t.assignment[2].second);
    EXPECT_NE(t.folder.filename().string().find(t.hash.substr(0, 8)), std::string::npos);
  }
  for (const auto& s : steps) EXPECT_TRUE(s == "10" || s == "11" || s == "12") << s;
  SweepPlan b = plan_sweep(cfg, {}, {}, registry_with_scaffold());
  for (size_t i = 0; i < a.trials.size(); ++i) EXPECT_EQ(a.trials[i].hash, b.trials[i].hash) << "the same draws every time";
  // The command line replaces an axis of the block, and an out-of-range value names its trial.
  SweepPlan c = plan_sweep(cfg, {}, {"seed=5,6"}, registry_with_scaffold());
  EXPECT_EQ(c.trials.size(), 8u);
  // A plain override of a swept key pins it: 1 grid point x 4 draws, none of them sweeping seed.
  SweepPlan pinned = plan_sweep(cfg, {parse_override("seed=7")}, {}, registry_with_scaffold());
  ASSERT_EQ(pinned.trials.size(), 4u);
  for (const auto& t : pinned.trials)
    for (const auto& [key, value] : t.assignment) EXPECT_NE(key, "seed");
  EXPECT_NE(pinned.base_config.find("seed: 7"), std::string::npos) << pinned.base_config;
  try {
    plan_sweep(cfg, {}, {"params.lr=0.5,2"}, registry_with_scaffold());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("params.lr=2"), std::string::npos) << e.what();
  }
}

TEST(SweepPlan, SampledAxesNeedSamples) {
  TempDir dir;
  auto cfg = dir.write("s.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\n");
  EXPECT_THROW(plan_sweep(cfg, {}, {"params.lr=uniform(0.01, 0.1)"}, registry_with_scaffold()), ConfigError);
  EXPECT_EQ(plan_sweep(cfg, {}, {"params.lr=uniform(0.01, 0.1)"}, registry_with_scaffold(), 3).trials.size(), 3u);
}

TEST(SweepPlan, AxisErrorsNameTheLineOfTheSweepBlock) {
  TempDir dir;
  auto cfg = dir.write("s.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\nsweep:\n  params:\n"
                                 "    params.lrr: [0.1, 0.2]\n");
  try {
    plan_sweep(cfg, {}, {}, registry_with_scaffold());
    FAIL() << "a misspelt axis was accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("s.yaml', line 5 (sweep axis 'params.lrr')"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("command-line override"), std::string::npos) << msg;
  }
}

TEST(SweepPlan, TheSweepBlockCountsAfterTheOverridesThatNameIt) {
  TempDir dir;
  auto cfg = dir.write("s.yaml", "method: scaffold_check.fit\nsweep:\n  params:\n    seed: [1, 2]\n");
  auto plain = dir.write("p.yaml", "method: scaffold_check.fit\nsweep: {}\n");
  EXPECT_TRUE(config_has_sweep(cfg));
  EXPECT_TRUE(config_has_sweep(cfg, {"seed=3", "params.lr=0.1"}));
  EXPECT_FALSE(config_has_sweep(cfg, {"~sweep"}));
  EXPECT_FALSE(config_has_sweep(cfg, {"sweep=null"}));
  EXPECT_FALSE(config_has_sweep(cfg, {"sweep=~"}));
  EXPECT_FALSE(config_has_sweep(plain));
  EXPECT_TRUE(config_has_sweep(plain, {"sweep={params: {seed: [1, 2]}}"}));
  EXPECT_FALSE(config_has_sweep(cfg, {"~sweep", "sweep={}"}));
}

TEST(SweepPlan, AThreadsAxisIsSweptNotDropped) {
  TempDir dir;
  auto cfg = dir.write("s.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\n");
  SweepPlan p = plan_sweep(cfg, {}, {"seed=1,2,3", "threads=1,2"}, registry_with_scaffold());
  ASSERT_EQ(p.trials.size(), 6u);
  std::set<std::string> ids;
  for (const auto& t : p.trials) ids.insert(t.hash);
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_THROW(plan_sweep(cfg, {}, {"runs_dir=a,b"}, registry_with_scaffold()), ConfigError);
}

TEST(SweepPlan, SampledTrialsAreTheSameOnEveryPlatform) {
  // Drawn with nexp::Random (xoshiro256**, 53-bit uniforms), never <random>'s distributions, whose
  // output differs between standard libraries: these values hold wherever nexp is built.
  TempDir dir;
  auto cfg = dir.write("s.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\nsweep:\n  params:\n"
                                 "    params.lr: loguniform(1e-4, 1e-1)\n    params.steps: int(uniform(1, 8))\n"
                                 "    dataset.noise: uniform(0, 0.5)\n  samples: 3\n  seed: 7\n");
  const SweepPlan plan = plan_sweep(cfg, {}, {}, registry_with_scaffold());
  ASSERT_EQ(plan.trials.size(), 3u);
  std::vector<std::string> drawn;
  for (const auto& t : plan.trials)
    for (const auto& [k, v] : t.assignment) drawn.push_back(k + "=" + v);
  EXPECT_EQ(drawn, (std::vector<std::string>{"params.lr=0.0126395", "params.steps=3", "dataset.noise=0.419814",
                                             "params.lr=0.0877593", "params.steps=8", "dataset.noise=0.436387",
                                             "params.lr=0.000152144", "params.steps=1", "dataset.noise=0.201853"}));
  // By hand: one uniform per sampled axis and trial, in order, from Random(sweep seed); loguniform
  // on the log scale; int(uniform(1, 8)) is floor of uniform(1, 9).
  Random rng(7);
  EXPECT_NEAR(std::exp(rng.uniform(std::log(1e-4), std::log(1e-1))), 0.0126395, 1e-7);
  EXPECT_EQ(std::floor(rng.uniform(1, 9)), 3);
  EXPECT_NEAR(rng.uniform(0, 0.5), 0.419814, 1e-6);
}
