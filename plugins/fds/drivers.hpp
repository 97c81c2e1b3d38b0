#pragma once
// Drivers: stationary processes xi(t) whose integrals replace the Brownian increments of a stochastic
// sampler step (sampler.hpp: fds, fds_churn). nexp's reading of the paper's two driver quantities
// (homogenisation: Melbourne and Stuart 2011; Pavliotis and Stuart, "Multiscale Methods", ch. 11):
//
//  - Q, the asymptotic covariance: eps^-1 int_0^t xi(s / eps^2) ds -> a Brownian motion with covariance
//      Q = int_{-inf}^{inf} E[xi(0) xi(s)] ds = 2 int_0^inf C(s) ds          (Green-Kubo)
//    and equivalently Q = lim_T Var(int_0^T xi) / T (the variance growth of the integrated driver).
//  - C_chi, the norm of the Poisson solution -L chi = xi (L the driver's generator):
//      chi(x) = int_0^inf E_x[xi(t)] dt,   C_chi = sup_x |chi(x)|.
//    It bounds the remainder xi dt - Q^(1/2) dW at a finite step. Closed forms:
//      ou        d xi = -theta xi dt + sqrt(2 theta) dW (unit variance): C(s) = e^{-theta s}, Q = 2 / theta,
//                chi = xi / theta, unbounded: C_chi = inf (a Gaussian driver).
//      telegraph xi in {-a, +a}, flips at rate r: C(s) = a^2 e^{-2 r s}, Q = a^2 / r, chi = xi / (2r),
//                C_chi = a / (2r).
//      lorenz    a bank of Lorenz-63 oscillators (sigma 10, rho 28, beta 8/3), RK4, each coordinate
//                standardised and the coordinates permuted onto the slots: bounded, Q and C_chi estimated.
//      gaussian  i.i.d. N(0, 1) increments (white noise): the Brownian motion itself, Q = 1 per unit time.
//
// A driver holds `size()` coordinates ("slots"), one per sample and data dimension in a sampler.
#include <nexp/random.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampler.hpp"

namespace fds {

enum class DriverKind { Gaussian, Ou, Telegraph, Lorenz };

struct DriverParams {
  DriverKind kind = DriverKind::Lorenz;
  double rate = 1.0;       // ou: theta; telegraph: flip rate r
  double amplitude = 1.0;  // telegraph: a
  double dt = 0.01;        // the driver's integration step (lorenz: RK4 step h)
  int burn_in = 2000;      // lorenz: RK4 steps before use
  bool lorenz_z = false;   // lorenz: also use the z coordinate (its Q is ~0.01: see make_driver)
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::size_t size() const = 0;
  virtual double value(std::size_t slot) const = 0;  // xi at the current time
  // Advances every slot by dt and adds int_t^{t+dt} xi(s) ds to integral[slot] (exact for the telegraph,
  // trapezoid otherwise).
  virtual void advance(double dt, nexp::Random& rng, std::vector<double>& integral) = 0;
  // `copies` drivers started at slot's current state (perturbed by `jitter` in the lorenz state, where
  // the law is deterministic): slot i of the result is copy i's version of `slot`. For C_chi.
  virtual std::unique_ptr<Driver> copies_of(std::size_t slot, std::size_t copies, double jitter,
                                            nexp::Random& rng) const = 0;
};

// A stationary driver with `slots` coordinates (drawn from its stationary law; lorenz after burn-in).
// Lorenz uses the x and y coordinates of each oscillator unless lorenz_z: z oscillates fast about its
// mean and its integral hardly diffuses (Q_z ~ 0.01 against ~1 for x and y), so at a sampler step of
// T ~ 0.25 its increment normalised by sqrt(Q_z T) is some twenty times too large.
std::unique_ptr<Driver> make_driver(const DriverParams& p, std::size_t slots, nexp::Random& rng);

// Closed forms (NaN / inf where none is known or the value is infinite).
double q_closed_form(const DriverParams& p);
double c_chi_closed_form(const DriverParams& p);

// ---- Estimates (fds.driver_stats)
struct QEstimate {
  double green_kubo = 0;  // 2 sum_k C(k dt) dt (trapezoid), lags up to max_lag
  double variance = 0;    // (Var I(T2) - Var I(T1)) / (T2 - T1), over the slots
};
// One run of `samples` steps of dt: the integrals of every slot at T/4 and T give the variance growth;
// the trajectories of the first `trace_slots` slots give the autocovariances (averaged over them).
QEstimate estimate_q(Driver& d, double dt, int samples, int max_lag, int trace_slots, nexp::Random& rng);
// The truncated Poisson solution chi_T(x) = int_0^T E_x[xi(t)] dt, estimated by an ensemble of `copies`
// started at each of `states` slots drawn from d (its stationary states; lorenz copies perturbed by
// `jitter` standard deviations); c_chi = max |chi_T| over them.
struct PoissonEstimate {
  std::vector<double> state, chi;  // xi(x) and chi_T(x) of each sampled state
  double c_chi = 0;
};
PoissonEstimate estimate_poisson(Driver& d, const DriverParams& p, int states, int copies, double horizon,
                                 double jitter, nexp::Random& rng);
double sup_abs(Driver& d, double dt, int samples, nexp::Random& rng);

// ---- Increments for a sampler: the integral over `steps` driver steps, divided by sqrt(Q T).
class DriverNoise : public NoiseSource {
 public:
  // q[slot]: Q of each slot (one value per slot, e.g. by coordinate type for lorenz).
  DriverNoise(std::unique_ptr<Driver> driver, std::vector<double> q, int steps, double dt, nexp::Random rng);
  void next(Mat& eta) override;
  const Driver& driver() const { return *driver_; }

 private:
  std::unique_ptr<Driver> driver_;
  std::vector<double> scale_;  // 1 / sqrt(Q T) per slot
  int steps_;
  double dt_;
  nexp::Random rng_;
  std::vector<double> integral_;
};

class GaussianNoise : public NoiseSource {
 public:
  explicit GaussianNoise(nexp::Random rng) : rng_(rng) {}
  void next(Mat& eta) override;

 private:
  nexp::Random rng_;
};

// Q of each lorenz component (x, y, z) by variance growth over T = 40 time units on a pilot bank of
// 1500 coordinates: the sampler estimates the normalisation it needs, as a deployed one would.
std::array<double, 3> lorenz_q(const DriverParams& p, nexp::Random& pilot_rng);
// Q of each slot, for DriverNoise: closed form for ou and telegraph, lorenz_q by component for lorenz.
std::vector<double> slot_q(const DriverParams& p, const Driver& d, const std::array<double, 3>& lorenz);

// Lorenz-63 standardisation moments (mean, sd of x, y, z on the attractor), from one long trajectory.
struct LorenzMoments {
  double mean[3], sd[3];
};
const LorenzMoments& lorenz_moments();
// The component (0: x, 1: y, 2: z) a lorenz slot reports; -1 for other drivers.
int lorenz_component(const Driver& d, std::size_t slot);

}  // namespace fds
