// nexp/stats.hpp against closed forms, published table values, naive references and coverage on
// known distributions (fixed seeds).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nexp/error.hpp"
#include "nexp/stats.hpp"

using namespace nexp;
using namespace nexp::stats;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<double> normal_sample(Random& rng, std::size_t n, double mu, double sigma) {
  std::vector<double> x(n);
  for (auto& v : x) v = mu + sigma * rng.normal();
  return x;
}

// P(Bin(n, p) >= k), summed term by term.
double binomial_upper_tail(int k, int n, double p) {
  double total = 0;
  for (int j = k; j <= n; ++j) total += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) +
                                                 j * std::log(p) + (n - j) * std::log1p(-p));
  return total;
}

}  // namespace

TEST(Stats, CentresAndSpreads) {
  const std::vector<double> x{3, 1, 4, 1, 5, 9, 2, 6};
  EXPECT_DOUBLE_EQ(mean(x), 31.0 / 8);
  EXPECT_NEAR(variance(x), (9 + 1 + 16 + 1 + 25 + 81 + 4 + 36 - 8 * (31.0 / 8) * (31.0 / 8)) / 7, 1e-12);
  EXPECT_NEAR(stddev(x), std::sqrt(variance(x)), 1e-15);
  EXPECT_NEAR(standard_error(x), stddev(x) / std::sqrt(8.0), 1e-15);
  EXPECT_DOUBLE_EQ(median(x), 3.5);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  const auto s = summarize(x);
  EXPECT_EQ(s.n, 8u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_TRUE(std::isnan(mean({})));
  EXPECT_TRUE(std::isnan(variance({2.0})));
  EXPECT_TRUE(std::isnan(median({1, NAN, 3}))) << "a NaN has no place in the order";
}

TEST(Stats, QuantilesAreType7LikeRAndNumPy) {
  // R: quantile(c(3,1,4,1,5,9,2,6), c(0, .25, .5, .9, 1)) = 1 1.75 3.5 6.9 9
  const auto q = quantiles({3, 1, 4, 1, 5, 9, 2, 6}, {0, 0.25, 0.5, 0.9, 1});
  const std::vector<double> expected{1, 1.75, 3.5, 6.9, 9};
  for (std::size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], expected[i], 1e-12) << i;
  EXPECT_DOUBLE_EQ(quantile({7}, 0.3), 7);
  EXPECT_DOUBLE_EQ(quantile_sorted({0, 10}, 0.25), 2.5);
  EXPECT_THROW(quantile({1, 2}, 1.5), Error);
}

TEST(Stats, NormalAndStudentTAgainstClosedFormsAndTables) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(normal_quantile(0.995), 2.5758293035489004, 1e-12);
  EXPECT_DOUBLE_EQ(normal_quantile(0.5), 0);
  for (double p : {1e-300, 1e-20, 1e-5, 0.1, 0.3})
    EXPECT_NEAR(normal_cdf(normal_quantile(p)) / p, 1, 1e-12) << p;
  // One and two degrees of freedom have closed forms: Cauchy, and t = (2p - 1) / sqrt(2 p (1 - p)).
  for (double p : {0.001, 0.1, 0.4, 0.75, 0.975, 0.999}) {
    EXPECT_NEAR(student_t_quantile(p, 1), std::tan(kPi * (p - 0.5)), 1e-10 * std::fabs(std::tan(kPi * (p - 0.5)))) << p;
    EXPECT_NEAR(student_t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-11) << p;
  }
  for (double t : {-30.0, -2.0, -0.1, 0.0, 0.7, 5.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / kPi, 1e-14) << t;
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-14) << t;
  }
  // Tables of the t distribution.
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445105197799, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157162740992, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 29), 2.045229642132703, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.812461122811676, 1e-9);
  // Many degrees of freedom: the Cornish-Fisher expansion around the normal, z + (z^3 + z) / (4 nu) +
  // (5 z^5 + 16 z^3 + 3 z) / (96 nu^2) + O(nu^-3), against the continued fraction up to 1e5...
  const double z = 1.959963984540054;
  for (double nu : {1e4, 1e5}) {
    const double cf = z + (z * z * z + z) / (4 * nu) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * nu * nu);
    EXPECT_NEAR(student_t_quantile(0.975, nu), cf, 3e-12) << nu;
  }
  // ... beyond which the expansions take over, seamlessly.
  EXPECT_NEAR(student_t_quantile(0.975, 1e5), student_t_quantile(0.975, std::nextafter(1e5, 2e5)), 1e-12);
  for (double t : {-4.0, -1.0, 0.5, 2.0})
    EXPECT_NEAR(student_t_cdf(t, 1e5), student_t_cdf(t, std::nextafter(1e5, 2e5)), 1e-13) << t;
  EXPECT_NEAR(student_t_cdf(student_t_quantile(0.975, 1e9), 1e9), 0.975, 1e-14);
  EXPECT_NEAR(student_t_cdf(student_t_quantile(0.9, 3.5), 3.5), 0.9, 1e-13) << "non-integer dof (Welch)";
}

TEST(Stats, IncompleteBetaAgainstClosedFormsAndTheBinomial) {
  for (double x : {0.0, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0}) {
    EXPECT_NEAR(beta_cdf(x, 1, 1), x, 1e-14);
    EXPECT_NEAR(beta_cdf(x, 3.5, 1), std::pow(x, 3.5), 1e-14);
    EXPECT_NEAR(beta_cdf(x, 1, 4), 1 - std::pow(1 - x, 4), 1e-14);
    EXPECT_NEAR(beta_cdf(x, 2, 2), 3 * x * x - 2 * x * x * x, 1e-14);
  }
  EXPECT_NEAR(beta_cdf(0.5, 37, 37), 0.5, 1e-13);
  // I_p(k, n - k + 1) = P(Bin(n, p) >= k).
  for (int k : {1, 7, 20})
    for (double p : {0.05, 0.4, 0.9}) EXPECT_NEAR(beta_cdf(p, k, 40 - k + 1), binomial_upper_tail(k, 40, p), 1e-12);
  EXPECT_NEAR(beta_cdf(beta_quantile(0.025, 5, 6), 5, 6), 0.025, 1e-14);
}

TEST(Stats, TIntervalByHand) {
  // {1..5}: mean 3, sd sqrt(2.5), se sqrt(0.5); t_{0.975, 4} = 2.7764451051977987.
  const auto ci = mean_t_interval({1, 2, 3, 4, 5});
  const double half = 2.7764451051977987 * std::sqrt(0.5);
  EXPECT_DOUBLE_EQ(ci.estimate, 3);
  EXPECT_NEAR(ci.low, 3 - half, 1e-9);
  EXPECT_NEAR(ci.high, 3 + half, 1e-9);
  EXPECT_TRUE(ci.contains(1.5));
  EXPECT_FALSE(ci.contains(5));
  const auto one = mean_t_interval({4.0});
  EXPECT_EQ(one.estimate, 4);
  EXPECT_TRUE(std::isnan(one.low) && std::isnan(one.high)) << "one value has no spread";
  const auto flat = mean_t_interval({2, 2, 2});
  EXPECT_EQ(flat.low, 2);
  EXPECT_EQ(flat.high, 2);
  EXPECT_THROW(mean_t_interval({1, 2}, 95), Error) << "95 is not a level";
}

TEST(Stats, TIntervalCoversNormalMeansAtItsLevel) {
  Random rng(2024);
  int covered = 0;
  const int experiments = 2000;
  for (int e = 0; e < experiments; ++e) covered += mean_t_interval(normal_sample(rng, 5, 10, 3), 0.9).contains(10);
  // Exact for normal data: 0.9, binomial sd 0.0067 over 2000 experiments.
  EXPECT_NEAR(covered / double(experiments), 0.9, 0.025);
}

TEST(Stats, BootstrapCoverageOnAKnownDistribution) {
  Random data(7), resampling(8);
  int covered = 0;
  const int experiments = 400;
  for (int e = 0; e < experiments; ++e) {
    // Exponential with mean 2: skewed, so the interval is not symmetric around the mean.
    std::vector<double> x(40);
    for (auto& v : x) v = data.exponential(0.5);
    const auto ci = mean_bootstrap_interval(x, resampling, 0.9, 1000);
    EXPECT_EQ(ci.resamples, 1000);
    covered += ci.contains(2.0);
  }
  // The percentile bootstrap of a mean of 40 exponentials covers a little under its level (~0.87).
  EXPECT_GT(covered / double(experiments), 0.82);
  EXPECT_LT(covered / double(experiments), 0.94);
}

TEST(Stats, BootstrapDrawsInADocumentedOrder) {
  // The driver against a naive re-implementation: the identity first, then n draws of below(n) per
  // resample; the interval is the type-7 quantiles of the replicates.
  const std::vector<double> x{0.3, 2.0, -1.0, 4.5, 0.0, 1.1, 7.0};
  Random a(99), b(99);
  const auto ci = bootstrap(x.size(), [&](const std::vector<std::size_t>& idx) {
    std::vector<double> s;
    for (auto i : idx) s.push_back(x[i]);
    return median(s);
  }, a, 0.8, 500);
  std::vector<double> reps;
  for (int r = 0; r < 500; ++r) {
    std::vector<double> s;
    for (std::size_t i = 0; i < x.size(); ++i) s.push_back(x[b.below(x.size())]);
    reps.push_back(median(s));
  }
  EXPECT_DOUBLE_EQ(ci.estimate, 1.1);
  EXPECT_DOUBLE_EQ(ci.low, quantile(reps, 0.1));
  EXPECT_DOUBLE_EQ(ci.high, quantile(reps, 0.9));
  int above = 0;
  for (double v : reps) above += v > 0;
  EXPECT_DOUBLE_EQ(ci.share_above_zero, above / 500.0);
  EXPECT_EQ(a(), b()) << "the driver consumed exactly the draws of the reference";
}

TEST(Stats, NonFiniteResamplesAreLeftOutAndCounted) {
  Random rng(3);
  // A ratio whose denominator is 0 in the resamples that hold only the first unit.
  const std::vector<double> num{1, 2}, den{0, 1};
  const auto ci = bootstrap(2, [&](const std::vector<std::size_t>& idx) {
    double n = 0, d = 0;
    for (auto i : idx) n += num[i], d += den[i];
    return n / d;
  }, rng, 0.95, 400);
  EXPECT_DOUBLE_EQ(ci.estimate, 3);
  EXPECT_GT(ci.resamples, 250);  // about 3/4 of 400 draw the second unit at least once
  EXPECT_LT(ci.resamples, 350);
  EXPECT_TRUE(std::isfinite(ci.low) && std::isfinite(ci.high));
}

TEST(Stats, PairingRemovesTheSpreadBetweenUnits) {
  // Five seeds that differ a lot from each other; method a is better by 1 +- 0.1 on every seed.
  Random rng(11);
  std::vector<double> b, a;
  for (int s = 0; s < 5; ++s) {
    b.push_back(10.0 * s + rng.normal());
    a.push_back(b.back() + 1 + 0.1 * rng.normal());
  }
  const auto paired = paired_t_interval(a, b);
  EXPECT_TRUE(paired.excludes_zero());
  EXPECT_TRUE(paired.contains(1));
  EXPECT_NEAR(paired.estimate, mean(a) - mean(b), 1e-12);
  EXPECT_FALSE(welch_t_interval(a, b).excludes_zero()) << "unpaired, the seeds' spread hides the gain";
  Random r1(5), r2(5);
  const auto boot = paired_bootstrap(a, b, r1);
  EXPECT_NEAR(boot.estimate, paired.estimate, 1e-12);
  EXPECT_GT(boot.low, 0);
  EXPECT_EQ(boot.share_above_zero, 1.0);
  const auto again = paired_bootstrap(a, b, r2);
  EXPECT_EQ(again.low, boot.low) << "the same stream gives the same interval";
  EXPECT_THROW(paired_t_interval({1, 2, 3}, {1, 2}), Error);
}

TEST(Stats, WelchByHand) {
  // a: mean 2, var 1 (n 3); b: mean 0, var 4 (n 5). se^2 = 1/3 + 4/5; dof by Welch-Satterthwaite.
  const std::vector<double> a{1, 2, 3}, b{-2, -2, 0, 2, 2};
  const double va = 1.0 / 3, vb = 4.0 / 5, dof = (va + vb) * (va + vb) / (va * va / 2 + vb * vb / 4);
  const auto ci = welch_t_interval(a, b, 0.95);
  EXPECT_DOUBLE_EQ(ci.estimate, 2);
  EXPECT_NEAR(ci.high - 2, student_t_quantile(0.975, dof) * std::sqrt(va + vb), 1e-12);
}

TEST(Stats, BinomialIntervals) {
  // R: prop.test(5, 10, correct = FALSE)$conf.int; binom.test(5, 10)$conf.int.
  const auto w = wilson_interval(5, 10);
  EXPECT_NEAR(w.low, 0.2365931, 1e-7);
  EXPECT_NEAR(w.high, 0.7634069, 1e-7);
  const auto cp = clopper_pearson_interval(5, 10);
  EXPECT_NEAR(cp.low, 0.1870860, 1e-7);
  EXPECT_NEAR(cp.high, 0.8129140, 1e-7);
  // The exact interval's ends are where each binomial tail has mass (1 - level) / 2.
  const auto c2 = clopper_pearson_interval(3, 40, 0.9);
  EXPECT_NEAR(binomial_upper_tail(3, 40, c2.low), 0.05, 1e-10);
  EXPECT_NEAR(1 - binomial_upper_tail(4, 40, c2.high), 0.05, 1e-10);
  // No successes: [0, 1 - (alpha/2)^(1/n)] in closed form.
  const auto none = clopper_pearson_interval(0, 50);
  EXPECT_EQ(none.low, 0);
  EXPECT_NEAR(none.high, 1 - std::pow(0.025, 1.0 / 50), 1e-12);
  EXPECT_EQ(clopper_pearson_interval(50, 50).high, 1);
  EXPECT_TRUE(std::isnan(wilson_interval(0, 0).estimate));
  EXPECT_THROW(wilson_interval(6, 5), Error);
}

TEST(Stats, LineFitsByHandAndExactPowerLaws) {
  // u = 0..3, v = 0, 1, 1, 3: slope 4.5 / 5, intercept -0.1, SSE 0.7, se = sqrt(0.35 / 5).
  const auto f = fit_line({0, 1, 2, 3}, {0, 1, 1, 3});
  EXPECT_NEAR(f.slope, 0.9, 1e-14);
  EXPECT_NEAR(f.intercept, -0.1, 1e-14);
  EXPECT_NEAR(f.slope_se, std::sqrt(0.07), 1e-14);
  EXPECT_NEAR(f.r2, 1 - 0.7 / 4.75, 1e-14);
  const auto ci = f.slope_interval(0.95);
  EXPECT_NEAR(ci.high - 0.9, 4.302652729749464 * std::sqrt(0.07), 1e-9);
  // y = 3 x^2.5 exactly.
  std::vector<double> x{2, 5, 10, 40, 100}, y;
  for (double v : x) y.push_back(3 * std::pow(v, 2.5));
  const auto p = fit_loglog(x, y);
  EXPECT_NEAR(p.slope, 2.5, 1e-12);
  EXPECT_NEAR(p.intercept, std::log(3.0), 1e-11);
  EXPECT_LT(p.slope_interval().high - p.slope_interval().low, 1e-6);
  Random rng(1);
  const auto b = loglog_slope_bootstrap(x, y, rng, 0.95, 200);
  EXPECT_NEAR(b.low, 2.5, 1e-12);
  EXPECT_NEAR(b.high, 2.5, 1e-12);
  EXPECT_THROW(fit_loglog({1, 2, 0}, {1, 2, 3}), Error);
  EXPECT_TRUE(std::isnan(fit_line({1, 1}, {2, 3}).slope)) << "no spread in x, no slope";
}

TEST(Stats, SlopeIntervalsCoverTheTrueExponent) {
  Random data(21), resampling(22);
  int t_covered = 0, boot_covered = 0;
  const int experiments = 300;
  std::vector<double> x;
  for (int i = 0; i < 12; ++i) x.push_back(std::pow(2.0, 1 + 0.5 * i));
  for (int e = 0; e < experiments; ++e) {
    std::vector<double> y;
    for (double v : x) y.push_back(std::pow(v, 1.5) * std::exp(0.3 * data.normal()));
    t_covered += fit_loglog(x, y).slope_interval(0.9).contains(1.5);
    boot_covered += loglog_slope_bootstrap(x, y, resampling, 0.9, 400).contains(1.5);
  }
  EXPECT_NEAR(t_covered / double(experiments), 0.9, 0.05) << "exact for log-normal noise";
  EXPECT_NEAR(boot_covered / double(experiments), 0.87, 0.07) << "the pairs bootstrap of 12 points runs a little narrow";
}

TEST(Stats, SlopeOfMeansResamplesWithinEachX) {
  // Two seeds at each n, each 10% either side of n^3: the means lie on n^3 exactly.
  const std::vector<double> n{8, 16, 32, 64};
  std::vector<std::vector<double>> runs;
  for (double v : n) runs.push_back({0.9 * v * v * v, 1.1 * v * v * v});
  Random rng(4);
  const auto ci = loglog_slope_of_means(n, runs, rng, 0.95, 2000);
  EXPECT_NEAR(ci.estimate, 3, 1e-12);
  EXPECT_LT(ci.low, 3);
  EXPECT_GT(ci.high, 3);
  // No resample can be steeper than all-low seeds below the middle n and all-high above it:
  // 3 + sum_i u_i ln m_i / sum_i u_i^2, u = ln 2 (-1.5, -0.5, 0.5, 1.5), = 3 + 0.4 ln(1.1 / 0.9) / ln 2.
  EXPECT_LT(ci.high, 3 + 0.4 * std::log(1.1 / 0.9) / std::log(2.0) + 1e-12);
  EXPECT_EQ(ci.resamples, 2000);
  EXPECT_THROW(loglog_slope_of_means(n, {{1}, {}, {2}, {3}}, rng), Error);
}

TEST(Stats, RanksCorrelationsAndAuc) {
  EXPECT_EQ(ranks({10, 20, 20, 5}), (std::vector<double>{2, 3.5, 3.5, 1}));
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {1, 8, 27, 1000}), 1);
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {4, 3, 2, 1}), pearson({1, 2.5, 2.5, 4}, {4, 3, 2, 1}), 1e-15);
  EXPECT_NEAR(pearson({1, 2, 3}, {2, 4, 7}), 0.9933992677987828, 1e-12);
  EXPECT_NEAR(kendall_tau_b({1, 2, 3, 4, 5}, {3, 4, 1, 2, 5}), 0.2, 1e-15);  // 6 concordant, 4 discordant
  EXPECT_NEAR(kendall_tau_b({1, 1, 2, 3}, {1, 2, 2, 3}), 0.8, 1e-15);        // 4 / sqrt(5 * 5)
  // AUC against counting every (positive, negative) pair, ties one half.
  Random rng(6);
  std::vector<double> s;
  std::vector<int> y;
  for (int i = 0; i < 300; ++i) {
    y.push_back(static_cast<int>(rng.below(2)));
    s.push_back(std::round(10 * (rng.normal() + 0.8 * y.back())) / 10);
  }
  double wins = 0, pairs = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); ++j)
      if (y[i] == 1 && y[j] == 0) wins += s[i] > s[j] ? 1 : s[i] == s[j] ? 0.5 : 0, ++pairs;
  EXPECT_NEAR(roc_auc(s, y), wins / pairs, 1e-12);
  EXPECT_TRUE(std::isnan(roc_auc({1, 2}, {1, 1})));
  EXPECT_THROW(roc_auc({1, 2}, {1, 2}), Error);
}
