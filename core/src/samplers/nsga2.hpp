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
// (lower rank, then larger crowding distance).
#include <vector>

#include "sampler.hpp"

namespace nexp::samplers {

// Whether a dominates b (every objective no worse, one better; lower is better).
bool dominates(const std::vector<double>& a, const std::vector<double>& b);
// The non-dominated rank of each point (0: the Pareto front), by the fast non-dominated sort.
std::vector<int> nondominated_ranks(const std::vector<std::vector<double>>& values);
// Crowding distance of each point of one front (the two ends of each objective: infinity).
std::vector<double> crowding_distance(const std::vector<std::vector<double>>& front);

class Nsga2Sampler final : public Sampler {
 public:
  Nsga2Sampler(Space space, std::uint64_t seed, int population = 50)
      : space_(std::move(space)), seed_(seed), population_(population) {}
  Point ask(const std::vector<Observation>& history, int number) override;

 private:
  Space space_;
  std::uint64_t seed_;
  int population_;
};

}  // namespace nexp::samplers
