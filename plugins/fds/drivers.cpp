#include "drivers.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace fds {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double sample_variance(const std::vector<double>& v) {
  const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double acc = 0;
  for (double x : v) acc += (x - m) * (x - m);
  return acc / static_cast<double>(v.size() - 1);
}

// White noise as a driver: each step's integral is sqrt(dt) N(0, 1); value() is that integral / dt.
class GaussianDriver : public Driver {
 public:
  explicit GaussianDriver(std::size_t n) : v_(n, 0.0) {}
  std::size_t size() const override { return v_.size(); }
  double value(std::size_t s) const override { return v_[s]; }
  void advance(double dt, nexp::Random& rng, std::vector<double>& integral) override {
    const double sd = std::sqrt(dt);
    for (std::size_t s = 0; s < v_.size(); ++s) {
      const double inc = sd * rng.normal();
      integral[s] += inc;
      v_[s] = inc / dt;
    }
  }
  std::unique_ptr<Driver> copies_of(std::size_t, std::size_t copies, double, nexp::Random&) const override {
    return std::make_unique<GaussianDriver>(copies);
  }

 private:
  std::vector<double> v_;
};

// Ornstein-Uhlenbeck with unit stationary variance: the exact transition over dt.
class OuDriver : public Driver {
 public:
  OuDriver(std::vector<double> x, double theta) : x_(std::move(x)), theta_(theta) {}
  std::size_t size() const override { return x_.size(); }
  double value(std::size_t s) const override { return x_[s]; }
  void advance(double dt, nexp::Random& rng, std::vector<double>& integral) override {
    const double a = std::exp(-theta_ * dt), b = std::sqrt(1.0 - a * a);
    for (std::size_t s = 0; s < x_.size(); ++s) {
      const double next = a * x_[s] + b * rng.normal();
      integral[s] += 0.5 * dt * (x_[s] + next);
      x_[s] = next;
    }
  }
  std::unique_ptr<Driver> copies_of(std::size_t slot, std::size_t copies, double, nexp::Random&) const override {
    return std::make_unique<OuDriver>(std::vector<double>(copies, x_[slot]), theta_);
  }

 private:
  std::vector<double> x_;
  double theta_;
};

// The telegraph process on {-a, +a}: flips at the times of a Poisson process of rate r, integrated exactly.
class TelegraphDriver : public Driver {
 public:
  TelegraphDriver(std::vector<double> x, double rate) : x_(std::move(x)), rate_(rate) {}
  std::size_t size() const override { return x_.size(); }
  double value(std::size_t s) const override { return x_[s]; }
  void advance(double dt, nexp::Random& rng, std::vector<double>& integral) override {
    for (std::size_t s = 0; s < x_.size(); ++s) {
      double left = dt;
      for (double tau = rng.exponential(rate_); tau < left; tau = rng.exponential(rate_)) {
        integral[s] += tau * x_[s];
        x_[s] = -x_[s];
        left -= tau;
      }
      integral[s] += left * x_[s];
    }
  }
  std::unique_ptr<Driver> copies_of(std::size_t slot, std::size_t copies, double, nexp::Random&) const override {
    return std::make_unique<TelegraphDriver>(std::vector<double>(copies, x_[slot]), rate_);
  }

 private:
  std::vector<double> x_;
  double rate_;
};

using Vec3 = std::array<double, 3>;

Vec3 lorenz_field(const Vec3& u) {
  return {10.0 * (u[1] - u[0]), u[0] * (28.0 - u[2]) - u[1], u[0] * u[1] - (8.0 / 3.0) * u[2]};
}

void rk4(Vec3& u, double h) {
  auto shift = [](const Vec3& a, const Vec3& k, double c) { return Vec3{a[0] + c * k[0], a[1] + c * k[1], a[2] + c * k[2]}; };
  const Vec3 k1 = lorenz_field(u), k2 = lorenz_field(shift(u, k1, h / 2)), k3 = lorenz_field(shift(u, k2, h / 2)),
             k4 = lorenz_field(shift(u, k3, h));
  for (int c = 0; c < 3; ++c) u[c] += h / 6 * (k1[c] + 2 * k2[c] + 2 * k3[c] + k4[c]);
}

// A bank of Lorenz-63 oscillators; slot s reports the standardised component comp_[s] of oscillator osc_[s].
class LorenzDriver : public Driver {
 public:
  LorenzDriver(std::vector<Vec3> u, std::vector<std::size_t> osc, std::vector<int> comp)
      : u_(std::move(u)), osc_(std::move(osc)), comp_(std::move(comp)) {}
  std::size_t size() const override { return osc_.size(); }
  double value(std::size_t s) const override {
    const auto& m = lorenz_moments();
    const int c = comp_[s];
    return (u_[osc_[s]][static_cast<std::size_t>(c)] - m.mean[c]) / m.sd[c];
  }
  void advance(double dt, nexp::Random&, std::vector<double>& integral) override {
    for (std::size_t s = 0; s < osc_.size(); ++s) integral[s] += 0.5 * dt * value(s);
    for (auto& u : u_) rk4(u, dt);
    for (std::size_t s = 0; s < osc_.size(); ++s) integral[s] += 0.5 * dt * value(s);
  }
  std::unique_ptr<Driver> copies_of(std::size_t slot, std::size_t copies, double jitter,
                                    nexp::Random& rng) const override {
    const auto& m = lorenz_moments();
    std::vector<Vec3> u(copies, u_[osc_[slot]]);
    for (auto& v : u)
      for (int c = 0; c < 3; ++c) v[static_cast<std::size_t>(c)] += jitter * m.sd[c] * rng.normal();
    std::vector<std::size_t> osc(copies);
    std::iota(osc.begin(), osc.end(), std::size_t{0});
    return std::make_unique<LorenzDriver>(std::move(u), std::move(osc), std::vector<int>(copies, comp_[slot]));
  }
  int component(std::size_t s) const { return comp_[s]; }

 private:
  std::vector<Vec3> u_;
  std::vector<std::size_t> osc_;
  std::vector<int> comp_;
};

std::unique_ptr<Driver> make_lorenz(const DriverParams& p, std::size_t slots, nexp::Random& rng) {
  const std::size_t per = p.lorenz_z ? 3 : 2, n_osc = (slots + per - 1) / per;
  std::vector<Vec3> u(n_osc);
  for (auto& v : u) v = {20.0 * rng.uniform() - 10.0, 20.0 * rng.uniform() - 10.0, 10.0 + 20.0 * rng.uniform()};
  for (int k = 0; k < p.burn_in; ++k)
    for (auto& v : u) rk4(v, p.dt);
  // Every (oscillator, component) pair once, shuffled (Fisher-Yates), the first `slots` kept.
  std::vector<std::size_t> order(per * n_osc);
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<std::size_t> osc(slots);
  std::vector<int> comp(slots);
  for (std::size_t s = 0; s < slots; ++s) osc[s] = order[s] / per, comp[s] = static_cast<int>(order[s] % per);
  return std::make_unique<LorenzDriver>(std::move(u), std::move(osc), std::move(comp));
}

}  // namespace

const LorenzMoments& lorenz_moments() {
  static const LorenzMoments moments = [] {
    Vec3 u{1.0, 1.0, 20.0};
    const double h = 0.01;
    for (int k = 0; k < 5000; ++k) rk4(u, h);
    double sum[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
    const int n = 400000;  // 4000 time units
    for (int k = 0; k < n; ++k) {
      rk4(u, h);
      for (int c = 0; c < 3; ++c) sum[c] += u[static_cast<std::size_t>(c)], sq[c] += u[static_cast<std::size_t>(c)] * u[static_cast<std::size_t>(c)];
    }
    LorenzMoments m{};
    for (int c = 0; c < 3; ++c) {
      m.mean[c] = sum[c] / n;
      m.sd[c] = std::sqrt(sq[c] / n - m.mean[c] * m.mean[c]);
    }
    // x and y are symmetric on the attractor in law: their means are 0 exactly.
    m.mean[0] = m.mean[1] = 0.0;
    return m;
  }();
  return moments;
}

int lorenz_component(const Driver& d, std::size_t slot) {
  const auto* l = dynamic_cast<const LorenzDriver*>(&d);
  return l ? l->component(slot) : -1;
}

std::unique_ptr<Driver> make_driver(const DriverParams& p, std::size_t slots, nexp::Random& rng) {
  switch (p.kind) {
    case DriverKind::Gaussian: return std::make_unique<GaussianDriver>(slots);
    case DriverKind::Ou: {
      std::vector<double> x(slots);
      for (auto& v : x) v = rng.normal();
      return std::make_unique<OuDriver>(std::move(x), p.rate);
    }
    case DriverKind::Telegraph: {
      std::vector<double> x(slots);
      for (auto& v : x) v = rng.uniform() < 0.5 ? -p.amplitude : p.amplitude;
      return std::make_unique<TelegraphDriver>(std::move(x), p.rate);
    }
    case DriverKind::Lorenz: return make_lorenz(p, slots, rng);
  }
  throw std::invalid_argument("make_driver: unknown driver");
}

double q_closed_form(const DriverParams& p) {
  switch (p.kind) {
    case DriverKind::Gaussian: return 1.0;
    case DriverKind::Ou: return 2.0 / p.rate;
    case DriverKind::Telegraph: return p.amplitude * p.amplitude / p.rate;
    case DriverKind::Lorenz: return kNaN;
  }
  return kNaN;
}

double c_chi_closed_form(const DriverParams& p) {
  switch (p.kind) {
    case DriverKind::Gaussian:
    case DriverKind::Ou: return kInf;
    case DriverKind::Telegraph: return p.amplitude / (2.0 * p.rate);
    case DriverKind::Lorenz: return kNaN;
  }
  return kNaN;
}

QEstimate estimate_q(Driver& d, double dt, int samples, int max_lag, int trace_slots, nexp::Random& rng) {
  const std::size_t n = d.size(), gk_slots = std::min<std::size_t>(n, static_cast<std::size_t>(trace_slots));
  const auto len = static_cast<std::size_t>(samples);
  std::vector<double> integral(n, 0.0), at_t1(n, 0.0), trace(gk_slots * len);
  const std::size_t t1 = len / 4;
  for (std::size_t k = 0; k < len; ++k) {
    for (std::size_t s = 0; s < gk_slots; ++s) trace[s * len + k] = d.value(s);
    d.advance(dt, rng, integral);
    if (k + 1 == t1) at_t1 = integral;
  }
  // Green-Kubo: autocovariances averaged over the slots, trapezoid from 0. The mean is pooled over
  // every slot and time: a per-slot mean would take Var(mean) ~ Q / T off every lag, a bias of
  // about 2 L Q / T in the sum over L lags.
  const auto lags = static_cast<std::size_t>(std::min(max_lag, samples - 1));
  std::vector<double> cov(lags + 1, 0.0);
  const double mean = std::accumulate(trace.begin(), trace.end(), 0.0) / static_cast<double>(trace.size());
  for (std::size_t s = 0; s < gk_slots; ++s) {
    const double* x = &trace[s * len];
    for (std::size_t l = 0; l <= lags; ++l) {
      double acc = 0;
      for (std::size_t k = 0; k + l < len; ++k) acc += (x[k] - mean) * (x[k + l] - mean);
      cov[l] += acc / static_cast<double>(len - l) / static_cast<double>(gk_slots);
    }
  }
  QEstimate q;
  q.green_kubo = cov[0] * dt;  // 2 * (cov[0] / 2) dt: the trapezoid's first half-interval, doubled
  for (std::size_t l = 1; l <= lags; ++l) q.green_kubo += 2.0 * cov[l] * dt * (l == lags ? 0.5 : 1.0);
  q.variance = (sample_variance(integral) - sample_variance(at_t1)) / (static_cast<double>(len - t1) * dt);
  return q;
}

PoissonEstimate estimate_poisson(Driver& d, const DriverParams& p, int states, int copies, double horizon,
                                 double jitter, nexp::Random& rng) {
  PoissonEstimate out;
  const int steps = static_cast<int>(std::lround(horizon / p.dt));
  for (int k = 0; k < states; ++k) {
    const std::size_t slot = rng.below(d.size());
    auto ens = d.copies_of(slot, static_cast<std::size_t>(copies), jitter, rng);
    std::vector<double> integral(ens->size(), 0.0);
    for (int i = 0; i < steps; ++i) ens->advance(p.dt, rng, integral);
    out.state.push_back(d.value(slot));
    out.chi.push_back(std::accumulate(integral.begin(), integral.end(), 0.0) / static_cast<double>(copies));
  }
  for (double c : out.chi) out.c_chi = std::max(out.c_chi, std::abs(c));
  return out;
}

double sup_abs(Driver& d, double dt, int samples, nexp::Random& rng) {
  std::vector<double> integral(d.size(), 0.0);
  double sup = 0;
  for (int k = 0; k < samples; ++k) {
    for (std::size_t s = 0; s < d.size(); ++s) sup = std::max(sup, std::abs(d.value(s)));
    d.advance(dt, rng, integral);
  }
  return sup;
}

std::array<double, 3> lorenz_q(const DriverParams& p, nexp::Random& pilot_rng) {
  DriverParams all = p;
  all.lorenz_z = true;
  auto pilot = make_driver(all, 1500, pilot_rng);
  const int samples = static_cast<int>(std::lround(40.0 / p.dt));
  std::vector<double> integral(pilot->size(), 0.0), at_t1;
  for (int k = 0; k < samples; ++k) {
    pilot->advance(p.dt, pilot_rng, integral);
    if (k + 1 == samples / 4) at_t1 = integral;
  }
  std::array<double, 3> q{};
  for (int c = 0; c < 3; ++c) {
    std::vector<double> i2, i1;
    for (std::size_t s = 0; s < pilot->size(); ++s)
      if (lorenz_component(*pilot, s) == c) i2.push_back(integral[s]), i1.push_back(at_t1[s]);
    q[static_cast<std::size_t>(c)] = (sample_variance(i2) - sample_variance(i1)) / ((samples - samples / 4) * p.dt);
  }
  return q;
}

std::vector<double> slot_q(const DriverParams& p, const Driver& d, const std::array<double, 3>& lorenz) {
  if (p.kind != DriverKind::Lorenz) return std::vector<double>(d.size(), q_closed_form(p));
  std::vector<double> out(d.size());
  for (std::size_t s = 0; s < d.size(); ++s) out[s] = lorenz[static_cast<std::size_t>(lorenz_component(d, s))];
  return out;
}

DriverNoise::DriverNoise(std::unique_ptr<Driver> driver, std::vector<double> q, int steps, double dt, nexp::Random rng)
    : driver_(std::move(driver)), steps_(steps), dt_(dt), rng_(rng), integral_(driver_->size()) {
  scale_.resize(q.size());
  for (std::size_t s = 0; s < q.size(); ++s) scale_[s] = 1.0 / std::sqrt(q[s] * steps * dt);
}

void DriverNoise::next(Mat& eta) {
  if (static_cast<std::size_t>(eta.size()) != driver_->size())
    throw std::invalid_argument("DriverNoise: the batch does not match the driver's slots");
  std::fill(integral_.begin(), integral_.end(), 0.0);
  for (int k = 0; k < steps_; ++k) driver_->advance(dt_, rng_, integral_);
  double* e = eta.data();
  for (std::size_t s = 0; s < integral_.size(); ++s) e[s] = integral_[s] * scale_[s];
}

void GaussianNoise::next(Mat& eta) {
  double* e = eta.data();
  for (Eigen::Index s = 0; s < eta.size(); ++s) e[s] = rng_.normal();
}

}  // namespace fds
