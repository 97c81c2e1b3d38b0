// Statistics of the SDK (nexp/stats.hpp).
#include "nexp/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "nexp/error.hpp"

namespace nexp::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool has_nan(const std::vector<double>& x) {
  return std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
}

void check_level(const char* where, double level) {
  if (!(level > 0 && level < 1))
    throw Error(fmt::format("stats::{}: the level is the coverage of a two-sided interval, in (0, 1) (0.95 for 95%); "
                            "found {}",
                            where, level));
}

void check_same_size(const char* where, std::size_t a, std::size_t b) {
  if (a != b)
    throw Error(fmt::format("stats::{}: the two vectors pair up value by value (one per unit, seed or point), so "
                            "they must have the same length; found {} and {}",
                            where, a, b));
}

void check_resamples(const char* where, int resamples) {
  if (resamples < 1) throw Error(fmt::format("stats::{}: expected at least 1 resample, found {}", where, resamples));
}

// ln Gamma(x) for x > 0. lgamma_r, because std::lgamma writes the global signgam (a data race when
// several threads compute intervals at once).
double log_gamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

// ln B(a, b) = ln Gamma(a) + ln Gamma(b) - ln Gamma(a + b). For large a, ln Gamma(a) - ln Gamma(a + b)
// cancels away the digits that matter (t quantiles with 10^9 degrees of freedom); there Stirling's
// series, ln Gamma(x) = (x - 1/2) ln x - x + ln(2 pi) / 2 + 1/(12 x) - 1/(360 x^3) + 1/(1260 x^5) - ...,
// is subtracted term by term, with log1p.
double log_beta(double a, double b) {
  if (a < b) std::swap(a, b);
  if (a < 1e4) return log_gamma(a) + log_gamma(b) - log_gamma(a + b);
  auto series = [](double x) { return (1.0 / 12 - (1.0 / 360 - 1.0 / (1260 * x * x)) / (x * x)) / x; };
  return log_gamma(b) - (a - 0.5) * std::log1p(b / a) - b * std::log(a + b) + b + series(a) - series(a + b);
}

// ln x for x in (0, 1], given y = 1 - x exactly: log1p(-y) keeps the digits of an x close to 1.
double log_of(double x, double y) { return x > 0.5 ? std::log1p(-y) : std::log(x); }

// The root of an increasing f on [lo, hi] with f(lo) <= target <= f(hi), by bisection down to
// adjacent doubles: slow but sure, and the same answer on every platform whose f agrees.
template <class F>
double solve_increasing(const F& f, double target, double lo, double hi) {
  for (int i = 0; i < 2000; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (f(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// I_x(a, b) by the continued fraction of DLMF 8.17.22, evaluated with the modified Lentz method;
// it converges fast for x < (a + 1) / (a + b + 2). y = 1 - x.
double incomplete_beta_fraction(double x, double y, double a, double b) {
  constexpr double tiny = 1e-300, eps = 1e-16;
  auto guard = [](double v) { return std::fabs(v) < tiny ? tiny : v; };
  double c = 1, d = 1 / guard(1 - (a + b) * x / (a + 1)), h = d;
  for (int m = 1; m < 100000; ++m) {
    const double m2 = 2.0 * m;
    double coef = m * (b - m) * x / ((a + m2 - 1) * (a + m2));  // the even step d_{2m}
    d = 1 / guard(1 + coef * d), c = guard(1 + coef / c), h *= d * c;
    coef = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));  // the odd step d_{2m+1}
    d = 1 / guard(1 + coef * d), c = guard(1 + coef / c);
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < eps) break;
  }
  const double log_front = a * log_of(x, y) + b * log_of(y, x) - log_beta(a, b);
  return std::exp(log_front) * h / a;
}

// I_x(a, b) given both x and y = 1 - x, so that callers near x = 1 keep their precision; beyond the
// fraction's range, I_x(a, b) = 1 - I_y(b, a).
double incomplete_beta(double x, double y, double a, double b) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  return x > (a + 1) / (a + b + 2) ? 1 - incomplete_beta_fraction(y, x, b, a) : incomplete_beta_fraction(x, y, a, b);
}

// P(T <= t) for t <= 0: I_{dof/(dof+t^2)}(dof/2, 1/2) / 2.
double student_t_lower_tail(double t, double dof) {
  const double t2 = t * t;
  return 0.5 * incomplete_beta(dof / (dof + t2), t2 / (dof + t2), 0.5 * dof, 0.5);
}

// Beyond ~1e5 degrees of freedom the continued fraction loses digits (its first terms cancel to
// about 1/dof), while the expansions around the normal converge fast. The quantile: Cornish-Fisher,
// Abramowitz and Stegun 26.7.5, four terms. The CDF: Fisher's Phi(t) - phi(t) (g1(t) / dof + g2(t) /
// dof^2), error O(dof^-3). Both meet the fraction at the switch to 1e-12 (tested).
double student_t_quantile_expansion(double p, double dof) {
  const double x = normal_quantile(p), x2 = x * x;
  const double g1 = (x2 + 1) * x / 4;
  const double g2 = ((5 * x2 + 16) * x2 + 3) * x / 96;
  const double g3 = (((3 * x2 + 19) * x2 + 17) * x2 - 15) * x / 384;
  const double g4 = ((((79 * x2 + 776) * x2 + 1482) * x2 - 1920) * x2 - 945) * x / 92160;
  return x + (g1 + (g2 + (g3 + g4 / dof) / dof) / dof) / dof;
}

double student_t_cdf_expansion(double t, double dof) {
  const double density = std::exp(-0.5 * t * t) / std::sqrt(2 * 3.14159265358979323846);
  const double t2 = t * t;
  const double g1 = (t2 + 1) * t / 4, g2 = (((3 * t2 - 7) * t2 - 5) * t2 - 3) * t / 96;
  return normal_cdf(t) - density * (g1 + g2 / dof) / dof;
}

double two_sided_t(double level, double dof) { return student_t_quantile(0.5 + 0.5 * level, dof); }

Interval t_interval(double estimate, double se, double dof, double level) {
  if (!(dof > 0) || std::isnan(se)) return {estimate, kNaN, kNaN};
  const double half = se > 0 ? two_sided_t(level, dof) * se : 0.0;
  return {estimate, estimate - half, estimate + half};
}

std::vector<double> differences(const char* where, const std::vector<double>& a, const std::vector<double>& b) {
  check_same_size(where, a.size(), b.size());
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

std::vector<double> logs(const char* where, const char* name, const std::vector<double>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] <= 0)
      throw Error(fmt::format("stats::{}: {}[{}] = {}; a log-log fit needs every value > 0 (leave out the points that "
                              "are zero, censored or not reached)",
                              where, name, i, v[i]));
    out[i] = std::log(v[i]);
  }
  return out;
}

double slope_of(const std::vector<double>& x, const std::vector<double>& y) { return fit_line(x, y).slope; }

}  // namespace

// ---------------------------------------------------------------- centres and spreads

double mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double variance(const std::vector<double>& x) {
  if (x.size() < 2) return kNaN;
  const double m = mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return ss / static_cast<double>(x.size() - 1);
}

double stddev(const std::vector<double>& x) { return std::sqrt(variance(x)); }

double standard_error(const std::vector<double>& x) { return stddev(x) / std::sqrt(static_cast<double>(x.size())); }

double median(const std::vector<double>& x) { return quantile(x, 0.5); }

double quantile_sorted(const std::vector<double>& sorted, double p) {
  if (!(p >= 0 && p <= 1)) throw Error(fmt::format("stats::quantile: p must be in [0, 1]; found {}", p));
  if (sorted.empty()) return kNaN;
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto i = static_cast<std::size_t>(std::floor(h));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (h - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

std::vector<double> quantiles(const std::vector<double>& x, const std::vector<double>& ps) {
  std::vector<double> sorted = x, out;
  if (has_nan(x)) sorted.clear();  // a NaN has no place in the order: every quantile is NaN
  std::sort(sorted.begin(), sorted.end());
  for (double p : ps) out.push_back(quantile_sorted(sorted, p));
  return out;
}

double quantile(const std::vector<double>& x, double p) { return quantiles(x, {p}).front(); }

Summary summarize(const std::vector<double>& x) {
  Summary s;
  s.n = x.size();
  s.mean = mean(x), s.sd = stddev(x), s.se = standard_error(x);
  const auto q = quantiles(x, {0.0, 0.5, 1.0});
  s.min = q[0], s.median = q[1], s.max = q[2];
  return s;
}

// ---------------------------------------------------------------- distributions

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double normal_quantile(double p) {
  if (!(p >= 0 && p <= 1)) throw Error(fmt::format("stats::normal_quantile: p must be in [0, 1]; found {}", p));
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (p > 0.5) return -normal_quantile(1 - p);
  // The lower tail through erfc keeps its relative precision down to the smallest doubles.
  return solve_increasing(normal_cdf, p, -40.0, 0.0);
}

double student_t_cdf(double t, double dof) {
  if (!(dof > 0)) throw Error(fmt::format("stats::student_t_cdf: the degrees of freedom must be > 0; found {}", dof));
  if (std::isnan(t)) return kNaN;
  if (dof > 1e5) return student_t_cdf_expansion(t, dof);
  return t <= 0 ? student_t_lower_tail(t, dof) : 1 - student_t_lower_tail(-t, dof);
}

double student_t_quantile(double p, double dof) {
  if (!(dof > 0)) throw Error(fmt::format("stats::student_t_quantile: the degrees of freedom must be > 0; found {}", dof));
  if (!(p >= 0 && p <= 1)) throw Error(fmt::format("stats::student_t_quantile: p must be in [0, 1]; found {}", p));
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (p > 0.5) return -student_t_quantile(1 - p, dof);
  if (dof > 1e5) return student_t_quantile_expansion(p, dof);
  double lo = -1;
  while (student_t_lower_tail(lo, dof) > p && lo > -1e300) lo *= 2;
  return solve_increasing([dof](double t) { return student_t_lower_tail(t, dof); }, p, lo, 0.0);
}

double beta_cdf(double x, double a, double b) {
  if (!(a > 0 && b > 0)) throw Error(fmt::format("stats::beta_cdf: a and b must be > 0; found {} and {}", a, b));
  if (std::isnan(x)) return kNaN;
  return incomplete_beta(std::clamp(x, 0.0, 1.0), std::clamp(1 - x, 0.0, 1.0), a, b);
}

double beta_quantile(double p, double a, double b) {
  if (!(p >= 0 && p <= 1)) throw Error(fmt::format("stats::beta_quantile: p must be in [0, 1]; found {}", p));
  if (p == 0) return 0;
  if (p == 1) return 1;
  return solve_increasing([a, b](double x) { return beta_cdf(x, a, b); }, p, 0.0, 1.0);
}

// ---------------------------------------------------------------- intervals

Interval mean_t_interval(const std::vector<double>& x, double level) {
  check_level("mean_t_interval", level);
  return t_interval(mean(x), standard_error(x), static_cast<double>(x.size()) - 1, level);
}

BootstrapInterval mean_bootstrap_interval(const std::vector<double>& x, Random& rng, double level, int resamples) {
  check_level("mean_bootstrap_interval", level);
  check_resamples("mean_bootstrap_interval", resamples);
  if (x.empty() || has_nan(x)) return {};
  return bootstrap(
      x.size(),
      [&x](const std::vector<std::size_t>& idx) {
        double s = 0;
        for (std::size_t i : idx) s += x[i];
        return s / static_cast<double>(idx.size());
      },
      rng, level, resamples);
}

Interval paired_t_interval(const std::vector<double>& a, const std::vector<double>& b, double level) {
  check_level("paired_t_interval", level);
  return mean_t_interval(differences("paired_t_interval", a, b), level);
}

BootstrapInterval paired_bootstrap(const std::vector<double>& a, const std::vector<double>& b, Random& rng, double level,
                                   int resamples) {
  check_level("paired_bootstrap", level);
  return mean_bootstrap_interval(differences("paired_bootstrap", a, b), rng, level, resamples);
}

Interval welch_t_interval(const std::vector<double>& a, const std::vector<double>& b, double level) {
  check_level("welch_t_interval", level);
  const double estimate = mean(a) - mean(b);
  if (a.size() < 2 || b.size() < 2) return {estimate, kNaN, kNaN};
  const double va = variance(a) / static_cast<double>(a.size()), vb = variance(b) / static_cast<double>(b.size());
  if (va + vb == 0) return {estimate, estimate, estimate};
  const double dof = (va + vb) * (va + vb) /
                     (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  return t_interval(estimate, std::sqrt(va + vb), dof, level);
}

BootstrapInterval bootstrap(std::size_t n, const Statistic& statistic, Random& rng, double level, int resamples) {
  check_level("bootstrap", level);
  check_resamples("bootstrap", resamples);
  if (n == 0) return {};
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  const double estimate = statistic(idx);
  std::vector<double> replicates;
  replicates.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (auto& i : idx) i = static_cast<std::size_t>(rng.below(n));
    replicates.push_back(statistic(idx));
  }
  return percentile_interval(std::move(replicates), estimate, level);
}

BootstrapInterval percentile_interval(std::vector<double> replicates, double estimate, double level) {
  check_level("percentile_interval", level);
  replicates.erase(std::remove_if(replicates.begin(), replicates.end(), [](double v) { return !std::isfinite(v); }),
                   replicates.end());
  BootstrapInterval out;
  out.estimate = estimate;
  out.resamples = static_cast<int>(replicates.size());
  if (replicates.empty()) return out;
  std::sort(replicates.begin(), replicates.end());
  const double tail = 0.5 * (1 - level);
  out.low = quantile_sorted(replicates, tail), out.high = quantile_sorted(replicates, 1 - tail);
  const auto above = std::count_if(replicates.begin(), replicates.end(), [](double v) { return v > 0; });
  out.share_above_zero = static_cast<double>(above) / static_cast<double>(replicates.size());
  return out;
}

namespace {
void check_counts(const char* where, std::int64_t k, std::int64_t n) {
  if (n < 0 || k < 0 || k > n)
    throw Error(fmt::format("stats::{}: expected 0 <= successes <= trials; found {} successes in {} trials", where, k, n));
}
}  // namespace

Interval wilson_interval(std::int64_t successes, std::int64_t trials, double level) {
  check_level("wilson_interval", level);
  check_counts("wilson_interval", successes, trials);
  if (trials == 0) return {};
  const double n = static_cast<double>(trials), p = static_cast<double>(successes) / n;
  const double z = normal_quantile(0.5 + 0.5 * level), z2n = z * z / n;
  const double centre = (p + 0.5 * z2n) / (1 + z2n);
  const double half = z / (1 + z2n) * std::sqrt(p * (1 - p) / n + 0.25 * z2n / n);
  return {p, std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

Interval clopper_pearson_interval(std::int64_t successes, std::int64_t trials, double level) {
  check_level("clopper_pearson_interval", level);
  check_counts("clopper_pearson_interval", successes, trials);
  if (trials == 0) return {};
  const double k = static_cast<double>(successes), n = static_cast<double>(trials), tail = 0.5 * (1 - level);
  const double low = successes == 0 ? 0.0 : beta_quantile(tail, k, n - k + 1);
  const double high = successes == trials ? 1.0 : beta_quantile(1 - tail, k + 1, n - k);
  return {k / n, low, high};
}

// ---------------------------------------------------------------- line fits

Interval LineFit::slope_interval(double level) const {
  check_level("LineFit::slope_interval", level);
  return t_interval(slope, slope_se, static_cast<double>(n) - 2, level);
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  check_same_size("fit_line", x.size(), y.size());
  LineFit f;
  f.n = x.size();
  const double mx = mean(x), my = mean(y);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < f.n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
  }
  if (f.n < 2 || !(sxx > 0)) return f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  double sse = 0;
  for (std::size_t i = 0; i < f.n; ++i) {
    const double r = y[i] - (f.intercept + f.slope * x[i]);
    sse += r * r;
  }
  f.r2 = syy > 0 ? 1 - sse / syy : kNaN;
  if (f.n >= 3) f.slope_se = std::sqrt(sse / static_cast<double>(f.n - 2) / sxx);
  return f;
}

LineFit fit_loglog(const std::vector<double>& x, const std::vector<double>& y) {
  check_same_size("fit_loglog", x.size(), y.size());
  return fit_line(logs("fit_loglog", "x", x), logs("fit_loglog", "y", y));
}

BootstrapInterval loglog_slope_bootstrap(const std::vector<double>& x, const std::vector<double>& y, Random& rng,
                                         double level, int resamples) {
  check_same_size("loglog_slope_bootstrap", x.size(), y.size());
  const auto lx = logs("loglog_slope_bootstrap", "x", x), ly = logs("loglog_slope_bootstrap", "y", y);
  std::vector<double> sx(x.size()), sy(y.size());
  return bootstrap(
      x.size(),
      [&](const std::vector<std::size_t>& idx) {
        for (std::size_t i = 0; i < idx.size(); ++i) sx[i] = lx[idx[i]], sy[i] = ly[idx[i]];
        return slope_of(sx, sy);
      },
      rng, level, resamples);
}

BootstrapInterval loglog_slope_of_means(const std::vector<double>& x, const std::vector<std::vector<double>>& samples,
                                        Random& rng, double level, int resamples) {
  check_level("loglog_slope_of_means", level);
  check_resamples("loglog_slope_of_means", resamples);
  check_same_size("loglog_slope_of_means", x.size(), samples.size());
  const auto lx = logs("loglog_slope_of_means", "x", x);
  std::vector<double> centre(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) centre[i] = mean(samples[i]);
  if (std::any_of(centre.begin(), centre.end(), [](double m) { return std::isnan(m); }))
    throw Error(fmt::format("stats::loglog_slope_of_means: every x needs at least one measurement; found an empty "
                            "sample or a NaN among the {} samples",
                            samples.size()));
  const double estimate = slope_of(lx, logs("loglog_slope_of_means", "the mean of samples", centre));
  std::vector<double> replicates;
  replicates.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto& s = samples[i];
      double sum = 0;
      for (std::size_t j = 0; j < s.size(); ++j) sum += s[rng.below(s.size())];
      centre[i] = sum > 0 ? std::log(sum / static_cast<double>(s.size())) : kNaN;
    }
    replicates.push_back(slope_of(lx, centre));
  }
  return percentile_interval(std::move(replicates), estimate, level);
}

// ---------------------------------------------------------------- ranks and correlations

std::vector<double> ranks(const std::vector<double>& x) {
  if (has_nan(x)) return std::vector<double>(x.size(), kNaN);
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&x](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double midrank = 0.5 * static_cast<double>(i + j) + 1;  // ranks i+1..j+1 share their mean
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = midrank;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_same_size("pearson", x.size(), y.size());
  const double mx = mean(x), my = mean(y);
  double sxx = 0, syy = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx, syy += dy * dy, sxy += dx * dy;
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : kNaN;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_same_size("spearman", x.size(), y.size());
  return pearson(ranks(x), ranks(y));
}

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  check_same_size("kendall_tau_b", x.size(), y.size());
  if (has_nan(x) || has_nan(y)) return kNaN;
  auto sign = [](double d) { return static_cast<double>((d > 0) - (d < 0)); };
  double concordance = 0, untied_x = 0, untied_y = 0;  // n_c - n_d, and the pairs untied in x, in y
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const double sx = sign(x[i] - x[j]), sy = sign(y[i] - y[j]);
      concordance += sx * sy, untied_x += sx != 0, untied_y += sy != 0;
    }
  return untied_x > 0 && untied_y > 0 ? concordance / std::sqrt(untied_x * untied_y) : kNaN;
}

double roc_auc(const std::vector<double>& scores, const std::vector<int>& labels) {
  check_same_size("roc_auc", scores.size(), labels.size());
  double positives = 0, rank_sum = 0;
  const auto r = ranks(scores);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] != 0 && labels[i] != 1)
      throw Error(fmt::format("stats::roc_auc: labels are 0 (negative) or 1 (positive); found {} at index {}", labels[i], i));
    if (labels[i] == 1) positives += 1, rank_sum += r[i];
  }
  const double negatives = static_cast<double>(labels.size()) - positives;
  if (positives == 0 || negatives == 0) return kNaN;
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace nexp::stats
