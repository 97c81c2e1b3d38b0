// The sampler registry and uniform draws (samplers/sampler.hpp).
#include "sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nexp/error.hpp"
#include "cmaes.hpp"
#include "nsga2.hpp"
#include "tpe.hpp"

namespace nexp::samplers {

namespace {

// Independent uniform draws for every trial: the baseline of the model-based samplers.
class RandomSampler final : public Sampler {
 public:
  RandomSampler(Space space, std::uint64_t seed) : space_(std::move(space)), seed_(seed) {}
  Point ask(const std::vector<Observation>&, int number) override {
    Random rng = Random::stream(seed_, "random", static_cast<std::uint64_t>(number));
    return draw_uniform(space_, rng);
  }

 private:
  Space space_;
  std::uint64_t seed_;
};

}  // namespace

const std::vector<std::string>& adaptive_sampler_names() {
  static const std::vector<std::string> names{"tpe", "cmaes", "nsga2"};
  return names;
}

std::unique_ptr<Sampler> make_sampler(const std::string& name, const Space& space, std::uint64_t seed) {
  if (name == "tpe") return std::make_unique<TpeSampler>(space, seed);
  if (name == "cmaes") return std::make_unique<CmaesSampler>(space, seed);
  if (name == "nsga2") return std::make_unique<Nsga2Sampler>(space, seed);
  if (name == "random") return std::make_unique<RandomSampler>(space, seed);
  throw ConfigError(fmt::format("unknown sampler '{}'; adaptive sweeps use {}", name, fmt::join(adaptive_sampler_names(), ", ")));
}

double draw_uniform(const Dimension& d, Random& rng) {
  switch (d.kind) {
    case Dimension::Kind::Categorical: return static_cast<double>(rng.below(d.choices.size()));
    case Dimension::Kind::Int:
      if (d.log) return std::clamp(std::round(std::exp(rng.uniform(std::log(d.lo - 0.5), std::log(d.hi + 0.5)))), d.lo, d.hi);
      return std::min(d.lo + static_cast<double>(rng.below(static_cast<std::uint64_t>(d.hi - d.lo + 1))), d.hi);
    case Dimension::Kind::Float: break;
  }
  return d.log ? std::exp(rng.uniform(std::log(d.lo), std::log(d.hi))) : rng.uniform(d.lo, d.hi);
}

Point draw_uniform(const Space& space, Random& rng) {
  Point x;
  for (const auto& d : space) x.push_back(draw_uniform(d, rng));
  return x;
}

}  // namespace nexp::samplers
