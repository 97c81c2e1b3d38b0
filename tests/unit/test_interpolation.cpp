// core/src/interpolation.cpp: ${key} and ${env:NAME[,default]} in configs, and what an unresolvable one says.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test::pipeline;

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
