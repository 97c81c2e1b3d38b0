#pragma once
// An interior-point (log-barrier, path-following) solver for the program of the mixture:
//
//   min_alpha  c^T alpha   s.t.  alpha in the simplex (alpha >= 0, 1^T alpha = 1),
//                                ||M_j alpha||_2 <= tau_j        (second-order cones, j = 1..J)
//                                A alpha <= b                     (linear rows: the TV-norm form)
//
// Each cone is used in the smooth convex form ||M_j alpha||^2 - tau_j^2 <= 0. Phase I minimises the
// largest violation s over (alpha, s) from the uniform mixture; a program whose phase-I optimum is not
// below zero is reported infeasible, with that optimum. Phase II follows the central path
// min t c^T alpha - sum log(-f_i(alpha)) with Newton steps on the equality-constrained KKT system
//   [H 1; 1^T 0] [dx; w] = [-grad; 0],
// t *= mu until the duality gap m / t is below `gap`. Boyd and Vandenberghe (2004), sections 11.3-11.4.
// The duals: those of the central point, lambda_i = -1 / (t f_i) and nu = w / t, with the active
// constraints' multipliers and nu refitted by least squares on c + sum_i lambda_i grad f_i + nu 1 = 0
// (socp.cpp says why); the KKT residuals are reported with them.
#include <functional>
#include <vector>

#include <Eigen/Dense>

namespace stable_fairness {

struct ConeProgram {
  Eigen::VectorXd c;
  std::vector<Eigen::MatrixXd> cones;  // M_j, each with K columns
  std::vector<double> tau;             // tau_j
  Eigen::MatrixXd a;                   // linear rows (K columns; may have 0 rows)
  Eigen::VectorXd b;
};

struct SolverOptions {
  double gap = 1e-10;  // stop when m / t is below this
  double mu = 20;      // t's growth per outer step
  int max_newton = 200;
};

struct ConeSolution {
  bool feasible = false;
  Eigen::VectorXd alpha;
  double objective = 0;
  double phase1 = 0;  // phase I's optimum (the smallest achievable largest violation, squared for cones)
  int newton_steps = 0;
  // Duals at the returned point.
  Eigen::VectorXd lambda_nonneg;  // of -alpha_k <= 0
  std::vector<double> lambda_cone;  // of ||M_j alpha||^2 - tau_j^2 <= 0
  Eigen::VectorXd lambda_linear;
  double nu = 0;  // of 1^T alpha = 1
  // KKT residuals: stationarity (inf-norm of the Lagrangian's gradient), primal feasibility (largest
  // constraint violation, 0 when strictly feasible), complementarity (largest |lambda_i f_i|).
  double stationarity = 0, primal = 0, complementarity = 0;
};

ConeSolution solve_cone_program(const ConeProgram& p, const SolverOptions& o = {});

}  // namespace stable_fairness
