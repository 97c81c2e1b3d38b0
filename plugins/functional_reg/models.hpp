#pragma once
// The models of the plugin on one drawn problem, torch-free (the networks' training is in nets.cpp).
//
// Features (shared by every model but raw_mlp), chosen by params.basis: per predictor p, the penalised
// B-spline coefficients c_i^(p) (basis.hpp) of every curve ("bspline"); "fpca": the first K functional
// principal component scores of those coefficients; "pace": the first K PACE scores (conditional
// expectations, for sparse curves; basis.hpp), fitted on the training curves without any per-curve
// spline. Networks see the features standardised with the training mean and sd.
//
// FLM (Ramsay and Silverman ch. 15; Goldsmith et al. 2011): y_i = a + sum_p <beta_p, x_i^(p)> + e_i,
// beta_p = sum_m b_pm phi_m, so <beta_p, x_i^(p)> = c_i^(p)T G b_p. With Z = [C^(p) G]_p,
//     b = argmin ||y - a - Z b||^2 + lambda b^T blockdiag(R) b,
// lambda chosen by generalised cross-validation, GCV(lambda) = n RSS / (n - 1 - tr H)^2.
// FPCR: least squares on the first K FPC scores of every predictor, K chosen on the validation set.
#include <cstdint>
#include <string>
#include <vector>

#include "basis.hpp"
#include "data.hpp"

namespace functional_reg {

enum class Representation { BSpline, Fpca, Pace };

struct BasisOptions {
  std::int64_t M = 12;          // B-spline functions per predictor
  double penalty = 1e-6;        // lambda of the per-curve fit
  Representation representation = Representation::BSpline;
  std::int64_t components = 8;  // FPC scores per predictor (fpca, pace)
  static void declare(nexp::Options<BasisOptions>& o);  // in plugin.cpp, with the other options
};

// Inputs of one sample set: rows = samples.
struct Design {
  Matrix train, validation, test;
  Vector y_train, y_validation, y_test;
  std::vector<std::string> predictors;
  std::int64_t per_predictor = 0;  // columns per predictor
};

// B-spline coefficients (or FPC / PACE scores) of every curve; errors name the curve.
Design coefficient_design(const Problem& p, const BasisOptions& o);
// The raw values on the common grid; ConfigError when the curves are irregular.
Design raw_design(const Problem& p, const std::string& method);

struct LinearFit {
  Vector b;                // coefficients on the design's columns
  double intercept = 0;
  double lambda = 0;       // FLM: chosen penalty
  std::int64_t k = 0;      // FPCR: chosen components
  Vector predict(const Matrix& x) const;
};

// FLM on B-spline coefficients: Z = C G, penalty blockdiag(R). `lambdas` empty: a log grid.
LinearFit fit_flm(const Matrix& c, const Vector& y, const Matrix& gram, const Matrix& roughness,
                  std::int64_t predictors, std::vector<double> lambdas = {});
// Beta's coefficient function values for predictor p at t (for plots and tests).
Vector flm_beta(const LinearFit& f, const BSplineBasis& basis, std::int64_t p, const std::vector<double>& t);
// Ordinary least squares with an intercept (minimum norm).
LinearFit fit_ols(const Matrix& x, const Vector& y);

double rmse(const Vector& a, const Vector& b);
double mean_square(const Vector& a, const Vector& b);

}  // namespace functional_reg
