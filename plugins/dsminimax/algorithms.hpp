#pragma once
// The decentralized methods, each written once against a Network (network.hpp).
//
// Node k keeps x_k, y_k, gradient trackers s^x_k, s^y_k and its last local gradient estimate d_k;
// DS-GDA also the auxiliaries z_k, v_k. One iteration, one communication round (W applied to
// [X Y S^x S^y], plus [Z V] with aux: mixed):
//
//   x_k+ = (W X)_k - eta_x ( s^x_k + r1 (x_k - z_k) )          grad_x of f + r1/2 ||x - z||^2
//   y_k+ = Proj_Y[ (W Y)_k + eta_y ( s^y_k - r2 (y_k - v_k) ) ]  grad_y of f - r2/2 ||y - v||^2
//   z_k+ = z_k + beta (x_k+ - z_k),  v_k+ = v_k + mu (y_k+ - v_k)   (local: no extra round)
//   d_k+ = g_k(x_k+, y_k+; xi)                    (GT-GDA, DS-GDA)
//        = g_k(x+; xi) + (1 - b)(d_k - g_k(x; xi))   (DM-HSGD's and DM-GDA's hybrid (STORM) estimator,
//                                                    one sample, two points)
//        = g_k(x+; xi) - g_k(x; xi) + d_k           (DREAM's recursive (SARAH) estimator), and every
//          q-th iteration the exact local gradient g_k(x+) (its large batch; charged as
//          exact_gradient_cost calls)
//   s_k+ = (W S)_k + d_k+ - d_k                   (gradient tracking: mean_k s_k = mean_k d_k always)
//
// ds_gda: eta_x = eta_y and r1, r2 > 0 (the doubly smoothed method; with M = 1 it is the centralized
// DS-GDA of Zheng et al. 2023, with r1 = r2 = 0 it is GT-GDA at ratio 1).
// gt_gda: r1 = r2 = 0, eta_x = eta_y / ratio (two-timescale GDA with gradient tracking).
// dm_hsgd: gt_gda with the hybrid estimator (Xian, Huang, Zhang, Huang, NeurIPS 2021).
// dream: gt_gda with the recursive estimator and its periodic exact refresh (Chen, Ye, Luo, AISTATS
//   2024; one gossip round per iteration, without its multi-round FastMix).
// dm_gda: gt_gda with the hybrid estimator and momentum in the iterates (Huang, Chen 2023): the GT-GDA
//   step gives (x~, y~), and x+ = x + theta (x~ - x), y+ = y + theta (y~ - y) (y+ stays in Y, a convex set).
#include <cstdint>
#include <vector>

#include <nexp/random.hpp>

#include "network.hpp"
#include "problems.hpp"

namespace dsminimax {

enum class Algorithm { DsGda, GtGda, DmHsgd, Dream, DmGda };

struct StepSizes {
  double eta_x = 0, eta_y = 0;
  double r1 = 0, r2 = 0, beta = 0, mu = 0;  // smoothing (DS-GDA only)
  double hybrid = 1;                         // b of the hybrid estimator; 1: plain stochastic gradient
  int refresh = 20;                          // DREAM: exact local gradients every `refresh` iterations
  double momentum = 1;                       // DM-GDA's theta; 1: no momentum in the iterates
  bool aux_mixed = false;                    // z, v gossiped with x, y
};

// The frozen parameter rules (README: "The parameter rule"). L, mu (the PL constant) and the gap come
// from the problem and the graph; the constants were fixed at kappa = 10 and not changed afterwards.
StepSizes ds_gda_rule(double L, double mu, double gap);
StepSizes gt_gda_rule(double L, double mu, double gap, double ratio);  // ratio <= 0: the theory's kappa^2

class Decentralized {
 public:
  // Node k's oracle draws from Random::stream(seed, "node", k) in every back end.
  Decentralized(const Problem& problem, Network& network, Algorithm algorithm, const StepSizes& steps,
                std::uint64_t seed, const Vector& x0);
  void step();
  std::int64_t iteration() const { return t_; }
  std::int64_t grad_calls() const { return grad_calls_; }  // local gradient evaluations of this process's nodes
  struct Average {
    Vector mean;       // xbar
    double consensus;  // (1/M) sum_k ||x_k - xbar||^2
  };
  Average average();  // one gather of X over the network
  Vector mean_x() { return average().mean; }
  double consensus_error() { return average().consensus; }
  const Matrix& x() const { return x_; }
  const Matrix& y() const { return y_; }
  const Matrix& tracker_x() const { return sx_; }
  const Matrix& estimate_x() const { return dx_; }
  const Matrix& tracker_y() const { return sy_; }
  const Matrix& estimate_y() const { return dy_; }
  bool finite() const { return x_.allFinite() && y_.allFinite(); }

 private:
  void estimate(const Matrix& x_new, const Matrix& y_new);
  const Problem& p_;
  Network& net_;
  Algorithm algorithm_;
  StepSizes s_;
  std::vector<nexp::Random> rng_;
  Matrix x_, y_, z_, v_, sx_, sy_, dx_, dy_;
  Matrix pack_, mixed_;
  std::int64_t t_ = 0, grad_calls_ = 0;
};

// The centralized DS-GDA of Zheng et al. 2023 on f = (1/M) sum_k f_k with exact gradients, written
// directly from its update rule (the M = 1 reference of the tests).
struct CentralState {
  Vector x, y, z, v;
};
void central_ds_gda_step(const Problem& problem, const StepSizes& s, CentralState& st);

}  // namespace dsminimax
