#include "lp.hpp"

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
    T.row(row) /= T(row, col);
    for (int i = 0; i <= m; ++i)
      if (i != row && T(i, col) != 0.0) T.row(i) -= T(i, col) * T.row(row);
    basis[static_cast<std::size_t>(row)] = col;
  }

  // Maximises the objective row over columns < allowed; false when unbounded.
  bool optimise(int allowed, double tol) {
    for (;;) {
      int col = -1;
      for (int j = 0; j < allowed; ++j)
        if (T(m, j) < -tol) {  // Bland: the first improving column
          col = j;
          break;
        }
      if (col < 0) return true;
      int row = -1;
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < m; ++i) {
        if (T(i, col) <= tol) continue;
        const double ratio = T(i, n) / T(i, col);
        if (ratio < best - 1e-15 || (ratio <= best + 1e-15 && row >= 0 && basis[i] < basis[row])) {
          best = ratio;
          row = i;
        }
      }
      if (row < 0) return false;
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
  if (-t.T(m, t.n) > 1e-8) return out;  // the artificials could not reach zero
  // Drive artificials out of the basis where a real column can replace them (else the row is redundant).
  for (int i = 0; i < m; ++i) {
    if (t.basis[static_cast<std::size_t>(i)] < nx) continue;
    for (int j = 0; j < nx; ++j)
      if (std::abs(t.T(i, j)) > 1e-9) {
        t.pivot(i, j);
        break;
      }
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
