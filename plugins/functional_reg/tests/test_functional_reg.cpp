#include <gtest/gtest.h>
#include "basis.hpp"
TEST(Basis, PartitionOfUnity) {
  functional_reg::BSplineBasis b(8);
  const auto phi = b.evaluate({0.0, 0.3, 1.0});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(phi.row(i).sum(), 1.0, 1e-12);
}
