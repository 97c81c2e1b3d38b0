// The kNN router and the frontier measures (router.hpp).
#include "router.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace llm_channel {

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

ArmEstimate knn_estimate(const ArmTable& table, const std::vector<std::size_t>& train,
                         const std::vector<std::vector<double>>& embeddings, const std::vector<double>& query,
                         std::size_t k, bool similarity_weights) {
  std::vector<std::pair<double, std::size_t>> sims;
  for (std::size_t j : train) sims.emplace_back(cosine(query, embeddings[j]), j);
  k = std::min(k, sims.size());
  std::partial_sort(sims.begin(), sims.begin() + static_cast<std::ptrdiff_t>(k), sims.end(),
                    [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  ArmEstimate e{std::vector<double>(table.arms, 0.0), std::vector<double>(table.arms, 0.0)};
  double total = 0;
  for (std::size_t i = 0; i < k; ++i) total += similarity_weights ? std::max(sims[i].first, 0.0) : 1.0;
  const bool uniform = !(total > 0);  // every neighbour dissimilar: fall back to equal weights
  if (uniform) total = static_cast<double>(k);
  for (std::size_t i = 0; i < k; ++i) {
    const double w = (uniform || !similarity_weights ? 1.0 : std::max(sims[i].first, 0.0)) / total;
    for (std::size_t t = 0; t < table.arms; ++t) {
      e.quality[t] += w * table.q(sims[i].second, t);
      e.cost[t] += w * table.c(sims[i].second, t);
    }
  }
  return e;
}

std::size_t choose_arm(const ArmEstimate& e, double lam) {
  std::size_t best = 0;
  for (std::size_t t = 1; t < e.quality.size(); ++t) {
    const double u = e.quality[t] - lam * e.cost[t], ub = e.quality[best] - lam * e.cost[best];
    if (u > ub || (u == ub && e.cost[t] < e.cost[best])) best = t;
  }
  return best;
}

std::vector<std::size_t> pareto_front(const std::vector<Point>& points) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
      const auto &a = points[j], &b = points[i];
      dominated = j != i && a.quality >= b.quality && a.cost <= b.cost && (a.quality > b.quality || a.cost < b.cost);
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

double best_quality_within(const std::vector<Point>& points, double cost) {
  double best = -std::numeric_limits<double>::infinity();
  for (const auto& p : points)
    if (p.cost <= cost) best = std::max(best, p.quality);
  return best;
}

FrontierMeasures frontier_measures(const std::vector<Point>& fixed, const std::vector<Point>& router,
                                   const std::vector<std::size_t>& single_shot_arms, double tolerance_se) {
  FrontierMeasures m;
  // The strongest fixed technique: highest quality, the cheaper on a tie.
  for (std::size_t t = 1; t < fixed.size(); ++t) {
    const auto &a = fixed[t], &b = fixed[m.strongest_arm];
    if (a.quality > b.quality || (a.quality == b.quality && a.cost < b.cost)) m.strongest_arm = t;
  }
  const Point& strongest = fixed[m.strongest_arm];
  double matched_cost = std::numeric_limits<double>::infinity();
  for (const auto& r : router)
    if (r.quality >= strongest.quality - tolerance_se * strongest.quality_se) matched_cost = std::min(matched_cost, r.cost);
  m.cost_cut_at_matched_quality = std::isfinite(matched_cost) ? 1 - matched_cost / strongest.cost : NAN;

  const double at_cost = best_quality_within(router, strongest.cost);
  m.quality_gain_at_matched_cost = at_cost / strongest.quality - 1;
  double single = -std::numeric_limits<double>::infinity();
  for (std::size_t t : single_shot_arms) single = std::max(single, fixed[t].quality);
  m.quality_gain_vs_single_shot = at_cost / single - 1;

  const auto front = pareto_front(fixed);
  std::size_t covered = 0;
  for (std::size_t t : front)
    if (best_quality_within(router, fixed[t].cost) >= fixed[t].quality - tolerance_se * fixed[t].quality_se) ++covered;
  m.frontier_covered = static_cast<double>(covered) / static_cast<double>(front.size());

  double gains = 0;
  int points = 0;
  for (const auto& r : router) {
    const double f = best_quality_within(fixed, r.cost);
    if (std::isfinite(f) && f > 0) gains += r.quality / f - 1, ++points;
  }
  m.mean_gain_over_frontier = points ? gains / points : NAN;
  return m;
}

}  // namespace llm_channel
