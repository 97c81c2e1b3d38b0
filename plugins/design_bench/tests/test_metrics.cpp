// The metrics against hand computations and published values.
#include <gtest/gtest.h>

#include <cmath>

#include "../metrics.hpp"

using namespace design_bench;

TEST(DesignBenchMetrics, IouOfHalfOverlappingSquares) {
  EXPECT_DOUBLE_EQ(iou({0, 0, 2, 2}, {1, 0, 2, 2}), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(iou({0, 0, 1, 1}, {2, 2, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(iou({0, 0, 1, 1}, {0, 0, 1, 1}), 1.0);
}
