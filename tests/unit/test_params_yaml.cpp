// core/src/params_yaml.cpp: a section validated against its schema: unknown keys, types and ranges.
#include <gtest/gtest.h>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test::pipeline;

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
