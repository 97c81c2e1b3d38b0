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

TEST(Random, StateContinuesTheStream) {
  Random a = Random::stream(42, "pool");
  for (int i = 0; i < 5; ++i) a.below(1000);
  const auto saved = a.state();
  Random b = Random::from_state(saved);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a(), b()) << i;
  EXPECT_EQ(Random::from_state(1, 2, 3, 4).state(), (std::array<std::uint64_t, 4>{1, 2, 3, 4}));
}

TEST(Random, StreamsAreDeterministicAndDistinct) {
  Random a = Random::stream({7, 1}), b = Random::stream({7, 1}), c = Random::stream({7, 2}), d = Random::stream({1, 7});
  const auto x = a();
  EXPECT_EQ(x, b());
  EXPECT_NE(x, c());
  EXPECT_NE(x, d()) << "the order of the key words matters";
}

TEST(Random, NamedStreamsArePinnedAndIndependent) {
  // 64-bit FNV-1a, the published test vectors.
  EXPECT_EQ(nexp::fnv1a64(""), 0xCBF29CE484222325ull);
  EXPECT_EQ(nexp::fnv1a64("a"), 0xAF63DC4C8601EC8Cull);
  EXPECT_EQ(nexp::fnv1a64("foobar"), 0x85944171F73967E8ull);
  // RunContext::stream(purpose, index) is Random::stream(seed(), purpose, index). Its first outputs
  // are part of every run's results: they must not change from one platform or release to the next.
  Random s = Random::stream(42, "bootstrap");
  EXPECT_EQ(s(), 2396957817143322080ull);
  EXPECT_EQ(s(), 3451891806449661325ull);
  EXPECT_EQ(s(), 15893759278774978350ull);
  Random r = Random::stream(42, "replica", 3);
  EXPECT_EQ(r(), 17937053892147125453ull);
  EXPECT_EQ(r(), 1174788652529353282ull);
  // The same key repeats; another purpose, index or seed draws something else.
  const auto first = [](Random g) { return g(); };
  EXPECT_EQ(first(Random::stream(42, "replica", 3)), 17937053892147125453ull);
  EXPECT_EQ(first(Random::stream(42, "bootstrap", 0)), 2396957817143322080ull) << "index 0 is the default";
  for (auto other : {Random::stream(42, "replica", 4), Random::stream(42, "replicas", 3), Random::stream(43, "replica", 3),
                     Random::stream(42, "", 3), Random::stream({42, nexp::fnv1a64("replica")})})
    EXPECT_NE(first(other), 17937053892147125453ull);
  // Streams of neighbouring indices are uncorrelated: the correlation of their uniforms is ~0.
  const int n = 20000;
  double sxy = 0;
  Random a = Random::stream(7, "x", 0), b = Random::stream(7, "x", 1);
  for (int i = 0; i < n; ++i) sxy += (a.uniform() - 0.5) * (b.uniform() - 0.5);
  EXPECT_LT(std::fabs(sxy / n * 12), 4.0 / std::sqrt(double(n)));  // 4 standard errors
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
