#include "stats.hpp"

#include <nexp/stats.hpp>

#include <utility>

#include "bits.hpp"

namespace moead {

SlopeInterval bootstrap_loglog_slope(const std::vector<double>& x, const std::vector<std::vector<double>>& samples,
                                     int resamples, std::uint64_t seed, double level) {
  std::vector<double> centre(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) centre[i] = nexp::stats::mean(samples[i]);
  const double slope = nexp::stats::fit_loglog(x, centre).slope;
  Rng rng(seed);
  std::vector<double> slopes;
  slopes.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto& s = samples[i];
      double acc = 0;
      for (std::size_t j = 0; j < s.size(); ++j) acc += s[rng.below(static_cast<std::uint32_t>(s.size()))];
      centre[i] = acc / static_cast<double>(s.size());
    }
    slopes.push_back(nexp::stats::fit_loglog(x, centre).slope);
  }
  const auto ci = nexp::stats::percentile_interval(std::move(slopes), slope, level);
  return {slope, ci.low, ci.high};
}

}  // namespace moead
