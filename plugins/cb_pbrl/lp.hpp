#pragma once
// A small dense two-phase simplex (tableau form; Dantzig pricing with the largest pivot among tied ratios,
// Bland's rule after a run of degenerate pivots, so it cannot cycle):
//   max c^T x  s.t.  A x = b,  x >= 0.
// Phase 1 minimises the sum of one artificial variable per row (rows with b < 0 are negated first);
// phase 2 optimises c from the feasible basis. Sized for the occupancy LPs of this plugin (a few hundred
// variables); O(rows x columns) per pivot.
#include <Eigen/Core>

namespace cb_pbrl {

struct LpResult {
  enum class Status { Optimal, Infeasible, Unbounded } status = Status::Infeasible;
  Eigen::VectorXd x;
  double objective = 0;
};

LpResult simplex_max(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& c,
                     double tol = 1e-9);

}  // namespace cb_pbrl
