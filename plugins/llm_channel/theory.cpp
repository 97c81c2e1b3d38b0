// Closed forms and exact enumerations (theory.hpp).
#include "theory.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <nexp/stats.hpp>

namespace llm_channel {

// ---------------------------------------------------------------- T1

Means precision_means(const std::vector<double>& p) {
  double sum = 0, inverse = 0;
  for (double x : p) sum += x, inverse += 1 / x;
  const double n = static_cast<double>(p.size());
  return {sum / n, n / inverse};
}

double mse_uniform_first_order(const std::vector<double>& p) {
  return 1 / (static_cast<double>(p.size()) * precision_means(p).harmonic);
}

double mse_weighted_first_order(const std::vector<double>& p, double tau) {
  const auto m = precision_means(p);
  return (m.arithmetic + tau * tau / m.harmonic) / (static_cast<double>(p.size()) * m.arithmetic * m.arithmetic);
}

double tau_star(const std::vector<double>& p) {
  const auto m = precision_means(p);
  return std::sqrt(m.arithmetic * (m.arithmetic - m.harmonic));
}

AveragingMse averaging_mse_monte_carlo(const std::vector<double>& p, double tau, int replicas, nexp::Random& rng) {
  std::vector<double> su(static_cast<std::size_t>(replicas)), sw(su.size()), diff(su.size());
  for (std::size_t r = 0; r < su.size(); ++r) {
    double uniform = 0, weighted = 0, total = 0;
    for (double pi : p) {
      const double y = rng.normal() / std::sqrt(pi);  // theta = 0
      const double w = pi + tau * rng.normal();
      uniform += y, weighted += w * y, total += w;
    }
    uniform /= static_cast<double>(p.size());
    weighted /= total;
    su[r] = uniform * uniform, sw[r] = weighted * weighted, diff[r] = sw[r] - su[r];
  }
  return {nexp::stats::mean(su), nexp::stats::mean(sw), nexp::stats::standard_error(su),
          nexp::stats::standard_error(sw), nexp::stats::standard_error(diff)};
}

// ---------------------------------------------------------------- T2

double refinement_fixed_point(double a, double b) { return b / (a + b); }

double refinement_accuracy(double c0, double a, double b, int rounds) {
  const double star = refinement_fixed_point(a, b);
  return star + std::pow(1 - a - b, rounds) * (c0 - star);
}

// ---------------------------------------------------------------- T3

double plurality_accuracy_exact(const std::vector<double>& p, int n) {
  const std::size_t k = p.size();
  std::vector<int> counts(k, 0);
  std::vector<double> log_fact(static_cast<std::size_t>(n) + 1, 0.0);
  for (int i = 1; i <= n; ++i) log_fact[static_cast<std::size_t>(i)] = log_fact[static_cast<std::size_t>(i) - 1] + std::log(i);
  double accuracy = 0;
  // Every composition of n into k counts; its multinomial probability, and the right answer's share
  // of the win when it is among the tied leaders.
  std::function<void(std::size_t, int)> visit = [&](std::size_t i, int left) {
    if (i + 1 == k) {
      counts[i] = left;
      const int top = *std::max_element(counts.begin(), counts.end());
      if (counts[0] != top) return;
      double log_prob = log_fact[static_cast<std::size_t>(n)];
      for (std::size_t j = 0; j < k; ++j) {
        if (counts[j] == 0) continue;
        if (p[j] <= 0) return;
        log_prob += counts[j] * std::log(p[j]) - log_fact[static_cast<std::size_t>(counts[j])];
      }
      const auto tied = std::count(counts.begin(), counts.end(), top);
      accuracy += std::exp(log_prob) / static_cast<double>(tied);
      return;
    }
    for (int c = 0; c <= left; ++c) {
      counts[i] = c;
      visit(i + 1, left - c);
    }
  };
  visit(0, n);
  return accuracy;
}

}  // namespace llm_channel
