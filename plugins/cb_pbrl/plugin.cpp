// cb_pbrl: reward, cost and a safe policy learned jointly from an expert's preferences as a constrained
// bi-level problem (CB-PbRL). Registers the gridworld CMDPs, the method, its baselines and the studies;
// their options are declared in world.hpp and methods.hpp.
#include <nexp/nexp.hpp>

#include "methods.hpp"
#include "world.hpp"

namespace {

using nexp::Direction;

void register_components(nexp::Registrar& r) {
  r.metric("normalized_return", Direction::Maximize,
           "true discounted return of the learned policy, (J_r - J_r(uniform)) / (J_r(oracle) - J_r(uniform))");
  r.metric("cost", Direction::None, "true discounted cost J_c of the learned policy");
  r.metric("violation", Direction::Minimize, "max(0, J_c - d): budget violation of the learned policy");
  r.metric("pref_accuracy_better", Direction::Maximize, "held-out accuracy on noise-free `better` comparisons");
  r.metric("pref_accuracy_safer", Direction::Maximize, "held-out accuracy on noise-free `safer` comparisons");
  r.metric("cost_auc", Direction::Maximize, "ROC AUC of the learned per-cell cost at telling hazard cells apart");
  r.metric("queries", Direction::None, "labelled segment pairs used");
  r.metric("hypergrad_sq_avg", Direction::Minimize,
           "average over the outer iterates of the squared hypergradient norm of a fixed held-out objective");
  r.metric("budget", Direction::None, "the budget d the policy is judged by");
  r.metric("lam", Direction::None, "the lower level's multiplier lam* at the end");
  r.metric("transfer_normalized_return", Direction::Maximize,
           "mean normalized return when the learned R, C are re-solved at d/2 and 2d");
  r.metric("transfer_violation", Direction::Minimize, "mean violation at d/2 and 2d after re-solving");
  r.metric("rate_slope", Direction::Minimize,
           "log-log slope of hypergrad_sq_avg against K (step eta0/sqrt(K)); O(1/sqrt(K)) means <= -1/2");

  r.dataset<cb_pbrl::GridOptions>("cb_pbrl.grid",
                                  "tabular gridworld CMDPs with hazards (hazard_band, cliff, random, map file) and "
                                  "their constrained-optimal expert",
                                  cb_pbrl::make_grid);

  const auto metrics = cb_pbrl::run_metrics();
  r.method("cb_pbrl.train", "CB-PbRL: reward and cost from preferences, constrained policy, double loop with the "
           "implicit hypergradient", cb_pbrl::run_train)
      .options<cb_pbrl::TrainOptions>().produces(metrics).accepts({"cb_pbrl.grid"});
  r.method("cb_pbrl.safe_rlhf", "Safe-RLHF-style: separate reward and cost BT models, Lagrangian policy, on-policy "
           "rounds, no coupling", cb_pbrl::run_safe_rlhf)
      .options<cb_pbrl::TrainOptions>().produces(metrics).accepts({"cb_pbrl.grid"});
  r.method("cb_pbrl.unconstrained", "PbRL: reward only from preferences, unconstrained soft-optimal policy",
           cb_pbrl::run_unconstrained)
      .options<cb_pbrl::TrainOptions>().produces(metrics).accepts({"cb_pbrl.grid"});
  r.method("cb_pbrl.two_stage", "reward and cost fit once on offline expert and random queries, CMDP solved once",
           cb_pbrl::run_two_stage)
      .options<cb_pbrl::TrainOptions>().produces(metrics).accepts({"cb_pbrl.grid"});
  r.method("cb_pbrl.oracle", "the CMDP optimum of the occupancy LP (reads the true reward and cost; takes the "
           "learners' options, so that one config serves every method, and ignores them)",
           cb_pbrl::run_oracle)
      .options<cb_pbrl::TrainOptions>()
      .produces({"normalized_return", "cost", "violation", "budget", "lam", "queries"})
      .accepts({"cb_pbrl.grid"});
  r.method("cb_pbrl.compare", "methods x worlds x seeds x query budgets with bootstrap intervals", cb_pbrl::run_compare)
      .options<cb_pbrl::CompareOptions>().produces({});
  r.method("cb_pbrl.rate", "average squared held-out hypergradient norm against K, log-log slope per inner N",
           cb_pbrl::run_rate)
      .options<cb_pbrl::RateOptions>().produces({"rate_slope"});
}

}  // namespace

NEXP_PLUGIN(cb_pbrl, "0.1.0",
            "reward, cost and a safe policy learned jointly from preferences as a constrained bi-level problem; the "
            "double loop converges at O(1/sqrt(K))",
            "CB-PbRL: Constrained Bi-level Optimization for Preference-Based Reinforcement Learning (NeurIPS 2026; "
            "authors not recorded with the abstract)",
            register_components)
