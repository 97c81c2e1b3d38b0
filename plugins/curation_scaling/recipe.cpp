#include "recipe.hpp"

#include <fmt/format.h>
#include <nexp/error.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace curation_scaling {

namespace {

constexpr int kStickOf[4] = {1, 3, 4, 5};  // the coordinates of the four sticks, in order

template <class T>
void shuffle(std::vector<T>& v, nexp::Random& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

}  // namespace

Point neutral_coordinates() {
  Point u{};
  u[0] = 1.0;  // q = 1
  u[2] = 0.0;  // no deduplication
  for (int i = 0; i < 4; ++i) u[kStickOf[i]] = 1.0 - std::pow(1.0 - 1.0 / (5 - i), 4 - i);  // v_i = 1/(5-i)
  return u;
}

Point random_point(int knobs, nexp::Random& rng) {
  Point u = neutral_coordinates();
  for (int i = 0; i < knobs; ++i) u[i] = rng.uniform();
  return u;
}

Recipe recipe_from_point(const Point& u, double dedup_range) {
  Recipe r;
  r.quantile = 0.05 + 0.95 * std::clamp(u[0], 0.0, 1.0);
  r.dedup_threshold = 1.0 - dedup_range * std::clamp(u[2], 0.0, 1.0);
  double rest = 1.0;
  for (int i = 0; i < 4; ++i) {
    const double v = 1.0 - std::pow(1.0 - std::clamp(u[kStickOf[i]], 0.0, 1.0), 1.0 / (4 - i));
    r.mix[i] = rest * v;
    rest *= 1.0 - v;
  }
  r.mix[4] = rest;
  return r;
}

std::vector<std::int64_t> kept_examples(const PoolView& pool, const Recipe& r) {
  const std::size_t n = pool.score->size();
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const auto keep = static_cast<std::size_t>(std::llround(r.quantile * static_cast<double>(n)));
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return (*pool.score)[a] < (*pool.score)[b]; });
  order.resize(std::min(keep, n));
  std::vector<std::int64_t> kept;
  for (std::int64_t i : order)
    if ((*pool.dup_similarity)[i] <= r.dedup_threshold) kept.push_back(i);
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<std::int64_t> training_set(const PoolView& pool, const Recipe& r, std::int64_t n, nexp::Random& rng) {
  std::vector<std::vector<std::int64_t>> by_source(5);
  for (std::int64_t i : kept_examples(pool, r)) by_source[(*pool.source)[i]].push_back(i);
  double mass = 0;
  for (int s = 0; s < 5; ++s) mass += by_source[s].empty() ? 0 : r.mix[s];
  if (mass <= 0)
    throw nexp::ConfigError(fmt::format("recipe {} keeps no data from its sources (the filter and deduplication "
                                        "leave nothing where the mixture puts weight); raise the quantile, lower the "
                                        "deduplication or give weight to other sources", describe(r)));
  // Largest-remainder shares of n among the sources that kept something.
  std::vector<std::int64_t> count(5, 0);
  std::vector<std::pair<double, int>> remainder;
  std::int64_t given = 0;
  for (int s = 0; s < 5; ++s) {
    if (by_source[s].empty()) continue;
    const double exact = static_cast<double>(n) * r.mix[s] / mass;
    count[s] = static_cast<std::int64_t>(std::floor(exact));
    given += count[s];
    remainder.emplace_back(exact - std::floor(exact), s);
  }
  std::stable_sort(remainder.begin(), remainder.end(), [](auto& a, auto& b) { return a.first > b.first; });
  for (std::size_t j = 0; given < n; ++j, ++given) ++count[remainder[j % remainder.size()].second];
  std::vector<std::int64_t> out;
  out.reserve(n);
  for (int s = 0; s < 5; ++s) {
    auto& kept = by_source[s];
    for (std::int64_t taken = 0; taken < count[s];) {  // one shuffled pass per repeat
      shuffle(kept, rng);
      for (std::size_t j = 0; j < kept.size() && taken < count[s]; ++j, ++taken) out.push_back(kept[j]);
    }
  }
  shuffle(out, rng);
  return out;
}

std::string describe(const Recipe& r) {
  return fmt::format("(mix {:.2f}/{:.2f}/{:.2f}/{:.2f}/{:.2f}, quantile {:.3f}, dedup threshold {:.3f})", r.mix[0],
                     r.mix[1], r.mix[2], r.mix[3], r.mix[4], r.quantile, r.dedup_threshold);
}

}  // namespace curation_scaling
