#include "basis.hpp"

#include <fmt/format.h>
#include <nexp/error.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace functional_reg {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Cox-de Boor: the order p B-spline N_{i,p} (or its d-th derivative) at t, on knot vector u.
double bspline(const std::vector<double>& u, int i, int p, double t, int d) {
  if (d > 0) {
    if (p == 0) return 0.0;
    double v = 0.0;
    const double a = u[i + p] - u[i], b = u[i + p + 1] - u[i + 1];
    if (a > 0) v += p / a * bspline(u, i, p - 1, t, d - 1);
    if (b > 0) v -= p / b * bspline(u, i + 1, p - 1, t, d - 1);
    return v;
  }
  if (p == 0) {
    const double last = u.back();
    // Half-open intervals [u_i, u_i+1), except the last non-empty one, which is closed at 1.
    if (t >= u[i] && t < u[i + 1]) return 1.0;
    return (t == last && u[i + 1] == last && u[i] < last) ? 1.0 : 0.0;
  }
  double v = 0.0;
  const double a = u[i + p] - u[i], b = u[i + p + 1] - u[i + 1];
  if (a > 0) v += (t - u[i]) / a * bspline(u, i, p - 1, t, 0);
  if (b > 0) v += (u[i + p + 1] - t) / b * bspline(u, i + 1, p - 1, t, 0);
  return v;
}

}  // namespace

BSplineBasis::BSplineBasis(int size) : size_(size) {
  if (size < 4)
    throw nexp::ConfigError(fmt::format("a cubic B-spline basis needs at least 4 functions; found {}", size));
  const int intervals = size - 3;
  knots_.assign(3, 0.0);
  for (int k = 0; k <= intervals; ++k) knots_.push_back(static_cast<double>(k) / intervals);
  knots_.insert(knots_.end(), 3, 1.0);
}

Matrix BSplineBasis::evaluate(const std::vector<double>& t, int derivative) const {
  Matrix phi(static_cast<Eigen::Index>(t.size()), size_);
  for (std::size_t j = 0; j < t.size(); ++j) {
    const double s = std::clamp(t[j], 0.0, 1.0);
    for (int m = 0; m < size_; ++m) phi(static_cast<Eigen::Index>(j), m) = bspline(knots_, m, 3, s, derivative);
  }
  return phi;
}

void BSplineBasis::quadrature(std::vector<double>& t, std::vector<double>& w, int subdivisions) const {
  // 4-point Gauss-Legendre on [-1, 1]: exact for degree <= 7.
  static const double x[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526};
  static const double v[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};
  const int pieces = (size_ - 3) * subdivisions;
  for (int k = 0; k < pieces; ++k) {
    const double a = static_cast<double>(k) / pieces, b = static_cast<double>(k + 1) / pieces;
    for (int q = 0; q < 4; ++q) {
      t.push_back(0.5 * (a + b) + 0.5 * (b - a) * x[q]);
      w.push_back(0.5 * (b - a) * v[q]);
    }
  }
}

Matrix BSplineBasis::roughness() const {
  std::vector<double> t, w;
  quadrature(t, w);
  const Matrix d2 = evaluate(t, 2);
  const Eigen::Map<const Vector> weights(w.data(), static_cast<Eigen::Index>(w.size()));
  return d2.transpose() * weights.asDiagonal() * d2;
}

Matrix BSplineBasis::gram() const {
  std::vector<double> t, w;
  quadrature(t, w);
  const Matrix phi = evaluate(t);
  const Eigen::Map<const Vector> weights(w.data(), static_cast<Eigen::Index>(w.size()));
  return phi.transpose() * weights.asDiagonal() * phi;
}

Matrix BSplineBasis::gram_with(const std::function<Vector(double)>& values, int k) const {
  // The other function need not be a polynomial: 16 pieces per knot interval, 4 nodes each.
  std::vector<double> t, w;
  quadrature(t, w, 16);
  const Matrix phi = evaluate(t);
  Matrix g = Matrix::Zero(size_, k);
  for (std::size_t q = 0; q < t.size(); ++q)
    g += w[q] * phi.row(static_cast<Eigen::Index>(q)).transpose() * values(t[q]).transpose();
  return g;
}

Matrix fourier(const std::vector<double>& t, int k) {
  Matrix psi(static_cast<Eigen::Index>(t.size()), k);
  for (std::size_t j = 0; j < t.size(); ++j)
    for (int c = 0; c < k; ++c) {
      const int freq = (c + 1) / 2;
      const auto r = static_cast<Eigen::Index>(j);
      psi(r, c) = c == 0 ? 1.0
                 : (c % 2 == 1) ? std::sqrt(2.0) * std::cos(2 * kPi * freq * t[j])
                                : std::sqrt(2.0) * std::sin(2 * kPi * freq * t[j]);
    }
  return psi;
}

Vector fit_curve(const BSplineBasis& basis, const Matrix& roughness, double lambda, const std::vector<double>& t,
                 const std::vector<double>& x, const std::string& curve) {
  const std::set<double> distinct(t.begin(), t.end());
  const auto needed = static_cast<std::size_t>(lambda > 0 ? 2 : basis.size());
  if (distinct.size() < needed)
    throw nexp::DataError(fmt::format(
        "curve {} has {} distinct points; fitting {} B-spline coefficients {} needs at least {}. {}", curve,
        distinct.size(), basis.size(), lambda > 0 ? "with a roughness penalty" : "without a penalty (params.penalty = 0)",
        needed,
        lambda > 0 ? "Drop the curve or give it more points."
                   : "Set a penalty (e.g. params.penalty: 1e-6), lower params.M, or give the curve more points."));
  const Matrix phi = basis.evaluate(t);
  const Eigen::Map<const Vector> xv(x.data(), static_cast<Eigen::Index>(x.size()));
  const Matrix a = phi.transpose() * phi + lambda * roughness;
  Eigen::LDLT<Matrix> ldlt(a);
  if (ldlt.info() != Eigen::Success || ldlt.rcond() < 1e-13)
    throw nexp::DataError(fmt::format("curve {}: the penalised spline system is singular ({} points, {} basis "
                                      "functions, penalty {}); raise params.penalty or lower params.M",
                                      curve, x.size(), basis.size(), lambda));
  return ldlt.solve(phi.transpose() * xv);
}

Matrix Fpca::scores(const Matrix& coefficients, const Matrix& gram) const {
  return (coefficients.rowwise() - mean.transpose()) * gram * directions;
}

Fpca fit_fpca(const Matrix& coefficients, const Matrix& gram, int components) {
  Fpca f;
  f.mean = coefficients.colwise().mean().transpose();
  const Matrix centred = coefficients.rowwise() - f.mean.transpose();
  const Matrix cov = centred.transpose() * centred / static_cast<double>(coefficients.rows());
  Eigen::SelfAdjointEigenSolver<Matrix> wsolve(gram);
  const Matrix half = wsolve.operatorSqrt(), inv_half = wsolve.operatorInverseSqrt();
  Eigen::SelfAdjointEigenSolver<Matrix> es(half * cov * half);
  const int k = std::min<int>(components, static_cast<int>(gram.rows()));
  f.directions.resize(gram.rows(), k);
  f.eigenvalues.resize(k);
  for (int c = 0; c < k; ++c) {  // Eigen sorts ascending
    const Eigen::Index idx = gram.rows() - 1 - c;
    f.eigenvalues(c) = es.eigenvalues()(idx);
    f.directions.col(c) = inv_half * es.eigenvectors().col(idx);
  }
  return f;
}

}  // namespace functional_reg
