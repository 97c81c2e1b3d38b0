#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bits.hpp"

namespace moead {

double mean(const std::vector<double>& x) {
  return x.empty() ? NAN : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double median(std::vector<double> x) {
  if (x.empty()) return NAN;
  std::sort(x.begin(), x.end());
  const std::size_t m = x.size() / 2;
  return x.size() % 2 ? x[m] : 0.5 * (x[m - 1] + x[m]);
}

double stddev(const std::vector<double>& x) {
  if (x.size() < 2) return 0;
  const double m = mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return std::sqrt(s / static_cast<double>(x.size() - 1));
}

LineFit fit_loglog(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t k = x.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double a = std::log(x[i]), b = std::log(y[i]);
    sx += a, sy += b, sxx += a * a, sxy += a * b;
  }
  const double d = static_cast<double>(k) * sxx - sx * sx;
  LineFit f;
  f.slope = d != 0 ? (static_cast<double>(k) * sxy - sx * sy) / d : NAN;
  f.intercept = (sy - f.slope * sx) / static_cast<double>(k);
  return f;
}

SlopeInterval bootstrap_loglog_slope(const std::vector<double>& x, const std::vector<std::vector<double>>& samples,
                                     int resamples, std::uint64_t seed, double level) {
  std::vector<double> centre(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) centre[i] = mean(samples[i]);
  SlopeInterval out;
  out.slope = fit_loglog(x, centre).slope;
  Rng rng(seed);
  std::vector<double> slopes;
  slopes.reserve(resamples);
  for (int r = 0; r < resamples; ++r) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto& s = samples[i];
      double acc = 0;
      for (std::size_t j = 0; j < s.size(); ++j) acc += s[rng.below(static_cast<std::uint32_t>(s.size()))];
      centre[i] = acc / static_cast<double>(s.size());
    }
    slopes.push_back(fit_loglog(x, centre).slope);
  }
  std::sort(slopes.begin(), slopes.end());
  const double tail = (1 - level) / 2;
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(slopes.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    const double frac = pos - static_cast<double>(i);
    return i + 1 < slopes.size() ? slopes[i] * (1 - frac) + slopes[i + 1] * frac : slopes.back();
  };
  out.lo = at(tail), out.hi = at(1 - tail);
  return out;
}

}  // namespace moead
