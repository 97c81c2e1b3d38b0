#pragma once
// Dense decompositions of Eigen matrices, compiled once into libnexp_core: a symmetric eigensolver,
// LDLT for many right-hand sides, minimum-norm least squares, and the determinant and inverse of
// small matrices. Eigen's decompositions are templates that cost tens of CPU-seconds to compile; a
// file that includes this header instead needs <Eigen/Core> only. The results are Eigen's own
// algorithms, bit for bit (the same code, compiled with the same flags), so moving a caller here
// changes no number; only what Eigen would return unflagged for bad input (NaN, an indefinite or
// singular LDLT) becomes an error.
//
// Conventions, the same for every function here:
//  - Matrices are Eigen::MatrixXd, vectors Eigen::VectorXd (double, column-major, dynamic size).
//  - A symmetric input is read from its lower triangle; the upper one is not looked at.
//  - An argument that cannot be meant (a matrix that is not square, sizes that do not match, an entry
//    that is NaN or infinite) throws nexp::Error naming the function, what was expected and what was
//    found. So does a decomposition that does not exist (an exactly singular or indefinite matrix where
//    a definite one is needed): the caller gets an error, never a vector of NaN or of garbage.
//  - A nearly singular input is not an error (no threshold suits every caller): each decomposition
//    says how to detect it (rcond(), the determinant).
//
// Users link Eigen3::Eigen (header-only, Debian's libeigen3-dev) for <Eigen/Core>. Matrices cross
// the library boundary, so a user compiles with core's flags (nexp_target_defaults: no -march, hence
// the same Eigen alignment and allocator on both sides).
#include <Eigen/Core>

#include <memory>

#include "nexp/export.hpp"

namespace nexp::linalg {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;

// ---------------------------------------------------------------- symmetric eigenproblem

// a = V diag(values) V^T for a symmetric a (n x n), by Householder tridiagonalisation and the
// implicit symmetric QR iteration (Eigen::SelfAdjointEigenSolver). values ascending; column k of
// vectors is a unit eigenvector of values(k), the columns orthonormal. Eigenvalues of any sign (an
// indefinite or singular a is fine). Throws nexp::Error when a is not square, has a non-finite entry,
// or the QR iteration does not converge.
struct SymmetricEigen {
  Vector values;   // n, ascending
  Matrix vectors;  // n x n
};
NEXP_API SymmetricEigen symmetric_eigen(const Matrix& a);

// ---------------------------------------------------------------- LDLT

// P^T L D L^T P = a for a symmetric definite a (n x n, positive or negative): Cholesky with symmetric
// pivoting and without square roots (Eigen::LDLT), computed once, then any number of solves of a x = b
// in O(n^2) each. The constructor throws nexp::Error when a is not square or has a non-finite entry;
// an indefinite or exactly singular a is reported by ok(), and solve() refuses it (LDLT with 1 x 1
// pivots is not stable on indefinite matrices, and Eigen would quietly zero the solution's component
// at a zero pivot).
class NEXP_API Ldlt {
 public:
  explicit Ldlt(const Matrix& a);
  ~Ldlt();
  Ldlt(Ldlt&&) noexcept;
  Ldlt& operator=(Ldlt&&) noexcept;

  // The factorisation exists, D's pivots have one sign and none is zero: a is definite. False when a
  // is indefinite (pivots of both signs) or exactly singular (a zero pivot). A nearly singular a is
  // ok(): see rcond().
  bool ok() const;
  // An estimate of the reciprocal condition number of a in the 1-norm (Eigen's, from the
  // factorisation): near machine epsilon (~1e-16) means a solve has lost every digit. 0 when !ok().
  double rcond() const;
  // x = a^-1 b, for one right-hand side or for every column of b. Throws nexp::Error when !ok() or
  // when b's row count is not n.
  Vector solve(const Vector& b) const;
  Matrix solve(const Matrix& b) const;

 private:
  struct Factor;
  std::unique_ptr<Factor> factor_;
};

// ---------------------------------------------------------------- least squares

// The minimum-norm least-squares solution b of x b ~ y (x: n x p, any n and p, any rank): among the b
// that minimise |x b - y|, the one of least |b|. By the complete orthogonal decomposition x P = Q [T 0;
// 0 0] Z (Eigen::CompleteOrthogonalDecomposition: column-pivoted Householder QR, then Householder
// reflections that zero the trailing columns of R). The rank is decided by the QR's pivots: those
// below |largest pivot| * epsilon * min(n, p) count as zero, so exactly collinear columns share the
// weight (the pseudo-inverse solution) instead of blowing up. Throws nexp::Error when y's size is not
// n or an entry of x or y is not finite.
NEXP_API Vector least_squares(const Matrix& x, const Vector& y);

// ---------------------------------------------------------------- small systems

// det(a) for a square a: closed forms for 2 x 2 and 3 x 3 (cofactor expansion, as Eigen's fixed-size
// matrices compute it), LU with partial pivoting beyond (the product of U's diagonal and the
// permutation's sign). 0 for a singular a (up to rounding); 1 for the 0 x 0 matrix. Throws
// nexp::Error when a is not square or has a non-finite entry.
NEXP_API double determinant(const Matrix& a);

// a^-1 for a square a: the adjugate over the determinant for 2 x 2 and 3 x 3 (Eigen's fixed-size
// closed forms), LU with partial pivoting beyond. For a solve, prefer Ldlt (symmetric) or a
// decomposition; this is for small systems whose inverse entries are wanted themselves. Throws
// nexp::Error when a is not square, has a non-finite entry, or is exactly singular (an inverse
// entry comes out infinite or NaN). A nearly singular a gives large entries: check determinant()
// against the scale of a first where that matters.
NEXP_API Matrix inverse(const Matrix& a);

}  // namespace nexp::linalg
