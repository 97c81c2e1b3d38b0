// core/src/experiment.cpp: the whole config pipeline (file, overrides, defaults, sections, metrics,
// objective) and the config hash.
#include <gtest/gtest.h>

#include "nexp/runtime/experiment.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::pipeline;

TEST(Config, FillsDefaultsAndAppliesOverrides) {
  Experiment e = load(kBase, {"params.steps=7", "dataset.d=3", "~params.lr", "seed=11"});
  EXPECT_EQ(e.method, "scaffold_check.fit");
  EXPECT_EQ(e.params.get_integer("steps"), 7);
  EXPECT_DOUBLE_EQ(e.params.get_real("lr"), 0.1) << "deleted key falls back to the default";
  EXPECT_EQ(e.params.get_integer("checkpoint_every"), 20) << "default filled in";
  EXPECT_EQ(e.dataset, "scaffold_check.linear");
  EXPECT_EQ(e.dataset_params.get_integer("d"), 3);
  EXPECT_EQ(e.seed, 11u);
  EXPECT_EQ(e.experiment, "exp") << "defaults to the file's stem";
  EXPECT_EQ(e.metrics, (std::vector<std::string>{"mse", "weight_error"}));
}

TEST(Config, UnknownMethodDatasetAndDeviceSuggestTheClosest) {
  EXPECT_HAS(error_of("method: scaffold_check.fitt\n"), "Did you mean 'scaffold_check.fit'?");
  EXPECT_HAS(error_of("method: nosuchplugin.run\n"), "No plugin 'nosuchplugin' is loaded");
  EXPECT_HAS(error_of(kBase, {"dataset.name=scaffold_check.linearr"}), "Did you mean 'scaffold_check.linear'?");
  EXPECT_HAS(error_of(kBase, {"dataset=iris"}), "does not take dataset 'iris'");
  EXPECT_HAS(error_of(kBase, {"device=cuda:x"}), "<backend>:<index>");
  EXPECT_HAS(error_of(kBase, {"device=tpu:0"}), "known backend");
}

TEST(Config, MetricsAndObjectiveMustBeProduced) {
  EXPECT_HAS(error_of(std::string(kBase) + "metrics: [accuracy]\n"), "cannot produce metric 'accuracy'");
  Experiment e = load(std::string(kBase) + "objective: mse\n");
  ASSERT_TRUE(e.objective.has_value());
  EXPECT_EQ(e.objective->mode, Direction::Minimize) << "mode from the metric's registered direction";
  EXPECT_HAS(error_of(std::string(kBase) + "objective: {metric: mse, mode: up}\n"), "'min' or 'max'");
}

TEST(Config, HashIgnoresPlacementButNotParameters) {
  Experiment a = load(kBase), b = load(kBase, {"runs_dir=/elsewhere", "threads=2", "experiment=other"});
  EXPECT_EQ(a.config_hash(), b.config_hash());
  EXPECT_NE(a.config_hash(), load(kBase, {"params.steps=51"}).config_hash());
  // The resolved YAML is a fixed point: loading it again gives the same config.
  TempDir dir;
  auto file = dir.write("resolved.yaml", a.to_yaml_text());
  EXPECT_EQ(load_experiment(file, {}, registry_with_scaffold()).to_yaml_text(), a.to_yaml_text());
}

TEST(Config, RealsAreWrittenInTheirShortestText) {
  const std::string text = load(kBase, {"params.lr=0.2"}).to_yaml_text();
  EXPECT_HAS(text, "lr: 0.2\n");
  EXPECT_EQ(text.find("0.2000"), std::string::npos) << text;
  EXPECT_HAS(load(kBase, {"params.lr=1"}).to_yaml_text(), "lr: 1.0\n") << "a real stays a real";
  EXPECT_HAS(load(kBase, {"params.lr=3e-06"}).to_yaml_text(), "lr: 3e-06\n");
  TempDir dir;
  for (const char* lr : {"0.1", "0.3", "0.7000000000000001", "1.5e-06", "0.123456789012345"}) {
    const Experiment e = load(kBase, {std::string("params.lr=") + lr});
    const Experiment back = load_experiment(dir.write("r.yaml", e.to_yaml_text()), {}, registry_with_scaffold());
    EXPECT_EQ(back.params.get_real("lr"), e.params.get_real("lr")) << "reads back to the same double: " << lr;
  }
}

TEST(Config, AKeyWrittenTwiceNamesBothLines) {
  auto msg = error_of(std::string(kBase) + "seed: 4\n");
  EXPECT_HAS(msg, "key 'seed' is written twice");
  EXPECT_HAS(msg, "line 9");
  EXPECT_HAS(msg, "first at line 8");
  EXPECT_HAS(error_of("method: scaffold_check.fit\nparams:\n  lr: 0.1\n  lr: 0.2\n"), "'params.lr' is written twice");
}

TEST(Config, SlurmAndSweepSectionsAreValidated) {
  auto typo = error_of(std::string(kBase) + "slurm:\n  partiton: debug\n");
  EXPECT_HAS(typo, "exp.yaml', line 10");
  EXPECT_HAS(typo, "unknown key 'slurm.partiton'");
  EXPECT_HAS(typo, "Did you mean 'partition'?");
  EXPECT_HAS(error_of(std::string(kBase) + "slurm: {cpus_per_task: four}\n"), "'slurm.cpus_per_task' expected int, found 'four'");
  EXPECT_HAS(error_of(std::string(kBase) + "slurm: {extra: {a: 1}}\n"), "'slurm.extra' expected list of string");
  EXPECT_HAS(error_of(std::string(kBase) + "sweep: {sampels: 3}\n"), "unknown key 'sweep.sampels'");
  EXPECT_HAS(error_of(std::string(kBase) + "sweep: {params: {seed: range(0)}}\n"), "sweep axis 'seed=range(0)'");
  EXPECT_HAS(error_of(std::string(kBase) + "sweep: {params: {seed: []}}\n"), "sweep axis 'seed' has no values");
  Experiment e = load(std::string(kBase) + "slurm: {partition: gpu}\n");
  EXPECT_EQ(e.slurm["partition"].as<std::string>(), "gpu");
  EXPECT_EQ(e.slurm["cpus_per_task"].as<int>(), 1) << "defaults filled in";
}
