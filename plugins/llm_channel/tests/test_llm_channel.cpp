// llm_channel's mathematics against independent references: exact enumeration, closed forms, brute force.
#include <gtest/gtest.h>

#include "operators.hpp"
#include "router.hpp"
#include "sim.hpp"
#include "theory.hpp"

using namespace llm_channel;

TEST(Theory, TauStarOfEqualPrecisionsIsZero) { EXPECT_DOUBLE_EQ(tau_star({3, 3, 3}), 0.0); }
