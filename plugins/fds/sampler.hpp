#pragma once
// Few-step samplers in EDM's sigma form (Karras et al. 2022): x_sigma = x_0 + sigma n, a denoiser
// D(x; sigma) ~ E[x_0 | x_sigma], the probability-flow ODE dx/dsigma = (x - D(x; sigma)) / sigma (EDM eq. 3
// with sigma(t) = t, s(t) = 1). Every sampler counts its calls of D exactly (one call = one NFE for the
// whole batch).
//
//  - schedule (EDM eq. 5): t_i = (smax^(1/rho) + i/(N-1) (smin^(1/rho) - smax^(1/rho)))^rho, i < N;
//    t_N = 0; rho = 7.
//  - euler, heun: EDM Algorithm 1 (heun: the second-order correction while t_{i+1} > 0; NFE 2N - 1).
//  - dpmpp_2m: DPM-Solver++(2M) (Lu et al. 2022, Algorithm 2) in lambda = -log sigma: with
//    h = lambda_{i+1} - lambda_i, r = h_{i-1} / h, D' = (1 + 1/(2r)) D_i - 1/(2r) D_{i-1},
//    x_{i+1} = (sigma_{i+1} / sigma_i) x_i - expm1(-h) D'; first order on the first and last step.
//  - edm (Gaussian churn): EDM Algorithm 2 with S_churn / N = strength (sqrt 2 - 1), S_tmin = 0,
//    S_tmax = inf, S_noise = 1: t^ = t_i (1 + gamma), x^ = x_i + sqrt(t^2 - t_i^2) eps, then a Heun step.
//  - sde, fds: EDM eq. 6 with Langevin weight beta(t) = strength^2 / t (strength 0: the ODE; strength 1:
//    beta = sigma'/sigma, the reverse-time SDE, "the SDE endpoint"), discretised by Euler-Maruyama from
//    t_i down to t_{i+1} (h = t_i - t_{i+1} > 0):
//        x_{i+1} = x_i + (1 + s^2) h (D_i - x_i) / t_i + s sqrt(2 t_i h) eta_i.
//    sde draws eta_i ~ N(0, I); fds takes eta_i from a driver (drivers.hpp): the driver's integral over
//    the sampler step divided by sqrt(Q T), so that it has unit variance when the driver is fast.
//  - fds_churn: Algorithm 2 with eps_i taken from the driver in the same way.
// The step into sigma = 0 is the plain Euler step x = D(x; t_{N-1}) for every sampler (as in EDM's
// Algorithms 1 and 2, where no noise is added to reach the clean sample).
#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fds {

inline constexpr double kPi = 3.14159265358979323846;

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;  // samples x dims

// A denoiser D(x; sigma), applied to a batch (one row per sample).
class Denoiser {
 public:
  virtual ~Denoiser() = default;
  virtual void denoise(const Mat& x, double sigma, Mat& out) const = 0;
};

// Unit-variance increments eta_i for one sampler step, one per sample and dimension.
class NoiseSource {
 public:
  virtual ~NoiseSource() = default;
  virtual void next(Mat& eta) = 0;  // eta has the batch's shape
};

// EDM eq. 5: N noise levels from smax down to smin, then 0 (N + 1 values).
std::vector<double> edm_schedule(int steps, double sigma_min, double sigma_max, double rho = 7.0);

enum class SamplerKind { Euler, Heun, DpmSolver2M, EdmChurn, Sde, Fds, FdsChurn };

struct SamplerConfig {
  SamplerKind kind = SamplerKind::Heun;
  int nfe = 10;              // the NFE budget; steps_for_nfe() turns it into N
  double strength = 0.0;     // churn: gamma = strength (sqrt 2 - 1); sde / fds: beta(t) = strength^2 / t
  double sigma_min = 0.002, sigma_max = 80.0, rho = 7.0;
};

// N such that the sampler uses at most `nfe` calls: N = nfe for the one-call-per-step samplers,
// floor((nfe + 1) / 2) for heun and the churn samplers (2N - 1 calls).
int steps_for_nfe(SamplerKind kind, int nfe);
bool uses_noise(SamplerKind kind);

struct SampleResult {
  Mat x;
  int nfe = 0;  // calls of D, counted
};

// Runs the sampler from x_0 = sigma_max * z (z given: one row per sample). `noise` is needed when
// uses_noise(kind) and strength > 0.
SampleResult sample(const SamplerConfig& c, const Denoiser& d, const Mat& z, NoiseSource* noise);

// One step of each deterministic sampler, exposed for the tests (and used by sample()).
Mat euler_step(const Denoiser& d, const Mat& x, double t, double t_next, int& nfe);
Mat heun_step(const Denoiser& d, const Mat& x, double t, double t_next, int& nfe);
// DPM-Solver++(2M): `previous` is D at the previous step (empty on the first), h_last its lambda step.
Mat dpmpp_2m_step(const Mat& x, const Mat& denoised, const Mat& previous, double t, double t_next, double h_last);
// EDM eq. 6 with weight strength^2 / t, Euler-Maruyama: eta is the unit-variance increment.
Mat langevin_step(const Mat& x, const Mat& denoised, const Mat& eta, double t, double t_next, double strength);

}  // namespace fds
