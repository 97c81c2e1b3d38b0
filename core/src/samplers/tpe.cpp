// TPE (samplers/tpe.hpp): the split, the Parzen estimators, and the expected-improvement choice.
#include "tpe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

namespace nexp::samplers {

namespace {

constexpr double kEps = 1e-12;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double log_sum_exp(const std::vector<double>& v) {
  const double m = *std::max_element(v.begin(), v.end());
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

// Index drawn with probability proportional to `w` (which sums to 1).
std::size_t draw_index(const std::vector<double>& w, Random& rng) {
  double u = rng.uniform(), acc = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    if ((acc += w[i]) > u) return i;
  return w.size() - 1;
}

std::vector<double> normalised(std::vector<double> w) {
  const double s = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= s;
  return w;
}

}  // namespace

// ---------------------------------------------------------------- the split

int tpe_gamma(int n) { return std::min(static_cast<int>(std::ceil(0.1 * n)), 25); }

std::vector<double> tpe_weights(int n) {
  if (n < 25) return std::vector<double>(static_cast<std::size_t>(std::max(n, 0)), 1.0);
  std::vector<double> w(static_cast<std::size_t>(n), 1.0);
  const int ramp = n - 25;  // linspace(1/n, 1, ramp)
  for (int i = 0; i < ramp; ++i)
    w[static_cast<std::size_t>(i)] = ramp == 1 ? 1.0 / n : 1.0 / n + (1.0 - 1.0 / n) * i / (ramp - 1);
  return w;
}

TpeSplit tpe_split(const std::vector<Observation>& history) {
  // Rank: completed trials by value, then pruned ones by the depth they reached (deeper first), then value.
  std::vector<int> usable;
  for (int i = 0; i < static_cast<int>(history.size()); ++i)
    if (history[static_cast<std::size_t>(i)].outcome != Outcome::Failed) usable.push_back(i);
  auto key = [&](int i) {
    const Observation& o = history[static_cast<std::size_t>(i)];
    const double depth = o.outcome == Outcome::Complete ? -std::numeric_limits<double>::infinity()
                                                        : -static_cast<double>(o.step);
    const double v = o.values.empty() || std::isnan(o.values[0]) ? std::numeric_limits<double>::infinity() : o.values[0];
    return std::make_tuple(depth, v, o.number);
  };
  std::stable_sort(usable.begin(), usable.end(), [&](int a, int b) { return key(a) < key(b); });
  const auto n_below = static_cast<std::size_t>(tpe_gamma(static_cast<int>(usable.size())));
  TpeSplit s;
  s.below.assign(usable.begin(), usable.begin() + static_cast<long>(std::min(n_below, usable.size())));
  s.above.assign(usable.begin() + static_cast<long>(s.below.size()), usable.end());
  auto by_number = [&](int a, int b) { return history[static_cast<std::size_t>(a)].number < history[static_cast<std::size_t>(b)].number; };
  std::sort(s.below.begin(), s.below.end(), by_number);
  std::sort(s.above.begin(), s.above.end(), by_number);
  return s;
}

// ---------------------------------------------------------------- the Parzen estimator

Parzen::Parzen(const Dimension& d, const std::vector<double>& xs, const std::vector<double>& weights,
               const TpeOptions& o)
    : d_(d), kernel_scale_(o.kernel_scale) {
  std::vector<double> w = weights;
  w.push_back(o.prior_weight);
  weights_ = normalised(w);
  if (d.kind == Dimension::Kind::Categorical) {
    // Each observation's kernel: prior_weight / kernels on every choice, 1 more on its own; the prior
    // kernel is uniform. The mixture's probability of each choice:
    const std::size_t k = d.choices.size(), kernels = xs.size() + 1;
    pmf_.assign(k, 0.0);
    for (std::size_t i = 0; i < kernels; ++i) {
      std::vector<double> row(k, o.prior_weight / static_cast<double>(kernels));
      if (i < xs.size()) row[static_cast<std::size_t>(xs[i])] += 1.0;
      row = normalised(row);
      for (std::size_t c = 0; c < k; ++c) pmf_[c] += weights_[i] * row[c];
    }
    return;
  }
  const double half = d.kind == Dimension::Kind::Int ? 0.5 : 0.0;  // integers: bins of width 1
  lo_ = to_work(d.lo - half);
  hi_ = to_work(d.hi + half);
  const double range = hi_ - lo_;
  // Kernels sorted with the prior among them; sigma from the sorted neighbours.
  std::vector<double> mus;
  for (double x : xs) mus.push_back(to_work(x));
  mus.push_back(0.5 * (lo_ + hi_));
  std::vector<std::size_t> order(mus.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return mus[a] < mus[b]; });
  std::vector<double> line{lo_};  // lo, the sorted mus, hi
  for (std::size_t i : order) line.push_back(mus[i]);
  line.push_back(hi_);
  const std::size_t n = mus.size();
  std::vector<double> sorted_sigma(n);
  for (std::size_t j = 0; j < n; ++j) sorted_sigma[j] = std::max(line[j + 1] - line[j], line[j + 2] - line[j + 1]);
  if (!o.endpoints && n >= 2) {
    sorted_sigma[0] = line[2] - line[1];
    sorted_sigma[n - 1] = line[n] - line[n - 1];
  }
  const double min_sigma = o.magic_clip ? range / std::min(100.0, 1.0 + static_cast<double>(n)) : kEps;
  sigmas_.assign(n, 0.0);
  for (std::size_t j = 0; j < n; ++j) sigmas_[order[j]] = std::clamp(sorted_sigma[j], min_sigma, range);
  sigmas_.back() = range;  // the prior's
  mus_ = mus;
}

double Parzen::to_work(double x) const { return d_.log ? std::log(x) : x; }
double Parzen::from_work(double w) const { return d_.log ? std::exp(w) : w; }

double Parzen::sample(Random& rng) const {
  if (d_.kind == Dimension::Kind::Categorical) return static_cast<double>(draw_index(pmf_, rng));
  const std::size_t k = draw_index(weights_, rng);
  // A Gaussian truncated to [lo, hi] by rejection: its mean lies inside, so at least ~1/3 is accepted.
  double w = mus_[k];
  for (int tries = 0; tries < 1000; ++tries) {
    const double z = mus_[k] + sigmas_[k] * rng.normal();
    if (z >= lo_ && z <= hi_) {
      w = z;
      break;
    }
  }
  double x = from_work(w);
  if (d_.kind == Dimension::Kind::Int) x = std::clamp(std::round(x), d_.lo, d_.hi);
  return std::clamp(x, d_.lo, d_.hi);
}

double Parzen::log_pdf(double x) const {
  if (d_.kind == Dimension::Kind::Categorical) return std::log(pmf_[static_cast<std::size_t>(x)]);
  // An integer's probability is its bin's mass, [x - 1/2, x + 1/2] (in log space for a log dimension).
  const bool bins = d_.kind == Dimension::Kind::Int;
  const double w = to_work(x), bin_lo = bins ? to_work(x - 0.5) : 0, bin_hi = bins ? to_work(x + 0.5) : 0;
  std::vector<double> terms(mus_.size());
  for (std::size_t k = 0; k < mus_.size(); ++k) {
    const double mu = mus_[k], s = sigmas_[k];
    const double z = std::max(normal_cdf((hi_ - mu) / s) - normal_cdf((lo_ - mu) / s), kEps);
    double lp;
    if (bins) {
      lp = std::log(std::max(normal_cdf((bin_hi - mu) / s) - normal_cdf((bin_lo - mu) / s), kEps));
    } else {
      const double u = (w - mu) / s;
      lp = -0.5 * u * u - (kernel_scale_ ? std::log(s) : 0.0) - 0.5 * std::log(2 * M_PI);
    }
    terms[k] = std::log(weights_[k]) + lp - std::log(z);
  }
  return log_sum_exp(terms);
}

// ---------------------------------------------------------------- the sampler

Point TpeSampler::ask(const std::vector<Observation>& history, int number) {
  Random rng = Random::stream(seed_, "tpe", static_cast<std::uint64_t>(number));
  const TpeSplit split = tpe_split(history);
  if (static_cast<int>(split.below.size() + split.above.size()) < options_.n_startup) return draw_uniform(space_, rng);
  const std::vector<double> w_below = tpe_weights(static_cast<int>(split.below.size()));
  const std::vector<double> w_above = tpe_weights(static_cast<int>(split.above.size()));
  Point x(space_.size());
  for (std::size_t d = 0; d < space_.size(); ++d) {
    auto values = [&](const std::vector<int>& part) {
      std::vector<double> v;
      for (int i : part) v.push_back(history[static_cast<std::size_t>(i)].x[d]);
      return v;
    };
    const Parzen l(space_[d], values(split.below), w_below, options_);
    const Parzen g(space_[d], values(split.above), w_above, options_);
    double best = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < options_.n_ei_candidates; ++c) {
      const double candidate = l.sample(rng);
      const double score = l.log_pdf(candidate) - g.log_pdf(candidate);
      if (c == 0 || score > best) best = score, x[d] = candidate;
    }
  }
  return x;
}

}  // namespace nexp::samplers
