#include "mixture.hpp"

#include <Eigen/QR>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace fds {

namespace {

Eigen::MatrixXd rotation2(double angle) {
  Eigen::MatrixXd u(2, 2);
  u << std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle);
  return u;
}

Eigen::MatrixXd random_orthogonal(int d, nexp::Random& rng) {
  Eigen::MatrixXd g(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) g(i, j) = rng.normal();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
  return qr.householderQ() * Eigen::MatrixXd::Identity(d, d);
}

// Standard deviations spread log-uniformly between sd / sqrt(a) and sd sqrt(a) (geometric mean sd).
Eigen::VectorXd variances(int d, double sd, double anisotropy) {
  Eigen::VectorXd v(d);
  for (int i = 0; i < d; ++i) {
    const double frac = d == 1 ? 0.5 : static_cast<double>(i) / (d - 1);
    const double s = sd * std::pow(anisotropy, frac - 0.5);
    v(i) = s * s;
  }
  return v;
}

Component component(Eigen::VectorXd mean, Eigen::MatrixXd basis, Eigen::VectorXd lambda) {
  Component c;
  c.mean = std::move(mean), c.basis = std::move(basis), c.lambda = std::move(lambda);
  return c;
}

}  // namespace

double Mixture::data_sd() const {
  const int d = dim();
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(d);
  double wsum = 0;
  for (const auto& c : components) mean += c.weight * c.mean, wsum += c.weight;
  mean /= wsum;
  double trace = 0;
  for (const auto& c : components) trace += c.weight / wsum * (c.lambda.sum() + (c.mean - mean).squaredNorm());
  return std::sqrt(trace / d);
}

Mat Mixture::sample(std::size_t n, nexp::Random& rng) const {
  const int d = dim();
  std::vector<double> cum;
  double total = 0;
  for (const auto& c : components) cum.push_back(total += c.weight);
  Mat x(static_cast<Eigen::Index>(n), d);
  Eigen::VectorXd z(d);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng.uniform() * total;
    std::size_t k = 0;
    while (k + 1 < cum.size() && u >= cum[k]) ++k;
    const auto& c = components[k];
    for (int j = 0; j < d; ++j) z(j) = std::sqrt(c.lambda(j)) * rng.normal();
    x.row(static_cast<Eigen::Index>(i)) = (c.mean + c.basis * z).transpose();
  }
  return x;
}

std::pair<int, double> Mixture::nearest_mode(const Eigen::VectorXd& x) const {
  int best = -1;
  double dist = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < components.size(); ++k) {
    const auto& c = components[k];
    const Eigen::VectorXd y = c.basis.transpose() * (x - c.mean);
    const double m = std::sqrt((y.array().square() / c.lambda.array()).sum());
    if (m < dist) dist = m, best = static_cast<int>(k);
  }
  return {best, dist};
}

Mixture make_mixture(const MixtureSpec& s, nexp::Random& rng) {
  Mixture m;
  if (s.kind == "ring8") {
    for (int k = 0; k < 8; ++k) {
      const double a = 2 * kPi * k / 8;
      Eigen::VectorXd mu(2);
      mu << s.scale * std::cos(a), s.scale * std::sin(a);
      // the longer axis tangential to the ring
      m.components.push_back(component(mu, rotation2(a + kPi / 2), variances(2, s.sd, s.anisotropy).reverse()));
    }
  } else if (s.kind == "grid25") {
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        Eigen::VectorXd mu(2);
        mu << s.scale * (i - 2) / 2.0, s.scale * (j - 2) / 2.0;
        m.components.push_back(component(mu, rotation2(kPi * rng.uniform()), variances(2, s.sd, s.anisotropy)));
      }
  } else if (s.kind == "gmm") {
    for (int k = 0; k < s.components; ++k) {
      Eigen::VectorXd mu(s.dim);
      for (int j = 0; j < s.dim; ++j) mu(j) = s.scale * rng.normal();
      m.components.push_back(component(mu, random_orthogonal(s.dim, rng), variances(s.dim, s.sd, s.anisotropy)));
      m.components.back().weight = 0.5 + rng.uniform();  // unequal weights
    }
  } else {
    throw std::invalid_argument("make_mixture: unknown kind " + s.kind);
  }
  double total = 0;
  for (const auto& c : m.components) total += c.weight;
  for (auto& c : m.components) c.weight /= total;
  return m;
}

void MixtureDenoiser::denoise(const Mat& x, double sigma, Mat& out) const {
  const auto& comps = m_.components;
  const std::size_t k_n = comps.size();
  const int d = m_.dim();
  const double s2 = sigma * sigma;
  std::vector<Eigen::VectorXd> inv_v(k_n), shrink(k_n);
  std::vector<double> log_norm(k_n);
  for (std::size_t k = 0; k < k_n; ++k) {
    const Eigen::ArrayXd v = comps[k].lambda.array() + s2;
    inv_v[k] = v.inverse().matrix();
    shrink[k] = (comps[k].lambda.array() / v).matrix();
    log_norm[k] = std::log(comps[k].weight) - 0.5 * v.log().sum();
  }
  Eigen::VectorXd xi(d), y(d), acc(d);
  std::vector<double> logp(k_n);
  std::vector<Eigen::VectorXd> post(k_n, Eigen::VectorXd(d));
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    xi = x.row(i).transpose();
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < k_n; ++k) {
      y.noalias() = comps[k].basis.transpose() * (xi - comps[k].mean);
      logp[k] = log_norm[k] - 0.5 * (y.array().square() * inv_v[k].array()).sum();
      post[k] = comps[k].mean + comps[k].basis * (shrink[k].array() * y.array()).matrix();
      best = std::max(best, logp[k]);
    }
    double z = 0;
    acc.setZero();
    for (std::size_t k = 0; k < k_n; ++k) {
      const double r = std::exp(logp[k] - best);
      z += r;
      acc += r * post[k];
    }
    out.row(i) = (acc / z).transpose();
  }
}

namespace {
Mixture reweighted(Mixture m, double error, nexp::Random& rng) {
  double total = 0;
  for (auto& c : m.components) total += (c.weight *= std::exp(error * rng.normal()));
  for (auto& c : m.components) c.weight /= total;
  return m;
}
}  // namespace

BiasedMixtureDenoiser::BiasedMixtureDenoiser(const Mixture& m, double error, nexp::Random& rng)
    : exact_(reweighted(m, error, rng)), error_(error), sd_(m.data_sd()) {
  const int d = m.dim();
  omega_.resize(d, d);
  phi_.resize(d);
  for (int i = 0; i < d; ++i) {
    for (int j = 0; j < d; ++j) omega_(i, j) = 2.0 * rng.normal();
    phi_(i) = 2 * kPi * rng.uniform();
  }
}

void BiasedMixtureDenoiser::denoise(const Mat& x, double sigma, Mat& out) const {
  exact_.denoise(x, sigma, out);
  if (error_ == 0) return;
  const double c_in = 1.0 / std::sqrt(sigma * sigma + sd_ * sd_), c_out = sigma * sd_ * c_in;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::VectorXd arg = c_in * (omega_ * x.row(i).transpose()) + phi_;
    out.row(i) += (error_ * c_out) * arg.array().sin().matrix().transpose();
  }
}

}  // namespace fds
