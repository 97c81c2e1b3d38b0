#pragma once
// Tabular constrained MDPs and their exact solvers.
//
// A CMDP (Altman 1999) here: states s = 0..S-1, actions a = 0..A-1, sparse transitions P(s'|s,a),
// state rewards r(s) and costs c(s) >= 0 collected at every step spent in s, a start distribution mu0
// and a discount gamma. For a policy pi:
//   J_f(pi) = mu0^T V_f,  V_f = (I - gamma P_pi)^{-1} f,   P_pi(s, s') = sum_a pi(a|s) P(s'|s,a)       (1)
//   d_pi = (I - gamma P_pi)^{-T} mu0  (discounted occupancy), J_f = d_pi^T f.
// The constrained problem max_pi J_r(pi) s.t. J_c(pi) <= d.
//
// Entropy-regularised lower level (soft value iteration), for u = r - lam c and temperature alpha > 0:
//   Q(s,a) = u(s) + gamma sum_s' P(s'|s,a) V(s'),  V(s) = alpha log sum_a exp(Q(s,a) / alpha)          (2)
//   pi(a|s) = exp((Q(s,a) - V(s)) / alpha)                                                          (3)
// and the dual ascent lam <- max(0, lam + eta (J_c(pi) - d)).                                        (4)
// alpha = 0 is the hard Bellman equation (max over a), used by the oracle's cross-check.
//
// The oracle: the occupancy LP (Altman 1999, Thm 3.3)
//   max_x sum_{s,a} x(s,a) r(s)  s.t.  sum_a x(s',a) - gamma sum_{s,a} P(s'|s,a) x(s,a) = mu0(s'),
//                                       sum_{s,a} x(s,a) c(s) <= d,  x >= 0                          (5)
// with pi(a|s) = x(s,a) / sum_b x(s,b); and the same value by strong duality as
//   min_{lam >= 0} g(lam),  g(lam) = max_pi J_{r - lam c}(pi) + lam d  (convex, piecewise linear)      (6)
#include <Eigen/Core>
#include <Eigen/LU>

#include <string>
#include <vector>

namespace cb_pbrl {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Transition {
  int next = 0;
  double p = 0;
};

struct Cmdp {
  int S = 0, A = 0;
  double gamma = 0.95;
  std::vector<std::vector<Transition>> P;  // index s * A + a
  VectorXd r, c, mu0;
  const std::vector<Transition>& next(int s, int a) const { return P[static_cast<std::size_t>(s * A + a)]; }
  void validate() const;  // stochastic rows, sizes; throws nexp::Error
};

// P_pi of (1), dense S x S.
MatrixXd policy_transition(const Cmdp& m, const MatrixXd& pi);

// Exact evaluation of one policy: the LU of I - gamma P_pi, reused for values and occupancy.
class PolicyEval {
 public:
  PolicyEval(const Cmdp& m, const MatrixXd& pi);
  VectorXd values(const VectorXd& f) const;  // V_f of (1)
  VectorXd adjoint(const VectorXd& y) const;  // (I - gamma P_pi)^{-T} y
  const VectorXd& occupancy() const { return occupancy_; }
  double value(const VectorXd& f) const { return occupancy_.dot(f); }  // J_f of (1)

 private:
  Eigen::PartialPivLU<MatrixXd> lu_;
  VectorXd occupancy_;
};

// One backup of (2) on Q (S x A), with V computed from Q; alpha = 0: hard max.
MatrixXd soft_backup(const Cmdp& m, const VectorXd& u, const MatrixXd& Q, double alpha);
VectorXd soft_value(const MatrixXd& Q, double alpha);
MatrixXd soft_policy(const MatrixXd& Q, double alpha);  // (3); alpha = 0: greedy, ties to the first action
double bellman_residual(const Cmdp& m, const VectorXd& u, const MatrixXd& Q, double alpha);  // max |T Q - Q|

// The fixed point of (2) by soft policy iteration (exact evaluation, then a softmax improvement) and a
// final polish of backups, to max residual tol (1 + max abs Q). Warm-started from Q when its shape fits.
MatrixXd solve_soft_q(const Cmdp& m, const VectorXd& u, double alpha, double tol, MatrixXd Q = {});

// The lower level solved exactly: lam* = 0 when J_c(pi_0) <= d, else the root of J_c(pi_lam) = d
// (J_c decreases in lam), found by safeguarded regula falsi to |J_c - d| <= tol. When no lam up to 1e8
// meets d (d below the least cost under c) the solution at that lam is returned.
struct LowerSolution {
  MatrixXd Q, pi;
  double lam = 0, Jc = 0;
};
LowerSolution solve_lower(const Cmdp& m, const VectorXd& r, const VectorXd& c, double d, double alpha, double tol,
                          const LowerSolution* warm = nullptr);

// (5) by the dense simplex of lp.hpp. Throws nexp::Error when infeasible.
struct CmdpOptimum {
  MatrixXd x, pi;  // occupancy, policy (uniform where a state is never visited)
  double Jr = 0, Jc = 0;
};
CmdpOptimum solve_occupancy_lp(const Cmdp& m, double d);
// The optimum of (5) without the LP (used when the simplex cycles numerically on a degenerate LP): the
// mixture q x(pi_lo) + (1 - q) x(pi_hi) of the greedy policies on either side of lam* of (6), q chosen
// so that the cost is d (an optimal CMDP policy randomises between them; Altman 1999).
MatrixXd mixture_occupancy(const Cmdp& m, double d);
// (5) as a CPLEX-format LP (variables x_<s>_<a>, rows flow_<s> and cost), for cross-checks with other solvers.
std::string occupancy_lp_text(const Cmdp& m, double d);

// (6) by bisection on lam with hard policy iteration: lam* and the dual value g(lam*) (= the LP's optimum).
struct DualOptimum {
  double lam = 0, value = 0;
};
DualOptimum solve_dual_bisection(const Cmdp& m, double d, double lam_max = 1e3, int iterations = 200);

// min_pi J_c(pi) (hard value iteration on -c): the least achievable cost.
double least_cost(const Cmdp& m);

}  // namespace cb_pbrl
