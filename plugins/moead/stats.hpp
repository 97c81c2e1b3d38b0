#pragma once
// The bootstrap interval of a runtime-scaling exponent, drawn with the plugin's own generator. Means,
// medians, standard deviations and log-log fits come from the SDK (nexp/stats.hpp); this one routine
// stays here because its resamples draw seeds with moead::Rng::below (one 32-bit multiply-shift per
// index), not with nexp::Random::below as nexp::stats::loglog_slope_of_means does: switching would
// redraw every resample and move the published intervals.
#include <cstdint>
#include <vector>

namespace moead {

struct SlopeInterval {
  double slope = 0, lo = 0, hi = 0;  // point estimate and percentile interval
};
// samples[i]: the runtimes measured at x[i] (one per seed). The slope of log(mean runtime) against
// log(x); the interval resamples the seeds within each x independently, `resamples` times.
SlopeInterval bootstrap_loglog_slope(const std::vector<double>& x, const std::vector<std::vector<double>>& samples,
                                     int resamples, std::uint64_t seed, double level = 0.95);

}  // namespace moead
