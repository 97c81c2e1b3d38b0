#pragma once
// Sample-quality metrics: generated samples x against reference samples y (rows are samples).
//
//  - mmd: multi-bandwidth RBF maximum mean discrepancy (Gretton et al. 2012), the V-statistic
//      MMD^2 = mean k(x, x') + mean k(y, y') - 2 mean k(x, y),  k = sum_b exp(-|u - v|^2 / (2 h_b^2)),
//    reported as sqrt(max(MMD^2, 0)); bandwidths h_b = bandwidth_scale * {1/8, 1/4, 1/2, 1, 2}.
//    Expectation for Gaussians in closed form: mmd2_expected_gaussian().
//  - sliced_w2: sqrt of the mean over L random unit directions of the squared 1-D Wasserstein-2
//    distance between the projections (sorted samples, equal sizes; Bonneel et al. 2015).
//    For N(m1, s1^2 I) and N(m2, s2^2 I) in d dims: SW2^2 = |m1 - m2|^2 / d + (s1 - s2)^2.
//  - mode coverage and precision (mixtures): a sample is "good" when its Mahalanobis distance to its
//    nearest component is <= 3; precision = share of good samples; coverage = share of components that
//    receive at least a quarter of their expected share (w_k n / 4) of good samples.
//  - k-NN precision and recall (Kynkaanniemi et al. 2019, k = 3): precision = share of generated
//    samples inside some reference sample's k-NN ball; recall the same with the roles swapped.
//  - frechet: |m1 - m2|^2 + tr(S1 + S2 - 2 (S1^(1/2) S2 S1^(1/2))^(1/2)) of the fitted Gaussians
//    (Heusel et al. 2017), in whatever features it is given.
#include <nexp/random.hpp>

#include <vector>

#include "mixture.hpp"
#include "sampler.hpp"

namespace fds {

std::vector<double> mmd_bandwidths(double scale);
double mmd2(const Mat& x, const Mat& y, const std::vector<double>& bandwidths);
double mmd(const Mat& x, const Mat& y, const std::vector<double>& bandwidths);
// E[V-statistic] for x ~ N(m1, v1 I) (n samples), y ~ N(m2, v2 I) (m samples), |m1 - m2| = delta, d dims.
double mmd2_expected_gaussian(double delta, double v1, double v2, int d, std::size_t n, std::size_t m,
                              const std::vector<double>& bandwidths);

double sliced_w2(const Mat& x, const Mat& y, int directions, nexp::Random& rng);

struct ModeStats {
  double coverage = 0, precision = 0;
};
ModeStats mode_stats(const Mat& x, const Mixture& m);

struct PrecisionRecall {
  double precision = 0, recall = 0;
};
PrecisionRecall knn_precision_recall(const Mat& generated, const Mat& reference, int k = 3);

double frechet(const Mat& x, const Mat& y);
double frechet_gaussian(const Eigen::VectorXd& m1, const Eigen::MatrixXd& s1, const Eigen::VectorXd& m2,
                        const Eigen::MatrixXd& s2);

}  // namespace fds
