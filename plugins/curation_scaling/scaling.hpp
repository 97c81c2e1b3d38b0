#pragma once
// The scaling side of curation search: best-of-k curves and the laws fitted to them. Free of torch.
//
//   best_of_k_exact      E[target loss of the proxy-best of k recipes drawn without replacement from a
//                        table of N], exact from order statistics (the paper's best-found-recipe curve):
//                          sort the table by proxy loss (ties: lower index first); the proxy-best of a
//                          uniform k-subset has proxy rank r (1-based) with probability
//                          P(r) = C(N - r, k - 1) / C(N, k),  so  E_k = sum_r P(r) t_(r).
//   fit_law              the three candidate forms for L(k), each by least squares on the curve's points:
//                          power law    L(k) = L_inf + A k^-g          (zero-order regret: g ~ 1/d .. 2/d)
//                          exponential  L(k) = L_inf + A exp(-b k)
//                          log-linear   L(k) = a - b ln k
//                        The non-linear parameter (g or b) is profiled: for each value the rest is a linear
//                        least-squares fit in closed form; the profile is minimised by a grid then golden
//                        section. Power law and exponential keep A >= 0 (a curve that falls).
//   random_search_regret E[min over k uniform points of ||x - x*||^2] in [0,1]^d, and its asymptote
//                        Gamma(1 + 2/d) (k V_d)^(-2/d), V_d the volume of the unit d-ball: the zero-order
//                        argument behind the power law (order statistics of the squared distance).
//   RepetitionLaw        the data scaling law with repetition of the compute-aware QQT ("Scaling laws
//                        for data filtering", Goyal et al. 2024), for a filter that keeps U unique
//                        examples, after C examples seen (delta = 2^(-1/tau), tau the half-life in
//                        repetitions, K = floor(C / U)):
//                          C <= U:  log y(C) = log a + b log C
//                          C >  U:  log y(C) = log a + b [ log U + sum_{k=2}^{K} delta^(k-1) log(k / (k-1))
//                                                         + delta^K log(C / (K U)) ]
//                        Derivation: on first use the loss falls as a C^b, i.e. d log y / d log C = b. An
//                        example seen for the k-th time is worth less: during the k-th pass over the
//                        pool (C in ((k-1) U, k U]) the local exponent is b delta^(k-1). Integrating the
//                        slope over log C, the first pass contributes b log U, each completed pass k >= 2
//                        contributes b delta^(k-1) [log(k U) - log((k-1) U)] and the running pass K + 1
//                        contributes b delta^K log(C / (K U)). At C = K U the running term is 0 and the
//                        completed passes give the same sum as the limit from below, so y is continuous;
//                        with b < 0 every term lowers y, so y falls monotonically in C; tau -> infinity
//                        (delta = 1) telescopes the bracket to log C, the law without repetition.
//   fit_first_use        (log a, b) by least squares of log y on log n (the points must have n <= U)
//   fit_half_life        tau by least squares of log y on the law's log y(C) with (a, b) held fixed; tau
//                        is searched on a log grid then by golden section in [tau_min, tau_max]
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace curation_scaling {

// proxy[i], target[i]: the proxy and target losses of recipe i. Returns E_k for each k of `ks` (1 <= k <= N).
std::vector<double> best_of_k_exact(const std::vector<double>& proxy, const std::vector<double>& target,
                                    const std::vector<std::int64_t>& ks);

enum class LawForm { PowerLaw, Exponential, LogLinear };
const char* law_name(LawForm form);

struct Law {
  LawForm form = LawForm::PowerLaw;
  // PowerLaw: L_inf + A k^-rate; Exponential: L_inf + A exp(-rate k); LogLinear: offset - A ln k.
  double offset = 0, scale = 0, rate = 0;
  double sse = 0;  // on the fitted points
  double operator()(double k) const;
};

// Least-squares fit of one form to the points (k[i], loss[i]); k > 0, at least 3 points.
Law fit_law(LawForm form, const std::vector<double>& k, const std::vector<double>& loss);

// The ks of a curve: 1, 2, 4, ... up to kmax, with the half-octaves between (rounded, distinct).
std::vector<std::int64_t> half_octave_ks(std::int64_t kmax);

// Euclidean volume of the unit ball in d dimensions, pi^(d/2) / Gamma(d/2 + 1).
double unit_ball_volume(int d);
// Asymptotic E[min of k squared distances to an interior point], Gamma(1 + 2/d) (k V_d)^(-2/d).
double random_search_asymptote(int d, double k);

struct RepetitionLaw {
  double log_a = 0, b = 0;  // first use: log y = log_a + b log n
  double tau = INFINITY;    // half-life of an example's value, in repetitions (> 0; infinity: no decay)
  double unique = 1;        // U, unique examples the filter keeps
  double log_loss(double seen) const;
  double operator()(double seen) const;
};

// Least squares of log(loss) on log(seen); at least 2 points with distinct n, every loss > 0.
RepetitionLaw fit_first_use(const std::vector<double>& seen, const std::vector<double>& loss, double unique);
// tau of `law` (log_a, b, unique kept) fitted to points (seen, loss) that repeat the data (seen > unique).
double fit_half_life(RepetitionLaw law, const std::vector<double>& seen, const std::vector<double>& loss,
                     double tau_min = 0.05, double tau_max = 1e3);

}  // namespace curation_scaling
