#include "scaling.hpp"

#include <fmt/format.h>
#include <nexp/error.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace curation_scaling {

namespace {

double log_choose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// Linear least squares of y on [1, f]: returns (intercept, slope, sse).
struct LinearFit {
  double a = 0, b = 0, sse = 0;
};
LinearFit linear_fit(const std::vector<double>& f, const std::vector<double>& y, bool slope_nonneg) {
  const double n = static_cast<double>(y.size());
  double mf = 0, my = 0;
  for (std::size_t i = 0; i < y.size(); ++i) mf += f[i] / n, my += y[i] / n;
  double sff = 0, sfy = 0;
  for (std::size_t i = 0; i < y.size(); ++i) sff += (f[i] - mf) * (f[i] - mf), sfy += (f[i] - mf) * (y[i] - my);
  LinearFit r;
  r.b = sff > 0 ? sfy / sff : 0;
  if (slope_nonneg && r.b < 0) r.b = 0;
  r.a = my - r.b * mf;
  for (std::size_t i = 0; i < y.size(); ++i) r.sse += std::pow(y[i] - r.a - r.b * f[i], 2);
  return r;
}

// For a fixed rate, the closed-form (offset, scale) and its SSE.
Law profile(LawForm form, double rate, const std::vector<double>& k, const std::vector<double>& loss) {
  std::vector<double> f(k.size());
  for (std::size_t i = 0; i < k.size(); ++i)
    f[i] = form == LawForm::PowerLaw ? std::pow(k[i], -rate) : std::exp(-rate * k[i]);
  const LinearFit lf = linear_fit(f, loss, true);
  return Law{form, lf.a, lf.b, rate, lf.sse};
}

Law minimise_profile(LawForm form, double lo, double hi, const std::vector<double>& k,
                     const std::vector<double>& loss) {
  // Grid in log(rate), then golden section around the best grid point.
  const int grid = 200;
  double best_u = std::log(lo), best_sse = INFINITY;
  const double ulo = std::log(lo), uhi = std::log(hi), du = (uhi - ulo) / grid;
  for (int i = 0; i <= grid; ++i) {
    const double u = ulo + du * i, s = profile(form, std::exp(u), k, loss).sse;
    if (s < best_sse) best_sse = s, best_u = u;
  }
  double a = std::max(ulo, best_u - du), b = std::min(uhi, best_u + du);
  const double phi = 0.5 * (std::sqrt(5.0) - 1);
  for (int it = 0; it < 60; ++it) {
    const double c = b - phi * (b - a), d = a + phi * (b - a);
    if (profile(form, std::exp(c), k, loss).sse < profile(form, std::exp(d), k, loss).sse)
      b = d;
    else
      a = c;
  }
  return profile(form, std::exp(0.5 * (a + b)), k, loss);
}

}  // namespace

std::vector<double> best_of_k_exact(const std::vector<double>& proxy, const std::vector<double>& target,
                                    const std::vector<std::int64_t>& ks) {
  const std::size_t n = proxy.size();
  if (target.size() != n || n == 0)
    throw nexp::Error(fmt::format("best_of_k_exact: expected proxy and target losses of the same non-zero length; "
                                  "found {} and {}", n, target.size()));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return proxy[a] < proxy[b]; });
  std::vector<double> out;
  for (const std::int64_t k : ks) {
    if (k < 1 || static_cast<std::size_t>(k) > n)
      throw nexp::Error(fmt::format("best_of_k_exact: k = {} outside 1..N = {}", k, n));
    const double lck = log_choose(static_cast<double>(n), static_cast<double>(k));
    double e = 0;
    for (std::size_t r = 1; r + k - 1 <= n; ++r)
      e += std::exp(log_choose(static_cast<double>(n - r), static_cast<double>(k - 1)) - lck) * target[order[r - 1]];
    out.push_back(e);
  }
  return out;
}

const char* law_name(LawForm form) {
  switch (form) {
    case LawForm::PowerLaw: return "power_law";
    case LawForm::Exponential: return "exponential";
    case LawForm::LogLinear: return "log_linear";
  }
  return "?";
}

double Law::operator()(double k) const {
  switch (form) {
    case LawForm::PowerLaw: return offset + scale * std::pow(k, -rate);
    case LawForm::Exponential: return offset + scale * std::exp(-rate * k);
    case LawForm::LogLinear: return offset - scale * std::log(k);
  }
  return NAN;
}

Law fit_law(LawForm form, const std::vector<double>& k, const std::vector<double>& loss) {
  if (k.size() != loss.size() || k.size() < 3)
    throw nexp::Error(fmt::format("fit_law: expected at least 3 (k, loss) points of equal length; found {} and {}",
                                  k.size(), loss.size()));
  if (form == LawForm::LogLinear) {
    std::vector<double> f(k.size());
    for (std::size_t i = 0; i < k.size(); ++i) f[i] = -std::log(k[i]);
    const LinearFit lf = linear_fit(f, loss, false);
    return Law{form, lf.a, lf.b, 0, lf.sse};
  }
  const double kmax = *std::max_element(k.begin(), k.end());
  return form == LawForm::PowerLaw ? minimise_profile(form, 1e-3, 4.0, k, loss)
                                   : minimise_profile(form, 1e-3 / kmax, 20.0, k, loss);
}

std::vector<std::int64_t> half_octave_ks(std::int64_t kmax) {
  std::vector<std::int64_t> ks;
  for (int j = 0;; ++j) {
    const auto k = static_cast<std::int64_t>(std::llround(std::pow(2.0, j / 2.0)));
    if (k > kmax) break;
    if (ks.empty() || ks.back() != k) ks.push_back(k);
  }
  if (ks.empty() || ks.back() != kmax) ks.push_back(kmax);
  return ks;
}

double unit_ball_volume(int d) {
  return std::pow(M_PI, d / 2.0) / std::tgamma(d / 2.0 + 1.0);
}

double random_search_asymptote(int d, double k) {
  return std::tgamma(1.0 + 2.0 / d) * std::pow(k * unit_ball_volume(d), -2.0 / d);
}

// ---------------------------------------------------------------- the law with repetition

double RepetitionLaw::log_loss(double seen) const {
  if (!(seen > 0)) throw nexp::ConfigError(fmt::format("RepetitionLaw: examples seen must be > 0; found {}", seen));
  if (seen <= unique) return log_a + b * std::log(seen);
  const double delta = std::isinf(tau) ? 1.0 : std::exp2(-1.0 / tau);
  const double passes = std::floor(seen / unique);
  const auto k_max = static_cast<std::int64_t>(passes);
  double bracket = std::log(unique), weight = 1.0;  // weight = delta^(k-1)
  for (std::int64_t k = 2; k <= k_max; ++k) {
    weight *= delta;
    if (weight < 1e-300) break;  // the rest adds nothing
    bracket += weight * std::log(static_cast<double>(k) / static_cast<double>(k - 1));
  }
  bracket += std::pow(delta, passes) * std::log(seen / (passes * unique));
  return log_a + b * bracket;
}

double RepetitionLaw::operator()(double seen) const { return std::exp(log_loss(seen)); }

RepetitionLaw fit_first_use(const std::vector<double>& seen, const std::vector<double>& loss, double unique) {
  if (seen.size() != loss.size() || seen.size() < 2)
    throw nexp::ConfigError(fmt::format("fit_first_use: expected at least 2 (seen, loss) points; found {} and {}",
                                        seen.size(), loss.size()));
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (!(seen[i] > 0) || !(loss[i] > 0))
      throw nexp::ConfigError(fmt::format("fit_first_use: point {} has seen {} and loss {}; both must be > 0", i,
                                          seen[i], loss[i]));
    lx.push_back(std::log(seen[i])), ly.push_back(std::log(loss[i]));
  }
  const LinearFit f = linear_fit(lx, ly, false);
  RepetitionLaw law;
  law.log_a = f.a, law.b = f.b, law.unique = unique;
  return law;
}

double fit_half_life(RepetitionLaw law, const std::vector<double>& seen, const std::vector<double>& loss,
                     double tau_min, double tau_max) {
  if (seen.empty() || seen.size() != loss.size() || !(tau_min > 0) || !(tau_max > tau_min))
    throw nexp::ConfigError(fmt::format("fit_half_life: expected matching non-empty points and 0 < tau_min < tau_max; "
                                        "found {} and {} points, [{}, {}]", seen.size(), loss.size(), tau_min, tau_max));
  auto sse = [&](double log_tau) {
    law.tau = std::exp(log_tau);
    double s = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) s += std::pow(law.log_loss(seen[i]) - std::log(loss[i]), 2);
    return s;
  };
  const double lo = std::log(tau_min), hi = std::log(tau_max);
  constexpr int kGrid = 64;
  int best = 0;
  double best_sse = INFINITY;
  for (int i = 0; i <= kGrid; ++i) {
    const double v = sse(lo + (hi - lo) * i / kGrid);
    if (v < best_sse) best_sse = v, best = i;
  }
  double a = lo + (hi - lo) * std::max(0, best - 1) / kGrid, c = lo + (hi - lo) * std::min(kGrid, best + 1) / kGrid;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 80; ++it) {
    const double x1 = c - g * (c - a), x2 = a + g * (c - a);
    if (sse(x1) <= sse(x2)) c = x2; else a = x1;
  }
  return std::exp(0.5 * (a + c));
}

}  // namespace curation_scaling
