// Dense decompositions of the SDK (nexp/linalg.hpp): the one place where Eigen's decomposition
// templates are compiled.
#include "nexp/linalg.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "nexp/error.hpp"

namespace nexp::linalg {

namespace {

void check_square(const char* where, const Matrix& a) {
  if (a.rows() != a.cols())
    throw Error(fmt::format("linalg::{}: expected a square matrix; found {} x {}", where, a.rows(), a.cols()));
}

void check_finite(const char* where, const char* what, const Eigen::Ref<const Matrix>& a) {
  if (a.allFinite()) return;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      if (!std::isfinite(a(i, j)))
        throw Error(fmt::format("linalg::{}: {} ({} x {}) has a non-finite entry, {} at ({}, {}); expected finite "
                                "numbers",
                                where, what, a.rows(), a.cols(), a(i, j), i, j));
}

void check_rows(const char* where, Eigen::Index expected, Eigen::Index found) {
  if (expected != found)
    throw Error(fmt::format("linalg::{}: the right-hand side has {} rows; expected {} (the matrix's rows)", where,
                            found, expected));
}

}  // namespace

// ---------------------------------------------------------------- symmetric eigenproblem

SymmetricEigen symmetric_eigen(const Matrix& a) {
  check_square("symmetric_eigen", a);
  check_finite("symmetric_eigen", "the matrix", a);
  const Eigen::SelfAdjointEigenSolver<Matrix> es(a);
  if (es.info() != Eigen::Success)
    throw Error(fmt::format("linalg::symmetric_eigen: the QR iteration did not converge on the {} x {} matrix "
                            "(largest |entry| {})",
                            a.rows(), a.cols(), a.cwiseAbs().maxCoeff()));
  return {es.eigenvalues(), es.eigenvectors()};
}

// ---------------------------------------------------------------- LDLT

struct Ldlt::Factor {
  Eigen::LDLT<Matrix> ldlt;
  bool ok = false;
};

Ldlt::Ldlt(const Matrix& a) {
  check_square("Ldlt", a);
  check_finite("Ldlt", "the matrix", a);
  factor_ = std::make_unique<Factor>();
  auto& l = factor_->ldlt;
  l.compute(a);
  // Eigen's solve treats a pivot of magnitude <= the smallest normal double as zero.
  const bool nonzero = a.rows() == 0 || l.vectorD().cwiseAbs().minCoeff() > std::numeric_limits<double>::min();
  factor_->ok = l.info() == Eigen::Success && (l.isPositive() || l.isNegative()) && nonzero;
}

Ldlt::~Ldlt() = default;
Ldlt::Ldlt(Ldlt&&) noexcept = default;
Ldlt& Ldlt::operator=(Ldlt&&) noexcept = default;

bool Ldlt::ok() const { return factor_->ok; }

double Ldlt::rcond() const { return factor_->ok ? factor_->ldlt.rcond() : 0.0; }

namespace {

void check_solvable(const Eigen::LDLT<Matrix>& l, bool ok, Eigen::Index rhs_rows) {
  check_rows("Ldlt::solve", l.rows(), rhs_rows);
  if (ok) return;
  const auto d = l.vectorD();
  const bool indefinite = !l.isPositive() && !l.isNegative();
  throw Error(fmt::format("linalg::Ldlt::solve: the {} x {} matrix is {}; LDLT solves definite systems only (smallest "
                          "|pivot| {}, largest {}). Regularise it (add a multiple of the identity) or use a "
                          "least-squares solve",
                          l.rows(), l.rows(), indefinite ? "indefinite (pivots of both signs)" : "singular (a zero pivot)",
                          d.cwiseAbs().minCoeff(), d.cwiseAbs().maxCoeff()));
}

}  // namespace

Vector Ldlt::solve(const Vector& b) const {
  check_solvable(factor_->ldlt, factor_->ok, b.rows());
  return factor_->ldlt.solve(b);
}

Matrix Ldlt::solve(const Matrix& b) const {
  check_solvable(factor_->ldlt, factor_->ok, b.rows());
  return factor_->ldlt.solve(b);
}

// ---------------------------------------------------------------- least squares

Vector least_squares(const Matrix& x, const Vector& y) {
  check_rows("least_squares", x.rows(), y.rows());
  check_finite("least_squares", "the design matrix", x);
  check_finite("least_squares", "the response", y);
  return x.completeOrthogonalDecomposition().solve(y);
}

// ---------------------------------------------------------------- small systems

namespace {

template <int N>
using Fixed = Eigen::Map<const Eigen::Matrix<double, N, N>>;

}  // namespace

double determinant(const Matrix& a) {
  check_square("determinant", a);
  check_finite("determinant", "the matrix", a);
  if (a.rows() == 2) return Fixed<2>(a.data()).determinant();
  if (a.rows() == 3) return Fixed<3>(a.data()).determinant();
  if (a.rows() == 0) return 1.0;
  return a.partialPivLu().determinant();
}

Matrix inverse(const Matrix& a) {
  check_square("inverse", a);
  check_finite("inverse", "the matrix", a);
  Matrix out;
  if (a.rows() == 2)
    out = Eigen::Matrix2d(Fixed<2>(a.data()).inverse());
  else if (a.rows() == 3)
    out = Eigen::Matrix3d(Fixed<3>(a.data()).inverse());
  else
    out = a.partialPivLu().inverse();
  if (!out.allFinite())
    throw Error(fmt::format("linalg::inverse: the {} x {} matrix is singular (its inverse has infinite or NaN "
                            "entries; determinant {}); regularise it or solve by least squares",
                            a.rows(), a.cols(), determinant(a)));
  return out;
}

}  // namespace nexp::linalg
