// The studies: cb_pbrl.compare (methods x worlds x seeds x query budgets) and cb_pbrl.rate (the
// O(1/sqrt(K)) experiment). Each unit builds its world from the study's `grid` options and a seed.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include <nexp/table.hpp>

#include "methods.hpp"

namespace cb_pbrl {

void CompareOptions::declare(nexp::Options<CompareOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("methods", &CompareOptions::methods, "methods to compare").choices(
      {"train", "train_naive", "safe_rlhf", "unconstrained", "two_stage", "oracle"});
  o.add("worlds", &CompareOptions::worlds, "built-in worlds").choices({"hazard_band", "cliff", "random"});
  o.add("seeds", &CompareOptions::seeds, "seeds per world (the run's seed + 0..seeds-1)").range(1, 10000);
  o.add("queries", &CompareOptions::queries, "queries_per_step values to sweep (empty: params.queries_per_step)")
      .range(1, 100000);
  o.add("grid", &CompareOptions::grid, "options of cb_pbrl.grid for every world (`world` is set per unit)");
}

void RateOptions::declare(nexp::Options<RateOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("ks", &RateOptions::ks, "outer iteration counts K").range(1, 1000000);
  o.add("inner", &RateOptions::inner, "inner steps N per outer iteration (0: converged)").range(0, 100000);
  o.add("eta0", &RateOptions::eta0, "SGD step eta0 / sqrt(K)").range(1e-8, 1e4);
  o.add("seeds", &RateOptions::seeds, "seeds per (N, K)").range(2, 10000);
  o.add("main_inner", &RateOptions::main_inner, "the N whose slope is reported as rate_slope").range(0, 100000);
  o.add("grid", &RateOptions::grid, "options of cb_pbrl.grid");
}

namespace {

const std::vector<std::string> kColumns = {"normalized_return", "cost", "violation", "violation_rel",
                                           "pref_accuracy_better", "pref_accuracy_safer", "cost_auc",
                                           "transfer_normalized_return_half", "transfer_violation_half_rel",
                                           "transfer_normalized_return_double", "transfer_violation_double_rel",
                                           "budget", "lam", "queries"};

Mode mode_of(const std::string& method) {
  if (method == "safe_rlhf") return Mode::SafeRlhf;
  if (method == "unconstrained") return Mode::Unconstrained;
  if (method == "two_stage") return Mode::TwoStage;
  return Mode::Bilevel;
}

WorldKind world_of(const std::string& name) {
  return name == "cliff" ? WorldKind::Cliff : name == "random" ? WorldKind::Random : WorldKind::HazardBand;
}

// One (method, world, seed) unit: its metrics, violations relative to the budget they are judged by.
std::map<std::string, double> run_unit(const Grid& g, const CompareOptions& o, const std::string& method, int qps,
                                       std::uint64_t seed) {
  std::map<std::string, double> out;
  if (method == "oracle") {
    out = {{"normalized_return", 1.0}, {"cost", g.expert.Jc}, {"budget", g.budget}, {"lam", g.expert_lam},
           {"violation", std::max(0.0, g.expert.Jc - g.budget)}, {"queries", 0.0}};
  } else {
    LearnerConfig cfg = o.config(mode_of(method));
    cfg.queries_per_step = qps;
    cfg.track_heldout_gradient = false;
    if (method == "train_naive") cfg.implicit = false;
    const LearnerResult r = train(g, cfg, seed);
    out = {{"normalized_return", r.normalized_return}, {"cost", r.cost}, {"violation", r.violation},
           {"pref_accuracy_better", r.pref_accuracy_better}, {"pref_accuracy_safer", r.pref_accuracy_safer},
           {"cost_auc", r.cost_auc}, {"budget", r.budget}, {"lam", r.lam}, {"queries", r.queries}};
    for (const auto& [name, scale] : {std::pair<std::string, double>{"half", 0.5}, {"double", 2.0}}) {
      const double d = scale * r.budget;
      if (d < g.least_cost) continue;
      const Deployment dep = deploy(g, r.x, d, cfg.alpha, cfg.mode != Mode::Unconstrained);
      out["transfer_normalized_return_" + name] = dep.normalized_return;
      out["transfer_violation_" + name + "_rel"] = dep.violation / d;
    }
  }
  out["violation_rel"] = out["violation"] / g.budget;
  return out;
}

std::vector<double> finite(const std::vector<double>& x) {
  std::vector<double> out;
  for (double v : x)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

}  // namespace

void run_compare(nexp::RunContext& ctx) {
  const auto o = ctx.options<CompareOptions>();
  (void)o.config(Mode::Bilevel);  // validates before work starts
  const std::vector<std::int64_t> budgets = o.queries.empty() ? std::vector<std::int64_t>{o.queries_per_step} : o.queries;
  std::vector<nexp::CsvColumn> cols = {nexp::CsvColumn::text("world"), nexp::CsvColumn::integer("seed"),
                                       nexp::CsvColumn::integer("queries_per_step"), nexp::CsvColumn::text("method")};
  for (const auto& c : kColumns) cols.push_back(nexp::CsvColumn::real(c).significant(6));
  nexp::CsvWriter units(ctx.artifacts_dir() / "compare.csv", cols);
  // values[(method, world, qps)][metric] = one value per seed, in seed order
  std::map<std::tuple<std::string, std::string, std::int64_t>, std::map<std::string, std::vector<double>>> values;
  auto bar = ctx.progress(static_cast<std::int64_t>(o.worlds.size() * o.seeds * budgets.size() * o.methods.size()),
                          "units");
  for (const auto& world : o.worlds)
    for (int i = 0; i < o.seeds; ++i) {
      GridOptions go = o.grid;
      go.world = world_of(world);
      const std::uint64_t seed = ctx.seed() + static_cast<std::uint64_t>(i);
      const auto g = make_grid_for_seed(go, seed);
      for (const auto qps : budgets)
        for (const auto& method : o.methods) {
          if (ctx.stop_requested()) return;
          auto m = run_unit(*g, o, method, static_cast<int>(qps), seed);
          std::vector<nexp::CsvCell> row = {world, static_cast<std::int64_t>(seed), qps, method};
          for (const auto& c : kColumns) {
            const auto it = m.find(c);
            const double v = it == m.end() ? NAN : it->second;
            values[{method, world, qps}][c].push_back(v);
            row.push_back(std::isfinite(v) ? nexp::CsvCell(v) : nexp::CsvCell{});
          }
          units.row(row);
          bar.advance();
        }
    }
  units.flush();
  // Means with bootstrap intervals, and paired differences to cb_pbrl.train.
  nexp::CsvWriter summary(ctx.artifacts_dir() / "compare_summary.csv",
                          {nexp::CsvColumn::text("method"), nexp::CsvColumn::text("world"),
                           nexp::CsvColumn::integer("queries_per_step"), nexp::CsvColumn::text("metric"),
                           nexp::CsvColumn::real("mean").significant(5), nexp::CsvColumn::real("ci_low").significant(5),
                           nexp::CsvColumn::real("ci_high").significant(5), nexp::CsvColumn::integer("n")});
  auto rng = ctx.stream("bootstrap");
  for (const auto& [key, metrics] : values) {
    const auto& [method, world, qps] = key;
    for (const auto& [metric, xs] : metrics) {
      const auto x = finite(xs);
      if (x.size() < 2) continue;
      const auto ci = nexp::stats::mean_bootstrap_interval(x, rng);
      summary.row(method, world, qps, metric, ci.estimate, ci.low, ci.high, static_cast<std::int64_t>(x.size()));
      if (qps == budgets.front() && (metric == "normalized_return" || metric == "violation_rel" ||
                                     metric == "cost_auc" || metric == "transfer_violation_half_rel"))
        ctx.summary_interval(fmt::format("{}_{}_{}", method, world, metric), ci);
    }
    if (method == "train") continue;
    const auto train_it = values.find({"train", world, qps});
    if (train_it == values.end()) continue;
    for (const char* metric : {"normalized_return", "violation_rel", "transfer_violation_half_rel"}) {
      const auto& a = train_it->second.at(metric);
      const auto& b = metrics.at(metric);
      std::vector<double> pa, pb;
      for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        if (std::isfinite(a[i]) && std::isfinite(b[i])) pa.push_back(a[i]), pb.push_back(b[i]);
      if (pa.size() < 2) continue;
      const auto ci = nexp::stats::paired_bootstrap(pa, pb, rng);
      summary.row("train-" + method, world, qps, metric, ci.estimate, ci.low, ci.high,
                  static_cast<std::int64_t>(pa.size()));
      if (qps == budgets.front()) ctx.summary_interval(fmt::format("train_minus_{}_{}_{}", method, world, metric), ci);
    }
  }
}

void run_rate(nexp::RunContext& ctx) {
  const auto o = ctx.options<RateOptions>();
  LearnerConfig base = o.config(Mode::Bilevel);
  base.adam = false;
  base.replay = false;  // fresh queries: each step's hypergradient is a stochastic one
  base.track_heldout_gradient = true;
  const auto g = make_grid_for_seed(o.grid, ctx.seed());
  ctx.log().info("{}", g->describe());
  nexp::CsvWriter units(ctx.artifacts_dir() / "rate.csv",
                        {nexp::CsvColumn::integer("inner"), nexp::CsvColumn::integer("K"), nexp::CsvColumn::integer("seed"),
                         nexp::CsvColumn::real("hypergrad_sq_avg").significant(6),
                         nexp::CsvColumn::real("normalized_return").significant(6)});
  nexp::CsvWriter slopes(ctx.artifacts_dir() / "rate_slopes.csv",
                         {nexp::CsvColumn::integer("inner"), nexp::CsvColumn::real("slope").significant(4),
                          nexp::CsvColumn::real("ci_low").significant(4), nexp::CsvColumn::real("ci_high").significant(4)});
  auto bar = ctx.progress(static_cast<std::int64_t>(o.inner.size() * o.ks.size() * o.seeds), "runs");
  auto rng = ctx.stream("bootstrap");
  std::vector<double> xs(o.ks.begin(), o.ks.end());
  for (const auto n : o.inner) {
    std::vector<std::vector<double>> samples;
    for (const auto k : o.ks) {
      samples.emplace_back();
      for (int s = 0; s < o.seeds; ++s) {
        if (ctx.stop_requested()) return;
        LearnerConfig cfg = base;
        cfg.inner_steps = static_cast<int>(n);
        cfg.outer_steps = static_cast<int>(k);
        cfg.lr = o.eta0 / std::sqrt(static_cast<double>(k));
        const auto seed = ctx.seed() + static_cast<std::uint64_t>(s);
        const LearnerResult r = train(*g, cfg, seed);
        samples.back().push_back(r.hypergrad_sq_avg);
        units.row(n, k, static_cast<std::int64_t>(seed), r.hypergrad_sq_avg, r.normalized_return);
        bar.advance();
      }
    }
    const auto ci = nexp::stats::loglog_slope_of_means(xs, samples, rng);
    slopes.row(n, ci.estimate, ci.low, ci.high);
    ctx.summary_interval(fmt::format("rate_slope_n{}", n), ci);
    if (n == o.main_inner) ctx.summary_interval("rate_slope", ci);
  }
}

}  // namespace cb_pbrl
