#include "problems.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <Eigen/QR>
#include <fmt/format.h>
#include <nexp/error.hpp>
#include <nexp/linalg.hpp>

namespace dsminimax {

namespace {

Matrix gaussian(nexp::Random& rng, int rows, int cols, double scale) {
  Matrix m(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) m(i, j) = scale * rng.normal();
  return m;
}

double spectral_norm(const Matrix& m) {  // sqrt of the largest eigenvalue of m^T m
  const Matrix g = m.transpose() * m;
  return std::sqrt(symmetric_eigenvalues(g).maxCoeff());
}

}  // namespace

Vector symmetric_eigenvalues(const Matrix& m) { return nexp::linalg::symmetric_eigen(m).values; }

Ncpl::Ncpl(const NcplSpec& s) : spec_(s) {
  if (s.rank > s.dim_y || s.rank < 1)
    throw nexp::ConfigError(fmt::format("dataset.rank = {}: expected 1 <= rank <= dim_y = {}", s.rank, s.dim_y));
  auto rng = nexp::Random::stream(s.instance, "dsminimax.ncpl");
  // A = U diag(s) U^T with U a random orthogonal basis (QR of a Gaussian matrix).
  const Matrix u = Eigen::HouseholderQR<Matrix>(gaussian(rng, s.dim_y, s.dim_y, 1.0)).householderQ();
  Vector eig = Vector::Zero(s.dim_y);
  for (int i = 0; i < s.rank; ++i)
    eig(i) = s.rank == 1 ? 1.0 : std::pow(1.0 / s.kappa, 1.0 - static_cast<double>(i) / (s.rank - 1));
  Vector inv = Vector::Zero(s.dim_y);
  for (int i = 0; i < s.rank; ++i) inv(i) = 1.0 / eig(i);
  a_ = u * eig.asDiagonal() * u.transpose();
  a_pinv_ = u * inv.asDiagonal() * u.transpose();
  const Matrix range = u.leftCols(s.rank) * u.leftCols(s.rank).transpose();
  const double scale = s.coupling / std::sqrt(static_cast<double>(s.coupling_mode == Coupling::Aligned ? s.rank : s.dim_y));
  const bool aligned = s.coupling_mode == Coupling::Aligned;
  const int rows = aligned ? s.rank : s.dim_y;
  // aligned: B = U_r diag(sqrt(s)) C; range: B = P C.
  const Matrix lift = aligned ? Matrix(u.leftCols(s.rank) * eig.head(s.rank).cwiseSqrt().asDiagonal()) : range;
  const Matrix c_common = gaussian(rng, rows, s.dim_x, scale);
  const Vector lin_common = gaussian(rng, s.dim_x, 1, 1.0);
  b_bar_ = Matrix::Zero(s.dim_y, s.dim_x);
  c_bar_ = Vector::Zero(s.dim_x);
  double b_max = 0;
  for (int k = 0; k < s.nodes; ++k) {
    b_.push_back(lift * (c_common + gaussian(rng, rows, s.dim_x, s.heterogeneity * scale)));
    c_.push_back(lin_common + gaussian(rng, s.dim_x, 1, s.heterogeneity));
    b_bar_ += b_.back() / s.nodes;
    c_bar_ += c_.back() / s.nodes;
    b_max = std::max(b_max, spectral_norm(b_.back()));
  }
  q_ = b_bar_.transpose() * a_pinv_ * b_bar_;
  const Vector qe = symmetric_eigenvalues(q_);
  const double q_min = qe(0), q_max = qe(s.dim_x - 1);
  if (!(q_min > 1e-10 * q_max))
    throw nexp::ConfigError(fmt::format(
        "dsminimax.ncpl instance {}: Bbar^T A^+ Bbar has smallest eigenvalue {:.3g} (largest {:.3g}), so "
        "Phi(x) = max_y f(x, y) is unbounded below; use dim_x <= rank (found dim_x = {}, rank = {})",
        s.instance, q_min, q_max, s.dim_x, s.rank));
  lower_bound_ = -0.5 * c_bar_.dot(nexp::linalg::Ldlt(q_).solve(c_bar_));
  smoothness_ = std::max(2 * s.lam * s.a, 1.0) + b_max;
  pl_ = 1.0 / s.kappa;
}

std::string Ncpl::describe() const {
  return fmt::format("dsminimax.ncpl ({} coupling): {} nodes, x in R^{}, y in R^{} (A rank {}), kappa {} (A's spectrum), L {:.3g}, "
                     "noise {}, instance {}",
                     spec_.coupling_mode == Coupling::Aligned ? "aligned" : "range", spec_.nodes, spec_.dim_x, spec_.dim_y, spec_.rank, spec_.kappa, smoothness_, spec_.noise,
                     spec_.instance);
}

Sample Ncpl::draw(int, nexp::Random& rng) const {
  Sample s;
  s.noise_x = gaussian(rng, spec_.dim_x, 1, spec_.noise);
  s.noise_y = gaussian(rng, spec_.dim_y, 1, spec_.noise);
  return s;
}

void Ncpl::gradient(int k, const Vector& x, const Vector& y, const Sample* sample, Vector& gx, Vector& gy) const {
  const double a = spec_.a, lam = spec_.lam;
  gx.resize(spec_.dim_x);
  for (int j = 0; j < spec_.dim_x; ++j) {
    const double d = 1 + a * x(j) * x(j);
    gx(j) = lam * 2 * a * x(j) / (d * d);
  }
  gx.noalias() += b_[k].transpose() * y;
  gx -= c_[k];
  gy.noalias() = b_[k] * x;
  gy.noalias() -= a_ * y;
  if (sample && spec_.noise > 0) {
    gx += sample->noise_x;
    gy += sample->noise_y;
  }
}

double Ncpl::phi(const Vector& x) const {
  const double a = spec_.a;
  double v = 0;
  for (int j = 0; j < spec_.dim_x; ++j) v += spec_.lam * a * x(j) * x(j) / (1 + a * x(j) * x(j));
  return v - c_bar_.dot(x) + 0.5 * x.dot(q_ * x);
}

Vector Ncpl::grad_phi(const Vector& x) const {
  Vector g = q_ * x - c_bar_;
  const double a = spec_.a;
  for (int j = 0; j < spec_.dim_x; ++j) {
    const double d = 1 + a * x(j) * x(j);
    g(j) += spec_.lam * 2 * a * x(j) / (d * d);
  }
  return g;
}

Vector Ncpl::best_response(const Vector& x) const { return a_pinv_ * (b_bar_ * x); }

Vector Ncpl::initial_x(nexp::Random& rng) const { return gaussian(rng, spec_.dim_x, 1, 1.0); }

// ---------------------------------------------------------------- robust logistic regression

void project_simplex(Vector& y) {
  std::vector<double> u(y.data(), y.data() + y.size());
  std::sort(u.begin(), u.end(), std::greater<>());
  double sum = 0, tau = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    sum += u[i];
    const double t = (sum - 1) / static_cast<double>(i + 1);
    if (u[i] - t > 0) tau = t;
  }
  y = (y.array() - tau).max(0.0);
}

RobustLogreg::RobustLogreg(LogregData data, int batch, double rho, double lam2, double alpha)
    : d_(std::move(data)), batch_(batch), rho_(rho), lam2_(lam2), alpha_(alpha) {
  // grad_x: M sum y_i a_i a_i^T / 4 <= M max ||a_i||^2 / 4; cross term M ||a_i||; y: 1; reg: 2 lam2 alpha.
  const double amax = d_.a.rowwise().norm().maxCoeff();
  smoothness_ = nodes() * (amax * amax / 4 + amax) + rho_ + 2 * lam2_ * alpha_;
}

std::string RobustLogreg::describe() const {
  return fmt::format("dsminimax.robust_logreg: {} rows x {} features over {} nodes, {}, L {:.3g}", dim_y(), dim_x(),
                     nodes(), batch_ > 0 ? fmt::format("minibatch {}", batch_) : std::string("full local gradients"),
                     smoothness_);
}

Vector RobustLogreg::losses(const Vector& x) const {
  const Vector m = d_.b.cwiseProduct(d_.a * x);
  return m.unaryExpr([](double v) { return v > 0 ? std::log1p(std::exp(-v)) : -v + std::log1p(std::exp(v)); });
}

Sample RobustLogreg::draw(int node, nexp::Random& rng) const {
  Sample s;
  const auto& rows = d_.rows[node];
  for (int i = 0; i < batch_; ++i) s.batch.push_back(rows[rng.below(rows.size())]);
  return s;
}

void RobustLogreg::gradient(int k, const Vector& x, const Vector& y, const Sample* sample, Vector& gx,
                            Vector& gy) const {
  const double m = nodes();
  gx = Vector::Zero(dim_x());
  gy = -rho_ * (y.array() - 1.0 / dim_y()).matrix();
  const bool mini = sample && batch_ > 0;
  const std::vector<int>& rows = mini ? sample->batch : d_.rows[k];
  const double scale = m * (mini ? static_cast<double>(d_.rows[k].size()) / batch_ : 1.0);
  for (int i : rows) {
    const double margin = d_.b(i) * d_.a.row(i).dot(x);
    const double loss = margin > 0 ? std::log1p(std::exp(-margin)) : -margin + std::log1p(std::exp(margin));
    gx -= scale * y(i) * d_.b(i) / (1 + std::exp(margin)) * d_.a.row(i).transpose();
    gy(i) += scale * loss;
  }
  for (int j = 0; j < dim_x(); ++j) {
    const double q = 1 + alpha_ * x(j) * x(j);
    gx(j) += lam2_ * 2 * alpha_ * x(j) / (q * q);
  }
}

void RobustLogreg::project_y(Vector& y) const { project_simplex(y); }

Vector RobustLogreg::best_response(const Vector& x) const {
  Vector y = losses(x).array() / rho_ + 1.0 / dim_y();
  project_simplex(y);
  return y;
}

double RobustLogreg::phi(const Vector& x) const {
  const Vector l = losses(x), y = best_response(x);
  double reg = 0;
  for (int j = 0; j < dim_x(); ++j) reg += lam2_ * alpha_ * x(j) * x(j) / (1 + alpha_ * x(j) * x(j));
  return y.dot(l) - 0.5 * rho_ * (y.array() - 1.0 / dim_y()).matrix().squaredNorm() + reg;
}

Vector RobustLogreg::grad_phi(const Vector& x) const {
  const Vector y = best_response(x);
  const Vector margin = d_.b.cwiseProduct(d_.a * x);
  const Vector w = -(y.array() * d_.b.array() / (1 + margin.array().exp())).matrix();
  Vector g = d_.a.transpose() * w;
  for (int j = 0; j < dim_x(); ++j) {
    const double q = 1 + alpha_ * x(j) * x(j);
    g(j) += lam2_ * 2 * alpha_ * x(j) / (q * q);
  }
  return g;
}

}  // namespace dsminimax
