#pragma once
// Samplers of adaptive sweeps (sweep: {sampler: tpe, trials: N}): each proposes the next trial's
// parameters from the trials that have ended. Core-internal; the sweep module (sweep_adaptive.cpp)
// turns a proposal into a trial and a trial's result into an Observation.
//
// Contract: a sampler is a pure function of (search space, seed, history, trial number). It keeps no
// state between calls that the history does not determine, so a sweep that is stopped and started
// again proposes exactly the trials it would have proposed uninterrupted, provided the history is
// given in the same order: the sweep folder's sampler.yaml records that order (the trials as they
// ended). A sampler with an inner state (a CMA-ES generation) rebuilds it by replaying the history.
//
// Points are in the space's own units: a Float or Int dimension holds its value, a Categorical one the
// index of its choice.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nexp/random.hpp"

namespace nexp::samplers {

struct Dimension {
  enum class Kind { Float, Int, Categorical };
  std::string key;
  Kind kind = Kind::Float;
  double lo = 0, hi = 0;             // Float, Int: the bounds (both included)
  bool log = false;                  // sampled on a log scale (loguniform)
  std::vector<std::string> choices;  // Categorical
};
using Space = std::vector<Dimension>;
using Point = std::vector<double>;

enum class Outcome { Complete, Pruned, Failed };

struct Observation {
  int number = 0;            // the trial's index in the sweep
  Point x;
  std::vector<double> values;  // the objectives, each oriented so that lower is better
  Outcome outcome = Outcome::Complete;
  std::int64_t step = 0;     // Pruned: the last step it reported
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The parameters of trial `number`, given the trials that have ended (in the order they ended).
  virtual Point ask(const std::vector<Observation>& history, int number) = 0;
};

// "tpe", "cmaes", "nsga2" (and "random", the independent draws TPE starts with); throws ConfigError for another name.
std::unique_ptr<Sampler> make_sampler(const std::string& name, const Space& space, std::uint64_t seed);
// The samplers make_sampler knows, for messages.
const std::vector<std::string>& adaptive_sampler_names();

// One independent draw from each dimension's prior: uniform (log-uniform when `log`), integers
// uniform over lo..hi, choices uniform.
double draw_uniform(const Dimension& d, Random& rng);
Point draw_uniform(const Space& space, Random& rng);

}  // namespace nexp::samplers
