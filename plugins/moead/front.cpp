#include "front.hpp"

namespace moead {

double normalized_hypervolume(const Problem& problem, const std::vector<Point>& points) {
  NonDominatedSet nd;
  for (const Point& p : points) nd.insert(p, BitString{});
  const auto [r1, r2] = problem.reference_point();
  long double hv = 0, prev_f1 = r1;
  for (const auto& e : nd.entries()) {  // u ascending: f1 ascending, f2 descending
    if (e.p.f1 > prev_f1 && e.p.f2 > r2) hv += (e.p.f1 - prev_f1) * (e.p.f2 - r2);
    prev_f1 = std::max(prev_f1, e.p.f1);
  }
  return static_cast<double>(hv / problem.front_hypervolume());
}

}  // namespace moead
