// llm_channel: LLM reliability techniques as channel-coding operators, and a cost-aware router.
// Registers the plugin's components with nexp; the mathematics lives in the headers (README.md maps
// the paper to them).
#include <fmt/format.h>

#include <nexp/nexp.hpp>

#include "methods.hpp"
#include "probe.hpp"

// The one instantiation of each options struct's binding (methods.hpp and probe.hpp declare them extern).
template llm_channel::SimOptions nexp::bind<llm_channel::SimOptions>(const nexp::Params&);
template llm_channel::ArmsOptions nexp::bind<llm_channel::ArmsOptions>(const nexp::Params&);
template llm_channel::RouterOptions nexp::bind<llm_channel::RouterOptions>(const nexp::Params&);
template llm_channel::TheoryOptions nexp::bind<llm_channel::TheoryOptions>(const nexp::Params&);
template llm_channel::ProbeOptions nexp::bind<llm_channel::ProbeOptions>(const nexp::Params&);

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  r.metric("distinct_winning_arms", Direction::None, "distinct best fixed arms over the channel configurations");
  r.metric("distinct_task_winners", Direction::None, "distinct arms that win at least one (configuration, task)");
  r.metric("max_arm_win_share", Direction::None, "largest share of (configuration, task) pairs one arm wins");
  r.metric("critic_gain_contractive", Direction::None,
           "configurations whose critic's c* exceeds their single-shot accuracy: quality change of 4 critic rounds");
  r.metric("critic_gain_weak", Direction::None, "the other configurations: quality change of 4 critic rounds");
  r.metric("vote_gain_easy", Direction::None, "15-vote plurality minus single shot where the model's mode is right");
  r.metric("vote_gain_hard", Direction::None, "the same where the model's mode is wrong");
  const std::pair<const char*, const char*> frontier[] = {
      {"cost_cut_at_matched_quality", "1 - router cost / strongest fixed arm's cost, at its quality"},
      {"quality_gain_at_matched_cost", "router quality / strongest fixed arm's quality - 1, at its cost"},
      {"quality_gain_vs_single_shot", "router quality at that cost / best single-shot quality - 1"},
      {"frontier_covered", "share of Pareto-optimal fixed arms the router weakly dominates (within tolerance)"},
      {"mean_gain_over_frontier", "mean over lam of router quality / best fixed quality at no more cost - 1"}};
  for (const auto& [name, help] : frontier) {
    r.metric(name, Direction::Maximize, help);
    r.metric(std::string(name) + "_ci_low", Direction::Maximize, std::string("95% paired bootstrap low of ") + name);
    r.metric(std::string(name) + "_ci_high", Direction::Maximize, std::string("95% paired bootstrap high of ") + name);
  }
  r.metric("matched_quality_share", Direction::Maximize,
           "share of bootstrap resamples in which some router point reaches the strongest arm's quality");
  r.metric("probe_calls", Direction::None, "calls the probe made (its own count)");
  r.metric("probe_tokens", Direction::None, "tokens the server reported for the probe's calls");
  for (int t = 0; t < 8; ++t)
    r.metric(fmt::format("entropy_t{}", t), Direction::None,
             fmt::format("probe: mean answer entropy (nats) at the temperature params.temperatures[{}]", t));
  r.metric("strongest_arm_quality", Direction::None, "mean quality of the strongest fixed arm");
  r.metric("strongest_arm_cost", Direction::None, "mean normalised cost of the strongest fixed arm");
  r.metric("tau_star", Direction::None, "sqrt(AM (AM - HM)): above it uniform averaging beats weighting");
  r.metric("tau", Direction::None, "judge noise of the averaging check");
  r.metric("mse_uniform", Direction::Minimize, "Monte Carlo MSE of uniform averaging");
  r.metric("mse_weighted", Direction::Minimize, "Monte Carlo MSE of quality-weighted averaging");
  r.metric("mse_difference_se", Direction::None, "Monte Carlo standard error of mse_weighted - mse_uniform");
  r.metric("mse_uniform_first_order", Direction::None, "1 / (N HM)");
  r.metric("mse_weighted_first_order", Direction::None, "(AM + tau^2 / HM) / (N AM^2)");
  r.metric("tau_star_monte_carlo", Direction::None, "tau where the Monte Carlo MSEs cross (a line through 0.8 .. 1.2 tau*)");
  r.metric("vote_accuracy_n1", Direction::None, "easy/hard mix: exact plurality accuracy with one sample");
  r.metric("vote_accuracy_peak", Direction::None, "easy/hard mix: the highest exact accuracy over n = 1, 3, .., 41");
  r.metric("vote_peak_n", Direction::None, "easy/hard mix: the n of the highest accuracy");
  r.metric("vote_accuracy_n41", Direction::None, "easy/hard mix: exact accuracy with 41 samples");
  r.metric("weighting_wins", Direction::None, "1 when the weighted MSE is below the uniform one");
  for (const char* critic : {"refine_weak", "refine_strong"}) {
    r.metric(std::string(critic) + "_fixed_point", Direction::None, "c* = b / (a + b)");
    r.metric(std::string(critic) + "_gain", Direction::None, "simulated accuracy after the rounds - c0");
    r.metric(std::string(critic) + "_gain_closed_form", Direction::None, "c* + (1 - a - b)^t (c0 - c*) - c0");
  }
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<llm_channel::SimOptions>(
      "llm_channel.sim",
      "simulated LLM channels: hard tasks (choice, numeric, code), three priced models, judge, verifier, critic",
      llm_channel::make_sim);
  r.method("llm_channel.arms", "every model x operator x budget arm on every task of every channel configuration",
           llm_channel::run_arms)
      .options<llm_channel::ArmsOptions>()
      .produces({"distinct_winning_arms", "distinct_task_winners", "max_arm_win_share", "critic_gain_contractive",
                 "critic_gain_weak", "vote_gain_easy", "vote_gain_hard"})
      .accepts({"llm_channel.sim"});
  std::vector<std::string> router_metrics = {"strongest_arm_quality", "strongest_arm_cost", "matched_quality_share"};
  for (const char* m : {"cost_cut_at_matched_quality", "quality_gain_at_matched_cost", "quality_gain_vs_single_shot",
                        "frontier_covered", "mean_gain_over_frontier"})
    for (const char* suffix : {"", "_ci_low", "_ci_high"}) router_metrics.push_back(std::string(m) + suffix);
  r.method("llm_channel.router", "the cost-aware semantic-kNN router against every fixed arm, cross-validated",
           llm_channel::run_router)
      .options<llm_channel::RouterOptions>()
      .produces(router_metrics)
      .accepts({"llm_channel.sim"});
  r.method("llm_channel.theory", "the closed forms (averaging threshold, refinement contraction) against Monte Carlo",
           llm_channel::run_theory)
      .options<llm_channel::TheoryOptions>()
      .produces({"tau_star", "tau", "mse_uniform", "mse_weighted", "mse_difference_se", "mse_uniform_first_order",
                 "mse_weighted_first_order", "weighting_wins", "tau_star_monte_carlo",
                 "vote_accuracy_n1", "vote_accuracy_peak", "vote_peak_n", "vote_accuracy_n41", "refine_weak_fixed_point", "refine_weak_gain",
                 "refine_weak_gain_closed_form", "refine_strong_fixed_point", "refine_strong_gain",
                 "refine_strong_gain_closed_form"});
  std::vector<std::string> probe_metrics = {"probe_calls", "probe_tokens"};
  for (int t = 0; t < 8; ++t) probe_metrics.push_back(fmt::format("entropy_t{}", t));
  r.method("llm_channel.probe", "the channel and the operators on a real model through core's LLM client",
           llm_channel::run_probe)
      .options<llm_channel::ProbeOptions>()
      .produces(probe_metrics);
}

}  // namespace

NEXP_PLUGIN(llm_channel, "0.1.0",
            "LLM reliability techniques as six channel-coding operators on p(y | x), their closed forms, and a "
            "cost-aware semantic-kNN router over model x technique x budget",
            "Omidvar and Akhlaghi, A Communication-Theoretic Framework for LLM Agents: Cost-Aware Adaptive "
            "Reliability, arXiv 2605.09121 (NeurIPS 2026)",
            register_components)
