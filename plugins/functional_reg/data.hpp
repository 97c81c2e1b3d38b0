#pragma once
// Functional data: every sample has one curve per functional predictor, each curve with its own
// points (t_ij, x_ij) on [0, 1] (the loaders rescale each predictor's domain to [0, 1]), and a scalar
// response. Data sets (registered in plugin.cpp):
//   functional_reg.simulated  Fourier curves, decaying variances, m noisy random points per curve;
//                             truths linear, index2 (J = 2 indices, smooth link), general (int sin(pi x(t)) dt)
//   functional_reg.tecator / gasoline / growth / csv   real data from long CSV files
// A data set is a pool plus a rule to draw one problem (train / validation / test) from it, so that
// a study can redraw it at other n, m or split seeds without going through core again.
#include <nexp/nexp.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basis.hpp"

namespace functional_reg {

// One sample set: curves[p][i] is predictor p of sample i.
struct Sample {
  std::vector<std::vector<Curve>> curves;
  std::vector<double> y;      // observed responses
  std::vector<double> truth;  // noiseless regression function f(x_i) (simulation), else empty
  std::vector<std::string> ids;
  std::size_t size() const { return y.size(); }
};

struct Problem {
  std::vector<std::string> predictors;
  Sample train, validation, test;
  bool regular = true;  // every curve of a predictor has the same points
};

// What a study may change between draws; unset fields keep the data set's own values. `fold`
// (data sets with dataset.folds = k > 1): the test part is fold f of a k-fold partition drawn by the
// split seed, and the rest is split once more into training and validation (for early stopping).
struct Draw {
  std::optional<std::int64_t> n, m, irregular_points, split_seed, fold;
};

class FunctionalData : public nexp::Dataset {
 public:
  virtual Problem draw(const Draw& d) const = 0;
  // Whether excess risk (against noiseless targets) is defined.
  virtual bool simulated() const { return false; }
  // k > 1: draws are the folds of repeated k-fold cross-validation; 0: random splits.
  virtual std::int64_t folds() const { return 0; }
};

enum class Truth { Linear, Index2, General };

struct SimulatedOptions {
  Truth truth = Truth::Index2;
  std::int64_t n = 1000;           // training curves
  std::int64_t n_test = 2000;
  double validation_share = 0.25;  // validation curves = share x n
  std::int64_t m = 20;             // random points per curve
  std::int64_t terms = 21;         // Fourier terms of the curves
  double decay = 1.5;              // sd of the k-th frequency pair: k^-decay
  double point_noise = 0.05;       // measurement noise on x
  double noise = 0.2;              // response noise sd (the signal has unit variance)
  std::int64_t split_seed = 0;     // 0: the run's seed
  static void declare(nexp::Options<SimulatedOptions>& o);
};

struct RealOptions {
  std::string response;                 // column of the responses file; "" = the data set's default
  std::int64_t irregular_points = 0;    // > 0: keep a seeded random subset of this many points per curve
  bool derivative = false;              // add the second derivative of each regular-grid predictor
  std::int64_t split_seed = 0;          // 0: the run's seed
  std::vector<std::int64_t> split = {};  // train / validation / test sizes; empty: the data set's default
  std::int64_t folds = 0;               // > 1: k-fold cross-validation (split sets the validation share)
  std::string file, responses;          // functional_reg.csv: the two files
  static void declare(nexp::Options<RealOptions>& o);
};

std::shared_ptr<nexp::Dataset> make_simulated(const SimulatedOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_tecator(const RealOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_gasoline(const RealOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_growth(const RealOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_csv(const RealOptions& o, nexp::RunContext& ctx);

// The simulator's pieces, for tests: the index directions beta_j as Fourier coefficients and f.
struct Simulator {
  SimulatedOptions o;
  double general_scale = 1.0;             // general truth: makes its variance 1
  std::vector<std::vector<double>> beta;  // J x terms: <beta_j, x> = sum_k beta_jk xi_k (orthonormal basis)
  double sd(std::int64_t k) const;        // sd of Fourier score k (0-based)
  double f(const std::vector<double>& scores) const;
  Sample sample(std::int64_t n, std::uint64_t seed, std::uint64_t purpose, std::int64_t m) const;
};
Simulator make_simulator(const SimulatedOptions& o);

// Fold `fold` of k-fold cross-validation over samples already shuffled (`order`): the fold (a
// contiguous block of near-equal size) is the test part; the other samples, shuffled once more by
// `seed`, are split into training and validation in the proportions split[0] : split[1]. Returns the
// samples in train, validation, test order and sets `sizes` to the three part sizes.
std::vector<std::size_t> cv_fold(const std::vector<std::size_t>& order, std::int64_t k, std::int64_t fold,
                                 const std::vector<std::int64_t>& split, std::uint64_t seed,
                                 std::vector<std::int64_t>& sizes);

// Second derivative of a curve on a regular grid by central differences (ends: one-sided).
Curve second_derivative(const Curve& c);

}  // namespace functional_reg
