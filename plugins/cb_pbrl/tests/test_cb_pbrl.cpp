#include <gtest/gtest.h>
#include "cmdp.hpp"
TEST(cb_pbrl, Placeholder) { EXPECT_EQ(1, 1); }
