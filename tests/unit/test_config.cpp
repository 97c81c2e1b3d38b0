// Configs: schemas, overrides, interpolation, validation, and the messages of each error.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "nexp/runtime/experiment.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

namespace {

const char* kBase = R"(method: scaffold_check.fit
params:
  steps: 50
  lr: 0.05
dataset:
  name: scaffold_check.linear
  n: 40
seed: 3
)";

Experiment load(const std::string& yaml, std::vector<std::string> overrides = {}) {
  TempDir dir;
  auto file = dir.write("exp.yaml", yaml);
  std::vector<Override> os;
  for (const auto& o : overrides) os.push_back(parse_override(o));
  return load_experiment(file, os, registry_with_scaffold());
}

// The message of the ConfigError that loading raises ("" if none).
std::string error_of(const std::string& yaml, std::vector<std::string> overrides = {}) {
  try {
    load(yaml, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

}  // namespace

TEST(Params, ChecksRangesAndChoices) {
  Param p = Param::real("lr", 0.1, "step").range(1e-6, 1);
  EXPECT_EQ(p.check(Value(0.5)), "");
  EXPECT_EQ(p.check(Value(2.0)), "2 is above the maximum 1");
  EXPECT_EQ(p.constraint(), "float in [1e-06, 1]");
  Param c = Param::string("alg", "classic", "which").choices({"classic", "randomized"});
  EXPECT_HAS(c.check(Value(std::string("fast"))), "'fast' is not one of {classic, randomized}");
  Schema s;
  EXPECT_THROW(s.add(Param::integer("n", 0, "count").min(1)), Error);
}

TEST(Params, GettersConvertAndRefuseWrongTypes) {
  Params p({{"n", Value(std::int64_t{3})}, {"xs", Value(std::vector<std::int64_t>{1, 2})}});
  EXPECT_EQ(p.get_integer("n"), 3);
  EXPECT_DOUBLE_EQ(p.get_real("n"), 3.0);
  EXPECT_EQ(p.get_reals("xs"), (std::vector<double>{1.0, 2.0}));
  EXPECT_THROW(p.get_string("n"), Error);
  EXPECT_THROW(p.get_integer("missing"), Error);
}

TEST(Overrides, ParseAllThreeKinds) {
  EXPECT_EQ(parse_override("params.lr=0.1").kind, Override::Kind::Set);
  Override add = parse_override("+params.lr=0.1");
  EXPECT_EQ(add.kind, Override::Kind::Add);
  EXPECT_EQ(add.key, "params.lr");
  EXPECT_EQ(add.value, "0.1");
  Override del = parse_override("~params.lr");
  EXPECT_EQ(del.kind, Override::Kind::Remove);
  EXPECT_EQ(del.key, "params.lr");
  EXPECT_THROW(parse_override("params.lr"), ConfigError);
  EXPECT_THROW(parse_override("params..lr=1"), ConfigError);
}

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

TEST(Config, AddRefusesAnExistingKeyAndDeleteAMissingOne) {
  EXPECT_HAS(error_of(kBase, {"+params.steps=3"}), "'params.steps' is already in the config");
  EXPECT_HAS(error_of(kBase, {"~params.checkpoint_every"}), "cannot delete 'params.checkpoint_every'");
  EXPECT_EQ(load(kBase, {"+params.checkpoint_every=5"}).params.get_integer("checkpoint_every"), 5);
}

TEST(Config, InterpolatesKeysAndEnvironment) {
  ::setenv("NEXP_TEST_STEPS", "9", 1);
  Experiment e = load(std::string(kBase) + "experiment: run_${params.steps}_${env:NEXP_TEST_STEPS}\nthreads: ${env:NEXP_TEST_UNSET,2}\n");
  EXPECT_EQ(e.experiment, "run_50_9");
  EXPECT_EQ(e.threads, 2);
  Experiment typed = load(std::string(kBase) + "runs_dir: /tmp/x\n", {"params.checkpoint_every=${params.steps}"});
  EXPECT_EQ(typed.params.get_integer("checkpoint_every"), 50) << "a whole-value reference keeps the type";
}

TEST(Config, UnresolvableInterpolationNamesTheKeyAndLine) {
  auto msg = error_of(std::string(kBase) + "experiment: ${params.stepz}\n");
  EXPECT_HAS(msg, "line 9");
  EXPECT_HAS(msg, "'${params.stepz}'");
  EXPECT_HAS(msg, "Did you mean 'params.steps'?");
  EXPECT_HAS(error_of(std::string(kBase) + "experiment: ${env:NEXP_SURELY_UNSET_VAR}\n"), "NEXP_SURELY_UNSET_VAR is not set");
  EXPECT_HAS(error_of("method: scaffold_check.fit\nexperiment: ${experiment}\ndataset: scaffold_check.linear\n"), "cycle");
}

TEST(Config, UnknownKeysNameFileLineAndClosestKey) {
  auto msg = error_of("method: scaffold_check.fit\nparams:\n  stepz: 3\ndataset: scaffold_check.linear\n");
  EXPECT_HAS(msg, "exp.yaml', line 3");
  EXPECT_HAS(msg, "params.stepz");
  EXPECT_HAS(msg, "Did you mean 'steps'?");
  EXPECT_HAS(error_of(std::string(kBase) + "sead: 1\n"), "Did you mean 'seed'?");
  auto over = error_of(kBase, {"params.lrr=0.1"});
  EXPECT_HAS(over, "command-line override 'params.lrr=0.1'");
  EXPECT_HAS(over, "Did you mean 'lr'?");
}

TEST(Config, WrongTypesAndRangesSayWhatWasExpected) {
  auto type = error_of(kBase, {"params.steps=many"});
  EXPECT_HAS(type, "expected int, found 'many'");
  EXPECT_HAS(type, "gradient steps");
  auto range = error_of(kBase, {"params.lr=5"});
  EXPECT_HAS(range, "5 is above the maximum 1");
  EXPECT_HAS(range, "float in [1e-06, 1]");
  EXPECT_HAS(error_of(kBase, {"seed=-1"}), "'seed' is out of range: -1 is below the minimum 0");
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

TEST(Config, MalformedYamlAndMissingFilesAreOneParagraph) {
  auto msg = error_of("method: scaffold_check.fit\nparams:\n  steps: [1, 2\n");
  EXPECT_HAS(msg, "malformed YAML");
  EXPECT_HAS(msg, "line ");
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one paragraph";
  try {
    load_experiment("/nonexistent/exp.yaml", {}, registry_with_scaffold());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_HAS(e.what(), "does not exist");
  }
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

TEST(Config, EveryProblemIsReportedAtOnce) {
  auto msg = error_of(
      "method: scaffold_check.fit\nparams:\n  stepz: 3\n  lr: 9\ndataset:\n  name: scaffold_check.linear\n  n: -4\n"
      "metrics: [nope]\nslurm: {cpus_per_task: four}\n");
  EXPECT_HAS(msg, "5 problems in the config");
  EXPECT_HAS(msg, "params.stepz");
  EXPECT_HAS(msg, "params.lr");
  EXPECT_HAS(msg, "dataset.n");
  EXPECT_HAS(msg, "cannot produce metric 'nope'");
  EXPECT_HAS(msg, "slurm.cpus_per_task");
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

TEST(Config, ClosestFindsNearMissesOnly) {
  EXPECT_EQ(closest("sead", {"seed", "method"}), "seed");
  EXPECT_EQ(closest("zzzzzz", {"seed", "method"}), "");
}
