// core/src/linalg.cpp (nexp/linalg.hpp) against closed forms, naive references (Gauss-Jordan
// elimination, cofactor expansion, the normal equations) and invariants (A v = lambda v, residuals).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "nexp/error.hpp"
#include "nexp/linalg.hpp"
#include "nexp/random.hpp"

using namespace nexp;
using namespace nexp::linalg;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Matrix random_matrix(Random& rng, Eigen::Index rows, Eigen::Index cols) {
  Matrix m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = rng.normal();
  return m;
}

Vector random_vector(Random& rng, Eigen::Index n) { return random_matrix(rng, n, 1).col(0); }

// A symmetric positive definite matrix with eigenvalues spread over [1, ~n^2].
Matrix random_spd(Random& rng, Eigen::Index n) {
  const Matrix b = random_matrix(rng, n, n);
  return b.transpose() * b + Matrix::Identity(n, n);
}

// The inverse by Gauss-Jordan elimination with partial pivoting, written out.
Matrix naive_inverse(Matrix a) {
  const Eigen::Index n = a.rows();
  Matrix inv = Matrix::Identity(n, n);
  for (Eigen::Index k = 0; k < n; ++k) {
    Eigen::Index p = k;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (std::abs(a(i, k)) > std::abs(a(p, k))) p = i;
    a.row(k).swap(a.row(p));
    inv.row(k).swap(inv.row(p));
    const double pivot = a(k, k);
    a.row(k) /= pivot;
    inv.row(k) /= pivot;
    for (Eigen::Index i = 0; i < n; ++i) {
      if (i == k) continue;
      const double f = a(i, k);
      a.row(i) -= f * a.row(k);
      inv.row(i) -= f * inv.row(k);
    }
  }
  return inv;
}

// det(a) by cofactor expansion along the first row.
double naive_determinant(const Matrix& a) {
  const Eigen::Index n = a.rows();
  if (n == 1) return a(0, 0);
  double det = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    Matrix minor(n - 1, n - 1);
    for (Eigen::Index r = 1; r < n; ++r)
      for (Eigen::Index c = 0, cc = 0; c < n; ++c)
        if (c != j) minor(r - 1, cc++) = a(r, c);
    det += (j % 2 == 0 ? 1 : -1) * a(0, j) * naive_determinant(minor);
  }
  return det;
}

double max_abs(const Matrix& m) { return m.cwiseAbs().maxCoeff(); }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const nexp::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// ---------------------------------------------------------------- symmetric eigenproblem

TEST(LinalgSymmetricEigen, TwoByTwoClosedForm) {
  Matrix a(2, 2);
  a << 2, 1, 1, 2;
  const SymmetricEigen e = symmetric_eigen(a);
  EXPECT_NEAR(e.values(0), 1.0, 1e-15);
  EXPECT_NEAR(e.values(1), 3.0, 1e-15);
  const double r = 1 / std::sqrt(2.0);
  EXPECT_NEAR(std::abs(e.vectors(0, 0)), r, 1e-15);
  EXPECT_NEAR(e.vectors(0, 0), -e.vectors(1, 0), 1e-15);  // (1, -1) / sqrt 2 for 1
  EXPECT_NEAR(e.vectors(0, 1), e.vectors(1, 1), 1e-15);   // (1, 1) / sqrt 2 for 3
}

TEST(LinalgSymmetricEigen, EigenpairsOfARandomMatrixReadFromTheLowerTriangle) {
  Random rng(11);
  const Eigen::Index n = 7;
  Matrix b = random_matrix(rng, n, n);
  const Matrix a = b + b.transpose();  // symmetric, indefinite
  Matrix lower = a;
  lower.triangularView<Eigen::StrictlyUpper>().setConstant(1e6);  // never read
  const SymmetricEigen e = symmetric_eigen(lower);
  ASSERT_EQ(e.values.size(), n);
  ASSERT_EQ(e.vectors.rows(), n);
  ASSERT_EQ(e.vectors.cols(), n);
  EXPECT_LT(e.values(0), 0.0);
  EXPECT_GT(e.values(n - 1), 0.0);
  for (Eigen::Index k = 0; k < n; ++k) {
    if (k > 0) {
      EXPECT_LE(e.values(k - 1), e.values(k)) << "ascending";
    }
    const Vector v = e.vectors.col(k);
    EXPECT_LT((a * v - e.values(k) * v).norm(), 1e-12 * max_abs(a)) << "A v = lambda v, k = " << k;
  }
  EXPECT_LT(max_abs(e.vectors.transpose() * e.vectors - Matrix::Identity(n, n)), 1e-13) << "orthonormal";
  EXPECT_NEAR(e.values.sum(), a.trace(), 1e-12 * max_abs(a) * n);
}

TEST(LinalgSymmetricEigen, RefusesWhatIsNotASymmetricMatrix) {
  EXPECT_NE(error_of([] { symmetric_eigen(Matrix::Zero(2, 3)); }).find("square matrix; found 2 x 3"), std::string::npos);
  Matrix a = Matrix::Identity(3, 3);
  a(2, 1) = kNaN;
  EXPECT_NE(error_of([&] { symmetric_eigen(a); }).find("non-finite entry, nan at (2, 1)"), std::string::npos);
}

// ---------------------------------------------------------------- LDLT

TEST(LinalgLdlt, SolvesManyRightHandSidesOfAPositiveDefiniteSystem) {
  Random rng(3);
  const Eigen::Index n = 6;
  const Matrix a = random_spd(rng, n);
  Matrix lower = a;
  lower.triangularView<Eigen::StrictlyUpper>().setConstant(-7.0);  // never read
  const Ldlt f(lower);
  ASSERT_TRUE(f.ok());
  const Vector b = random_vector(rng, n);
  const Vector x = f.solve(b);
  EXPECT_LT((a * x - b).norm(), 1e-12 * b.norm() * max_abs(a));
  // Every column at once: the solve of the identity is the inverse, so the factors reproduce A.
  const Matrix inv = f.solve(Matrix(Matrix::Identity(n, n)));
  EXPECT_LT(max_abs(inv - naive_inverse(a)), 1e-12 * max_abs(inv));
  EXPECT_LT(max_abs(naive_inverse(inv) - a), 1e-10 * max_abs(a)) << "L D L^T = A";
  // rcond: Hager's estimate of |A^-1|_1 is a lower bound, exact on most small matrices.
  const double truth = 1 / (a.cwiseAbs().colwise().sum().maxCoeff() * inv.cwiseAbs().colwise().sum().maxCoeff());
  EXPECT_GE(f.rcond(), truth * (1 - 1e-12));
  EXPECT_LE(f.rcond(), 3 * truth);
}

TEST(LinalgLdlt, SolvesANegativeDefiniteSystem) {
  Random rng(4);
  const Matrix a = -random_spd(rng, 5);
  Ldlt f(a);
  ASSERT_TRUE(f.ok());
  const Vector b = random_vector(rng, 5);
  EXPECT_LT((a * f.solve(b) - b).norm(), 1e-12 * b.norm() * max_abs(a));
  const Ldlt moved = std::move(f);
  EXPECT_TRUE(moved.ok());
  EXPECT_LT((a * moved.solve(b) - b).norm(), 1e-12 * b.norm() * max_abs(a));
}

TEST(LinalgLdlt, RefusesIndefiniteAndSingularMatrices) {
  Matrix indefinite(2, 2);
  indefinite << 1, 0, 0, -1;
  const Ldlt fi(indefinite);
  EXPECT_FALSE(fi.ok());
  EXPECT_EQ(fi.rcond(), 0.0);
  EXPECT_NE(error_of([&] { fi.solve(Vector(Vector::Ones(2))); }).find("indefinite (pivots of both signs)"),
            std::string::npos);
  Matrix singular(2, 2);
  singular << 1, 1, 1, 1;  // positive semi-definite, rank 1: the second pivot is exactly 0
  const Ldlt fs(singular);
  EXPECT_FALSE(fs.ok());
  EXPECT_EQ(fs.rcond(), 0.0);
  EXPECT_NE(error_of([&] { fs.solve(Matrix(Matrix::Ones(2, 3))); }).find("singular (a zero pivot)"), std::string::npos);
  EXPECT_FALSE(Ldlt(Matrix::Zero(3, 3)).ok());
}

TEST(LinalgLdlt, NearlySingularIsSolvedAndFlaggedByRcond) {
  Matrix a(2, 2);
  a << 1, 1, 1, 1 + 1e-14;
  const Ldlt f(a);
  EXPECT_TRUE(f.ok());
  EXPECT_GT(f.rcond(), 0.0);
  EXPECT_LT(f.rcond(), 1e-13);
}

TEST(LinalgLdlt, RefusesBadArguments) {
  EXPECT_NE(error_of([] { Ldlt(Matrix::Zero(3, 2)); }).find("linalg::Ldlt: expected a square matrix"), std::string::npos);
  Matrix a = Matrix::Identity(2, 2);
  a(1, 0) = INFINITY;
  EXPECT_NE(error_of([&] { Ldlt{a}; }).find("non-finite entry, inf at (1, 0)"), std::string::npos);
  const Ldlt f(Matrix(Matrix::Identity(3, 3)));
  EXPECT_NE(error_of([&] { f.solve(Vector(Vector::Ones(2))); }).find("has 2 rows; expected 3"), std::string::npos);
  const Ldlt empty{Matrix(0, 0)};
  EXPECT_TRUE(empty.ok());
  EXPECT_EQ(empty.solve(Vector(0)).size(), 0);
}

// ---------------------------------------------------------------- least squares

TEST(LinalgLeastSquares, SatisfiesTheNormalEquationsOfAFullRankProblem) {
  Random rng(5);
  const Matrix x = random_matrix(rng, 20, 4);
  const Vector y = random_vector(rng, 20);
  const Vector b = least_squares(x, y);
  EXPECT_LT((x.transpose() * (x * b - y)).norm(), 1e-12 * x.norm() * y.norm()) << "X^T (X b - y) = 0";
  const Vector normal = naive_inverse(x.transpose() * x) * (x.transpose() * y);
  EXPECT_LT((b - normal).norm(), 1e-11 * normal.norm());
  const Vector b0 = random_vector(rng, 4);
  EXPECT_LT((least_squares(x, x * b0) - b0).norm(), 1e-12 * b0.norm()) << "an exact fit is recovered";
}

TEST(LinalgLeastSquares, GivesTheMinimumNormSolutionOfARankDeficientProblem) {
  Random rng(6);
  const Vector u = random_vector(rng, 15), w = random_vector(rng, 15), y = random_vector(rng, 15);
  Matrix x(15, 3);
  x << u, u, w;  // rank 2: the first two columns are one
  const Vector b = least_squares(x, y);
  // The fit is that of [u, w]; the minimum-norm solution splits u's weight equally.
  Matrix reduced(15, 2);
  reduced << u, w;
  const Vector c = naive_inverse(reduced.transpose() * reduced) * (reduced.transpose() * y);
  EXPECT_NEAR(b(0), c(0) / 2, 1e-12);
  EXPECT_NEAR(b(1), c(0) / 2, 1e-12);
  EXPECT_NEAR(b(2), c(1), 1e-12);
}

TEST(LinalgLeastSquares, GivesTheMinimumNormSolutionOfAnUnderdeterminedProblem) {
  Random rng(7);
  const Matrix x = random_matrix(rng, 2, 5);
  const Vector y = random_vector(rng, 2);
  const Vector b = least_squares(x, y);
  const Vector reference = x.transpose() * (naive_inverse(x * x.transpose()) * y);  // X^T (X X^T)^-1 y
  EXPECT_LT((b - reference).norm(), 1e-12 * reference.norm());
}

TEST(LinalgLeastSquares, RefusesBadArguments) {
  EXPECT_NE(error_of([] { least_squares(Matrix::Zero(4, 2), Vector::Zero(3)); }).find("has 3 rows; expected 4"),
            std::string::npos);
  Matrix x = Matrix::Ones(3, 2);
  x(0, 1) = kNaN;
  EXPECT_NE(error_of([&] { least_squares(x, Vector::Zero(3)); }).find("the design matrix (3 x 2) has a non-finite"),
            std::string::npos);
  Vector y = Vector::Zero(3);
  y(2) = -INFINITY;
  EXPECT_NE(error_of([&] { least_squares(Matrix::Ones(3, 2), y); }).find("the response (3 x 1) has a non-finite"),
            std::string::npos);
}

// ---------------------------------------------------------------- determinant and inverse

TEST(LinalgSmallSystems, TwoByTwoClosedForms) {
  Matrix a(2, 2);
  a << 4, 7, 2, 6;
  EXPECT_DOUBLE_EQ(determinant(a), 10.0);
  Matrix expected(2, 2);
  expected << 0.6, -0.7, -0.2, 0.4;
  EXPECT_LT(max_abs(inverse(a) - expected), 1e-15);
}

TEST(LinalgSmallSystems, AgreeWithCofactorsAndGaussJordanUpToSixBySix) {
  Random rng(8);
  for (Eigen::Index n : {1, 3, 4, 6}) {
    const Matrix a = random_matrix(rng, n, n);
    const double det = naive_determinant(a);
    const double hadamard = a.colwise().norm().prod();  // |det| <= the product of the column norms
    EXPECT_NEAR(determinant(a), det, 1e-13 * hadamard) << n;
    const Matrix inv = inverse(a);
    EXPECT_LT(max_abs(inv - naive_inverse(a)), 1e-11 * max_abs(inv)) << n;
    EXPECT_LT(max_abs(a * inv - Matrix::Identity(n, n)), 1e-12 * max_abs(a) * max_abs(inv)) << n;
  }
  EXPECT_EQ(determinant(Matrix(0, 0)), 1.0);
}

TEST(LinalgSmallSystems, SingularMatricesHaveDeterminantZeroAndNoInverse) {
  Matrix two(2, 2);
  two << 1, 2, 2, 4;
  EXPECT_EQ(determinant(two), 0.0);
  EXPECT_NE(error_of([&] { inverse(two); }).find("the 2 x 2 matrix is singular"), std::string::npos);
  Random rng(9);
  Matrix five = random_matrix(rng, 5, 5);
  five.col(2).setZero();
  EXPECT_EQ(determinant(five), 0.0);
  EXPECT_NE(error_of([&] { inverse(five); }).find("the 5 x 5 matrix is singular"), std::string::npos);
  EXPECT_NE(error_of([] { determinant(Matrix::Zero(2, 1)); }).find("linalg::determinant: expected a square matrix"),
            std::string::npos);
  EXPECT_NE(error_of([] { inverse(Matrix::Constant(3, 3, kNaN)); }).find("non-finite entry"), std::string::npos);
}
