// NSGA-II (samplers/nsga2.hpp).
#include "nsga2.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

namespace nexp::samplers {

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool better = false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] > b[k]) return false;
    better = better || a[k] < b[k];
  }
  return better;
}

std::vector<int> nondominated_ranks(const std::vector<std::vector<double>>& values) {
  const std::size_t n = values.size();
  std::vector<std::vector<std::size_t>> dominated(n);  // the points each one dominates
  std::vector<int> count(n, 0), rank(n, 0);            // how many dominate it
  std::vector<std::size_t> front;
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t q = 0; q < n; ++q) {
      if (dominates(values[p], values[q])) dominated[p].push_back(q);
      else if (dominates(values[q], values[p])) ++count[p];
    }
    if (count[p] == 0) front.push_back(p);
  }
  for (int r = 0; !front.empty(); ++r) {
    std::vector<std::size_t> next;
    for (std::size_t p : front) {
      rank[p] = r;
      for (std::size_t q : dominated[p])
        if (--count[q] == 0) next.push_back(q);
    }
    front = std::move(next);
  }
  return rank;
}

std::vector<double> crowding_distance(const std::vector<std::vector<double>>& front) {
  const std::size_t n = front.size();
  std::vector<double> d(n, 0.0);
  if (n == 0) return d;
  for (std::size_t k = 0; k < front[0].size(); ++k) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return front[a][k] < front[b][k]; });
    const double span = front[order.back()][k] - front[order.front()][k];
    d[order.front()] = d[order.back()] = std::numeric_limits<double>::infinity();
    if (span <= 0) continue;
    for (std::size_t i = 1; i + 1 < n; ++i) d[order[i]] += (front[order[i + 1]][k] - front[order[i - 1]][k]) / span;
  }
  return d;
}

double hypervolume_2d(std::vector<std::array<double, 2>> points, std::array<double, 2> reference) {
  // Below the reference in both (a NaN is not): the rest dominate nothing inside the box.
  const auto outside = [&](const std::array<double, 2>& p) { return !(p[0] < reference[0] && p[1] < reference[1]); };
  points.erase(std::remove_if(points.begin(), points.end(), outside), points.end());
  std::sort(points.begin(), points.end());
  double area = 0, ceiling = reference[1];  // the lowest second objective of the points so far
  for (const auto& [f1, f2] : points) {
    if (f2 >= ceiling) continue;  // inside the staircase already
    area += (reference[0] - f1) * (ceiling - f2);
    ceiling = f2;
  }
  return area;
}

namespace {

struct Member {
  const Observation* o;
  int rank = 0;
  double crowding = 0;
};

// The best `size` of `pool`: whole fronts while they fit, then the most spread-out of the next.
std::vector<Member> elite(const std::vector<const Observation*>& pool, std::size_t size) {
  std::vector<std::vector<double>> values;
  for (const auto* o : pool) values.push_back(o->values);
  const std::vector<int> ranks = nondominated_ranks(values);
  std::vector<Member> out;
  for (int r = 0; out.size() < size; ++r) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < pool.size(); ++i)
      if (ranks[i] == r) members.push_back(i);
    if (members.empty()) break;
    std::vector<std::vector<double>> front;
    for (std::size_t i : members) front.push_back(values[i]);
    const std::vector<double> crowd = crowding_distance(front);
    std::vector<std::size_t> order(members.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return crowd[a] > crowd[b]; });
    for (std::size_t j = 0; j < order.size() && out.size() < size; ++j) out.push_back({pool[members[order[j]]], r, crowd[order[j]]});
  }
  return out;
}

const Member& tournament(const std::vector<Member>& population, Random& rng) {
  const Member& a = population[rng.below(population.size())];
  const Member& b = population[rng.below(population.size())];
  if (a.rank != b.rank) return a.rank < b.rank ? a : b;
  return a.crowding >= b.crowding ? a : b;
}

// Nsga2Selection::Optuna310: the first candidate if it dominates the second, else the second.
const Member* dominance_tournament(const std::vector<const Member*>& pool, Random& rng) {
  const Member* a = pool[rng.below(pool.size())];
  const Member* b = pool[rng.below(pool.size())];
  return dominates(a->o->values, b->o->values) ? a : b;
}

std::pair<const Member*, const Member*> optuna310_parents(const std::vector<Member>& population, bool crossover, Random& rng) {
  if (!crossover) {
    const Member* m = &population[rng.below(population.size())];
    return {m, m};
  }
  std::vector<const Member*> pool;
  for (const auto& m : population) pool.push_back(&m);
  const Member* a = dominance_tournament(pool, rng);
  pool.erase(std::find(pool.begin(), pool.end(), a));
  return {a, dominance_tournament(pool, rng)};
}

}  // namespace

Point Nsga2Sampler::ask(const std::vector<Observation>& history, int number) {
  Random rng = Random::stream(seed_, "nsga2", static_cast<std::uint64_t>(number));
  std::vector<Member> population;
  std::vector<const Observation*> generation;
  for (const auto& o : history) {
    if (o.outcome != Outcome::Complete || o.values.empty()) continue;
    generation.push_back(&o);
    if (static_cast<int>(generation.size()) < population_) continue;
    for (const auto& m : population) generation.push_back(m.o);
    population = elite(generation, static_cast<std::size_t>(population_));
    generation.clear();
  }
  if (population.empty()) return draw_uniform(space_, rng);
  const Member *a, *b;
  bool crossover;
  if (selection_ == Nsga2Selection::Crowded) {
    a = &tournament(population, rng), b = &tournament(population, rng);
    crossover = rng.uniform() < 0.9;
  } else {
    crossover = rng.uniform() < 0.9;
    std::tie(a, b) = optuna310_parents(population, crossover, rng);
  }
  const double mutation = 1.0 / static_cast<double>(space_.size());
  Point x(space_.size());
  for (std::size_t d = 0; d < space_.size(); ++d) {
    x[d] = crossover && rng.uniform() < 0.5 ? b->o->x[d] : a->o->x[d];
    if (rng.uniform() < mutation) x[d] = draw_uniform(space_[d], rng);
  }
  return x;
}

}  // namespace nexp::samplers
