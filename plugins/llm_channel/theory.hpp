#pragma once
// The closed forms (nexp's derivations; where the paper's expressions differ, README.md says so).
//
// (T1) Uniform against quality-weighted averaging. Branches y_i = theta + n_i, n_i ~ N(0, 1 / p_i);
//      weights w_i = p_i + e_i from a noisy quality estimate, e_i ~ N(0, tau^2). To first order in N:
//          MSE_uniform  = 1 / (N HM)
//          MSE_weighted = (AM + tau^2 / HM) / (N AM^2)
//      (AM, HM: arithmetic and harmonic means of the p_i), so uniform wins iff
//          tau^2 > tau*^2 = AM (AM - HM);   equal precisions: any noise favours uniform.
// (T2) Generator-critic refinement with break rate a and fix rate b: the accuracy map
//          c_{t+1} = b + (1 - a - b) c_t,   c_t = c* + (1 - a - b)^t (c_0 - c*),   c* = b / (a + b),
//      a contraction with constant |1 - a - b| <= 1. Refinement helps iff c* > c_0 and hurts iff
//      c* < c_0; it oscillates when a + b > 1. For graded scores q' = q* + kappa (q - q*): |kappa| > 1
//      diverges from q*.
// (T3) Plurality voting over n samples of a K-way answer distribution p (the right answer is 0),
//      ties broken uniformly: exact by enumerating the multinomial counts (Chen et al. 2024: over a
//      mix of easy items, p_0 > max_k p_k, and hard ones, p_0 < max_k p_k, the accuracy is not
//      monotone in n).
#include <vector>

#include <nexp/random.hpp>

namespace llm_channel {

// ---- T1
struct Means {
  double arithmetic = 0, harmonic = 0;
};
Means precision_means(const std::vector<double>& precisions);
double mse_uniform_first_order(const std::vector<double>& precisions);
double mse_weighted_first_order(const std::vector<double>& precisions, double tau);
double tau_star(const std::vector<double>& precisions);

struct AveragingMse {
  double uniform = 0, weighted = 0;
  double uniform_se = 0, weighted_se = 0, difference_se = 0;  // Monte Carlo standard errors
};
// Monte Carlo over `replicas` draws; both estimators see the same branch noise (common random
// numbers), so their difference is estimated far more precisely than either.
AveragingMse averaging_mse_monte_carlo(const std::vector<double>& precisions, double tau, int replicas,
                                       nexp::Random& rng);

// ---- T2
double refinement_fixed_point(double break_rate, double fix_rate);
double refinement_accuracy(double c0, double break_rate, double fix_rate, int rounds);

// ---- T3
double plurality_accuracy_exact(const std::vector<double>& p, int n);

}  // namespace llm_channel
