// dsminimax: decentralized doubly smoothed minimax (DS-GDA on a network) with one step size for both
// players, against two-timescale decentralized baselines. The mathematics lives in algorithms.hpp.
#include <nexp/nexp.hpp>

#include "methods.hpp"

namespace {

using nexp::Direction;

// One method on one data set, on the back end params.backend names.
void run_single(nexp::RunContext& ctx, dsminimax::Algorithm a) {
  using namespace dsminimax;
  const auto o = ctx.options<RunOptions>();
  auto& inst = ctx.dataset_as<Instance>();
  const StepSizes s = steps_for(a, o, *inst.problem, inst.mixing.spectral_gap());
  ctx.log().info("{}", inst.describe());
  ctx.log().info("eta_x {:.4g}, eta_y {:.4g} (ratio {:.4g}), r1 {:.4g}, r2 {:.4g}, beta {:.4g}, mu {:.4g}", s.eta_x,
                 s.eta_y, s.eta_y / s.eta_x, s.r1, s.r2, s.beta, s.mu);
  std::unique_ptr<Network> net;
  if (o.backend == Backend::Comm) net = make_comm_network(inst.mixing, ctx.comm());
  else net = std::make_unique<SimNetwork>(inst.mixing);
  const Trace tr = run_to_eps(*inst.problem, *net, a, s, o, ctx.seed(), [&](std::int64_t t, const Trace& x) {
    ctx.log_metrics(t, {{"grad_phi_norm", x.grad_phi_norm},
                        {"phi", x.phi},
                        {"consensus_error", x.consensus},
                        {"grad_calls", static_cast<double>(x.grad_calls)},
                        {"comm_rounds", static_cast<double>(x.rounds)}});
  });
  if (tr.diverged) ctx.log().warn("diverged: ||grad Phi(xbar)|| left every bound");
  ctx.summary("grad_phi_norm", tr.grad_phi_norm);
  ctx.summary("phi", tr.phi);
  ctx.summary("consensus_error", tr.consensus);
  ctx.summary("iterations_to_eps", static_cast<double>(tr.iterations_to_eps));
  ctx.summary("grad_calls", static_cast<double>(tr.grad_calls));
  ctx.summary("comm_rounds", static_cast<double>(tr.rounds));
  ctx.summary("spectral_gap", inst.mixing.spectral_gap());
}


void register_metrics(nexp::Registrar& r) {
  r.metric("grad_phi_norm", Direction::Minimize, "||grad Phi(xbar)|| at the node average, Phi(x) = max_y f(x, y)");
  r.metric("phi", Direction::Minimize, "Phi(xbar)");
  r.metric("consensus_error", Direction::Minimize, "(1/M) sum_k ||x_k - xbar||^2");
  r.metric("iterations_to_eps", Direction::Minimize,
           "first iteration with ||grad Phi(xbar)||^2 + consensus error <= eps^2; -1: never");
  r.metric("grad_calls", Direction::None, "local stochastic gradient evaluations, all nodes together");
  r.metric("comm_rounds", Direction::None, "gossip rounds (each node sends to each neighbour once per round)");
  r.metric("spectral_gap", Direction::None, "1 - max(|lambda_2(W)|, |lambda_M(W)|) of the gossip matrix");
  for (const char* m : {"ds_gda", "gt_gda", "gt_gda_ratio1", "gt_gda_best_ratio", "dm_hsgd", "dream", "dm_gda"})
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

// The metrics of dsminimax.compare, registered; returns their names.
std::vector<std::string> register_compare_metrics(nexp::Registrar& r) {
  std::vector<std::string> names;
  auto with_bounds = [&](const std::string& name, const std::string& what) {
    r.metric(name, Direction::Minimize, what);
    for (const char* bound : {"_ci_low", "_ci_high"})
      r.metric(name + bound, Direction::None, "95% t bound of " + name);
    names.insert(names.end(), {name, name + "_ci_low", name + "_ci_high"});
  };
  for (const char* m : {"ds_gda", "gt_gda", "dm_hsgd", "dream", "dm_gda"}) {
    with_bounds(std::string("rounds_to_target_") + m,
                "the round from which ||grad Phi(xbar)|| stays <= target (steps + 1: never), mean over seeds");
    with_bounds(std::string("final_grad_norm_") + m, "||grad Phi(xbar)|| after the last round, mean over seeds");
    names.push_back(std::string("best_step_") + m);
    r.metric(names.back(), Direction::None, "the step multiple of the grid at which the method did best");
  }
  with_bounds("ds_gda_rounds_minus_best_baseline",
              "DS-GDA's rounds to the target minus those of the baseline with the fewest, paired over seeds");
  return names;
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  const auto compare = register_compare_metrics(r);
  r.dataset<dsminimax::NcplOptions>(
      "dsminimax.ncpl", "nonconvex-PL minimax over M nodes, kappa set by A's spectrum, exact Phi and grad Phi",
      dsminimax::make_ncpl);
  r.dataset<dsminimax::LogregOptions>(
      "dsminimax.robust_logreg",
      "distributionally robust logistic regression (a9a or a LIBSVM file), nonconvex regulariser, exact Phi",
      dsminimax::make_logreg);
  const auto single = dsminimax::run_metrics();
  const struct {
    const char* name;
    dsminimax::Algorithm algorithm;
    const char* summary;
  } single_runs[] = {
      {"dsminimax.ds_gda", dsminimax::Algorithm::DsGda,
       "decentralized doubly smoothed GDA: eta_x = eta_y, gradient tracking, local z, v"},
      {"dsminimax.gt_gda", dsminimax::Algorithm::GtGda,
       "two-timescale decentralized GDA with gradient tracking (eta_y / eta_x = ratio)"},
      {"dsminimax.dm_hsgd", dsminimax::Algorithm::DmHsgd,
       "DM-HSGD (Xian et al. 2021): hybrid variance-reduced estimator, gradient tracking"},
      {"dsminimax.dream", dsminimax::Algorithm::Dream,
       "DREAM (Chen, Ye, Luo 2024): recursive (SARAH) estimator with periodic exact refresh, gradient tracking"},
      {"dsminimax.dm_gda", dsminimax::Algorithm::DmGda,
       "DM-GDA (Huang, Chen 2023): hybrid estimator and momentum in the iterates, gradient tracking"},
  };
  for (const auto& m : single_runs)
    r.method(m.name, m.summary, [a = m.algorithm](nexp::RunContext& ctx) { run_single(ctx, a); })
        .options<dsminimax::RunOptions>()
        .produces(single)
        .accepts({"dsminimax.*"});
  r.method("dsminimax.compare",
           "every method on one grid of step multiples over seeds, each at its best: rounds to a target "
           "||grad Phi(xbar)||, curves against rounds and gradient calls",
           dsminimax::run_compare)
      .options<dsminimax::CompareOptions>()
      .produces(compare)
      .accepts({"dsminimax.*"});
  std::vector<std::string> slopes;
  for (const char* m : {"ds_gda", "gt_gda", "gt_gda_ratio1", "gt_gda_best_ratio", "dm_hsgd", "dream", "dm_gda"})
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

NEXP_PLUGIN(dsminimax, "0.2.0",
            "Decentralized doubly smoothed minimax: smoothed gradients for both players, one step size scale",
            "Doubly smoothed decentralized stochastic minimax (NeurIPS 2026); centralized DS-GDA: Zheng, Zhu, So, "
            "Blanchet, Li, Universal gradient descent ascent method for nonconvex-nonconcave minimax optimization, "
            "NeurIPS 2023; DM-HSGD: Xian, Huang, Zhang, Huang, A faster decentralized algorithm for nonconvex "
            "minimax problems, NeurIPS 2021; DREAM: Chen, Ye, Luo, AISTATS 2024; DM-GDA: Huang, Chen, 2023",
            register_components)
