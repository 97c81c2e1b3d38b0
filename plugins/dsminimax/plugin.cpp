// dsminimax: decentralized doubly smoothed minimax (DS-GDA on a network) with one step size for both
// players, against two-timescale decentralized baselines. The mathematics lives in algorithms.hpp.
#include <nexp/nexp.hpp>

#include "methods.hpp"

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  r.metric("grad_phi_norm", Direction::Minimize, "||grad Phi(xbar)|| at the node average, Phi(x) = max_y f(x, y)");
  r.metric("phi", Direction::Minimize, "Phi(xbar)");
  r.metric("consensus_error", Direction::Minimize, "(1/M) sum_k ||x_k - xbar||^2");
  r.metric("iterations_to_eps", Direction::Minimize,
           "first iteration with ||grad Phi(xbar)||^2 + consensus error <= eps^2; -1: never");
  r.metric("grad_calls", Direction::None, "local stochastic gradient evaluations, all nodes together");
  r.metric("comm_rounds", Direction::None, "gossip rounds (each node sends to each neighbour once per round)");
  r.metric("spectral_gap", Direction::None, "1 - max(|lambda_2(W)|, |lambda_M(W)|) of the gossip matrix");
  for (const char* m : {"ds_gda", "gt_gda", "gt_gda_ratio1", "gt_gda_best_ratio", "dm_hsgd"})
    for (const char* suffix : {"", "_rule"}) {
      const std::string name = std::string("slope_") + m + suffix;
      r.metric(name, Direction::Minimize,
               std::string("log-log slope of iterations to eps against kappa, ") + m +
                   (*suffix ? " at its theory rule" : " at its best step on the grid"));
      r.metric(name + "_lo", Direction::None, "2.5% bootstrap bound of " + name);
      r.metric(name + "_hi", Direction::None, "97.5% bootstrap bound of " + name);
      r.metric(std::string("censored_") + m + suffix, Direction::Minimize,
               "(kappa, instance) pairs that never reached eps within the cap");
    }
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<dsminimax::NcplOptions>(
      "dsminimax.ncpl", "nonconvex-PL minimax over M nodes, kappa set by A's spectrum, exact Phi and grad Phi",
      dsminimax::make_ncpl);
  r.dataset<dsminimax::LogregOptions>(
      "dsminimax.robust_logreg",
      "distributionally robust logistic regression (a9a or a LIBSVM file), nonconvex regulariser, exact Phi",
      dsminimax::make_logreg);
  const auto single = dsminimax::run_metrics();
  r.method("dsminimax.ds_gda", "decentralized doubly smoothed GDA: eta_x = eta_y, gradient tracking, local z, v",
           dsminimax::run_ds_gda)
      .options<dsminimax::RunOptions>()
      .produces(single)
      .accepts({"dsminimax.*"});
  r.method("dsminimax.gt_gda", "two-timescale decentralized GDA with gradient tracking (eta_y / eta_x = ratio)",
           dsminimax::run_gt_gda)
      .options<dsminimax::RunOptions>()
      .produces(single)
      .accepts({"dsminimax.*"});
  r.method("dsminimax.dm_hsgd", "DM-HSGD (Xian et al. 2021): hybrid variance-reduced estimator, gradient tracking",
           dsminimax::run_dm_hsgd)
      .options<dsminimax::RunOptions>()
      .produces(single)
      .accepts({"dsminimax.*"});
  std::vector<std::string> slopes;
  for (const char* m : {"ds_gda", "gt_gda", "gt_gda_ratio1", "gt_gda_best_ratio", "dm_hsgd"})
    for (const char* suffix : {"", "_rule"}) {
      const std::string name = std::string("slope_") + m + suffix;
      slopes.insert(slopes.end(), {name, name + "_lo", name + "_hi", std::string("censored_") + m + suffix});
    }
  r.method("dsminimax.kappa_scaling",
           "iterations to eps against kappa on NC-PL instances: each method at its rule and its best grid step, "
           "log-log slopes with bootstrap intervals",
           dsminimax::run_kappa_scaling)
      .options<dsminimax::ScalingOptions>()
      .produces(slopes);
}

}  // namespace

NEXP_PLUGIN(dsminimax, "0.1.0",
            "Decentralized doubly smoothed minimax: smoothed gradients for both players, one step size scale",
            "Doubly smoothed decentralized stochastic minimax (NeurIPS 2026); centralized DS-GDA: Zheng, Zhu, So, "
            "Blanchet, Li, Universal gradient descent ascent method for nonconvex-nonconcave minimax optimization, "
            "NeurIPS 2023; DM-HSGD: Xian, Huang, Zhang, Huang, A faster decentralized algorithm for nonconvex "
            "minimax problems, NeurIPS 2021",
            register_components)
