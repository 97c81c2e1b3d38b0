#pragma once
// NSGA-II (Deb, Pratap, Agarwal and Meyarivan, "A Fast and Elitist Multiobjective Genetic Algorithm:
// NSGA-II", IEEE TEVC 2002) for several objectives, with Optuna 3.1's documented defaults: a population
// of 50, uniform crossover (each parameter from either parent with probability 1/2) with probability
// 0.9, and each parameter mutated (redrawn uniformly) with probability 1 / (number of parameters).
//
// As every nexp sampler, a pure function of its history (samplers/sampler.hpp): the completed trials,
// in the order they ended, are cut into consecutive generations of 50; after each, the population is
// the elite 50 of (population + generation) by non-dominated rank, then crowding distance. Until the
// first generation is complete, trials are uniform draws. Parents are chosen by binary tournaments
// (lower rank, then larger crowding distance), as in the paper; Optuna 3.1.0 decides its tournaments by
// dominance alone (Nsga2Selection below), which bench/samplers_pareto.sh compares.
#include <array>
#include <vector>

#include "sampler.hpp"

namespace nexp::samplers {

// Whether a dominates b (every objective no worse, one better; lower is better).
bool dominates(const std::vector<double>& a, const std::vector<double>& b);
// The non-dominated rank of each point (0: the Pareto front), by the fast non-dominated sort.
std::vector<int> nondominated_ranks(const std::vector<std::vector<double>>& values);
// Crowding distance of each point of one front (the two ends of each objective: infinity).
std::vector<double> crowding_distance(const std::vector<std::vector<double>>& front);
// The area that two-objective points dominate inside the box below `reference` (lower is better), exact:
// the points sorted by the first objective, the union of their rectangles is a staircase summed one band
// at a time. Points not strictly below the reference in both objectives add nothing. The measure of a
// sweep's front (bench/samplers_pareto.sh).
double hypervolume_2d(std::vector<std::array<double, 2>> points, std::array<double, 2> reference);

// How parents are chosen. Crowded (the default): Deb et al.'s crowded-comparison tournament for each
// parent. Optuna310: as Optuna 3.1.0's NSGAIISampler chooses them, for comparison only
// (bench/samplers_pareto.sh): each parent by a binary tournament that the first candidate wins only if
// it dominates the second (no rank, no crowding distance), the second parent from the population
// without the first, and without crossover a member drawn uniformly (not a tournament's winner).
enum class Nsga2Selection { Crowded, Optuna310 };

class Nsga2Sampler final : public Sampler {
 public:
  Nsga2Sampler(Space space, std::uint64_t seed, int population = 50, Nsga2Selection selection = Nsga2Selection::Crowded)
      : space_(std::move(space)), seed_(seed), population_(population), selection_(selection) {}
  Point ask(const std::vector<Observation>& history, int number) override;

 private:
  Space space_;
  std::uint64_t seed_;
  int population_;
  Nsga2Selection selection_;
};

}  // namespace nexp::samplers
