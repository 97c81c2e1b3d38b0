#include "decomposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace moead {

const std::vector<std::pair<std::string, Scalarizer>>& scalarizer_kinds() {
  static const std::vector<std::pair<std::string, Scalarizer>> kinds = {
      {"ws", Scalarizer::WeightedSum}, {"tch", Scalarizer::Tchebycheff}, {"pbi", Scalarizer::Pbi}};
  return kinds;
}

Scalarizer parse_scalarizer(const std::string& name) {
  for (const auto& [text, s] : scalarizer_kinds())
    if (text == name) return s;
  throw nexp::ConfigError(fmt::format("unknown decomposition '{}': expected one of {{ws, tch, pbi}}", name));
}

const char* scalarizer_name(Scalarizer s) { return scalarizer_kinds()[static_cast<int>(s)].first.c_str(); }

std::vector<Weight> uniform_weights(int count) {
  std::vector<Weight> w(count);
  for (int j = 0; j < count; ++j) {
    const long double l1 = count == 1 ? 0.5L : static_cast<long double>(j) / (count - 1);
    w[j] = {l1, 1.0L - l1};
  }
  return w;
}

RefPoint ideal_point(const Problem& problem) {
  int u_max = 0, v_max = 0;
  for (const auto& [u, v] : problem.attainable()) u_max = std::max(u_max, u), v_max = std::max(v_max, v);
  return {problem.g1(u_max), problem.g2(v_max)};
}

int OptimaReport::reachable() const {
  int c = 0;
  for (int k : optimal_for) c += k > 0;
  return c;
}
int OptimaReport::unique() const {
  int c = 0;
  for (int k : unique_for) c += k > 0;
  return c;
}
std::vector<int> OptimaReport::holes() const {
  std::vector<int> h;
  for (std::size_t i = 0; i < optimal_for.size(); ++i)
    if (optimal_for[i] == 0) h.push_back(static_cast<int>(i));
  return h;
}

OptimaReport enumerate_optima(const Problem& problem, Scalarizer s, int count, long double theta) {
  const auto points = problem.attainable();
  const RefPoint z = ideal_point(problem);
  const auto weights = uniform_weights(count);
  OptimaReport r;
  r.optima.resize(count);
  r.off_front.assign(count, 0);
  r.optimal_for.assign(problem.front_size(), 0);
  r.unique_for.assign(problem.front_size(), 0);
  for (int j = 0; j < count; ++j) {
    long double best = std::numeric_limits<long double>::infinity();
    for (const auto& [u, v] : points) best = std::min(best, scalarize(s, weights[j], z, problem.g1(u), problem.g2(v), theta));
    int argmin_size = 0;
    for (const auto& [u, v] : points) {
      if (scalarize(s, weights[j], z, problem.g1(u), problem.g2(v), theta) != best) continue;
      ++argmin_size;
      if (problem.is_pareto(u, v)) r.optima[j].push_back(u - problem.u_min());
      else ++r.off_front[j];
    }
    for (int k : r.optima[j]) {
      ++r.optimal_for[k];
      if (argmin_size == 1) ++r.unique_for[k];
    }
  }
  return r;
}

std::vector<std::pair<int, int>> aim_optima(const Problem& problem, Aim aim, const RefPoint& z) {
  aim.refresh(problem, z);
  std::vector<Point> points;
  for (const auto& [u, v] : problem.attainable()) points.push_back(problem.point(u, v));
  std::vector<std::pair<int, int>> out;
  for (const Point& a : points)
    if (std::all_of(points.begin(), points.end(), [&](const Point& b) { return aim_prefers(aim, z, a, b); }))
      out.emplace_back(a.u, a.v);
  return out;
}

}  // namespace moead
