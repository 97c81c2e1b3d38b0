#pragma once
// A data recipe and the training set it makes. Free of torch.
//
// A recipe is a point u of the unit cube [0,1]^6 (the search space of the ablation runs):
//   u[0]        filter quantile   q = 0.05 + 0.95 u[0]: keep the q-fraction of the pool with the lowest
//                                 reference score (exactly round(q P) examples, ties by position)
//   u[1], u[3], u[4], u[5]
//               mixture weights w on the five-source simplex by stick breaking,
//                 v_i = 1 - (1 - u)^(1 / (4 - i)),  w_i = v_i prod_{j<i} (1 - v_j),  w_4 = prod_j (1 - v_j),
//               which maps the uniform cube onto the uniform (Dirichlet(1)) simplex
//   u[2]        deduplication     drop an example whose signature cosine to an earlier example exceeds
//                                 1 - dedup_range u[2] (u[2] = 0: no deduplication)
// `knobs` = d frees the first d of the order {u0, u1, u2, u3, u4, u5} and fixes the others at the
// neutral recipe: equal weights, no filter... (see neutral_coordinates()).
//
// The training set of n examples: the kept examples of each source are shuffled and taken in turn,
// n_s = w_s n of them (largest remainder; sources with nothing kept get no share), cycling through
// the kept examples again when a source runs short (so a strict filter repeats its data n / kept times).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nexp/random.hpp>

namespace curation_scaling {

constexpr int kKnobs = 6;
using Point = std::array<double, kKnobs>;

struct Recipe {
  std::array<double, 5> mix{};  // source weights, sum 1
  double quantile = 1;          // filter: kept share of the pool
  double dedup_threshold = 1;   // cosine above which a later near-duplicate is dropped (1: none)
};

// The coordinates a recipe takes when a knob is fixed: uniform mixture, quantile 1, no deduplication.
Point neutral_coordinates();
// A random point: free knobs uniform in [0, 1], the others neutral.
Point random_point(int knobs, nexp::Random& rng);
Recipe recipe_from_point(const Point& u, double dedup_range);

// What the pool looks like to a recipe (the parts of Pool the recipe reads).
struct PoolView {
  const std::vector<int>* source;
  const std::vector<double>* score;
  const std::vector<double>* dup_similarity;
};

// Indices of the pool examples that survive the filter and deduplication, ascending.
std::vector<std::int64_t> kept_examples(const PoolView& pool, const Recipe& r);
// The recipe's training set of n examples (indices into the pool, in training order). Throws
// nexp::ConfigError when the recipe keeps no data.
std::vector<std::int64_t> training_set(const PoolView& pool, const Recipe& r, std::int64_t n, nexp::Random& rng);

std::string describe(const Recipe& r);

}  // namespace curation_scaling
