#pragma once
// The Tree-structured Parzen Estimator (Bergstra, Bardenet, Bengio and Kegl, "Algorithms for
// Hyper-Parameter Optimization", NeurIPS 2011), univariate, with the defaults Optuna 3.1 documents
// for its TPESampler, so that the two can be compared trial for trial:
//
//   - the first n_startup (10) trials that completed or were pruned are independent uniform draws;
//   - then the history splits into the gamma(n) = min(ceil(0.1 n), 25) best trials ("below", l) and
//     the rest ("above", g); pruned trials rank after completed ones, deeper ones first;
//   - each part is a Parzen estimator per dimension: one truncated Gaussian kernel per observation
//     plus a prior kernel (the middle of the range, sigma = the range, weight prior_weight = 1);
//     a kernel's sigma is the larger distance to its sorted neighbours (the range's ends are not
//     neighbours: consider_endpoints off), clipped to [range / min(100, 1 + kernels), range] (the
//     "magic clip"); integers are bins of width 1; a log dimension lives in log space;
//   - observation weights: 1 for the newest 25 of each part, a linear ramp from 1/n below that;
//   - categorical kernels put prior_weight / kernels on every choice and 1 more on the observed one;
//   - n_ei_candidates (24) candidates are drawn from l, and the one with the largest
//     log l(x) - log g(x) (the expected-improvement criterion) is proposed.
// The kernels (means, sigmas, weights, categorical rows) equal Optuna 3.1.0's on the same inputs. Two
// places where Optuna 3.1.0 departs from the paper's mixture density, and nexp does not:
//   - its truncated-normal log-density leaves out each kernel's -log(sigma), so a kernel's height no
//     longer depends on its width (optuna issue #5109, fixed upstream by pull request #5110);
//     kernel_scale = false reproduces it, and then nexp's next proposal after a given history is
//     distributed as Optuna 3.1.0's (bench/samplers_same_history.py; README: a small residual on
//     one objective);
//   - an int(loguniform) dimension scores a candidate by the density at log(x), not by the mass of its
//     bin [log(x - 1/2), log(x + 1/2)] as a linear integer dimension is (fixed upstream by #6258).
#include <vector>

#include "sampler.hpp"

namespace nexp::samplers {

struct TpeOptions {
  int n_startup = 10;
  int n_ei_candidates = 24;
  double prior_weight = 1.0;
  bool magic_clip = true;
  bool endpoints = false;
  bool kernel_scale = true;  // false: leave out each kernel's -log(sigma), as Optuna 3.1.0's density does (a defect)
};

// How many of n ranked trials form the "below" part.
int tpe_gamma(int n);
// Weights of n observations in trial order (oldest first).
std::vector<double> tpe_weights(int n);
// The history's usable trials split into below and above (indices into `history`), each in trial order.
struct TpeSplit {
  std::vector<int> below, above;
};
TpeSplit tpe_split(const std::vector<Observation>& history);

// A Parzen estimator over one dimension: a mixture of truncated Gaussians (Float, Int) or of
// categorical distributions, in the dimension's working space (log for log dimensions).
class Parzen {
 public:
  // `xs`: observed values in the dimension's units (choice indices for Categorical), `weights` theirs.
  Parzen(const Dimension& d, const std::vector<double>& xs, const std::vector<double>& weights, const TpeOptions& o);
  double sample(Random& rng) const;  // a value in the dimension's units
  double log_pdf(double x) const;    // of a value in the dimension's units (a probability for Int, Categorical)

  // The mixture (for tests): normalised weights, and per kernel mu and sigma in the working space
  // (the prior kernel last), or for Categorical the probability of each choice.
  const std::vector<double>& weights() const { return weights_; }
  const std::vector<double>& mus() const { return mus_; }
  const std::vector<double>& sigmas() const { return sigmas_; }
  const std::vector<double>& choice_probabilities() const { return pmf_; }

 private:
  double to_work(double x) const;
  double from_work(double w) const;
  Dimension d_;
  double lo_ = 0, hi_ = 0;  // working-space bounds (Int: widened by half a bin)
  std::vector<double> weights_, mus_, sigmas_, pmf_;
  bool kernel_scale_ = true;
};

class TpeSampler final : public Sampler {
 public:
  TpeSampler(Space space, std::uint64_t seed, TpeOptions options = {})
      : space_(std::move(space)), seed_(seed), options_(options) {}
  Point ask(const std::vector<Observation>& history, int number) override;

 private:
  Space space_;
  std::uint64_t seed_;
  TpeOptions options_;
};

}  // namespace nexp::samplers
