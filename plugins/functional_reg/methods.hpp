#pragma once
// nexp glue, implemented in plugin.cpp next to the registration: the options of every method (also
// BasisOptions and NetOptions), the single-fit methods (functional_reg.equal_width, .bottleneck,
// .funcnn, .raw_mlp, .flm, .fpcr) and functional_reg.study, which redraws the problem over a grid (n, m,
// M, irregular points) and repeats (or the folds of repeated k-fold cross-validation), fits several arms
// on each draw and reports levels, log-log slopes in n, changes between consecutive values of m or M,
// and paired differences between arms.
#include <nexp/nexp.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "data.hpp"
#include "models.hpp"
#include "nets.hpp"

namespace functional_reg {

enum class Kind { EqualWidth, Bottleneck, FuncNN, RawMlp, Flm, Fpcr };

struct FitOptions : BasisOptions, NetOptions {
  static void declare(nexp::Options<FitOptions>& o) {
    o.inherit<BasisOptions>();
    o.inherit<NetOptions>();
  }
};

struct Arm {
  std::string name;
  std::string method = "equal_width";  // equal_width, bottleneck, funcnn, raw_mlp, flm, fpcr
  std::int64_t J = 0;     // 0: the study's J
  std::int64_t M = 0;     // 0: the study's M
  std::vector<std::string> predictors;  // empty: all; else the predictors this arm sees
  std::string basis;      // empty: the study's params.basis; else bspline, fpca or pace
  static void declare(nexp::Options<Arm>& o);
};

enum class Axis { None, N, Points, Basis, Irregular };

struct StudyOptions : FitOptions {
  Axis vary = Axis::None;
  std::vector<double> values;
  std::int64_t repeats = 5;
  std::int64_t first_seed = 1;
  std::vector<Arm> arms;
  std::vector<std::string> compare;  // "a-b": paired differences of arm a minus arm b
  std::string metric = "excess_risk";  // or test_rmse, validation_rmse (model selection)
  static void declare(nexp::Options<StudyOptions>& o);
};

struct ArmResult {
  double test_rmse = NAN, excess_risk = NAN, validation_rmse = NAN, seconds = NAN;
  std::int64_t parameters = 0, epochs = 0;
  Vector test_predictions;
};

// Fits one model on one problem. `seed` seeds the network's initialisation and batches.
ArmResult fit_arm(Kind kind, const FitOptions& o, const Problem& p, bool simulated, std::uint64_t seed,
                  const std::string& method_name);
Kind kind_of(const std::string& method);  // "flm" or "functional_reg.flm"

void run_single(nexp::RunContext& ctx, Kind kind);
void run_study(nexp::RunContext& ctx);

}  // namespace functional_reg
