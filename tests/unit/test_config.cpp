// core/src/config.cpp: parameters, their checks, and typed getters.
#include <gtest/gtest.h>

#include "nexp/config.hpp"
#include "nexp/error.hpp"
#include "support.hpp"

using namespace nexp;

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
