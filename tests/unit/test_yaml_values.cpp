// core/src/yaml_values.cpp: malformed YAML, every problem reported at once, closest-name suggestions.
#include <gtest/gtest.h>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::pipeline;

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

TEST(Config, ClosestFindsNearMissesOnly) {
  EXPECT_EQ(closest("sead", {"seed", "method"}), "seed");
  EXPECT_EQ(closest("zzzzzz", {"seed", "method"}), "");
}
