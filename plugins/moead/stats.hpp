#pragma once
// Summary statistics for the experiments: robust centres, least-squares slopes on log-log axes, and
// percentile-bootstrap intervals for those slopes.
#include <cstdint>
#include <vector>

namespace moead {

double mean(const std::vector<double>& x);
double median(std::vector<double> x);
double stddev(const std::vector<double>& x);  // sample standard deviation (n - 1)

struct LineFit {
  double slope = 0, intercept = 0;
};
// Least squares of log(y) on log(x).
LineFit fit_loglog(const std::vector<double>& x, const std::vector<double>& y);

struct SlopeInterval {
  double slope = 0, lo = 0, hi = 0;  // point estimate and percentile interval
};
// samples[i]: the runtimes measured at x[i] (one per seed). The slope of log(mean runtime) against
// log(x); the interval resamples the seeds within each x independently, `resamples` times.
SlopeInterval bootstrap_loglog_slope(const std::vector<double>& x, const std::vector<std::vector<double>>& samples,
                                     int resamples, std::uint64_t seed, double level = 0.95);

}  // namespace moead
