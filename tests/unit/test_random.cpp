// nexp::Random: the published xoshiro256** and SplitMix64 outputs, and the statistics of its helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nexp/random.hpp"

using nexp::Random;

TEST(Random, MatchesTheReferenceAlgorithms) {
  Random r = Random::from_state(1, 2, 3, 4);
  EXPECT_EQ(r(), 11520u);
  EXPECT_EQ(r(), 0u);
  EXPECT_EQ(r(), 1509978240u);
  EXPECT_EQ(r(), 1215971899390074240u);
  EXPECT_EQ(nexp::mix64(0), 0xE220A8397B1DCDAFull);  // SplitMix64's first output from state 0
}

TEST(Random, StreamsAreDeterministicAndDistinct) {
  Random a = Random::stream({7, 1}), b = Random::stream({7, 1}), c = Random::stream({7, 2}), d = Random::stream({1, 7});
  const auto x = a();
  EXPECT_EQ(x, b());
  EXPECT_NE(x, c());
  EXPECT_NE(x, d()) << "the order of the key words matters";
}

TEST(Random, UniformBelowAndNormalHaveTheirMoments) {
  Random r(42);
  const int n = 400000;
  double sum = 0, sq = 0, z = 0, z2 = 0;
  std::vector<int> counts(7, 0);
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u, sq += u * u;
    ++counts[r.below(7)];
    const double g = r.normal();
    z += g, z2 += g * g;
  }
  EXPECT_NEAR(sum / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), 1.0 / 12, 1e-3);
  EXPECT_NEAR(z / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(z2 / n, 1.0, 0.01);
  double chi2 = 0;  // 6 degrees of freedom: above 22.5 with probability 0.001
  for (int c : counts) chi2 += (c - n / 7.0) * (c - n / 7.0) / (n / 7.0);
  EXPECT_LT(chi2, 22.5);
}
