// The metrics against hand computations, brute force and published values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "../metrics.hpp"

using namespace design_bench;

TEST(DesignBenchMetrics, IouOfHalfOverlappingSquares) {
  EXPECT_DOUBLE_EQ(iou({0, 0, 2, 2}, {1, 0, 2, 2}), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(iou({0, 0, 1, 1}, {2, 2, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(iou({0, 0, 1, 1}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(iou({0, 0, 4, 4}, {1, 1, 2, 2}), 4.0 / 16.0);
}

TEST(DesignBenchMetrics, HungarianEqualsBruteForceOnRandomMatrices) {
  std::uint64_t state = 7;
  auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 40; };
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 1 + trial % 6, m = n + trial % 3;  // rows <= columns, and the transpose below
    std::vector<std::vector<double>> cost(n, std::vector<double>(m));
    for (auto& row : cost)
      for (auto& v : row) v = static_cast<double>(next() % 1000) / 10.0;
    std::vector<int> cols(m);
    std::iota(cols.begin(), cols.end(), 0);
    double best = INFINITY;
    do {  // every injection of rows into columns (the first n of each permutation)
      double s = 0;
      for (int i = 0; i < n; ++i) s += cost[i][cols[i]];
      best = std::min(best, s);
    } while (std::next_permutation(cols.begin(), cols.end()));
    const auto a = hungarian(cost);
    double got = 0;
    for (int i = 0; i < n; ++i) got += cost[i][a[i]];
    EXPECT_NEAR(got, best, 1e-9) << "n=" << n << " m=" << m;
    std::vector<std::vector<double>> t(m, std::vector<double>(n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j) t[j][i] = cost[i][j];
    const auto b = hungarian(t);  // more rows than columns: m - n rows are left over
    double got_t = 0;
    int left = 0;
    for (int j = 0; j < m; ++j) b[j] < 0 ? ++left : (got_t += t[j][b[j]], 0);
    EXPECT_EQ(left, m - n);
    EXPECT_NEAR(got_t, best, 1e-9);
  }
}

TEST(DesignBenchMetrics, AveragePrecisionOfAHandRankedList) {
  // Two TEXT boxes; detections: a hit (0.9), a false positive (0.8), the second hit (0.7).
  // Precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1; made monotone: 1 up to recall 0.5, then 2/3.
  DetectionImage img;
  img.truth = {{{0, 0, 10, 10}, Kind::Text, 1}, {{20, 20, 10, 10}, Kind::Text, 1}};
  img.pred = {{{0, 0, 10, 10}, Kind::Text, 0.9}, {{50, 50, 5, 5}, Kind::Text, 0.8}, {{21, 20, 10, 10}, Kind::Text, 0.7}};
  const double expected = (51 * 1.0 + 50 * 2.0 / 3.0) / 101;
  EXPECT_NEAR(coco_map({img}, {0.5}), expected, 1e-12);
  // At IoU 0.95 the shifted box (IoU 9/11 = 0.818) is a miss: precision 1 up to recall 0.5 only.
  EXPECT_NEAR(average_precision({img}, Kind::Text, 0.95), 51.0 / 101, 1e-12);
  EXPECT_NEAR(coco_map({img}, {0.5}), coco_map({img}, {0.5}), 0);
  // A class without ground truth is left out; a perfect answer scores 1 at every threshold.
  DetectionImage perfect;
  perfect.truth = img.truth;
  perfect.pred = {{{0, 0, 10, 10}, Kind::Text, 1}, {{20, 20, 10, 10}, Kind::Text, 1}};
  EXPECT_DOUBLE_EQ(coco_map({perfect}, coco_thresholds()), 1.0);
}

TEST(DesignBenchMetrics, ClusteringAgreementOnHandCases) {
  const std::vector<int> a = {0, 0, 1, 1}, b = {0, 0, 1, 2};
  EXPECT_NEAR(adjusted_rand_index(a, b), 4.0 / 7.0, 1e-12);  // sklearn's documented 0.57
  EXPECT_NEAR(normalized_mutual_information(a, b), 0.8, 1e-12);  // MI = ln 2, H = ln 2 and 1.5 ln 2
  EXPECT_DOUBLE_EQ(adjusted_rand_index(a, {5, 5, 3, 3}), 1.0);  // labels are names only
  EXPECT_DOUBLE_EQ(adjusted_mutual_information(a, {1, 1, 0, 0}), 1.0);
  // Pairs together in both: 2 of 15; 6 together in each; expected 6 x 6 / 15 = 2.4: (2 - 2.4) / (6 - 2.4).
  EXPECT_NEAR(adjusted_rand_index({0, 0, 0, 1, 1, 1}, {0, 1, 0, 1, 0, 1}), -1.0 / 9, 1e-12);
}

TEST(DesignBenchMetrics, AmiExpectationEqualsTheMeanOverAllPermutations) {
  // E[MI] under random labelings with fixed marginals = the mean MI over every permutation of b.
  const std::vector<int> a = {0, 0, 0, 1, 1, 2}, b0 = {0, 0, 1, 1, 2, 2};
  std::vector<int> perm = {0, 1, 2, 3, 4, 5};
  double sum = 0;
  int n = 0;
  do {
    std::vector<int> b(6);
    for (int i = 0; i < 6; ++i) b[i] = b0[perm[i]];
    sum += mutual_information(a, b), ++n;
  } while (std::next_permutation(perm.begin(), perm.end()));
  const double emi = sum / n, mi = mutual_information(a, b0);
  const double expected = (mi - emi) / ((entropy(a) + entropy(b0)) / 2 - emi);
  EXPECT_NEAR(adjusted_mutual_information(a, b0), expected, 1e-12);
}

TEST(DesignBenchMetrics, AverageLinkageRecoversSeparatedClusters) {
  const std::vector<double> x = {0, 0.1, 0.25, 5, 5.2, 9, 9.1};
  std::vector<std::vector<double>> d(x.size(), std::vector<double>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < x.size(); ++j) d[i][j] = std::abs(x[i] - x[j]);
  EXPECT_EQ(average_linkage(d, 3), (std::vector<int>{0, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(average_linkage(d, 1), std::vector<int>(7, 0));
}

TEST(DesignBenchMetrics, AlignmentAndOverlapOfHandLayouts) {
  // Two left-aligned boxes: d = 0 for both, alignment 0; no overlap.
  EXPECT_NEAR(alignment_score({{10, 10, 50, 20}, {10, 50, 30, 20}}, 100, 100), 0.0, 1e-12);
  // Nothing aligns: the smallest gap is between the x centres, 0.35 and 0.315 -> -log(1 - 0.035).
  EXPECT_NEAR(alignment_score({{10, 12, 50, 21}, {15, 47, 33, 23}}, 100, 100), -std::log(1 - 0.035), 1e-9);
  EXPECT_DOUBLE_EQ(overlap_score({{0, 0, 10, 10}, {20, 20, 10, 10}}), 0.0);
  // Half of a and a quarter of b overlap: (0.5 + 0.25) / 2.
  EXPECT_DOUBLE_EQ(overlap_score({{0, 0, 10, 10}, {5, 0, 10, 20}}), (0.5 + 0.25) / 2);
  EXPECT_DOUBLE_EQ(max_iou({{0, 0, 10, 10}}, {Kind::Image}, {{0, 0, 10, 10}}, {Kind::Text}), 0.0);  // types must match
  EXPECT_DOUBLE_EQ(max_iou({{0, 0, 10, 10}}, {Kind::Text}, {{0, 0, 10, 10}}, {Kind::Text}), 1.0);
}

TEST(DesignBenchMetrics, RetrievalAtHandRanks) {
  EXPECT_DOUBLE_EQ(ndcg_at(1, 5), 1.0);
  EXPECT_DOUBLE_EQ(ndcg_at(3, 5), 0.5);
  EXPECT_DOUBLE_EQ(ndcg_at(6, 5), 0.0);
  EXPECT_DOUBLE_EQ(reciprocal_rank(4), 0.25);
}

// Sharma, Wu and Dalal (2005), "The CIEDE2000 color-difference formula: implementation notes,
// supplementary test data, and mathematical observations", Table 1: 34 pairs and their Delta E00.
TEST(DesignBenchMetrics, Ciede2000OnSharmasPublishedPairs) {
  struct Pair {
    Lab x, y;
    double de;
  };
  const Pair pairs[] = {
      {{50.0000, 2.6772, -79.7751}, {50.0000, 0.0000, -82.7485}, 2.0425},
      {{50.0000, 3.1571, -77.2803}, {50.0000, 0.0000, -82.7485}, 2.8615},
      {{50.0000, 2.8361, -74.0200}, {50.0000, 0.0000, -82.7485}, 3.4412},
      {{50.0000, -1.3802, -84.2814}, {50.0000, 0.0000, -82.7485}, 1.0000},
      {{50.0000, -1.1848, -84.8006}, {50.0000, 0.0000, -82.7485}, 1.0000},
      {{50.0000, -0.9009, -85.5211}, {50.0000, 0.0000, -82.7485}, 1.0000},
      {{50.0000, 0.0000, 0.0000}, {50.0000, -1.0000, 2.0000}, 2.3669},
      {{50.0000, -1.0000, 2.0000}, {50.0000, 0.0000, 0.0000}, 2.3669},
      {{50.0000, 2.4900, -0.0010}, {50.0000, -2.4900, 0.0009}, 7.1792},
      {{50.0000, 2.4900, -0.0010}, {50.0000, -2.4900, 0.0010}, 7.1792},
      {{50.0000, 2.4900, -0.0010}, {50.0000, -2.4900, 0.0011}, 7.2195},
      {{50.0000, 2.4900, -0.0010}, {50.0000, -2.4900, 0.0012}, 7.2195},
      {{50.0000, -0.0010, 2.4900}, {50.0000, 0.0009, -2.4900}, 4.8045},
      {{50.0000, -0.0010, 2.4900}, {50.0000, 0.0010, -2.4900}, 4.8045},
      {{50.0000, -0.0010, 2.4900}, {50.0000, 0.0011, -2.4900}, 4.7461},
      {{50.0000, 2.5000, 0.0000}, {50.0000, 0.0000, -2.5000}, 4.3065},
      {{50.0000, 2.5000, 0.0000}, {73.0000, 25.0000, -18.0000}, 27.1492},
      {{50.0000, 2.5000, 0.0000}, {61.0000, -5.0000, 29.0000}, 22.8977},
      {{50.0000, 2.5000, 0.0000}, {56.0000, -27.0000, -3.0000}, 31.9030},
      {{50.0000, 2.5000, 0.0000}, {58.0000, 24.0000, 15.0000}, 19.4535},
      {{50.0000, 2.5000, 0.0000}, {50.0000, 3.1736, 0.5854}, 1.0000},
      {{50.0000, 2.5000, 0.0000}, {50.0000, 3.2972, 0.0000}, 1.0000},
      {{50.0000, 2.5000, 0.0000}, {50.0000, 1.8634, 0.5757}, 1.0000},
      {{50.0000, 2.5000, 0.0000}, {50.0000, 3.2592, 0.3350}, 1.0000},
      {{60.2574, -34.0099, 36.2677}, {60.4626, -34.1751, 39.4387}, 1.2644},
      {{63.0109, -31.0961, -5.8663}, {62.8187, -29.7946, -4.0864}, 1.2630},
      {{61.2901, 3.7196, -5.3901}, {61.4292, 2.2480, -4.9620}, 1.8731},
      {{35.0831, -44.1164, 3.7933}, {35.0232, -40.0716, 1.5901}, 1.8645},
      {{22.7233, 20.0904, -46.6940}, {23.0331, 14.9730, -42.5619}, 2.0373},
      {{36.4612, 47.8580, 18.3852}, {36.2715, 50.5065, 21.2231}, 1.4146},
      {{90.8027, -2.0831, 1.4410}, {91.1528, -1.6435, 0.0447}, 1.4441},
      {{90.9257, -0.5406, -0.9208}, {88.6381, -0.8985, -0.7239}, 1.5381},
      {{6.7747, -0.2908, -2.4247}, {5.8714, -0.0985, -2.2286}, 0.6377},
      {{2.0776, 0.0795, -1.1350}, {0.9033, -0.0636, -0.5514}, 0.9082}};
  for (std::size_t i = 0; i < std::size(pairs); ++i) {
    EXPECT_NEAR(ciede2000(pairs[i].x, pairs[i].y), pairs[i].de, 1e-4) << "pair " << i + 1;
    EXPECT_NEAR(ciede2000(pairs[i].y, pairs[i].x), pairs[i].de, 1e-4) << "pair " << i + 1 << " swapped";
  }
}

TEST(DesignBenchMetrics, WcagContrastOfBlackOnWhiteIs21) {
  EXPECT_NEAR(wcag_contrast("#000000", "#ffffff"), 21.0, 1e-12);
  EXPECT_NEAR(wcag_contrast("#ffffff", "#ffffff"), 1.0, 1e-12);
  EXPECT_NEAR(wcag_contrast("#777777", "#ffffff"), 4.48, 0.01);  // WCAG's classic "just fails 4.5"
  const Lab white = srgb_to_lab(hex_to_rgb("#ffffff"));
  EXPECT_NEAR(white.l, 100, 1e-3);
  EXPECT_NEAR(white.a, 0, 1e-3);
}
