#pragma once
// The classifiers: L2-regularised logistic regression with sample weights (the base predictors and the
// oracle of exponentiated gradient), the reweightings, Hardt et al.'s post-processing, and Agarwal et
// al.'s exponentiated gradient.
#include <functional>
#include <vector>

#include <Eigen/Dense>

#include "data.hpp"

namespace stable_fairness {

// ---------------------------------------------------------------- logistic regression
// Minimises  sum_i v_i [log(1 + e^{z_i}) - y_i z_i] / sum_i v_i + (l2 / 2) ||w_{1..d-1}||^2,  z = X w,
// by Newton's method with backtracking (the last column, the intercept, is not penalised).
struct Logistic {
  Eigen::VectorXd w;
  Eigen::VectorXd score(const Eigen::MatrixXd& x) const { return x * w; }
  Eigen::VectorXd predict(const Eigen::MatrixXd& x) const;  // 0/1: score > 0
};
Logistic fit_logistic(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& weights, double l2,
                      const Eigen::VectorXd* warm = nullptr);

// ---------------------------------------------------------------- reweighting
// Kamiran and Calders (2012), reweighing: w(g, y) = P(g) P(y) / P(g, y), so that in the weighted sample
// group and label are independent.
Eigen::VectorXd reweighing_weights(const Sample& s);
// Sets the group composition within one label class: in the weighted sample P_w(y) = P(y),
// P_w(g | y = cls) = share[g], and P_w(g | y = 1 - cls) = P(g) (the overall composition).
// share = P(g) for both classes gives reweighing's weights.
Eigen::VectorXd composition_weights(const Sample& s, int cls, const std::vector<double>& share);
std::vector<double> group_shares(const Sample& s);

// ---------------------------------------------------------------- Hardt, Price, Srebro (2016)
// Equalised-odds post-processing of a score: per group a randomised rule whose (FPR, TPR) is a common
// point of every group's ROC region (the region under the convex hull of the ROC curve), the one of
// least error on the fitting sample. Group g predicts 1 with probability
//   lambda_g (q_g 1[s >= a_g] + (1 - q_g) 1[s >= b_g]) + (1 - lambda_g) f.
struct HardtRule {
  double a = 0, b = 0, q = 1, lambda = 1;
};
struct HardtPost {
  std::vector<HardtRule> rules;
  double fpr = 0, tpr = 0;  // the common point on the fitting sample
  Eigen::VectorXd predict(const Eigen::VectorXd& score, const std::vector<int>& g) const;  // probabilities
};
HardtPost fit_hardt(const Eigen::VectorXd& score, const std::vector<int>& y, const std::vector<int>& g, int groups,
                    int grid = 2001);

// ---------------------------------------------------------------- Agarwal et al. (2018)
// Exponentiated gradient for  min_Q err(Q)  s.t.  gamma(Q) <= eps  over randomised classifiers Q,
// with err(h) = err0 + sum_i cost_i h_i and gamma_j(h) = sum_i a_{j i} h_i linear in the predictions.
// Lagrangian L(Q, lambda) = err(Q) + lambda^T (gamma(Q) - eps), lambda >= 0, ||lambda||_1 <= B.
// Algorithm 1: theta += eta (gamma(h_t) - eps); lambda = B exp(theta) / (1 + sum exp(theta)); h_t the best
// response to lambda; stop when the duality gap nu_t of the averages (Q-hat, lambda-hat) is <= nu.
struct EgOptions {
  double bound = 0;  // B; 0: 1 / eps
  double eta = 2.0;  // theta's step is eta / B (as fairlearn)
  int iterations = 50;
  double nu = 1e-3;
};
struct EgResult {
  std::vector<double> weights;  // Q-hat: one weight per best_response call, in call order (sum 1)
  int iterations = 0;
  double gap = 0;  // nu of the returned pair
};
// best_response(c) returns the predictions (0/1) of the oracle's classifier for per-example costs c
// (predicting 1 on example i costs c_i); the caller keeps the classifiers in call order.
using BestResponse = std::function<Eigen::VectorXd(const Eigen::VectorXd& cost)>;
EgResult exponentiated_gradient(double err0, const Eigen::VectorXd& cost, const Eigen::MatrixXd& a, double eps,
                                const EgOptions& o, const BestResponse& best_response);
// fairlearn's last step after Algorithm 1: over the classifiers h_1..h_T it called (predictions, n x T),
// the mixture q of least error with every moment within eps,
//     min_q cost^T H q  s.t.  a H q <= eps,  q in the simplex   (an LP, solved by socp.hpp),
// or an empty vector when no mixture of them meets the constraints strictly (eps > 0: the solver is a
// barrier method and needs an interior point).
Eigen::VectorXd eg_final_lp(const Eigen::MatrixXd& h, const Eigen::VectorXd& cost, const Eigen::MatrixXd& a, double eps);
// The moments of demographic parity (+-(E[h | g] - E[h])) and of equalised odds (+-(E[h | g, y] - E[h | y]))
// as rows a_j of gamma(h) = a_j . h on a sample.
Eigen::MatrixXd dp_moments(const Sample& s);
Eigen::MatrixXd eo_moments(const Sample& s);

}  // namespace stable_fairness
