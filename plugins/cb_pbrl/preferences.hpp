#pragma once
// Simulated preference queries and the Bradley-Terry likelihoods of the upper level.
//
// A segment sigma is L consecutive states of a rollout (L in [segment_min, segment_max], cut at a uniform
// offset of a horizon-long rollout from mu0); n_sigma(s) counts its visits to s, so its return and cost
// under tabular r, c are linear: R(sigma) = n_sigma . r, C(sigma) = n_sigma . c. Both segments of a pair
// have the same length (Christiano et al. 2017). Each pair is shown once and gets three kinds of label
// (as in Safe RLHF's annotation, Dai et al. 2024):
//   better: P(sigma1 > sigma2) = sigmoid(beta (U(sigma1) - U(sigma2))),
//           U = R - lam_E C (utility labels) or U = R (reward labels)                              (7)
//   safer:  P(sigma1 safer)    = sigmoid(beta (C(sigma2) - C(sigma1)))                               (8)
//   unsafe: P(sigma_i unsafe)  = sigmoid(beta (C(sigma_i) - tau)),  one per segment                  (9)
// (9) pins the cost's per-step offset, which equal-length comparisons (8) leave free. noise_free labels
// are the sign of the same logits (ties: 1/2).
//
// The model's negative log-likelihood, mean over queries of the three binary cross-entropies
//   F(r, c, lam) = BCE(beta n_delta.(r - lam c), y_better) + BCE(-beta n_delta.c, y_safer)
//                + sum_i BCE(beta (n_i.c - tau), y_unsafe_i),       n_delta = n_1 - n_2               (10)
// (the reward-coupled model uses n_delta.r in the first term; the unconstrained one only that term).
#include <cmath>
#include <vector>

#include <nexp/random.hpp>

#include "cmdp.hpp"

namespace cb_pbrl {

// The logistic function 1 / (1 + e^-z), without overflow for either sign of z.
inline double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

struct Query {
  VectorXd n1, n2;  // visit counts of the two segments
  double better = 0.5, safer = 0.5, unsafe1 = 0.5, unsafe2 = 0.5;  // labels in [0, 1]
};

struct LabelModel {
  double beta = 10;
  double tau = 0.5;
  bool utility = true;  // better labels from U = R - lam C, else from R
  bool noise_free = false;
  bool soft = false;  // labels are the probabilities themselves (the population objective)
};

// Which model the learner fits to the labels.
enum class Coupling {
  Lagrangian,     // U = R - lam*(th, ph) C in (7), all three terms
  Reward,         // U = R in (7), all three terms (Safe RLHF's separate models)
  RewardOnly,     // (7) with U = R alone: unconstrained PbRL
};

// A policy to roll out: a matrix of action probabilities, or uniform when null.
struct Source {
  const MatrixXd* pi = nullptr;
  double weight = 1;
};

VectorXd sample_segment(const Cmdp& m, const MatrixXd* pi, int horizon, int length, nexp::Random& rng);
// `count` pairs, each segment's source drawn by weight, labelled by the truth (r, c, lam) of `m`.
std::vector<Query> sample_queries(const Cmdp& m, const std::vector<Source>& sources, int count, int horizon,
                                  int segment_min, int segment_max, double true_lam, const LabelModel& labels,
                                  nexp::Random& rng);
// Labels a query from the truth.
void label_query(Query& q, const VectorXd& r, const VectorXd& c, double lam, const LabelModel& labels,
                 nexp::Random& rng);

// (10) and its partial derivatives in r, c and lam.
struct Likelihood {
  double F = 0;
  VectorXd dr, dc;
  double dlam = 0;
};
Likelihood likelihood(const std::vector<Query>& queries, const VectorXd& r, const VectorXd& c, double lam,
                      Coupling coupling, const LabelModel& model);

// Held-out accuracy of the signs of (7) and (8) against noise-free truth, true ties left out.
double better_accuracy(const std::vector<Query>& queries, const VectorXd& r_true, const VectorXd& c_true,
                       double lam_true, bool utility, const VectorXd& r, const VectorXd& c, double lam);
double safer_accuracy(const std::vector<Query>& queries, const VectorXd& c_true, const VectorXd& c);

}  // namespace cb_pbrl
