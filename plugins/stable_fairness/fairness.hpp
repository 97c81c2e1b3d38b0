#pragma once
// Fairness as stability under shifts of group composition: the prediction-rate functionals, their
// Lipschitz constants, the mixture of reweighted predictors and its certificate.
//
// Rates. For a (randomised) classifier h and groups g = 1..G, the group rates r_g = P(h = 1 | g) and,
// within a label class, r_{g|y} = P(h = 1 | g, y). At group composition pi (a point of the simplex)
// the overall prediction rate is the linear functional
//     R(pi; h) = sum_g pi_g r_g(h)                                                           (1)
// (within class y: R_y(pi) = sum_g pi_g r_{g|y}). Its Lipschitz constant over the simplex is
//     l2:  sup_{pi != pi'} |R(pi) - R(pi')| / ||pi - pi'||_2 = ||P r||_2,   P = I - 1 1^T / G   (2)
//     TV:  sup |R(pi) - R(pi')| / TV(pi, pi') = max_g r_g - min_g r_g                       (3)
// (TV(pi, pi') = ||pi - pi'||_1 / 2). For two groups (2) is |r_1 - r_0| / sqrt(2) and (3) the
// demographic-parity gap |r_1 - r_0|. The notions are the perturbations:
//     dp: composition of the whole population, one functional (1);
//     eo: composition within each label class, two functionals; the constant is the larger;
//     eopp: composition within the positive class only.
// Guarantee (uniform in the test composition): |R(pi) - R(pi')| <= L ||pi - pi'|| for all pi, pi'.
//
// Mixture. Base predictors h_1..h_K; the randomised mixture h_alpha draws h_k with probability alpha_k,
// so its rates are linear, r(h_alpha) = sum_k alpha_k r(h_k), and with D_b = P [r_b(h_1) .. r_b(h_K)]
//     min_alpha sum_k alpha_k L_k  s.t.  alpha in the simplex,  ||D_b alpha||_2 <= tau  (each block b)   (4)
// a second-order cone program (under TV: the linear rows (r_{b,g} - r_{b,g'})^T alpha <= tau, an LP).
// L_k and D are estimated on the validation sample.
//
// Certificate. With probability >= 1 - delta, every validation rate of every base predictor is within
//     e_{b,g} = sqrt((1/n^val_{b,g} + 1/n^test_{b,g}) log(2 K N / delta) / 2)                   (5)
// of its rate on an independent test sample (Hoeffding for a difference of two means, union bound over
// the K predictors and the N = sum_b G rates). Rates are linear in alpha, so the bound holds for every
// alpha at once (the worst case is a vertex), and the test constant is at most the validation constant
// plus  max_b sup_{|u_g| <= e_{b,g}} ||P u||_2  (l2; a vertex of the box, enumerated) or  max_b max_{g != g'} (e_{b,g} + e_{b,g'})  (TV).
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nexp/random.hpp>

#include "data.hpp"
#include "models.hpp"
#include "socp.hpp"

namespace stable_fairness {

enum class Notion { DP, EO, EOPP };
enum class Norm { L2, TV };

// The label class of each block of a notion: -1 the whole population, else y.
std::vector<int> notion_blocks(Notion n);
// rates(g, b): the mean of pred over the members of group g in block b (pred: 0/1 or probabilities).
Eigen::MatrixXd group_rates(const Sample& s, const Eigen::VectorXd& pred, Notion n);
// (2) or (3), the larger over the blocks.
double lipschitz_constant(const Eigen::MatrixXd& rates, Norm norm);
// The classical gaps: max - min over groups of P(h = 1 | g); equalised odds the larger of the TPR and
// FPR gaps.
double dp_gap(const Sample& s, const Eigen::VectorXd& pred);
double eo_gap(const Sample& s, const Eigen::VectorXd& pred);
double accuracy(const Sample& s, const Eigen::VectorXd& pred);  // expected accuracy of a randomised h
Eigen::MatrixXd centering(int groups);                          // P = I - 1 1^T / G

// The base predictors: logistic regressions trained with composition_weights(); for dp and eopp the
// composition within the positive class is set to each grid point, for eo within each class in turn;
// the first predictor is the unweighted one.
struct BaseOptions {
  std::vector<double> shares = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  double l2 = 1e-3;
};
struct BasePredictors {
  std::vector<Logistic> models;
  std::vector<std::string> names;
  Eigen::MatrixXd val, test;  // predictions, n x K
};
// The target compositions: for two groups, group 1's share s; for G groups, group j's share s and the
// others in their observed proportions.
std::vector<std::vector<double>> composition_grid(const std::vector<double>& observed, const std::vector<double>& shares);
BasePredictors train_base(const Split& split, Notion notion, const BaseOptions& o);

// Program (4) for validation predictions (n x K).
ConeProgram mixture_program(const Sample& val, const Eigen::MatrixXd& pred, Notion notion, Norm norm, double tau);
// The confidence term of (5).
double confidence_term(const Sample& val, const Sample& test, Notion notion, Norm norm, int K, double delta);

// A randomised mixture: each example gets predictor k with probability alpha_k.
Eigen::VectorXd sample_mixture(const Eigen::MatrixXd& pred, const Eigen::VectorXd& alpha, nexp::Random& rng);

// The test sample resampled to compositions s (group j's share against group j' for each pair, within
// each block of the notion): the positive rate and accuracy of pred at each, and the fitted slope of
// the rate in the norm's units (TV: d rate / d s; l2: divided by sqrt 2).
struct ShiftPoint {
  int block = -1, g0 = 0, g1 = 1;
  double share = 0, rate = 0, accuracy = 0;
};
struct ShiftResult {
  std::vector<ShiftPoint> points;
  double slope = 0, slope_low = 0, slope_high = 0;  // the steepest pair, with its 95% interval
};
ShiftResult composition_shift(const Sample& test, const Eigen::VectorXd& pred, Notion notion, Norm norm,
                              nexp::Random& rng, int points, int draws);

}  // namespace stable_fairness
