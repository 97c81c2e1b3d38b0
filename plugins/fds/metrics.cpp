#include "metrics.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fds {

namespace {

// mean over pairs of sum_b exp(-|u - v|^2 / (2 h_b^2)); `same`: x against itself (diagonal included).
double mean_kernel(const Mat& x, const Mat& y, const std::vector<double>& inv2h2) {
  double acc = 0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < y.rows(); ++j) {
      const double r2 = (x.row(i) - y.row(j)).squaredNorm();
      for (double c : inv2h2) acc += std::exp(-r2 * c);
    }
  }
  return acc / (static_cast<double>(x.rows()) * static_cast<double>(y.rows()));
}

void check_shapes(const Mat& x, const Mat& y, const char* what) {
  if (x.cols() != y.cols() || x.rows() == 0 || y.rows() == 0)
    throw std::invalid_argument(std::string(what) + ": samples of different dimension, or empty");
}

}  // namespace

std::vector<double> mmd_bandwidths(double scale) {
  return {scale / 8, scale / 4, scale / 2, scale, 2 * scale};
}

double mmd2(const Mat& x, const Mat& y, const std::vector<double>& bandwidths) {
  check_shapes(x, y, "mmd");
  std::vector<double> c;
  for (double h : bandwidths) c.push_back(1.0 / (2 * h * h));
  return mean_kernel(x, x, c) + mean_kernel(y, y, c) - 2 * mean_kernel(x, y, c);
}

double mmd(const Mat& x, const Mat& y, const std::vector<double>& bandwidths) {
  return std::sqrt(std::max(0.0, mmd2(x, y, bandwidths)));
}

double mmd2_expected_gaussian(double delta, double v1, double v2, int d, std::size_t n, std::size_t m,
                              const std::vector<double>& bandwidths) {
  // E exp(-|z|^2 / (2 h^2)) for z ~ N(mu, v I) in d dims: (h^2 / (h^2 + v))^(d/2) exp(-|mu|^2 / (2 (h^2 + v))).
  auto e = [&](double dist2, double v) {
    double acc = 0;
    for (double h : bandwidths) acc += std::pow(h * h / (h * h + v), d / 2.0) * std::exp(-dist2 / (2 * (h * h + v)));
    return acc;
  };
  const double k0 = static_cast<double>(bandwidths.size());
  const double nn = static_cast<double>(n), mm = static_cast<double>(m);
  const double exx = k0 / nn + (1 - 1 / nn) * e(0, 2 * v1), eyy = k0 / mm + (1 - 1 / mm) * e(0, 2 * v2);
  return exx + eyy - 2 * e(delta * delta, v1 + v2);
}

double sliced_w2(const Mat& x, const Mat& y, int directions, nexp::Random& rng) {
  check_shapes(x, y, "sliced_w2");
  if (x.rows() != y.rows()) throw std::invalid_argument("sliced_w2: needs equal sample sizes");
  const Eigen::Index d = x.cols(), n = x.rows();
  Eigen::VectorXd dir(d);
  std::vector<double> px(static_cast<std::size_t>(n)), py(static_cast<std::size_t>(n));
  double acc = 0;
  for (int l = 0; l < directions; ++l) {
    for (Eigen::Index j = 0; j < d; ++j) dir(j) = rng.normal();
    dir.normalize();
    Eigen::Map<Eigen::VectorXd>(px.data(), n) = x * dir;
    Eigen::Map<Eigen::VectorXd>(py.data(), n) = y * dir;
    std::sort(px.begin(), px.end());
    std::sort(py.begin(), py.end());
    double w = 0;
    for (std::size_t i = 0; i < px.size(); ++i) w += (px[i] - py[i]) * (px[i] - py[i]);
    acc += w / static_cast<double>(n);
  }
  return std::sqrt(acc / directions);
}

ModeStats mode_stats(const Mat& x, const Mixture& m) {
  std::vector<double> good(m.components.size(), 0.0);
  double n_good = 0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const auto [k, dist] = m.nearest_mode(x.row(i).transpose());
    if (dist <= 3.0) good[static_cast<std::size_t>(k)] += 1, n_good += 1;
  }
  ModeStats s;
  const double n = static_cast<double>(x.rows());
  s.precision = n_good / n;
  double covered = 0;
  for (std::size_t k = 0; k < good.size(); ++k) covered += good[k] >= 0.25 * m.components[k].weight * n ? 1 : 0;
  s.coverage = covered / static_cast<double>(good.size());
  return s;
}

namespace {

// Squared distance of each row of a to its k-th nearest other row of a.
std::vector<double> kth_radius2(const Mat& a, int k) {
  std::vector<double> r(static_cast<std::size_t>(a.rows())), d2(static_cast<std::size_t>(a.rows()));
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.rows(); ++j) d2[static_cast<std::size_t>(j)] = (a.row(i) - a.row(j)).squaredNorm();
    std::nth_element(d2.begin(), d2.begin() + k, d2.end());  // index 0 is the point itself (distance 0)
    r[static_cast<std::size_t>(i)] = d2[static_cast<std::size_t>(k)];
  }
  return r;
}

double share_inside(const Mat& probe, const Mat& centres, const std::vector<double>& radius2) {
  double inside = 0;
  for (Eigen::Index i = 0; i < probe.rows(); ++i) {
    for (Eigen::Index j = 0; j < centres.rows(); ++j) {
      if ((probe.row(i) - centres.row(j)).squaredNorm() <= radius2[static_cast<std::size_t>(j)]) {
        inside += 1;
        break;
      }
    }
  }
  return inside / static_cast<double>(probe.rows());
}

}  // namespace

PrecisionRecall knn_precision_recall(const Mat& generated, const Mat& reference, int k) {
  check_shapes(generated, reference, "knn_precision_recall");
  PrecisionRecall pr;
  pr.precision = share_inside(generated, reference, kth_radius2(reference, k));
  pr.recall = share_inside(reference, generated, kth_radius2(generated, k));
  return pr;
}

namespace {
Eigen::MatrixXd psd_sqrt(const Eigen::MatrixXd& s) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(s);
  return es.eigenvectors() * es.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal() * es.eigenvectors().transpose();
}
}  // namespace

double frechet_gaussian(const Eigen::VectorXd& m1, const Eigen::MatrixXd& s1, const Eigen::VectorXd& m2,
                        const Eigen::MatrixXd& s2) {
  const Eigen::MatrixXd r1 = psd_sqrt(s1);
  const Eigen::MatrixXd inner = r1 * s2 * r1;
  return (m1 - m2).squaredNorm() + s1.trace() + s2.trace() - 2 * psd_sqrt(0.5 * (inner + inner.transpose())).trace();
}

double frechet(const Mat& x, const Mat& y) {
  check_shapes(x, y, "frechet");
  auto fit = [](const Mat& a, Eigen::VectorXd& mean, Eigen::MatrixXd& cov) {
    mean = a.colwise().mean().transpose();
    const Eigen::MatrixXd c = a.rowwise() - mean.transpose();
    cov = c.transpose() * c / static_cast<double>(a.rows() - 1);
  };
  Eigen::VectorXd m1, m2;
  Eigen::MatrixXd s1, s2;
  fit(x, m1, s1);
  fit(y, m2, s2);
  return frechet_gaussian(m1, s1, m2, s2);
}

}  // namespace fds
