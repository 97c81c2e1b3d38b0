#pragma once
// The data sets (ground sets of real items and the two protocols), training and the metrics.
//
// submodular.fit     (S, F(S)) pairs on a ground set of N items, |S| uniform in min_size..max_size; a model is
//                    trained by least squares on F / std(F_train) and scored on held-out sets.
// submodular.select  FLEXSUBNET's protocol on a simulator: pairs (V, S*), V a random `subset`-item part of the
//                    ground set and S* the greedy k-subset of a hidden target on V; a model is trained by the
//                    likelihood of S*'s greedy choices, P(s_t | S_{t-1}, V) = softmax_{e in V \ S_{t-1}}
//                    (beta F(e | S_{t-1})), and scored by the Jaccard index of its own greedy k-subset.
// Every run repeats the whole experiment (new ground set, sets and initialisation) for `seeds` seeds,
// each drawn from its own stream, and trains every model of `methods` on the same data (paired).
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nexp/nexp.hpp>

#include "models.hpp"
#include "set_functions.hpp"

namespace submodular {

enum class TargetKind { FacilityLocation, LogDet, Coverage, Pairwise, Alpha };

struct FeatureOptions {
  std::string features = "digits";
  std::string features_file;
  int ground = 100;
  int pca = 16;
  int pool = 2000;
  TargetKind target = TargetKind::FacilityLocation;
  double coverage_fraction = 0.15;
  double alpha = 0.5;
  double kappa = 1.0;
  static void declare(nexp::Options<FeatureOptions>& o);
};

struct FitDataOptions : FeatureOptions {
  int train = 5000;
  int test = 1000;
  int min_size = 1;
  int max_size = 30;
  double noise = 0.0;
  static void declare(nexp::Options<FitDataOptions>& o);
};

struct SelectDataOptions : FeatureOptions {
  int subset = 30;
  int k = 10;
  int train = 500;
  int test = 100;
  static void declare(nexp::Options<SelectDataOptions>& o);
};

// The item pool (features of every item, PCA-reduced and scaled) and the protocol's options; one
// instance (ground set, target, data) is drawn per seed by make_instance().
struct Problem : nexp::Dataset {
  std::string source;
  Matrix pool;  // [pool, d]
  bool select = false;
  FitDataOptions fit;
  SelectDataOptions sel;
  std::string describe() const override;
};
std::shared_ptr<nexp::Dataset> make_fit(const FitDataOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_select(const SelectDataOptions& o, nexp::RunContext& ctx);

// Loads the items (digits / mnist / fashion_mnist or a CSV file), centres them and keeps `pca` principal
// components, scaled to a mean squared norm of 1.
Matrix load_features(const FeatureOptions& o);

struct Instance {
  Matrix z;  // [N, d], the ground set's items
  std::shared_ptr<SetFunction> target;
  double alpha_bound = 1.0;  // closed form, for the alpha target
  std::vector<Set> train_sets, test_sets;  // fit
  std::vector<double> train_y, test_y;
  std::vector<Set> train_v, test_v, train_star, test_star;  // select: V and the ordered S*
};
std::shared_ptr<SetFunction> make_target(const FeatureOptions& o, const Matrix& z, nexp::Random& rng, double* alpha);
Instance make_instance(const Problem& p, nexp::Random& rng);

// Training and the violation check, shared by the fitting methods and submodular.check.
struct TrainOptions : ModelOptions {
  int epochs = 60;
  int batch = 128;
  double lr = 3e-3;
  int triples = 10000;
  double tol = 1e-9;
  static void declare(nexp::Options<TrainOptions>& o);
};

struct RunOptions : TrainOptions {
  std::vector<std::string> methods;  // default: the method's own model
  int seeds = 1;
  int greedy_k = 10;
  static void declare(nexp::Options<RunOptions>& o);
};

// submodular.check: one model, random or trained as the fitting methods train it on seed 0's instance.
struct CheckOptions : TrainOptions {
  ModelKind model = ModelKind::Pairwise;
  bool trained = false;
  int exhaustive_n = 12;
  static void declare(nexp::Options<CheckOptions>& o);
};

// One registered method per model (its `methods` default) and submodular.compare (a list).
void run(nexp::RunContext& ctx, const std::string& own);

// submodular.check: builds `model` on the data set's first instance (ground set of N items), trains it when
// `trained`, then runs check_set_function: every S and i, j on the first exhaustive_n items and `triples`
// random (S subset T, e) triples at N. Summaries: violation_rate, monotonicity_violations, min_ratio (the
// triples), exhaustive_violations, exhaustive_monotonicity_violations, exhaustive_checks,
// exhaustive_min_ratio (over every S subset T on the first items), worst_excess.
void run_check(nexp::RunContext& ctx);

// A set function view of a model (batched, no gradients), values in the model's units.
BatchFunction model_function(SetModel& model, int n);

// Trains by least squares on the (set, value) pairs; returns the final training loss.
double train_regression(SetModel& model, const std::vector<Set>& sets, const std::vector<double>& y, int n,
                        const TrainOptions& o, nexp::Random& rng);

}  // namespace submodular
