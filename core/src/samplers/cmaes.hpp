#pragma once
// CMA-ES (Hansen and Ostermeier 2001; the update of Hansen, "The CMA Evolution Strategy: A Tutorial",
// 2016, eqs. 37-48 as numbered there) with IPOP restarts (Auger and Hansen, CEC 2005), for the
// numeric dimensions of a space; categorical dimensions are drawn uniformly (as Optuna's CmaEsSampler
// leaves them to its independent sampler).
//
// Working space: every numeric dimension scaled to [0, 1] (log dimensions in log space, integers as
// bins of width 1); start at the box's centre with sigma0 = 1/6 (Optuna's default, min range / 6).
// Population lambda = 4 + floor(3 ln n), mu = lambda / 2 with log-decreasing weights.
//
// As every nexp sampler, it is a pure function of its history (samplers/sampler.hpp): the completed
// trials, in the order they ended, are cut into consecutive generations of lambda, and the state is
// rebuilt by replaying them. With one trial at a time this is the textbook algorithm; with several at
// once, a generation may hold points drawn from the previous mean (an asynchronous update).
// A restart (population doubled, mean at a uniform draw) follows when sigma * sqrt(max eigenvalue)
// < 1e-12 (TolX), the best values of the last 10 + 30 n / lambda generations span < 1e-12 (TolFun),
// or the condition number of C passes 1e14.
#include <vector>

#include "sampler.hpp"

namespace nexp::samplers {

// The state after replaying a history (for tests and the sampler).
struct CmaesState {
  int dims = 0, lambda = 0, generation = 0, restarts = 0;
  std::vector<double> mean;  // working space
  double sigma = 0;
  std::vector<double> cov;   // dims x dims, row major
};
CmaesState cmaes_replay(const Space& space, std::uint64_t seed, const std::vector<Observation>& history);

class CmaesSampler final : public Sampler {
 public:
  CmaesSampler(Space space, std::uint64_t seed) : space_(std::move(space)), seed_(seed) {}
  Point ask(const std::vector<Observation>& history, int number) override;

 private:
  Space space_;
  std::uint64_t seed_;
};

}  // namespace nexp::samplers
