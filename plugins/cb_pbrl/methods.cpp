// cb_pbrl's nexp side: reward, cost and a safe policy learned jointly from an expert's preferences as a
// constrained bi-level problem (CB-PbRL). Options, the run functions of the methods (with checkpoints),
// the dataset factory, the studies, and the plugin's registration.
#include "methods.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include <nexp/table.hpp>

namespace cb_pbrl {

void TrainOptions::declare(nexp::Options<TrainOptions>& o) {
  o.add("outer_steps", &TrainOptions::outer_steps, "K: outer (upper-level) iterations").range(1, 1000000);
  o.add("queries_per_step", &TrainOptions::queries_per_step, "labelled segment pairs per outer iteration")
      .range(1, 100000);
  o.add("inner_steps", &TrainOptions::inner_steps, "N: soft Bellman backups and dual steps per outer iteration; 0: "
        "the lower level solved to convergence").range(0, 100000);
  o.add("alpha", &TrainOptions::alpha, "entropy temperature of the lower level").range(1e-4, 10);
  o.add("lr", &TrainOptions::lr, "outer step size").range(1e-8, 100);
  o.add("lam_lr", &TrainOptions::lam_lr, "dual ascent step on lam").range(1e-6, 100);
  o.add("optimizer", &TrainOptions::optimizer, "outer optimiser").choices({"adam", "sgd"});
  o.add("replay", &TrainOptions::replay,
        "the upper objective on every pair labelled so far (PbRL's growing preference set); false: on the fresh "
        "pairs of the step alone (a stochastic gradient, as the rate study needs)");
  o.add("hypergradient", &TrainOptions::hypergradient,
        "implicit: through lam*(th, ph) by implicit differentiation; naive: lam held fixed")
      .choices({"implicit", "naive"});
  o.add("better_label", &TrainOptions::better_label, "what the expert's `better` labels compare: U = R - lam_E C, or R",
        {{"utility", Labels::Utility}, {"reward", Labels::Reward}});
  o.add("beta", &TrainOptions::beta, "Bradley-Terry temperature of the labeller (and the model)").range(1e-3, 1e4);
  o.add("noise_free", &TrainOptions::noise_free, "labels are the signs of the logits, not Bernoulli draws");
  o.add("unsafe_threshold", &TrainOptions::unsafe_threshold, "tau: a segment is unsafe with P = sigmoid(beta (C - tau))")
      .range(0, 1e6);
  o.add("segment_min", &TrainOptions::segment_min, "shortest segment").range(1, 1000);
  o.add("segment_max", &TrainOptions::segment_max, "longest segment").range(1, 1000);
  o.add("mix_learner", &TrainOptions::mix_learner, "share of segments from the learner's policy").range(0, 1);
  o.add("mix_expert", &TrainOptions::mix_expert, "share of segments from the expert").range(0, 1);
  o.add("mix_random", &TrainOptions::mix_random, "share of segments from the uniform policy").range(0, 1);
  o.add("heldout", &TrainOptions::heldout, "held-out pairs (expert and random) for accuracies and the held-out "
        "objective").range(10, 1000000);
  o.add("track_hypergradient", &TrainOptions::track_hypergradient,
        "compute the held-out objective's hypergradient at every iterate (hypergrad_sq_avg)");
  o.add("transfer", &TrainOptions::transfer, "also re-solve with the learned R, C at d/2 and 2d");
  o.add("checkpoint_every", &TrainOptions::checkpoint_every,
        "outer steps between checkpoints of a single run (0: only when stopped); `nexp run --resume` continues")
      .range(0, 1000000);
}

LearnerConfig TrainOptions::config(Mode mode) const {
  if (segment_min > segment_max)
    throw nexp::ConfigError(fmt::format("params.segment_min = {} exceeds params.segment_max = {}; expected min <= max",
                                        segment_min, segment_max));
  if (mix_learner + mix_expert + mix_random <= 0)
    throw nexp::ConfigError("params.mix_learner + mix_expert + mix_random is 0; expected a positive share");
  LearnerConfig c;
  c.mode = mode;
  c.implicit = hypergradient == "implicit";
  c.outer_steps = outer_steps, c.queries_per_step = queries_per_step, c.inner_steps = inner_steps;
  c.alpha = alpha, c.lr = lr, c.lam_lr = lam_lr, c.adam = optimizer == "adam", c.replay = replay;
  c.labels.beta = beta, c.labels.tau = unsafe_threshold, c.labels.utility = better_label == Labels::Utility;
  c.labels.noise_free = noise_free;
  c.segment_min = segment_min, c.segment_max = segment_max;
  c.mix_learner = mix_learner, c.mix_expert = mix_expert, c.mix_random = mix_random;
  c.heldout = heldout;
  c.track_heldout_gradient = track_hypergradient;
  return c;
}

std::shared_ptr<nexp::Dataset> make_grid(const GridOptions& o, nexp::RunContext& ctx) {
  auto g = make_grid_for_seed(o, ctx.seed());
  ctx.log().info("{}", g->describe());
  return g;
}

std::vector<std::string> run_metrics() {
  return {"normalized_return", "cost", "violation", "pref_accuracy_better", "pref_accuracy_safer", "cost_auc",
          "queries", "hypergrad_sq_avg", "budget", "lam", "transfer_normalized_return", "transfer_violation"};
}

namespace {

void report(nexp::RunContext& ctx, const std::map<std::string, double>& values) {
  for (const auto& [name, v] : values)
    if (std::isfinite(v)) ctx.summary(name, v);
}

// The metrics of one trained learner, with the transfer to d/2 and 2d.
std::map<std::string, double> result_metrics(const Grid& g, const LearnerResult& r, const LearnerConfig& cfg,
                                             bool transfer) {
  std::map<std::string, double> out = {
      {"normalized_return", r.normalized_return}, {"cost", r.cost}, {"violation", r.violation},
      {"pref_accuracy_better", r.pref_accuracy_better}, {"pref_accuracy_safer", r.pref_accuracy_safer},
      {"cost_auc", r.cost_auc}, {"queries", r.queries}, {"hypergrad_sq_avg", r.hypergrad_sq_avg},
      {"budget", r.budget}, {"lam", r.lam}};
  if (!transfer) return out;
  const bool constrained = cfg.mode != Mode::Unconstrained;
  double ret = 0, vio = 0;
  for (const auto& [name, scale] : {std::pair<std::string, double>{"half", 0.5}, {"double", 2.0}}) {
    const double d = scale * r.budget;
    if (d < g.least_cost) continue;
    const Deployment dep = deploy(g, r.x, d, cfg.alpha, constrained);
    out["transfer_normalized_return_" + name] = dep.normalized_return;
    out["transfer_violation_" + name] = dep.violation;
    ret += 0.5 * dep.normalized_return, vio += 0.5 * dep.violation;
  }
  out["transfer_normalized_return"] = ret;
  out["transfer_violation"] = vio;
  return out;
}

void run_mode(nexp::RunContext& ctx, Mode mode) {
  const auto& g = ctx.dataset_as<Grid>();
  const auto o = ctx.options<TrainOptions>();
  const LearnerConfig cfg = o.config(mode);
  Trainer trainer(g, cfg, ctx.seed());
  if (auto dir = ctx.checkpoint()) trainer.load(*dir / "trainer.bin");  // every stream is keyed by seed and step
  auto bar = ctx.progress(cfg.outer_steps, "outer steps");
  bar.set(trainer.steps_done());
  const int every = std::max(1, cfg.outer_steps / 20);
  auto save = [&] { ctx.save_checkpoint([&](const std::filesystem::path& dir) { trainer.save(dir / "trainer.bin"); }); };
  while (trainer.steps_done() < cfg.outer_steps) {
    if (ctx.stop_requested()) return save();
    const auto values = trainer.step();
    const int k = trainer.steps_done();
    if (k % every == 0 || k == cfg.outer_steps) ctx.log_metrics(k, values);
    if (o.checkpoint_every > 0 && k % o.checkpoint_every == 0 && k < cfg.outer_steps) save();
    bar.set(k);
  }
  report(ctx, result_metrics(g, trainer.finish(), cfg, o.transfer));
}

}  // namespace

void run_train(nexp::RunContext& ctx) { run_mode(ctx, Mode::Bilevel); }
void run_safe_rlhf(nexp::RunContext& ctx) { run_mode(ctx, Mode::SafeRlhf); }
void run_unconstrained(nexp::RunContext& ctx) { run_mode(ctx, Mode::Unconstrained); }
void run_two_stage(nexp::RunContext& ctx) { run_mode(ctx, Mode::TwoStage); }

void run_oracle(nexp::RunContext& ctx) {
  const auto& g = ctx.dataset_as<Grid>();
  report(ctx, {{"normalized_return", 1.0},
               {"cost", g.expert.Jc},
               {"violation", std::max(0.0, g.expert.Jc - g.budget)},
               {"budget", g.budget},
               {"lam", g.expert_lam},
               {"queries", 0.0}});
}

// ---- The studies: cb_pbrl.compare (methods x worlds x seeds x query budgets) and cb_pbrl.rate (the
// O(1/sqrt(K)) experiment). Each unit builds its world from the study's `grid` options and a seed.
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
            if (std::isfinite(v)) row.emplace_back(v);
            else row.emplace_back();  // an empty cell
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

// ---- The plugin: registers the gridworld CMDPs, the method, its baselines and the studies (their
// options are declared in world.hpp and methods.hpp).
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
