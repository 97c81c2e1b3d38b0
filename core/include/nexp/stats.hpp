#pragma once
// Statistics that experiments report: centres and quantiles, confidence intervals for a mean, paired
// comparisons over seeds, log-log slope fits, binomial intervals and rank measures. Part of the SDK,
// free of torch.
//
// Conventions, the same for every function here:
//  - A sample is a std::vector<double>. A statistic of an empty sample, or of a sample holding a NaN,
//    is NaN; so is an interval that the sample is too small to estimate (a t interval from one value).
//  - `level` is the two-sided coverage, e.g. 0.95 for a 95% interval; the interval is equal-tailed.
//  - Every resampling draws from the nexp::Random it is given, in a fixed order, so a result depends
//    only on the data and that generator's state: pass ctx.stream("bootstrap") or a Random(seed).
//  - Bootstrap intervals are percentile intervals (the level's equal-tailed quantiles of the
//    statistic over resamples, type 7). With few units (under ~10 seeds) they are too narrow; prefer
//    the t interval there, or report both.
//  - Arguments that cannot be meant (mismatched lengths, level outside (0, 1), a log of a value <= 0)
//    throw nexp::Error naming the function, what was expected and what was found.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "nexp/export.hpp"
#include "nexp/random.hpp"

namespace nexp::stats {

// ---------------------------------------------------------------- centres and spreads

NEXP_API double mean(const std::vector<double>& x);
NEXP_API double variance(const std::vector<double>& x);  // sample variance, divisor n - 1
NEXP_API double stddev(const std::vector<double>& x);    // sqrt(variance)
NEXP_API double standard_error(const std::vector<double>& x);  // stddev / sqrt(n)
NEXP_API double median(const std::vector<double>& x);  // the mean of the two middle values when n is even

// The p-quantile, p in [0, 1], by linear interpolation between order statistics: Hyndman and Fan's
// type 7, the default of R's quantile() and NumPy's quantile(): h = (n - 1) p, x_(floor h) + (h -
// floor h) (x_(floor h + 1) - x_(floor h)), order statistics counted from 0.
NEXP_API double quantile(const std::vector<double>& x, double p);
NEXP_API std::vector<double> quantiles(const std::vector<double>& x, const std::vector<double>& ps);
// The same on a sample already sorted ascending (no copy, no check that it is sorted).
NEXP_API double quantile_sorted(const std::vector<double>& sorted, double p);

// The usual columns of a results table.
struct Summary {
  std::size_t n = 0;
  double mean = NAN, sd = NAN, se = NAN, min = NAN, median = NAN, max = NAN;
};
NEXP_API Summary summarize(const std::vector<double>& x);

// ---------------------------------------------------------------- distributions

NEXP_API double normal_cdf(double z);
NEXP_API double normal_quantile(double p);  // inverse of normal_cdf; -inf at 0, +inf at 1
NEXP_API double student_t_cdf(double t, double dof);  // dof > 0, not necessarily an integer
NEXP_API double student_t_quantile(double p, double dof);
// The regularised incomplete beta function I_x(a, b), the CDF of Beta(a, b); a, b > 0.
NEXP_API double beta_cdf(double x, double a, double b);
NEXP_API double beta_quantile(double p, double a, double b);

// ---------------------------------------------------------------- intervals

struct Interval {
  double estimate = NAN;       // the statistic on the whole sample
  double low = NAN, high = NAN;  // report as <name>_ci_low, <name>_ci_high
  bool contains(double v) const { return low <= v && v <= high; }
  bool excludes_zero() const { return low > 0 || high < 0; }
};

struct BootstrapInterval : Interval {
  double share_above_zero = NAN;  // share of the finite resampled statistics that are > 0
  int resamples = 0;              // resamples whose statistic was finite (the others are left out)
};

// The mean with Student's t interval: mean +- t_{(1+level)/2, n-1} sd / sqrt(n). Exact for normal data.
NEXP_API Interval mean_t_interval(const std::vector<double>& x, double level = 0.95);
// The mean with a percentile bootstrap interval.
NEXP_API BootstrapInterval mean_bootstrap_interval(const std::vector<double>& x, Random& rng, double level = 0.95,
                                                   int resamples = 10000);

// Paired comparisons: a[i] and b[i] were measured on the same unit (seed, split, task), and the
// statistic is the mean of the differences a[i] - b[i]. Pairing removes the between-unit spread.
NEXP_API Interval paired_t_interval(const std::vector<double>& a, const std::vector<double>& b, double level = 0.95);
// Resamples the pairs; share_above_zero is the share of resamples in which a beat b on average.
NEXP_API BootstrapInterval paired_bootstrap(const std::vector<double>& a, const std::vector<double>& b, Random& rng,
                                            double level = 0.95, int resamples = 10000);
// Unpaired: mean(a) - mean(b) with Welch's t interval (unequal variances, Welch-Satterthwaite dof).
NEXP_API Interval welch_t_interval(const std::vector<double>& a, const std::vector<double>& b, double level = 0.95);

// The percentile bootstrap of any statistic of n units resampled with replacement. `statistic` gets n
// indices into the caller's data (the identity 0..n-1 for the estimate, then one draw per resample,
// each index drawn by rng.below(n) in order) and returns one number. For a ratio of sums, a
// difference of slopes, a per-seed metric of two paired methods, ...
using Statistic = std::function<double(const std::vector<std::size_t>& indices)>;
NEXP_API BootstrapInterval bootstrap(std::size_t n, const Statistic& statistic, Random& rng, double level = 0.95,
                                     int resamples = 10000);
// The percentile interval of given resampled statistics (NaNs are left out) around `estimate`.
NEXP_API BootstrapInterval percentile_interval(std::vector<double> replicates, double estimate, double level = 0.95);

// Binomial proportion k / n: Wilson's score interval, and Clopper and Pearson's exact interval (its
// coverage is at least `level` for every true proportion).
NEXP_API Interval wilson_interval(std::int64_t successes, std::int64_t trials, double level = 0.95);
NEXP_API Interval clopper_pearson_interval(std::int64_t successes, std::int64_t trials, double level = 0.95);

// ---------------------------------------------------------------- line fits

// Ordinary least squares y = intercept + slope x.
struct LineFit {
  double slope = NAN, intercept = NAN;
  double slope_se = NAN;  // standard error of the slope, sqrt(SSE / (n - 2) / Sxx); NaN when n < 3
  double r2 = NAN;
  std::size_t n = 0;
  // slope +- t_{(1+level)/2, n-2} slope_se: exact for independent normal residuals.
  NEXP_API Interval slope_interval(double level = 0.95) const;
};
NEXP_API LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);
// The exponent b of y = a x^b: least squares of ln y on ln x (intercept ln a). Every x, y must be > 0.
NEXP_API LineFit fit_loglog(const std::vector<double>& x, const std::vector<double>& y);
// The log-log slope with a bootstrap interval that resamples the (x, y) points; resamples with fewer
// than two distinct x have no slope and are left out.
NEXP_API BootstrapInterval loglog_slope_bootstrap(const std::vector<double>& x, const std::vector<double>& y, Random& rng,
                                                  double level = 0.95, int resamples = 10000);
// Repeated measurements: samples[i] holds the values measured at x[i] (one per seed). The slope of
// ln(mean samples[i]) on ln x[i]; the interval resamples the values within each x independently.
NEXP_API BootstrapInterval loglog_slope_of_means(const std::vector<double>& x,
                                                 const std::vector<std::vector<double>>& samples, Random& rng,
                                                 double level = 0.95, int resamples = 10000);

// ---------------------------------------------------------------- ranks and correlations

// Ranks 1..n, ties sharing the mean of their ranks (midranks).
NEXP_API std::vector<double> ranks(const std::vector<double>& x);
NEXP_API double pearson(const std::vector<double>& x, const std::vector<double>& y);
NEXP_API double spearman(const std::vector<double>& x, const std::vector<double>& y);  // Pearson of midranks
NEXP_API double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);  // O(n^2); tau-b adjusts for ties
// The area under the ROC curve: the probability that a random positive scores above a random
// negative, ties counting one half (the Mann-Whitney U statistic over n+ n-). labels are 0 or 1;
// NaN when either class is empty.
NEXP_API double roc_auc(const std::vector<double>& scores, const std::vector<int>& labels);

}  // namespace nexp::stats
