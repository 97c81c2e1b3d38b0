#pragma once
// The methods: one fitted mixture with its certificate and shift slope (stable_fairness.mixture), and
// the studies over many splits (frontier, certify, shift).
#include <string>
#include <vector>

#include <nexp/nexp.hpp>

#include "fairness.hpp"

namespace stable_fairness {


// Options every method shares: the notion, the norm, the base predictors.
struct CommonOptions {
  Notion notion = Notion::DP;
  Norm norm = Norm::L2;
  std::vector<double> shares = BaseOptions{}.shares;
  double l2 = 1e-3;

  BaseOptions base() const { return {shares, l2}; }
  static void declare(nexp::Options<CommonOptions>& o) {
    o.add("notion", &CommonOptions::notion, "dp: demographic parity, eo: equalised odds, eopp: equal opportunity",
          {{"dp", Notion::DP}, {"eo", Notion::EO}, {"eopp", Notion::EOPP}});
    o.add("norm", &CommonOptions::norm, "norm on compositions: l2 (the constant ||P r||) or tv (the max-min gap)",
          {{"l2", Norm::L2}, {"tv", Norm::TV}});
    o.add("shares", &CommonOptions::shares, "grid of group shares pi_k that set the base predictors' weights")
        .range(0.01, 0.99);
    o.add("l2", &CommonOptions::l2, "L2 penalty of the logistic regressions").range(0, 10);
  }
};

struct MixtureOptions : CommonOptions {
  double tau = 0.05;
  double delta = 0.05;
  int shift_points = 9;
  int shift_draws = 2000;
  static void declare(nexp::Options<MixtureOptions>& o) {
    o.inherit<CommonOptions>();
    o.add("tau", &MixtureOptions::tau, "bound on the validation Lipschitz constant (in the norm's units)").range(0, 2);
    o.add("delta", &MixtureOptions::delta, "failure probability of the certificate; 0: no confidence term")
        .range(0, 0.5);
    o.add("shift_points", &MixtureOptions::shift_points, "test compositions in [0.1, 0.9]").range(3, 101);
    o.add("shift_draws", &MixtureOptions::shift_draws, "test examples drawn at each composition").range(10, 1000000);
  }
};

struct FrontierOptions : CommonOptions {
  std::vector<double> taus = {0.01, 0.02, 0.04, 0.06, 0.08, 0.12};
  std::vector<double> eps = {0.005, 0.01, 0.02, 0.04, 0.08};
  int splits = 10;
  double headline_tau = 0.04;
  int eg_iterations = 30;
  bool eg_lp = true;
  static void declare(nexp::Options<FrontierOptions>& o) {
    o.inherit<CommonOptions>();
    o.add("taus", &FrontierOptions::taus, "the mixture's bounds (and the best single predictor's)").range(0, 2);
    o.add("eps", &FrontierOptions::eps, "exponentiated gradient's constraint bounds").range(1e-4, 1);
    o.add("splits", &FrontierOptions::splits, "splits split_seed .. split_seed + splits - 1").range(1, 1000);
    o.add("headline_tau", &FrontierOptions::headline_tau, "the tau whose comparisons become summaries").range(0, 2);
    o.add("eg_iterations", &FrontierOptions::eg_iterations, "exponentiated gradient's iteration limit").range(1, 1000);
    o.add("eg_lp", &FrontierOptions::eg_lp,
          "after exponentiated gradient, the LP over the classifiers it found (least training error within eps); "
          "false: Algorithm 1's average");
  }
};

struct CertifyOptions : CommonOptions {
  double tau = 0.03;
  double delta = 0.1;
  int splits = 50;
  static void declare(nexp::Options<CertifyOptions>& o) {
    o.inherit<CommonOptions>();
    o.add("tau", &CertifyOptions::tau, "the mixture's bound").range(0, 2);
    o.add("delta", &CertifyOptions::delta, "the certificate's failure probability").range(1e-6, 0.5);
    o.add("splits", &CertifyOptions::splits, "splits split_seed .. split_seed + splits - 1").range(1, 10000);
  }
};

struct ShiftOptions : CommonOptions {
  std::vector<double> taus = {0.005, 0.01, 0.02, 0.04, 0.08};
  double delta = 0.05;
  int splits = 5;
  int shift_points = 9;
  int shift_draws = 4000;
  static void declare(nexp::Options<ShiftOptions>& o) {
    o.inherit<CommonOptions>();
    o.add("taus", &ShiftOptions::taus, "the mixture's bounds").range(0, 2);
    o.add("delta", &ShiftOptions::delta, "the certificate's failure probability; 0: none").range(0, 0.5);
    o.add("splits", &ShiftOptions::splits, "splits split_seed .. split_seed + splits - 1").range(1, 1000);
    o.add("shift_points", &ShiftOptions::shift_points, "test compositions in [0.1, 0.9]").range(3, 101);
    o.add("shift_draws", &ShiftOptions::shift_draws, "test examples drawn at each composition").range(10, 1000000);
  }
};

void run_mixture(nexp::RunContext& ctx);
void run_frontier(nexp::RunContext& ctx);
void run_certify(nexp::RunContext& ctx);
void run_shift(nexp::RunContext& ctx);

}  // namespace stable_fairness
