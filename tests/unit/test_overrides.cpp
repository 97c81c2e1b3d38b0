// core/src/overrides.cpp: the three kinds of override and what adding or deleting a key needs.
#include <gtest/gtest.h>

#include "nexp/runtime/overrides.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test::pipeline;

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

TEST(Config, AddRefusesAnExistingKeyAndDeleteAMissingOne) {
  EXPECT_HAS(error_of(kBase, {"+params.steps=3"}), "'params.steps' is already in the config");
  EXPECT_HAS(error_of(kBase, {"~params.checkpoint_every"}), "cannot delete 'params.checkpoint_every'");
  EXPECT_EQ(load(kBase, {"+params.checkpoint_every=5"}).params.get_integer("checkpoint_every"), 5);
}
