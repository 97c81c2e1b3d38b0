// stable_fairness: fairness as stability of a prediction-rate functional under shifts of group
// composition, and a mixture of reweighted predictors chosen by a second-order cone program. Registers
// the table data set and the four methods; their options are declared in data.hpp and experiments.hpp.
#include <nexp/nexp.hpp>

#include "data.hpp"
#include "experiments.hpp"

namespace {

using nexp::Direction;

// A metric with its 95% interval: <name>, <name>_ci_low, <name>_ci_high (RunContext::summary_interval).
std::vector<std::string> interval_metric(nexp::Registrar& r, const std::string& name, Direction d,
                                         const std::string& help) {
  r.metric(name, d, help);
  r.metric(name + "_ci_low", d, "lower end of the 95% interval of " + name);
  r.metric(name + "_ci_high", d, "upper end of the 95% interval of " + name);
  return {name, name + "_ci_low", name + "_ci_high"};
}

void register_components(nexp::Registrar& r) {
  using namespace stable_fairness;
  r.metric("feasible", Direction::None, "1 when program (4) has a solution at this tau, else 0");
  r.metric("base_predictors", Direction::None, "number K of base predictors");
  r.metric("val_accuracy", Direction::Maximize, "expected validation accuracy of the randomised mixture");
  r.metric("test_accuracy", Direction::Maximize, "expected test accuracy of the randomised mixture");
  r.metric("test_dp_gap", Direction::Minimize, "max - min over groups of P(h = 1 | g) on test");
  r.metric("test_eo_gap", Direction::Minimize, "the larger of the TPR and FPR gaps on test");
  r.metric("val_constant", Direction::Minimize, "Lipschitz constant (2)/(3) of the notion on validation");
  r.metric("test_constant", Direction::Minimize, "Lipschitz constant of the notion on test");
  r.metric("certified_gap", Direction::Minimize, "validation constant plus the confidence term (5)");
  r.metric("certificate_holds", Direction::Maximize, "1 when the test constant is at most the certified gap");
  r.metric("kkt_stationarity", Direction::Minimize, "inf-norm of the Lagrangian's gradient at the solver's answer");
  auto shift = interval_metric(r, "shift_slope", Direction::Minimize,
                               "steepest slope of the test positive rate against group composition (norm units)");
  auto single = interval_metric(r, "mixture_minus_single_pp", Direction::Maximize,
                                "mixture minus best single reweighted predictor, test accuracy (pp, paired over splits)");
  auto eg = interval_metric(r, "mixture_minus_eg_pp", Direction::Maximize,
                            "mixture minus exponentiated gradient at the mixture's test gap (pp, paired)");
  auto macc = interval_metric(r, "mixture_test_accuracy", Direction::Maximize, "mixture's test accuracy at headline tau");
  auto mgap = interval_metric(r, "mixture_test_gap", Direction::Minimize, "mixture's test gap (TV) at headline tau");
  r.metric("eg_matched_splits", Direction::None, "splits where EG's frontier spans the mixture's test gap");
  r.metric("feasible_splits", Direction::None, "splits where program (4) was feasible");
  auto vplain = interval_metric(r, "violation_rate_plain", Direction::Minimize,
                                "share of splits whose test constant exceeds the validation constant (Clopper-Pearson)");
  auto vdelta = interval_metric(r, "violation_rate_delta", Direction::Minimize,
                                "share of splits whose test constant exceeds the certificate with delta");
  r.metric("slope_within_certificate_share", Direction::Maximize,
           "share of (tau, split) whose measured shift slope's interval reaches below the certified gap");
  r.metric("max_slope_minus_certified", Direction::Minimize, "largest measured slope minus certified gap");
  auto spearman = interval_metric(r, "slope_tau_spearman", Direction::None,
                                  "Spearman correlation of the measured shift slope with tau (bootstrap over splits)");
  r.metric("eg_median_duality_gap", Direction::Minimize,
           "median over splits and eps of exponentiated gradient's duality gap nu at its last iteration");
  r.metric("eg_mean_iterations", Direction::None, "mean iterations exponentiated gradient ran (it stops at nu <= 1e-3)");
  r.metric("eg_lp_share", Direction::None, "share of exponentiated gradient's fits whose final LP was feasible and used");

  r.dataset<TableOptions>("stable_fairness.table",
                          "a table with a binary label and a protected group (adult, compas, income, hmda, german, "
                          "arrests, csv, synthetic), split 60/20/20",
                          make_table);

  auto cat = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  r.method("stable_fairness.mixture",
           "the mixture of reweighted predictors from program (4), its certificate and composition-shift slope",
           run_mixture)
      .options<MixtureOptions>()
      .produces(cat({"feasible", "base_predictors", "val_accuracy", "test_accuracy", "test_dp_gap", "test_eo_gap",
                     "val_constant", "test_constant", "certified_gap", "certificate_holds", "kkt_stationarity"},
                    shift))
      .accepts({"stable_fairness.table"});
  r.method("stable_fairness.frontier",
           "accuracy against test gap over splits: the mixture's tau sweep against LR, reweighing, the best single "
           "reweighted predictor, exponentiated gradient and (EO) Hardt et al.",
           run_frontier)
      .options<FrontierOptions>()
      .produces(cat(cat(cat(cat(single, eg), macc), mgap),
                    {"eg_matched_splits", "eg_median_duality_gap", "eg_mean_iterations", "eg_lp_share"}))
      .accepts({"stable_fairness.table"});
  r.method("stable_fairness.certify", "how often the test constant exceeds the certificate, with and without delta",
           run_certify)
      .options<CertifyOptions>()
      .produces(cat(cat(vplain, vdelta), {"feasible_splits"}))
      .accepts({"stable_fairness.table"});
  r.method("stable_fairness.shift",
           "test sets resampled to group compositions in [0.1, 0.9]: measured slope against the certified constant",
           run_shift)
      .options<ShiftOptions>()
      .produces(cat({"slope_within_certificate_share", "max_slope_minus_certified"}, spearman))
      .accepts({"stable_fairness.table"});
}

}  // namespace

NEXP_PLUGIN(stable_fairness, "0.1.0",
            "classical fairness gaps are Lipschitz constants of prediction rates under group-composition shifts; a "
            "mixture of reweighted predictors chosen by an SOCP bounds them uniformly over test compositions",
            "Fairness as distributional stability (NeurIPS 2026; authors not recorded with the abstract)",
            register_components)
