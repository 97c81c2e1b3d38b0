#pragma once
// The three experiments of the paper, as nexp methods over a curation_scaling.pool:
//   curation_scaling.table   N random recipes trained at proxy and target scale; the best-of-k curve
//                            (exact, scaling.hpp), bootstrap over recipes, the power law and its rivals,
//                            extrapolation from k <= fit_kmax to kmax; proxy-target pair accuracy
//   curation_scaling.search  random search and a (1+1)-ES with fresh ablation runs, over seeds
//   curation_scaling.qqt     the quality-quantity trade-off: filter quantile against target compute, and
//                            a compute-aware pipeline against DCLM-style (top 10%) and no-filter pipelines;
//                            a second one (`law`) that chooses q by fitted scaling laws with repetition
#include <nexp/options.hpp>
#include <nexp/run_context.hpp>

#include <cstdint>
#include <vector>

namespace curation_scaling {

// How ablation (proxy) and target runs train: one-hidden-layer MLPs, SGD with momentum.
struct TrainOptions {
  std::int64_t proxy_hidden = 32;
  std::int64_t proxy_examples = 2000;
  std::int64_t target_hidden = 256;
  std::int64_t target_examples = 10000;
  std::int64_t epochs = 1;
  std::int64_t batch = 64;
  double lr = 0.05;
  double beta = 0.5;
  double dedup_range = 0.1;
  int knobs = 6;
  static void declare(nexp::Options<TrainOptions>& o);
};

struct TableOptions : TrainOptions {
  std::int64_t recipes = 4096;
  std::int64_t kmax = 256;
  std::int64_t fit_kmax = 32;
  int bootstrap = 200;
  static void declare(nexp::Options<TableOptions>& o);
};

struct SearchOptions : TrainOptions {
  std::int64_t budget = 64;
  int seeds = 20;
  double es_sigma = 0.25;
  static void declare(nexp::Options<SearchOptions>& o);
};

struct QqtOptions : TrainOptions {
  std::vector<double> compute = {1, 4, 16, 64};
  std::vector<double> quantiles = {0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0};
  int seeds = 10;          // replicates of every pipeline (training seeds per cell)
  int ablation_seeds = 3;  // the compute-aware pipeline's proxy runs per quantile, in each replicate
  double dclm_quantile = 0.1;
  double dedup = 0.0;  // 0: the quantile alone sets the kept pool, U_q ~ q P (knob 1 kept 2% of it)
  // The `law` pipeline: per-quantile laws with repetition (scaling.hpp: RepetitionLaw), fitted on
  // target-scale runs that it pays for, choose q at each budget.
  double law_fit_fraction = 0.125;  // largest first-use fit run: this share of the smallest budget (and <= U_q)
  int law_fit_points = 2;           // fit runs at n_max, n_max / 2, ... (this many)
  int law_fit_seeds = 1;            // seeds per fit run
  double law_tau = 0;               // half-life in repetitions; 0: fitted from runs of the strictest quantile
  std::vector<double> law_tau_repeats = {3};  // those runs see these multiples of its U
  static void declare(nexp::Options<QqtOptions>& o);
};

void run_table(nexp::RunContext& ctx);
void run_search(nexp::RunContext& ctx);
void run_qqt(nexp::RunContext& ctx);

}  // namespace curation_scaling
