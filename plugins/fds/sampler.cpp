#include "sampler.hpp"

#include <cmath>
#include <stdexcept>

namespace fds {

std::vector<double> edm_schedule(int steps, double sigma_min, double sigma_max, double rho) {
  std::vector<double> t(static_cast<std::size_t>(steps) + 1, 0.0);
  const double a = std::pow(sigma_max, 1.0 / rho), b = std::pow(sigma_min, 1.0 / rho);
  for (int i = 0; i < steps; ++i) {
    const double frac = steps == 1 ? 0.0 : static_cast<double>(i) / (steps - 1);
    t[static_cast<std::size_t>(i)] = std::pow(a + frac * (b - a), rho);
  }
  return t;
}

bool uses_noise(SamplerKind kind) {
  return kind == SamplerKind::EdmChurn || kind == SamplerKind::Sde || kind == SamplerKind::Fds ||
         kind == SamplerKind::FdsChurn;
}

int steps_for_nfe(SamplerKind kind, int nfe) {
  const bool two_calls = kind == SamplerKind::Heun || kind == SamplerKind::EdmChurn || kind == SamplerKind::FdsChurn;
  return two_calls ? std::max(1, (nfe + 1) / 2) : std::max(1, nfe);
}

namespace {

Mat call(const Denoiser& d, const Mat& x, double sigma, int& nfe) {
  Mat out(x.rows(), x.cols());
  d.denoise(x, sigma, out);
  ++nfe;
  return out;
}

// EDM Algorithm 2, lines 4-6: raise the noise level from t to t(1 + gamma) with the increment eta.
double churn(Mat& x, double t, double strength, NoiseSource& noise) {
  const double gamma = strength * (std::sqrt(2.0) - 1.0);
  const double t_hat = t * (1.0 + gamma);
  if (gamma > 0) {
    Mat eta(x.rows(), x.cols());
    noise.next(eta);
    x += std::sqrt(t_hat * t_hat - t * t) * eta;
  }
  return t_hat;
}

}  // namespace

Mat euler_step(const Denoiser& d, const Mat& x, double t, double t_next, int& nfe) {
  const Mat den = call(d, x, t, nfe);
  const Mat slope = (x - den) / t;
  return x + (t_next - t) * slope;
}

Mat heun_step(const Denoiser& d, const Mat& x, double t, double t_next, int& nfe) {
  const Mat den = call(d, x, t, nfe);
  const Mat slope = (x - den) / t;
  Mat next = x + (t_next - t) * slope;
  if (t_next > 0) {
    const Mat den2 = call(d, next, t_next, nfe);
    const Mat slope2 = (next - den2) / t_next;
    next = x + (t_next - t) * (0.5 * slope + 0.5 * slope2);
  }
  return next;
}

Mat dpmpp_2m_step(const Mat& x, const Mat& denoised, const Mat& previous, double t, double t_next, double h_last) {
  if (t_next == 0) return denoised;
  const double h = std::log(t) - std::log(t_next);  // lambda_{i+1} - lambda_i, lambda = -log sigma
  Mat target = denoised;
  if (previous.size() > 0) {
    const double r = h_last / h;
    target = (1.0 + 1.0 / (2.0 * r)) * denoised - (1.0 / (2.0 * r)) * previous;
  }
  return (t_next / t) * x - std::expm1(-h) * target;
}

Mat langevin_step(const Mat& x, const Mat& denoised, const Mat& eta, double t, double t_next, double strength) {
  const double h = t - t_next;
  const Mat slope = (x - denoised) / t;
  // (1 + s^2) h (D - x) / t == (1 + s^2) (t_next - t) slope; at s = 0 this is euler_step bit for bit.
  Mat next = x + ((1.0 + strength * strength) * (t_next - t)) * slope;
  if (strength != 0.0) next += (strength * std::sqrt(2.0 * t * h)) * eta;
  return next;
}

SampleResult sample(const SamplerConfig& c, const Denoiser& d, const Mat& z, NoiseSource* noise) {
  const int steps = steps_for_nfe(c.kind, c.nfe);
  const auto t = edm_schedule(steps, c.sigma_min, c.sigma_max, c.rho);
  const bool noisy = uses_noise(c.kind) && c.strength > 0;
  if (noisy && !noise) throw std::invalid_argument("sample: a stochastic sampler needs a noise source");
  SampleResult r;
  r.x = c.sigma_max * z;
  Mat previous, eta(z.rows(), z.cols());
  double h_last = 0;
  for (int i = 0; i < steps; ++i) {
    const double ti = t[static_cast<std::size_t>(i)], tn = t[static_cast<std::size_t>(i) + 1];
    switch (c.kind) {
      case SamplerKind::Euler: r.x = euler_step(d, r.x, ti, tn, r.nfe); break;
      case SamplerKind::Heun: r.x = heun_step(d, r.x, ti, tn, r.nfe); break;
      case SamplerKind::DpmSolver2M: {
        const Mat den = call(d, r.x, ti, r.nfe);
        r.x = dpmpp_2m_step(r.x, den, previous, ti, tn, h_last);
        if (tn > 0) h_last = std::log(ti) - std::log(tn);
        previous = den;
        break;
      }
      case SamplerKind::EdmChurn:
      case SamplerKind::FdsChurn: {
        const double t_hat = (noisy && tn > 0) ? churn(r.x, ti, c.strength, *noise) : ti;
        r.x = heun_step(d, r.x, t_hat, tn, r.nfe);
        break;
      }
      case SamplerKind::Sde:
      case SamplerKind::Fds: {
        const Mat den = call(d, r.x, ti, r.nfe);
        if (noisy && tn > 0) {
          noise->next(eta);
          r.x = langevin_step(r.x, den, eta, ti, tn, c.strength);
        } else {
          r.x = r.x + (tn - ti) * ((r.x - den) / ti);
        }
        break;
      }
    }
  }
  return r;
}

}  // namespace fds
