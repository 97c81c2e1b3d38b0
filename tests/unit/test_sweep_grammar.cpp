// core/src/sweep_grammar.cpp: sweep expressions, ranges, choices and distributions.
#include <gtest/gtest.h>

#include "nexp/runtime/sweep.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

TEST(SweepGrammar, RecognisesSweepsButNotFlowLists) {
  EXPECT_TRUE(is_sweep_expression("1,2,3"));
  EXPECT_TRUE(is_sweep_expression("range(0,5)"));
  EXPECT_TRUE(is_sweep_expression("int(uniform(1,8))"));
  EXPECT_FALSE(is_sweep_expression("[1, 2, 3]"));
  EXPECT_FALSE(is_sweep_expression("0.01"));
  EXPECT_FALSE(is_sweep_expression("'a,b'"));
}

TEST(SweepGrammar, RangesFollowPythonSemantics) {
  EXPECT_EQ(parse_axis("seed", "range(0,5)", "t").values, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  EXPECT_EQ(parse_axis("n", "range(10, 0, -4)", "t").values, (std::vector<std::string>{"10", "6", "2"}));
  EXPECT_EQ(parse_axis("x", "range(0, 1, 0.25)", "t").values, (std::vector<std::string>{"0", "0.25", "0.5", "0.75"}));
  EXPECT_THROW(parse_axis("x", "range(0, 5, 0)", "t"), ConfigError);
  EXPECT_THROW(parse_axis("x", "range(5, 0)", "t"), ConfigError);
}

TEST(SweepGrammar, ChoicesListsAndDistributions) {
  EXPECT_EQ(parse_axis("a", "choice(x, y, [1, 2])", "t").values, (std::vector<std::string>{"x", "y", "[1, 2]"}));
  EXPECT_EQ(parse_axis("a", "ws,tch,pbi", "t").values, (std::vector<std::string>{"ws", "tch", "pbi"}));
  SweepAxis lu = parse_axis("lr", "loguniform(1e-4, 1e-1)", "t");
  EXPECT_EQ(lu.kind, SweepAxis::Kind::LogUniform);
  EXPECT_DOUBLE_EQ(lu.lo, 1e-4);
  EXPECT_TRUE(parse_axis("k", "int(uniform(1, 8))", "t").integer);
  EXPECT_THROW(parse_axis("lr", "loguniform(0, 1)", "t"), ConfigError);
  EXPECT_THROW(parse_axis("lr", "uniform(1, 1)", "t"), ConfigError);
  EXPECT_THROW(parse_axis("k", "int(range(1, 3))", "t"), ConfigError);
}
