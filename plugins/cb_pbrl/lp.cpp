#include "lp.hpp"

#include <nexp/error.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace cb_pbrl {

namespace {

// The tableau T (rows 0..m-1 constraints, row m the reduced costs of the objective to maximise;
// last column the right-hand side) with basis[i] the variable of row i.
struct Tableau {
  Eigen::MatrixXd T;
  std::vector<int> basis;
  int m = 0, n = 0;  // constraints, variables (the right-hand side is column n)

  void pivot(int row, int col) {
    const double p = T(row, col);
    T.row(row) /= p;
    const Eigen::RowVectorXd pivot_row = T.row(row);
    for (int i = 0; i <= m; ++i) {
      const double f = T(i, col);
      if (i != row && f != 0.0) T.row(i) -= f * pivot_row;
    }
    basis[static_cast<std::size_t>(row)] = col;
  }

  // Maximises the objective row over columns < allowed; false when unbounded. Dantzig's rule (the most
  // negative reduced cost) with the largest pivot among near-tied ratios; after many pivots without
  // progress it switches to Bland's rule (the first improving column, the smallest basic index), which
  // cannot cycle.
  bool optimise(int allowed, double tol) {
    int stalled = 0;
    bool bland = false;
    for (int iteration = 0;; ++iteration) {
      if (iteration > 100000) throw nexp::Error("simplex: no optimum after 100000 pivots (numerical cycling)");
      bland = bland || stalled > 50;  // once degenerate, Bland's rule to the end
      int col = -1;
      double most = -tol;
      for (int j = 0; j < allowed; ++j)
        if (T(m, j) < most) {
          col = j;
          most = T(m, j);
          if (bland) break;
        }
      if (col < 0) return true;
      int row = -1;
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < m; ++i) {
        if (T(i, col) <= tol) continue;
        const double ratio = std::max(0.0, T(i, n)) / T(i, col);
        const bool tie = row >= 0 && ratio <= best + 1e-12;
        if (ratio < best - 1e-12 || (tie && (bland ? basis[i] < basis[row] : T(i, col) > T(row, col)))) {
          best = std::min(best, ratio);
          row = i;
        }
      }
      if (row < 0) return false;
      stalled = best > 1e-12 ? 0 : stalled + 1;
      pivot(row, col);
    }
  }
};

}  // namespace

LpResult simplex_max(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& c, double tol) {
  const int m = static_cast<int>(A.rows()), nx = static_cast<int>(A.cols());
  Tableau t;
  t.m = m;
  t.n = nx + m;
  t.T = Eigen::MatrixXd::Zero(m + 1, t.n + 1);
  t.basis.resize(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    const double sign = b(i) < 0 ? -1.0 : 1.0;
    t.T.row(i).head(nx) = sign * A.row(i);
    t.T(i, nx + i) = 1.0;
    t.T(i, t.n) = sign * b(i);
    t.basis[static_cast<std::size_t>(i)] = nx + i;
  }
  // Phase 1: maximise -sum(artificials); its reduced costs are minus the column sums.
  for (int i = 0; i < m; ++i) t.T.row(m) -= t.T.row(i);
  for (int i = 0; i < m; ++i) t.T(m, nx + i) = 0.0;
  t.optimise(t.n, tol);
  LpResult out;
  if (std::abs(t.T(m, t.n)) > 1e-8) return out;  // the artificials could not reach zero
  // Drive artificials out of the basis where a real column can replace them (else the row is redundant).
  for (int i = 0; i < m; ++i) {
    if (t.basis[static_cast<std::size_t>(i)] < nx) continue;
    Eigen::Index j = 0;
    if (nx > 0 && t.T.row(i).head(nx).cwiseAbs().maxCoeff(&j) > 1e-9) t.pivot(i, static_cast<int>(j));
  }
  // Phase 2 over the real columns: reduced costs -c, made zero on the basis.
  t.T.row(m).setZero();
  t.T.row(m).head(nx) = -c.transpose();
  for (int i = 0; i < m; ++i) {
    const int j = t.basis[static_cast<std::size_t>(i)];
    if (j < nx && t.T(m, j) != 0.0) t.T.row(m) -= t.T(m, j) * t.T.row(i);
  }
  if (!t.optimise(nx, tol)) {
    out.status = LpResult::Status::Unbounded;
    return out;
  }
  out.status = LpResult::Status::Optimal;
  out.x = Eigen::VectorXd::Zero(nx);
  for (int i = 0; i < m; ++i)
    if (t.basis[static_cast<std::size_t>(i)] < nx) out.x(t.basis[static_cast<std::size_t>(i)]) = t.T(i, t.n);
  out.objective = c.dot(out.x);
  return out;
}

}  // namespace cb_pbrl
