#include "basis.hpp"

#include <fmt/format.h>
#include <nexp/error.hpp>
#include <nexp/linalg.hpp>

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
  const nexp::linalg::Ldlt ldlt(a);
  if (!ldlt.ok() || ldlt.rcond() < 1e-13)
    throw nexp::DataError(fmt::format("curve {}: the penalised spline system is singular ({} points, {} basis "
                                      "functions, penalty {}); raise params.penalty or lower params.M",
                                      curve, x.size(), basis.size(), lambda));
  return ldlt.solve(Vector(phi.transpose() * xv));
}

Matrix Fpca::scores(const Matrix& coefficients, const Matrix& gram) const {
  return (coefficients.rowwise() - mean.transpose()) * gram * directions;
}

Fpca fit_fpca(const Matrix& coefficients, const Matrix& gram, int components) {
  Fpca f;
  f.mean = coefficients.colwise().mean().transpose();
  const Matrix centred = coefficients.rowwise() - f.mean.transpose();
  const Matrix cov = centred.transpose() * centred / static_cast<double>(coefficients.rows());
  // W^1/2 and W^-1/2 from W = V diag(w) V^T (as Eigen's operatorSqrt and operatorInverseSqrt form them).
  const nexp::linalg::SymmetricEigen w = nexp::linalg::symmetric_eigen(gram);
  const Matrix half = w.vectors * w.values.cwiseSqrt().asDiagonal() * w.vectors.transpose();
  const Matrix inv_half = w.vectors * w.values.cwiseInverse().cwiseSqrt().asDiagonal() * w.vectors.transpose();
  const nexp::linalg::SymmetricEigen es = nexp::linalg::symmetric_eigen(half * cov * half);
  const int k = std::min<int>(components, static_cast<int>(gram.rows()));
  f.directions.resize(gram.rows(), k);
  f.eigenvalues.resize(k);
  for (int c = 0; c < k; ++c) {  // ascending: the largest last
    const Eigen::Index idx = gram.rows() - 1 - c;
    f.eigenvalues(c) = es.values(idx);
    f.directions.col(c) = inv_half * es.vectors.col(idx);
  }
  return f;
}


// ---------------------------------------------------------------- PACE

namespace {

// Pooled observations binned to the grid: per bin the count w and the sums s of y and s2 of y^2.
struct Bins {
  Matrix w, s, s2;  // G x 1 (one-dimensional) or G x G
  explicit Bins(Eigen::Index g, Eigen::Index cols) : w(Matrix::Zero(g, cols)), s(w), s2(w) {}
  void add(Eigen::Index a, Eigen::Index b, double y) { w(a, b) += 1, s(a, b) += y, s2(a, b) += y * y; }
};

struct Smooth {
  Matrix fit;
  double gcv = INFINITY;  // infinite where some grid point had too little data in its window
};

int bin_of(double t, int g) { return static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * (g - 1))); }

double epanechnikov(double u) { return std::abs(u) < 1 ? 0.75 * (1 - u * u) : 0.0; }

// Linear interpolation of grid values f (equally spaced on [0, 1]) at t.
double interpolate(const Eigen::Ref<const Vector>& f, double t) {
  const double u = std::clamp(t, 0.0, 1.0) * static_cast<double>(f.size() - 1);
  const Eigen::Index i = std::min<Eigen::Index>(static_cast<Eigen::Index>(u), f.size() - 2);
  const double a = u - static_cast<double>(i);
  return (1 - a) * f(i) + a * f(i + 1);
}

// GCV of a linear smoother of binned data: residual sum of squares of every observation (from the bin
// sums) over N, divided by (1 - trace / N)^2; `self` is the weight of one observation of the bin on the
// fit at its own bin.
double gcv(const Bins& b, const Matrix& fit, const Matrix& self) {
  const double n = b.w.sum();
  const double rss = (b.s2.array() - 2 * fit.array() * b.s.array() + b.w.array() * fit.array().square()).sum();
  const double trace = (b.w.array() * self.array()).sum();
  return trace < n ? rss / n / std::pow(1 - trace / n, 2) : INFINITY;
}

struct LocalFit {
  double value = NAN, self = NAN;  // the fit at the centre; the weight of one observation of the centre bin
  bool ok = false;                 // false: too little data in the window
};

// The features of a local polynomial at the offsets (u, v) from the centre: linear (1, u) or, on
// two-dimensional bins, (1, u, v); quadratic (1, u, u^2) or (1, u, v, u^2, uv, v^2). Returns their number.
enum class Degree { Linear, Quadratic };
int features(Degree d, bool two, double u, double v, double* x) {
  x[0] = 1.0, x[1] = u;
  if (d == Degree::Linear) {
    if (two) x[2] = v;
    return two ? 3 : 2;
  }
  if (!two) {
    x[2] = u * u;
    return 3;
  }
  x[2] = v, x[3] = u * u, x[4] = u * v, x[5] = v * v;
  return 6;
}

// The product of d[start .. start + length), halving as Eigen's unrolled reductions do (the same
// rounding as the fixed-size prod() this replaces).
double product_by_halves(const double* d, int start, int length) {
  if (length == 1) return d[start];
  const int half = length / 2;
  return product_by_halves(d, start, half) * product_by_halves(d, start + half, length - half);
}

// Weighted least squares from the normal equations m beta = t (column-major P x P): the intercept,
// the weight inv(m)(0, 0) of one observation of the centre bin (times K(0)^2 or K(0)), and whether m
// is safely invertible. 2 and 3 features: closed forms (nexp::linalg chooses them by size) and a
// fixed-size product; 6: one partial-pivoting LU.
template <int P>
LocalFit solve_normal_small(const Matrix& mm, const double* t, double kernel0, double scale) {
  if (nexp::linalg::determinant(mm) <= 1e-10 * scale) return {};
  const Eigen::Matrix<double, P, P> inv = nexp::linalg::inverse(mm);
  return {(inv * Eigen::Map<const Eigen::Matrix<double, P, 1>>(t))(0), kernel0 * inv(0, 0), true};
}

LocalFit solve_normal(int p, const double* m, const double* t, double kernel0) {
  double diagonal[6];
  for (int i = 0; i < p; ++i) diagonal[i] = m[i * (p + 1)];
  const double scale = product_by_halves(diagonal, 0, p);  // the determinant relative to it is scale-free
  if (!(scale > 0)) return {};
  const Matrix mm = Eigen::Map<const Matrix>(m, p, p);
  if (p == 2) return solve_normal_small<2>(mm, t, kernel0, scale);
  if (p == 3) return solve_normal_small<3>(mm, t, kernel0, scale);
  if (nexp::linalg::determinant(mm) <= 1e-10 * scale) return {};
  const Matrix inv = nexp::linalg::inverse(mm);
  const Vector tv = Eigen::Map<const Vector>(t, p);
  return {(inv * tv)(0), kernel0 * inv(0, 0), true};
}

// Local polynomial fit at bin (a, c) of binned data (c = 0 for one-dimensional bins): weighted least
// squares on the features of the offsets from the centre, Epanechnikov (product) kernel of bandwidth
// h; the value is the fitted intercept.
LocalFit local_poly(const Bins& b, double h, Eigen::Index a, Eigen::Index c, Degree degree) {
  const Eigen::Index g = b.w.rows();
  const bool two = b.w.cols() > 1;
  const double dx = 1.0 / static_cast<double>(g - 1);
  const auto r = static_cast<Eigen::Index>(h / dx);
  double m[36] = {}, t[6] = {}, x[6];
  const int p = features(degree, two, 0.0, 0.0, x);
  const Eigen::Index jlo = two ? std::max<Eigen::Index>(0, c - r) : 0, jhi = two ? std::min(g - 1, c + r) : 0;
  for (Eigen::Index i = std::max<Eigen::Index>(0, a - r); i <= std::min(g - 1, a + r); ++i)
    for (Eigen::Index j = jlo; j <= jhi; ++j) {
      if (b.w(i, j) == 0) continue;
      const double u = static_cast<double>(i - a) * dx, v = two ? static_cast<double>(j - c) * dx : 0.0;
      const double k = epanechnikov(u / h) * (two ? epanechnikov(v / h) : 1.0);
      if (k == 0) continue;
      features(degree, two, u, v, x);
      const double kw = k * b.w(i, j), ks = k * b.s(i, j);
      for (int q = 0; q < p; ++q)
        for (int l = 0; l < p; ++l) m[q * p + l] += (kw * x[l]) * x[q];
      for (int l = 0; l < p; ++l) t[l] += ks * x[l];
    }
  return solve_normal(p, m, t, std::pow(epanechnikov(0), two ? 2 : 1));
}

// Local linear smoother of binned data at every bin (one- or two-dimensional; the two-dimensional
// bins are symmetric, so only the upper triangle is fitted).
Smooth local_linear(const Bins& b, double h) {
  const Eigen::Index g = b.w.rows(), cols = b.w.cols();
  Smooth out;
  out.fit = Matrix::Zero(g, cols);
  Matrix self = Matrix::Zero(g, cols);
  for (Eigen::Index a = 0; a < g; ++a)
    for (Eigen::Index c = (cols == 1 ? 0 : a); c < cols; ++c) {
      const LocalFit f = local_poly(b, h, a, c, Degree::Linear);
      if (!f.ok) return out;  // gcv stays infinite
      out.fit(a, c) = f.value, self(a, c) = f.self;
      if (cols > 1) out.fit(c, a) = f.value, self(c, a) = f.self;
    }
  out.gcv = gcv(b, out.fit, self);
  return out;
}

// The smooth with the smallest GCV over a fixed list of bandwidths (fractions of [0, 1]).
std::pair<Smooth, double> smooth_by_gcv(const Bins& b, const char* what) {
  std::pair<Smooth, double> best;
  for (double h : {0.03, 0.05, 0.08, 0.12, 0.18, 0.27, 0.4}) {
    Smooth s = local_linear(b, h);
    if (s.gcv < best.first.gcv) best = {std::move(s), h};
  }
  if (!std::isfinite(best.first.gcv))
    throw nexp::DataError(fmt::format("PACE: too few observations to smooth the {} at any bandwidth up to 0.4; "
                                      "give more curves or more points per curve",
                                      what));
  return best;
}

// The values of the eigenfunctions (rows: points) and the residuals x - mu of one curve.
void curve_design(const Pace& p, const Curve& c, Matrix& phi, Vector& r) {
  const Eigen::Index k = p.eigenvalues.size(), m = static_cast<Eigen::Index>(c.t.size());
  phi.resize(m, k), r.resize(m);
  for (Eigen::Index j = 0; j < m; ++j) {
    const double t = c.t[static_cast<std::size_t>(j)];
    r(j) = c.x[static_cast<std::size_t>(j)] - interpolate(p.mean, t);
    for (Eigen::Index q = 0; q < k; ++q) phi(j, q) = interpolate(p.eigenfunctions.col(q), t);
  }
}

// The noise level of the conditional expectations, max(sigma^2, rho) with rho chosen by
// leave-one-point-out prediction of the training points (fdapace's rho = "cv"): the diagonal estimate
// of sigma^2 is fragile with few points per curve, and near zero the scores of a curve with about K
// points interpolate its noise. Up to 200 curves, rho on a grid of fractions of the mean variance.
double choose_noise(const Pace& p, const std::vector<Curve>& curves) {
  const double level = p.covariance.diagonal().mean();
  const std::size_t step = std::max<std::size_t>(1, curves.size() / 200);
  double best = p.noise_variance, best_error = INFINITY;
  for (double f : {0.0, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0}) {
    const double rho = std::max(p.noise_variance, f * level);
    double error = 0;
    Matrix phi;
    Vector r;
    for (std::size_t i = 0; i < curves.size(); i += step) {
      curve_design(p, curves[i], phi, r);
      if (r.size() < 2) continue;
      Matrix a = phi.transpose() * phi;
      a.diagonal() += rho * p.eigenvalues.cwiseInverse();
      const Vector b = phi.transpose() * r;
      for (Eigen::Index j = 0; j < r.size(); ++j) {
        const Vector pj = phi.row(j).transpose();
        const Vector xi = nexp::linalg::Ldlt(a - pj * pj.transpose()).solve(Vector(b - pj * r(j)));
        error += std::pow(r(j) - pj.dot(xi), 2);
      }
    }
    if (error < best_error) best_error = error, best = rho;
  }
  return best;
}

}  // namespace

Pace fit_pace(const std::vector<Curve>& curves, int components, int grid_points) {
  Pace p;
  const int g = grid_points;
  for (int k = 0; k < g; ++k) p.grid.push_back(static_cast<double>(k) / (g - 1));
  Bins pooled(g, 1);
  for (const auto& c : curves)
    for (std::size_t j = 0; j < c.t.size(); ++j) pooled.add(bin_of(c.t[j], g), 0, c.x[j]);
  auto [mean, hm] = smooth_by_gcv(pooled, "mean function");
  p.mean = mean.fit.col(0), p.bandwidth_mean = hm;
  // Raw covariances off the diagonal (both orders: the bins are symmetric) and the diagonal terms.
  Bins raw(g, g), diagonal(g, 1);
  std::vector<double> r;
  std::vector<int> at;
  for (const auto& c : curves) {
    r.clear(), at.clear();
    for (std::size_t j = 0; j < c.t.size(); ++j)
      r.push_back(c.x[j] - interpolate(p.mean, c.t[j])), at.push_back(bin_of(c.t[j], g));
    for (std::size_t j = 0; j < r.size(); ++j) {
      diagonal.add(at[j], 0, r[j] * r[j]);
      for (std::size_t l = 0; l < r.size(); ++l)
        if (l != j) raw.add(at[j], at[l], r[j] * r[l]);
    }
  }
  auto [cov, hc] = smooth_by_gcv(raw, "covariance surface");
  p.covariance = cov.fit, p.bandwidth_covariance = hc;
  // Noise: V(t) - C(t, t) over the middle half of the domain. Both by local quadratic fits (as Yao et
  // al.: a local linear surface is biased on the diagonal, where C curves differently across it than
  // V does along it), at the bandwidths chosen for the linear smooths.
  const auto [vlin, hv] = smooth_by_gcv(diagonal, "variance function");
  double sum = 0;
  int count = 0;
  for (int k = 0; k < g; ++k) {
    if (p.grid[k] < 0.25 || p.grid[k] > 0.75) continue;
    const LocalFit v = local_poly(diagonal, hv, k, 0, Degree::Quadratic),
                   c = local_poly(raw, hc, k, k, Degree::Quadratic);
    sum += (v.ok ? v.value : vlin.fit(k, 0)) - (c.ok ? c.value : p.covariance(k, k)), ++count;
  }
  const double level = std::max(p.covariance.diagonal().mean(), 1e-300);
  p.noise_variance = std::max(sum / count, 1e-6 * level);
  // Eigenfunctions of the discretised covariance operator (trapezoid weights).
  Vector w = Vector::Constant(g, 1.0 / (g - 1));
  w(0) *= 0.5, w(g - 1) *= 0.5;
  const Vector root = w.cwiseSqrt();
  const nexp::linalg::SymmetricEigen es =
      nexp::linalg::symmetric_eigen(root.asDiagonal() * p.covariance * root.asDiagonal());
  const double top = es.values(g - 1);
  int k = 0;
  while (k < components && k < g && es.values(g - 1 - k) > 1e-10 * top) ++k;
  p.eigenvalues.resize(k);
  p.eigenfunctions.resize(g, k);
  for (int c = 0; c < k; ++c) {
    p.eigenvalues(c) = es.values(g - 1 - c);
    Vector phi = es.vectors.col(g - 1 - c).cwiseQuotient(root);
    Eigen::Index big;
    phi.cwiseAbs().maxCoeff(&big);
    p.eigenfunctions.col(c) = phi(big) < 0 ? Vector(-phi) : phi;  // a fixed sign
  }
  p.score_noise = k > 0 ? choose_noise(p, curves) : p.noise_variance;
  return p;
}

Vector Pace::scores(const Curve& c, std::int64_t columns) const {
  const Eigen::Index k = eigenvalues.size();
  Vector out = Vector::Zero(std::max<Eigen::Index>(columns, k));
  if (c.t.empty() || k == 0) return out.head(columns);  // no points: the prior mean of the scores
  Matrix phi;
  Vector r;
  curve_design(*this, c, phi, r);
  Matrix a = phi.transpose() * phi;
  a.diagonal() += score_noise * eigenvalues.cwiseInverse();
  out.head(k) = nexp::linalg::Ldlt(a).solve(Vector(phi.transpose() * r));
  return out.head(columns);
}

}  // namespace functional_reg
