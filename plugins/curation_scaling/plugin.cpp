// curation_scaling: power-law scaling of data-curation search. Registers the plugin's metrics, the
// pool data set and the three experiments with nexp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"
#include "pool.hpp"

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  const struct { const char* name; Direction d; const char* summary; } metrics[] = {
      {"exponent", Direction::Maximize, "g of the best-of-k law L(k) = L_inf + A k^-g, fitted on k = 1..kmax"},
      {"exponent_k32", Direction::None, "g of the law fitted on k <= fit_kmax only"},
      {"loss_inf", Direction::Minimize, "L_inf of the best-of-k power law"},
      {"loss_at_1", Direction::Minimize, "expected target loss of one random recipe"},
      {"loss_at_kmax", Direction::Minimize, "expected target loss of the proxy-best of kmax recipes"},
      {"extrapolation_error", Direction::Minimize, "|law fitted on k <= fit_kmax at kmax - observed| / (L(1) - L(kmax))"},
      {"powerlaw_best", Direction::Maximize, "1 when the power law has the least held-out error of the three forms"},
      {"heldout_rmse_power_law", Direction::Minimize, "RMS error at k > fit_kmax of the power law fitted on k <= fit_kmax"},
      {"heldout_rmse_exponential", Direction::Minimize, "the same for L_inf + A exp(-b k)"},
      {"heldout_rmse_log_linear", Direction::Minimize, "the same for a - b ln k"},
      {"proxy_target_pair_accuracy", Direction::Maximize, "share of recipe pairs that proxy and target order alike, (1 + tau_b) / 2"},
      {"best_target_loss", Direction::Minimize, "least target loss in the table"},
      {"exponent_random_search", Direction::None, "g of the mean best-so-far curve of random search"},
      {"exponent_es", Direction::None, "g of the mean best-so-far curve of the (1+1)-ES"},
      {"final_loss_random_search", Direction::Minimize, "target loss of random search's incumbent after the budget"},
      {"final_loss_es", Direction::Minimize, "target loss of the (1+1)-ES's incumbent after the budget"},
      {"es_gain_vs_random", Direction::Maximize, "final loss of random search minus that of the ES, paired by seed"},
      {"best_quantile_min_compute", Direction::None, "filter quantile of least target loss at the smallest compute"},
      {"best_quantile_max_compute", Direction::None, "filter quantile of least target loss at the largest compute"},
      {"frontier_gain_vs_dclm", Direction::Maximize, "least, over budgets, of DCLM-style loss minus compute-aware loss"},
      {"frontier_gain_vs_nofilter", Direction::Maximize, "least, over budgets, of no-filter loss minus compute-aware loss"},
      {"kept_classes_strictest", Direction::None, "classes present in what the strictest quantile keeps"},
      {"law_fit_cost", Direction::Minimize, "examples seen by the law pipeline's fit runs, charged to every budget"},
      {"law_fit_rmse", Direction::Minimize, "RMS error of the fitted laws' log loss against the measured grid"},
      {"law_tau", Direction::None, "fitted half-life of an example's value, in repetitions"},
      {"law_budgets_unaffordable", Direction::Minimize, "budgets smaller than the law pipeline's fit"},
      {"law_quantile_min_compute", Direction::None, "quantile the laws choose at the smallest affordable budget"},
      {"law_quantile_max_compute", Direction::None, "quantile the laws choose at the largest budget"},
      {"frontier_gain_law_vs_dclm", Direction::Maximize, "least, over affordable budgets, of DCLM-style loss minus the law pipeline's"},
      {"frontier_gain_law_vs_nofilter", Direction::Maximize, "least, over affordable budgets, of no-filter loss minus the law pipeline's"},
  };
  for (const auto& m : metrics) r.metric(m.name, m.d, m.summary);
  for (const char* base : {"exponent", "es_gain_vs_random", "frontier_gain_vs_dclm", "frontier_gain_vs_nofilter",
                           "frontier_gain_law_vs_dclm", "frontier_gain_law_vs_nofilter"})
    for (const char* side : {"_ci_low", "_ci_high"})
      r.metric(std::string(base) + side, Direction::None, std::string("interval bound of ") + base);
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<curation_scaling::PoolOptions>(
      "curation_scaling.pool",
      "five sources of known quality (clean, 2 label-noise rates, near-duplicates, off-domain) from MNIST and "
      "Fashion-MNIST, scored by a small reference model; stage pretrain, sft, dpo or rl",
      curation_scaling::make_pool);

  r.method("curation_scaling.table",
           "N random recipes at proxy and target scale; exact best-of-k curve, its power law and rivals, extrapolation",
           curation_scaling::run_table)
      .options<curation_scaling::TableOptions>()
      .produces({"exponent", "exponent_ci_low", "exponent_ci_high", "exponent_k32", "loss_inf", "loss_at_1",
                 "loss_at_kmax", "extrapolation_error", "powerlaw_best", "heldout_rmse_power_law",
                 "heldout_rmse_exponential", "heldout_rmse_log_linear", "proxy_target_pair_accuracy",
                 "best_target_loss", "seconds"})
      .accepts({"curation_scaling.pool"});

  r.method("curation_scaling.search", "random search and a (1+1)-ES over recipes with fresh ablation runs",
           curation_scaling::run_search)
      .options<curation_scaling::SearchOptions>()
      .produces({"exponent_random_search", "exponent_es", "final_loss_random_search", "final_loss_es",
                 "es_gain_vs_random", "es_gain_vs_random_ci_low", "es_gain_vs_random_ci_high", "seconds"})
      .accepts({"curation_scaling.pool"});

  r.method("curation_scaling.qqt",
           "quality-quantity trade-off: best filter quantile per target compute; compute-aware frontier vs DCLM-style "
           "and no-filter pipelines",
           curation_scaling::run_qqt)
      .options<curation_scaling::QqtOptions>()
      .produces({"best_quantile_min_compute", "best_quantile_max_compute", "frontier_gain_vs_dclm",
                 "frontier_gain_vs_dclm_ci_low", "frontier_gain_vs_dclm_ci_high", "frontier_gain_vs_nofilter",
                 "frontier_gain_vs_nofilter_ci_low", "frontier_gain_vs_nofilter_ci_high", "kept_classes_strictest",
                 "law_fit_cost", "law_fit_rmse", "law_tau", "law_budgets_unaffordable", "law_quantile_min_compute",
                 "law_quantile_max_compute", "frontier_gain_law_vs_dclm", "frontier_gain_law_vs_dclm_ci_low",
                 "frontier_gain_law_vs_dclm_ci_high", "frontier_gain_law_vs_nofilter", "frontier_gain_law_vs_nofilter_ci_low",
                 "frontier_gain_law_vs_nofilter_ci_high", "seconds"})
      .accepts({"curation_scaling.pool"});
}

}  // namespace

NEXP_PLUGIN(curation_scaling, "0.1.0",
            "the best data recipe found by small ablation runs improves as a power law in their number; a "
            "compute-aware quality-quantity trade-off dominates heuristic filters",
            "Power-law scaling of data-curation search (NeurIPS 2026; authors not named in the abstract nexp implements)",
            register_components)
