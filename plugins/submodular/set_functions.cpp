// Targets, the pairwise class, greedy and the brute-force checkers (set_functions.hpp).
#include "set_functions.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include <nexp/error.hpp>
#include <nexp/stats.hpp>

namespace submodular {

std::vector<double> SetFunction::values(const std::vector<Set>& sets) const {
  std::vector<double> out;
  out.reserve(sets.size());
  for (const Set& s : sets) out.push_back(value(s));
  return out;
}

BatchFunction SetFunction::batch() const {
  return [this](const std::vector<Set>& sets) { return values(sets); };
}

Matrix gaussian_similarity(const Matrix& z) {
  Matrix d2(z.rows, z.rows);
  std::vector<double> off;
  for (int i = 0; i < z.rows; ++i)
    for (int j = 0; j < z.rows; ++j) {
      double s = 0;
      for (int k = 0; k < z.cols; ++k) s += (z(i, k) - z(j, k)) * (z(i, k) - z(j, k));
      d2(i, j) = s;
      if (i < j) off.push_back(s);
    }
  const double h = off.empty() ? 1.0 : std::max(nexp::stats::median(off), 1e-12);
  for (double& x : d2.v) x = std::exp(-x / h);
  return d2;
}

double FacilityLocation::value(const Set& s) const {
  double total = 0;
  for (int v = 0; v < sim_.rows; ++v) {
    double best = 0;
    for (int i : s) best = std::max(best, sim_(v, i));
    total += best;
  }
  return total;
}

double LogDet::value(const Set& s) const {
  const int m = static_cast<int>(s.size());
  Matrix l(m, m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j <= i; ++j) {
      double g = i == j ? 1.0 : 0.0;
      for (int k = 0; k < z_.cols; ++k) g += z_(s[i], k) * z_(s[j], k);
      for (int k = 0; k < j; ++k) g -= l(i, k) * l(j, k);
      l(i, j) = i == j ? std::sqrt(g) : g / l(j, j);
    }
  double logdet = 0;
  for (int i = 0; i < m; ++i) logdet += 2 * std::log(l(i, i));
  return logdet;
}

SaturatedCoverage::SaturatedCoverage(Matrix sim, double fraction) : sim_(std::move(sim)), cap_(sim_.rows) {
  for (int v = 0; v < sim_.rows; ++v) {
    double row = 0;
    for (int s = 0; s < sim_.cols; ++s) row += sim_(v, s);
    cap_[v] = fraction * row;
  }
}

double SaturatedCoverage::value(const Set& s) const {
  double total = 0;
  for (int v = 0; v < sim_.rows; ++v) {
    double c = 0;
    for (int i : s) c += sim_(v, i);
    total += std::min(c, cap_[v]);
  }
  return total;
}

// ---------------------------------------------------------------- pairwise

double Pairwise::b(int i, int j) const {
  double s = 0;
  for (int k = 0; k < u.cols; ++k) s += u(i, k) * u(j, k);
  return s;
}

double Pairwise::value(const Set& s) const {
  double g = 0;
  for (std::size_t x = 0; x < s.size(); ++x) {
    g += a[s[x]];
    for (std::size_t y = x + 1; y < s.size(); ++y) g += b(s[x], s[y]);
  }
  return g;
}

double Pairwise::gain(int e, const Set& s) const {
  double g = a[e];
  for (int j : s) g += b(e, j);
  return g;
}

double Pairwise::balance_margin(double kappa) const {
  double margin = 1e300;
  for (int i = 0; i < size(); ++i)
    for (int j = i + 1; j < size(); ++j)
      margin = std::min(margin, std::expm1(kappa * a[i]) * std::expm1(kappa * a[j]) - kappa * b(i, j));
  return margin;
}

double Pairwise::alpha_bound() const {
  double alpha = 1.0;
  for (int e = 0; e < size(); ++e) {
    double total = 0;
    for (int j = 0; j < size(); ++j)
      if (j != e) total += b(e, j);
    if (a[e] + total > 0) alpha = std::min(alpha, a[e] / (a[e] + total));
  }
  return alpha;
}

double phi_exp(double y, double kappa) { return -std::expm1(-kappa * y) / kappa; }

Pairwise with_alpha(Pairwise g, double alpha, const std::vector<double>& rho) {
  for (int e = 0; e < g.size(); ++e) {
    double total = 0;
    for (int j = 0; j < g.size(); ++j)
      if (j != e) total += g.b(e, j);
    g.a[e] = alpha / (1 - alpha) * total + rho[e];
  }
  return g;
}

// ---------------------------------------------------------------- greedy

Set greedy_within(const BatchFunction& f, const Set& ground, int k) {
  Set s;
  std::vector<bool> taken(ground.size(), false);
  for (int step = 0; step < k && step < static_cast<int>(ground.size()); ++step) {
    std::vector<Set> candidates;
    std::vector<std::size_t> which;
    for (std::size_t c = 0; c < ground.size(); ++c) {
      if (taken[c]) continue;
      Set t = s;
      t.push_back(ground[c]);
      candidates.push_back(std::move(t));
      which.push_back(c);
    }
    const std::vector<double> v = f(candidates);
    const std::size_t best = static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
    taken[which[best]] = true;
    s.push_back(ground[which[best]]);
  }
  return s;
}

Set greedy(const BatchFunction& f, int n, int k) {
  Set ground(n);
  std::iota(ground.begin(), ground.end(), 0);
  return greedy_within(f, ground, k);
}

Set lazy_greedy(const std::function<double(const Set&)>& f, int n, int k) {
  // Heap of (upper bound on the gain, -index, step at which the bound was computed).
  using Entry = std::tuple<double, int, int>;
  std::priority_queue<Entry> heap;
  Set s;
  double fs = f(s);
  for (int e = 0; e < n; ++e) heap.emplace(f({e}) - fs, -e, 0);
  for (int step = 0; step < k && !heap.empty(); ++step) {
    while (true) {
      auto [bound, neg, when] = heap.top();
      heap.pop();
      if (when == step) {
        s.push_back(-neg);
        fs += bound;
        break;
      }
      Set t = s;
      t.push_back(-neg);
      heap.emplace(f(t) - fs, neg, step);
    }
  }
  return s;
}

double brute_force_max(const std::function<double(const Set&)>& f, int n, int k) {
  std::vector<bool> pick(n, false);
  std::fill(pick.begin(), pick.begin() + k, true);
  double best = -1e300;
  do {
    Set s;
    for (int i = 0; i < n; ++i)
      if (pick[i]) s.push_back(i);
    best = std::max(best, f(s));
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return best;
}

double jaccard(Set a, Set b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  Set both, either;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(either));
  return either.empty() ? 1.0 : static_cast<double>(both.size()) / static_cast<double>(either.size());
}

// ---------------------------------------------------------------- checkers

namespace {
Set members(std::uint32_t mask, int n) {
  Set s;
  for (int i = 0; i < n; ++i)
    if (mask >> i & 1u) s.push_back(i);
  return s;
}

// The checks of check_exhaustive on the values of all 2^n subsets of n items, indexed by bit mask.
ExhaustiveReport check_value_table(const std::vector<double>& value, int n, double tol, bool alpha) {
  const std::uint32_t full = 1u << n;
  ExhaustiveReport r;
  for (std::uint32_t s = 0; s < full; ++s)
    for (int i = 0; i < n; ++i) {
      if (s >> i & 1u) continue;
      const std::uint32_t si = s | 1u << i;
      if (value[si] < value[s] - tol) ++r.monotonicity_violations;
      for (int j = i + 1; j < n; ++j) {
        if (s >> j & 1u) continue;
        const double excess = value[si | 1u << j] + value[s] - value[si] - value[s | 1u << j];
        ++r.checks;
        r.worst_submodularity = std::max(r.worst_submodularity, excess);
        if (excess > tol) ++r.submodularity_violations;
        if (excess < -tol) ++r.supermodularity_violations;
      }
    }
  if (alpha)
    for (std::uint32_t t = 0; t < full; ++t)
      for (std::uint32_t s = t;; s = (s - 1) & t) {  // every S subset of T
        for (int e = 0; e < n; ++e) {
          if (t >> e & 1u) continue;
          const double gt = value[t | 1u << e] - value[t];
          if (gt > tol) r.min_alpha = std::min(r.min_alpha, (value[s | 1u << e] - value[s]) / gt);
        }
        if (s == 0) break;
      }
  return r;
}

// Every subset of n items (min_n <= n <= 20) as a set, in bit-mask order.
std::vector<Set> all_subsets(int n, int min_n, const char* who) {
  if (n < min_n || n > 20)
    throw nexp::Error(std::string(who) + ": n = " + std::to_string(n) + ", expected " + std::to_string(min_n) +
                      "..20 (2^n evaluations)");
  std::vector<Set> subsets;
  subsets.reserve(std::size_t{1} << n);
  for (std::uint32_t m = 0; m < 1u << n; ++m) subsets.push_back(members(m, n));
  return subsets;
}
}  // namespace

ExhaustiveReport check_exhaustive(const std::function<double(const Set&)>& f, int n, double tol, bool alpha) {
  const std::vector<Set> subsets = all_subsets(n, 0, "check_exhaustive");
  std::vector<double> value;
  value.reserve(subsets.size());
  for (const Set& s : subsets) value.push_back(f(s));
  return check_value_table(value, n, tol, alpha);
}

Set random_subset(int n, int size, nexp::Random& rng) {
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int i = 0; i < size; ++i) std::swap(all[i], all[i + static_cast<int>(rng.below(n - i))]);
  return Set(all.begin(), all.begin() + size);
}

std::vector<Set> random_sets(int n, int count, int lo, int hi, nexp::Random& rng) {
  std::vector<Set> sets;
  sets.reserve(count);
  for (int c = 0; c < count; ++c) sets.push_back(random_subset(n, lo + static_cast<int>(rng.below(hi - lo + 1)), rng));
  return sets;
}

std::vector<Triple> random_triples(int n, int count, int max_size, nexp::Random& rng) {
  std::vector<Triple> out;
  out.reserve(count);
  for (int c = 0; c < count; ++c) {
    const int size = 1 + static_cast<int>(rng.below(std::min(max_size, n - 1)));
    Set t = random_subset(n, size + 1, rng);
    const int e = t.back();
    t.pop_back();
    Set s;
    for (int i : t)
      if (rng.bernoulli(0.5)) s.push_back(i);
    out.push_back({std::move(s), std::move(t), e});
  }
  return out;
}

TripleReport check_triples(const BatchFunction& f, const std::vector<Triple>& triples, double tol) {
  std::vector<Set> sets;
  sets.reserve(4 * triples.size());
  for (const Triple& x : triples) {
    Set se = x.s, te = x.t;
    se.push_back(x.e);
    te.push_back(x.e);
    sets.push_back(x.s);
    sets.push_back(std::move(se));
    sets.push_back(x.t);
    sets.push_back(std::move(te));
  }
  const std::vector<double> v = f(sets);
  TripleReport r;
  r.triples = static_cast<std::int64_t>(triples.size());
  for (std::size_t k = 0; k < triples.size(); ++k) {
    const double gs = v[4 * k + 1] - v[4 * k], gt = v[4 * k + 3] - v[4 * k + 2];
    if (gs < gt - tol) ++r.violations;
    if (gs < -tol || gt < -tol) ++r.monotonicity_violations;
    if (gt > tol) r.min_ratio = std::min(r.min_ratio, gs / gt);
  }
  r.violation_rate = r.triples ? static_cast<double>(r.violations) / static_cast<double>(r.triples) : 0.0;
  return r;
}

CheckReport check_set_function(const BatchFunction& f, int exhaustive_n, const std::vector<Triple>& triples,
                               double tol) {
  CheckReport r;  // the 2^n subsets in one batch
  r.exhaustive = check_value_table(f(all_subsets(exhaustive_n, 1, "check_set_function")), exhaustive_n, tol, true);
  r.triples = check_triples(f, triples, tol);
  return r;
}

}  // namespace submodular
