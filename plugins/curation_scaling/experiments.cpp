#include "experiments.hpp"

#include <ATen/ops/tensor.h>
#include <fmt/format.h>
#include <nexp/error.hpp>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "mlp.hpp"
#include "pool.hpp"
#include "recipe.hpp"
#include "scaling.hpp"

namespace curation_scaling {

// ---------------------------------------------------------------- options

void TrainOptions::declare(nexp::Options<TrainOptions>& o) {
  o.add("proxy_hidden", &TrainOptions::proxy_hidden, "hidden units of an ablation (proxy) model").range(1, 4096);
  o.add("proxy_examples", &TrainOptions::proxy_examples, "training examples of an ablation run").range(1, 10000000);
  o.add("target_hidden", &TrainOptions::target_hidden, "hidden units of the target model").range(1, 4096);
  o.add("target_examples", &TrainOptions::target_examples, "training examples of a target run").range(1, 10000000);
  o.add("epochs", &TrainOptions::epochs, "passes over a run's training set").range(1, 1000);
  o.add("batch", &TrainOptions::batch, "minibatch size").range(1, 100000);
  o.add("lr", &TrainOptions::lr, "SGD learning rate (momentum 0.9)").range(1e-6, 10);
  o.add("beta", &TrainOptions::beta, "DPO's inverse temperature").range(1e-3, 100);
  o.add("dedup_range", &TrainOptions::dedup_range, "deduplication knob 1 drops cosine > 1 - dedup_range").range(0, 2);
  o.add("knobs", &TrainOptions::knobs, "free recipe coordinates d (the rest neutral)").range(1, kKnobs);
}

void TableOptions::declare(nexp::Options<TableOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("recipes", &TableOptions::recipes, "random recipes N in the table (at least 16 kmax)").range(16, 1000000);
  o.add("kmax", &TableOptions::kmax, "largest number of ablation runs k of the curve").range(4, 100000);
  o.add("fit_kmax", &TableOptions::fit_kmax, "the extrapolating fit uses k <= fit_kmax").range(3, 100000);
  o.add("bootstrap", &TableOptions::bootstrap, "bootstrap resamples of the recipes").range(10, 100000);
}

void SearchOptions::declare(nexp::Options<SearchOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("budget", &SearchOptions::budget, "ablation runs per search").range(2, 100000);
  o.add("seeds", &SearchOptions::seeds, "independent searches per method").range(2, 10000);
  o.add("es_sigma", &SearchOptions::es_sigma, "initial step size of the (1+1)-ES in the unit cube").range(1e-4, 1);
}

void QqtOptions::declare(nexp::Options<QqtOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("compute", &QqtOptions::compute, "target compute C as multiples of target_examples").range(1e-3, 1e4);
  o.add("quantiles", &QqtOptions::quantiles, "filter quantiles q searched at each compute").range(0.0, 1.0);
  o.add("seeds", &QqtOptions::seeds, "replicates of every pipeline: training seeds per (compute, quantile)").range(2, 1000);
  o.add("ablation_seeds", &QqtOptions::ablation_seeds,
        "compute-aware pipeline: proxy runs per quantile in each replicate (paid for in compute)").range(1, 1000);
  o.add("dclm_quantile", &QqtOptions::dclm_quantile, "the DCLM-style pipeline keeps this top share").range(0.0, 1.0);
  o.add("dedup", &QqtOptions::dedup, "deduplication knob of every pipeline").range(0, 1);
  o.add("law_fit_fraction", &QqtOptions::law_fit_fraction,
        "law pipeline: its largest fit run sees this share of the smallest budget (capped at U_q)").range(1e-4, 1);
  o.add("law_fit_points", &QqtOptions::law_fit_points, "law pipeline: fit runs per quantile (n_max, n_max/2, ...)").range(2, 16);
  o.add("law_fit_seeds", &QqtOptions::law_fit_seeds, "law pipeline: seeds per fit run").range(1, 1000);
  o.add("law_tau", &QqtOptions::law_tau,
        "law pipeline: repetition half-life tau (0: fit it from runs of the strictest quantile)").range(0, 1e4);
  o.add("law_tau_repeats", &QqtOptions::law_tau_repeats,
        "law pipeline: the tau-fit runs of the strictest quantile see these multiples of its kept examples").range(1.01, 1000);
}

namespace {

// ---------------------------------------------------------------- one run of a recipe

enum class Scale { Proxy, Target };

Objective objective_of(Stage s) {
  return s == Stage::Dpo ? Objective::Dpo : s == Stage::Rl ? Objective::Reinforce : Objective::CrossEntropy;
}

// Trains recipes at proxy or target scale from the stage's starting policy and scores them: ablation
// runs on the clean validation split, target runs on the clean test split.
class Runner {
 public:
  Runner(const Pool& pool, const TrainOptions& o, nexp::RunContext& ctx) : pool_(pool), o_(o) {
    view_ = {&pool.source, &pool.score, &pool.dup_similarity};
    for (Scale s : {Scale::Proxy, Scale::Target}) {
      if (pool.stage == Stage::Pretrain) continue;
      Mlp m = init_mlp(pool.x.size(1), hidden(s), pool.classes, ctx.stream("base", static_cast<int>(s))());
      const std::int64_t n = pool.init_x.size(0), passes = pool.stage == Stage::Sft ? 2 : 30;
      nexp::Random rng = ctx.stream("base_order", static_cast<int>(s));
      std::vector<std::int64_t> order;
      for (std::int64_t e = 0; e < passes * n; ++e) order.push_back(static_cast<std::int64_t>(rng.below(n)));
      train_mlp(m, nullptr, Objective::CrossEntropy, pool.init_x, pool.init_y, {}, at::tensor(order), settings(), rng());
      base_[static_cast<int>(s)] = m;
    }
  }

  std::int64_t hidden(Scale s) const { return s == Scale::Proxy ? o_.proxy_hidden : o_.target_hidden; }
  std::int64_t examples(Scale s) const { return s == Scale::Proxy ? o_.proxy_examples : o_.target_examples; }
  const PoolView& view() const { return view_; }
  // Parameters of a model of this scale (compute of a run is examples x parameters).
  double parameters(Scale s) const {
    return static_cast<double>((pool_.x.size(1) + 1) * hidden(s) + (hidden(s) + 1) * pool_.classes);
  }

  double run(const Recipe& r, Scale s, std::int64_t n, std::uint64_t seed) const { return run(r, s, n, seed, s == Scale::Proxy); }
  // `validation`: scored on the clean validation split (what a pipeline may look at) instead of the test split.
  double run(const Recipe& r, Scale s, std::int64_t n, std::uint64_t seed, bool validation) const {
    nexp::Random rng(seed);
    const std::vector<std::int64_t> idx = training_set(view_, r, n, rng);
    const Mlp* base = pool_.stage == Stage::Pretrain ? nullptr : &base_[static_cast<int>(s)];
    Mlp m = base ? base->clone() : init_mlp(pool_.x.size(1), hidden(s), pool_.classes, rng());
    train_mlp(m, base, objective_of(pool_.stage), pool_.x, pool_.label, pool_.rejected, at::tensor(idx), settings(), rng());
    return validation ? mean_cross_entropy(m, pool_.valid_x, pool_.valid_y) : mean_cross_entropy(m, pool_.test_x, pool_.test_y);
  }
  double run(const Recipe& r, Scale s, std::uint64_t seed) const { return run(r, s, examples(s), seed); }

 private:
  SgdSettings settings() const {
    SgdSettings s;
    s.lr = o_.lr, s.beta = o_.beta, s.batch = o_.batch, s.epochs = o_.epochs;
    return s;
  }

  const Pool& pool_;
  TrainOptions o_;
  PoolView view_{};
  Mlp base_[2];
};

const Pool& pool_of(nexp::RunContext& ctx) { return ctx.dataset_as<Pool>(); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---------------------------------------------------------------- curation_scaling.table

struct Table {
  std::vector<double> proxy, target;
};

Table evaluate_recipes(nexp::RunContext& ctx, const Runner& runner, const TableOptions& o) {
  nexp::CsvWriter out(ctx.artifacts_dir() / "recipes.csv",
                      {nexp::CsvColumn::integer("recipe"), nexp::CsvColumn::real("w_clean"), nexp::CsvColumn::real("w_noisy"),
                       nexp::CsvColumn::real("w_noisier"), nexp::CsvColumn::real("w_duplicates"),
                       nexp::CsvColumn::real("w_off_domain"), nexp::CsvColumn::real("quantile"),
                       nexp::CsvColumn::real("dedup_threshold"), nexp::CsvColumn::real("proxy_loss"),
                       nexp::CsvColumn::real("target_loss")});
  Table t;
  auto bar = ctx.progress(o.recipes, "recipes");
  for (std::int64_t i = 0; i < o.recipes && !ctx.stop_requested(); ++i) {
    nexp::Random rng = ctx.stream("recipe", i);
    const Recipe r = recipe_from_point(random_point(o.knobs, rng), o.dedup_range);
    t.proxy.push_back(runner.run(r, Scale::Proxy, ctx.stream("proxy_run", i)()));
    t.target.push_back(runner.run(r, Scale::Target, ctx.stream("target_run", i)()));
    out.row(i, r.mix[0], r.mix[1], r.mix[2], r.mix[3], r.mix[4], r.quantile, r.dedup_threshold, t.proxy.back(), t.target.back());
    bar.advance();
  }
  return t;
}

std::vector<double> as_reals(const std::vector<std::int64_t>& ks) { return {ks.begin(), ks.end()}; }

std::vector<double> head(const std::vector<double>& v, std::size_t n) { return {v.begin(), v.begin() + n}; }

// Bootstrap over recipes: curves of resampled tables, [resample][k].
std::vector<std::vector<double>> bootstrap_curves(const Table& t, const std::vector<std::int64_t>& ks, int resamples,
                                                  nexp::Random rng) {
  const std::size_t n = t.proxy.size();
  std::vector<std::vector<double>> curves;
  std::vector<double> p(n), q(n);
  for (int b = 0; b < resamples; ++b) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto j = rng.below(n);
      p[i] = t.proxy[j], q[i] = t.target[j];
    }
    curves.push_back(best_of_k_exact(p, q, ks));
  }
  return curves;
}

void report_curve(nexp::RunContext& ctx, const TableOptions& o, const Table& t) {
  const std::vector<std::int64_t> ks = half_octave_ks(o.kmax);
  const std::vector<double> k = as_reals(ks), curve = best_of_k_exact(t.proxy, t.target, ks);
  std::size_t m = 0;  // points with k <= fit_kmax
  while (m < ks.size() && ks[m] <= o.fit_kmax) ++m;
  const Law all = fit_law(LawForm::PowerLaw, k, curve);
  const auto curves = bootstrap_curves(t, ks, o.bootstrap, ctx.stream("bootstrap"));
  std::vector<double> exponents;
  for (const auto& c : curves) exponents.push_back(fit_law(LawForm::PowerLaw, k, c).rate);
  ctx.summary_interval("exponent", nexp::stats::percentile_interval(exponents, all.rate));
  ctx.summary("loss_inf", all.offset);
  ctx.summary("loss_at_1", curve.front());
  ctx.summary("loss_at_kmax", curve.back());

  // Extrapolation: each form fitted on k <= fit_kmax, judged on the held-out k > fit_kmax.
  std::map<LawForm, Law> early;
  std::map<LawForm, double> held_out;
  for (LawForm f : {LawForm::PowerLaw, LawForm::Exponential, LawForm::LogLinear}) {
    early[f] = fit_law(f, head(k, m), head(curve, m));
    double sse = 0;
    for (std::size_t i = m; i < k.size(); ++i) sse += std::pow(early[f](k[i]) - curve[i], 2);
    held_out[f] = std::sqrt(sse / static_cast<double>(std::max<std::size_t>(1, k.size() - m)));
    ctx.summary(fmt::format("heldout_rmse_{}", law_name(f)), held_out[f]);
  }
  const double improvement = curve.front() - curve.back();
  ctx.summary("extrapolation_error", std::abs(early[LawForm::PowerLaw](k.back()) - curve.back()) / improvement);
  ctx.summary("exponent_k32", early[LawForm::PowerLaw].rate);
  const bool power_best = held_out[LawForm::PowerLaw] <= held_out[LawForm::Exponential] &&
                          held_out[LawForm::PowerLaw] <= held_out[LawForm::LogLinear];
  ctx.summary("powerlaw_best", power_best ? 1.0 : 0.0);

  nexp::CsvWriter out(ctx.artifacts_dir() / "curve.csv",
                      {nexp::CsvColumn::integer("k"), nexp::CsvColumn::real("loss"), nexp::CsvColumn::real("ci_low"),
                       nexp::CsvColumn::real("ci_high"), nexp::CsvColumn::real("fit_all"), nexp::CsvColumn::real("fit_k32")});
  for (std::size_t i = 0; i < ks.size(); ++i) {
    std::vector<double> at_k;
    for (const auto& c : curves) at_k.push_back(c[i]);
    const auto ci = nexp::stats::percentile_interval(at_k, curve[i]);
    out.row(ks[i], curve[i], ci.low, ci.high, all(k[i]), early[LawForm::PowerLaw](k[i]));
  }
}

}  // namespace

void run_table(nexp::RunContext& ctx) {
  const auto o = ctx.options<TableOptions>();
  if (o.recipes < 16 * o.kmax || o.fit_kmax >= o.kmax)
    throw nexp::ConfigError(fmt::format("params: expected recipes >= 16 kmax (a small table saturates best-of-k) and "
                                        "fit_kmax < kmax; found recipes {}, kmax {}, fit_kmax {}. Raise recipes to {} or "
                                        "lower kmax", o.recipes, o.kmax, o.fit_kmax, 16 * o.kmax));
  const Pool& pool = pool_of(ctx);
  const auto t0 = std::chrono::steady_clock::now();
  const Runner runner(pool, o, ctx);
  const Table t = evaluate_recipes(ctx, runner, o);
  if (ctx.stop_requested()) return;
  ctx.summary("proxy_target_pair_accuracy", 0.5 * (1.0 + nexp::stats::kendall_tau_b(t.proxy, t.target)));
  ctx.summary("best_target_loss", *std::min_element(t.target.begin(), t.target.end()));
  report_curve(ctx, o, t);
  ctx.summary("seconds", seconds_since(t0));
}

// ---------------------------------------------------------------- curation_scaling.search

namespace {

// The best-so-far incumbent's target loss after k = 1, 2, 4, ..., budget ablation runs of one search.
using Curve = std::vector<double>;

Point reflect(Point x) {
  for (double& v : x) {
    v = std::fmod(std::abs(v), 2.0);
    if (v > 1.0) v = 2.0 - v;
  }
  return x;
}

Curve search_once(nexp::RunContext& ctx, const Runner& runner, const SearchOptions& o, bool es, int seed) {
  nexp::Random rng = ctx.stream(es ? "es" : "random_search", seed);
  Point best = random_point(o.knobs, rng), x = best;
  double best_f = INFINITY, sigma = o.es_sigma;
  std::map<std::int64_t, double> target_of;  // evaluation index of the incumbent -> its target loss
  std::int64_t best_at = 0;
  Curve curve;
  for (std::int64_t k = 1; k <= o.budget; ++k) {
    Point y = random_point(o.knobs, rng);
    if (es && k > 1) {
      y = x;
      for (int i = 0; i < o.knobs; ++i) y[i] += sigma * rng.normal();
      y = reflect(y);
    }
    const double f = runner.run(recipe_from_point(y, o.dedup_range), Scale::Proxy, rng());
    if (f <= best_f) best_f = f, best = y, best_at = k;
    if (es) {  // the 1/5th success rule: stationary when a fifth of the steps succeed
      sigma *= best_at == k ? std::exp(1.0 / 3.0) : std::exp(-1.0 / 12.0);
      sigma = std::clamp(sigma, 1e-3, 1.0);
      x = best;
    }
    if ((k & (k - 1)) == 0 || k == o.budget) {
      if (!target_of.count(best_at))
        target_of[best_at] = runner.run(recipe_from_point(best, o.dedup_range), Scale::Target,
                                        nexp::mix64(rng() ^ static_cast<std::uint64_t>(best_at)));
      curve.push_back(target_of[best_at]);
    }
  }
  return curve;
}

}  // namespace

void run_search(nexp::RunContext& ctx) {
  const auto o = ctx.options<SearchOptions>();
  const auto t0 = std::chrono::steady_clock::now();
  const Runner runner(pool_of(ctx), o, ctx);
  std::vector<double> ks;
  for (std::int64_t k = 1; k <= o.budget; k *= 2) ks.push_back(static_cast<double>(k));
  if (ks.back() != static_cast<double>(o.budget)) ks.push_back(static_cast<double>(o.budget));
  nexp::CsvWriter out(ctx.artifacts_dir() / "search.csv",
                      {nexp::CsvColumn::text("method"), nexp::CsvColumn::integer("k"), nexp::CsvColumn::real("loss"),
                       nexp::CsvColumn::real("ci_low"), nexp::CsvColumn::real("ci_high")});
  std::map<bool, std::vector<Curve>> curves;
  auto bar = ctx.progress(2 * o.seeds, "searches");
  for (int s = 0; s < o.seeds && !ctx.stop_requested(); ++s)
    for (bool es : {false, true}) curves[es].push_back(search_once(ctx, runner, o, es, s)), bar.advance();
  if (ctx.stop_requested()) return;
  for (bool es : {false, true}) {
    const char* name = es ? "es" : "random_search";
    std::vector<double> means;
    for (std::size_t i = 0; i < ks.size(); ++i) {
      std::vector<double> v;
      for (const Curve& c : curves[es]) v.push_back(c[i]);
      const auto ci = nexp::stats::mean_t_interval(v);
      means.push_back(ci.estimate);
      out.row(name, static_cast<std::int64_t>(ks[i]), ci.estimate, ci.low, ci.high);
    }
    ctx.summary(fmt::format("exponent_{}", name), fit_law(LawForm::PowerLaw, ks, means).rate);
    ctx.summary(fmt::format("final_loss_{}", name), means.back());
  }
  std::vector<double> rs_final, es_final;
  for (const Curve& c : curves[false]) rs_final.push_back(c.back());
  for (const Curve& c : curves[true]) es_final.push_back(c.back());
  ctx.summary_interval("es_gain_vs_random", nexp::stats::paired_t_interval(rs_final, es_final));
  ctx.summary("seconds", seconds_since(t0));
}

// ---------------------------------------------------------------- curation_scaling.qqt

namespace {

struct Cell {
  std::vector<double> loss;  // one per seed
};

Recipe qqt_recipe(double quantile, double dedup, double dedup_range) {
  Point u = neutral_coordinates();
  u[0] = (quantile - 0.05) / 0.95;
  u[2] = dedup;
  Recipe r = recipe_from_point(u, dedup_range);
  r.quantile = quantile;  // quantiles below 0.05 are allowed here
  return r;
}

std::vector<double> losses(nexp::RunContext& ctx, const Runner& runner, const Recipe& r, Scale s, std::int64_t n,
                           int seeds, const std::string& purpose) {
  std::vector<double> v;
  for (int seed = 0; seed < seeds; ++seed) v.push_back(runner.run(r, s, n, ctx.stream(purpose, seed)()));
  return v;
}

void check_qqt(const QqtOptions& o, const Pool& pool) {
  std::vector<double> qs = o.quantiles;
  qs.push_back(o.dclm_quantile);
  for (double q : qs)
    if (std::llround(q * static_cast<double>(pool.x.size(0))) < 1)
      throw nexp::ConfigError(fmt::format("params.quantiles / dclm_quantile: quantile {} keeps no example of the {}-example "
                                          "pool; use quantiles of at least {:.2g}", q, pool.x.size(0), 1.0 / pool.x.size(0)));
  if (o.compute.empty() || o.quantiles.empty())
    throw nexp::ConfigError("params.compute and params.quantiles: expected non-empty lists, such as compute: [1, 4, 16] "
                            "and quantiles: [0.1, 0.5, 1.0]");
  const double smallest = *std::min_element(o.compute.begin(), o.compute.end()) * static_cast<double>(o.target_examples);
  if (std::llround(o.law_fit_fraction * smallest) < (std::int64_t{1} << o.law_fit_points))
    throw nexp::ConfigError(fmt::format("params.law_fit_fraction: the law pipeline's largest fit run (law_fit_fraction x the "
                                        "smallest budget = {:.0f} examples) must allow {} distinct run sizes n_max / 2^j "
                                        "(at least 2^{} examples); raise law_fit_fraction or the smallest compute, or lower "
                                        "law_fit_points", o.law_fit_fraction * smallest, o.law_fit_points, o.law_fit_points));
}

// What each quantile keeps (`kept.csv`): unique examples, classes present, the largest class's share
// and each source's share. Returns the classes present at the strictest quantile.
int audit_kept(nexp::RunContext& ctx, const Runner& runner, const Pool& pool, const QqtOptions& o) {
  nexp::CsvWriter out(ctx.artifacts_dir() / "kept.csv",
                      {nexp::CsvColumn::real("quantile"), nexp::CsvColumn::integer("unique"), nexp::CsvColumn::integer("classes"),
                       nexp::CsvColumn::real("top_class_share"), nexp::CsvColumn::real("clean"), nexp::CsvColumn::real("noisy"),
                       nexp::CsvColumn::real("noisier"), nexp::CsvColumn::real("duplicates"), nexp::CsvColumn::real("off_domain")});
  const at::Tensor labels = pool.label.contiguous();
  const std::int64_t* label = labels.data_ptr<std::int64_t>();
  int strictest_classes = 0;
  double strictest = INFINITY;
  for (double q : o.quantiles) {
    const std::vector<std::int64_t> kept = kept_examples(runner.view(), qqt_recipe(q, o.dedup, o.dedup_range));
    std::vector<double> per_class(static_cast<std::size_t>(pool.classes), 0.0), per_source(5, 0.0);
    for (std::int64_t i : kept) per_class[static_cast<std::size_t>(label[i])] += 1, per_source[pool.source[i]] += 1;
    const double n = std::max<double>(1, static_cast<double>(kept.size()));
    const auto classes = static_cast<int>(std::count_if(per_class.begin(), per_class.end(), [](double c) { return c > 0; }));
    out.row(q, static_cast<std::int64_t>(kept.size()), classes, *std::max_element(per_class.begin(), per_class.end()) / n,
            per_source[0] / n, per_source[1] / n, per_source[2] / n, per_source[3] / n, per_source[4] / n);
    if (q < strictest) strictest = q, strictest_classes = classes;
  }
  return strictest_classes;
}

// The law pipeline's fit: per quantile, first-use runs at n_max / 2^j (n_max = min(U_q, fraction x the
// smallest budget)), scored on the validation split; tau from runs of the strictest quantile that repeat
// its data (or the option). `cost`: examples seen by all fit runs (target scale).
struct LawFit {
  std::vector<RepetitionLaw> laws;  // one per o.quantiles
  double cost = 0;
};

LawFit fit_laws(nexp::RunContext& ctx, const Runner& runner, const QqtOptions& o) {
  LawFit fit;
  // law_fit_seeds validation-scored target runs of recipe r on nj examples, appended to (n, y) and paid for.
  auto fit_runs = [&](const Recipe& r, std::int64_t nj, const char* purpose, std::size_t id, std::vector<double>& n,
                      std::vector<double>& y) {
    for (int seed = 0; seed < o.law_fit_seeds; ++seed) {
      n.push_back(static_cast<double>(nj));
      y.push_back(runner.run(r, Scale::Target, nj, ctx.stream(purpose, id * 1000 + static_cast<std::size_t>(seed))(), true));
      fit.cost += static_cast<double>(nj);
    }
  };
  const double smallest = *std::min_element(o.compute.begin(), o.compute.end()) * static_cast<double>(o.target_examples);
  std::size_t strictest = 0;
  for (std::size_t i = 0; i < o.quantiles.size(); ++i) {
    const Recipe r = qqt_recipe(o.quantiles[i], o.dedup, o.dedup_range);
    const auto unique = static_cast<double>(kept_examples(runner.view(), r).size());
    const auto n_max = static_cast<std::int64_t>(std::min(unique, std::round(o.law_fit_fraction * smallest)));
    std::vector<double> n, y;
    for (int j = 0; j < o.law_fit_points; ++j)
      fit_runs(r, std::max<std::int64_t>(1, n_max >> j), "qqt_law_fit", i * 64 + static_cast<std::size_t>(j), n, y);
    fit.laws.push_back(fit_first_use(n, y, unique));
    if (o.quantiles[i] < o.quantiles[strictest]) strictest = i;
  }
  double tau = o.law_tau;
  if (tau == 0) {
    const Recipe r = qqt_recipe(o.quantiles[strictest], o.dedup, o.dedup_range);
    std::vector<double> n, y;
    for (std::size_t j = 0; j < o.law_tau_repeats.size(); ++j)
      fit_runs(r, std::llround(o.law_tau_repeats[j] * fit.laws[strictest].unique), "qqt_law_tau", j, n, y);
    tau = fit_half_life(fit.laws[strictest], n, y);
  }
  for (auto& law : fit.laws) law.tau = tau;
  ctx.summary("law_tau", tau);
  return fit;
}

}  // namespace

void run_qqt(nexp::RunContext& ctx) {
  const auto o = ctx.options<QqtOptions>();
  const Pool& pool = pool_of(ctx);
  check_qqt(o, pool);
  const auto t0 = std::chrono::steady_clock::now();
  const Runner runner(pool, o, ctx);
  const double proxy_share = runner.parameters(Scale::Proxy) / runner.parameters(Scale::Target);
  nexp::CsvWriter grid(ctx.artifacts_dir() / "qqt.csv",
                       {nexp::CsvColumn::real("compute"), nexp::CsvColumn::real("quantile"), nexp::CsvColumn::real("loss"),
                        nexp::CsvColumn::real("ci_low"), nexp::CsvColumn::real("ci_high")});
  nexp::CsvWriter front(ctx.artifacts_dir() / "frontier.csv",
                        {nexp::CsvColumn::real("compute"), nexp::CsvColumn::text("pipeline"), nexp::CsvColumn::real("total_compute"),
                         nexp::CsvColumn::real("quantile"), nexp::CsvColumn::real("loss"), nexp::CsvColumn::real("ci_low"),
                         nexp::CsvColumn::real("ci_high")});
  ctx.summary("kept_classes_strictest", audit_kept(ctx, runner, pool, o));
  const LawFit fit = fit_laws(ctx, runner, o);
  ctx.summary("law_fit_cost", fit.cost);
  nexp::CsvWriter law_csv(ctx.artifacts_dir() / "law.csv",
                          {nexp::CsvColumn::real("quantile"), nexp::CsvColumn::real("unique"), nexp::CsvColumn::real("a"),
                           nexp::CsvColumn::real("b"), nexp::CsvColumn::real("tau"), nexp::CsvColumn::real("seen"),
                           nexp::CsvColumn::real("predicted"), nexp::CsvColumn::real("measured")});
  auto bar = ctx.progress(static_cast<std::int64_t>(o.compute.size()), "budgets");
  std::vector<double> best_q, law_q, law_sq_err;
  double least_dclm = INFINITY, least_nofilter = INFINITY, law_least_dclm = INFINITY, law_least_nofilter = INFINITY;
  nexp::stats::Interval gain_dclm, gain_nofilter, law_gain_dclm, law_gain_nofilter;
  int unaffordable = 0;
  for (double mult : o.compute) {
    const auto c = static_cast<std::int64_t>(std::llround(mult * static_cast<double>(o.target_examples)));
    double best_loss = INFINITY, oracle_q = 1;
    // Replicate s of the compute-aware pipeline ranks the quantiles by the mean of its own ablation_seeds
    // proxy runs and takes the target run of its pick at seed s.
    std::vector<double> best_proxy(static_cast<std::size_t>(o.seeds), INFINITY), chosen(best_proxy.size()), chosen_q(best_proxy.size());
    for (std::size_t qi = 0; qi < o.quantiles.size(); ++qi) {
      const double q = o.quantiles[qi];
      const Recipe r = qqt_recipe(q, o.dedup, o.dedup_range);
      const auto target = losses(ctx, runner, r, Scale::Target, c, o.seeds, "qqt_target");
      const auto proxy = losses(ctx, runner, r, Scale::Proxy, c, o.seeds * o.ablation_seeds, "qqt_proxy");
      const auto ci = nexp::stats::mean_t_interval(target);
      grid.row(static_cast<double>(c), q, ci.estimate, ci.low, ci.high);
      const RepetitionLaw& law = fit.laws[qi];
      law_sq_err.push_back(std::pow(law.log_loss(static_cast<double>(c)) - std::log(ci.estimate), 2));
      law_csv.row(q, law.unique, std::exp(law.log_a), law.b, law.tau, static_cast<double>(c), law(static_cast<double>(c)), ci.estimate);
      if (ci.estimate < best_loss) best_loss = ci.estimate, oracle_q = q;
      for (std::size_t s = 0; s < best_proxy.size(); ++s) {
        const auto first = proxy.begin() + static_cast<std::ptrdiff_t>(s) * o.ablation_seeds;
        const double m = nexp::stats::mean(std::vector<double>(first, first + o.ablation_seeds));
        if (m < best_proxy[s]) best_proxy[s] = m, chosen[s] = target[s], chosen_q[s] = q;
      }
    }
    best_q.push_back(oracle_q);
    // The compute-aware pipeline paid for its ablation runs: the baselines train on that much more.
    const double total = static_cast<double>(c) * (1.0 + proxy_share * static_cast<double>(o.quantiles.size() * o.ablation_seeds));
    const auto n_total = static_cast<std::int64_t>(std::llround(total));
    const auto dclm = losses(ctx, runner, qqt_recipe(o.dclm_quantile, o.dedup, o.dedup_range), Scale::Target, n_total, o.seeds, "qqt_dclm");
    const auto nofilter = losses(ctx, runner, qqt_recipe(1.0, o.dedup, o.dedup_range), Scale::Target, n_total, o.seeds, "qqt_nofilter");
    const struct { const char* name; double q; const std::vector<double>& v; } rows[] = {
        {"compute_aware", nexp::stats::mean(chosen_q), chosen}, {"dclm_top10", o.dclm_quantile, dclm}, {"no_filter", 1.0, nofilter}};
    for (const auto& row : rows) {
      const auto ci = nexp::stats::mean_t_interval(row.v);
      front.row(static_cast<double>(c), row.name, total, row.q, ci.estimate, ci.low, ci.high);
    }
    const auto gd = nexp::stats::paired_t_interval(dclm, chosen), gn = nexp::stats::paired_t_interval(nofilter, chosen);
    if (gd.estimate < least_dclm) least_dclm = gd.estimate, gain_dclm = gd;
    if (gn.estimate < least_nofilter) least_nofilter = gn.estimate, gain_nofilter = gn;

    // The law pipeline: total budget c, of which fit.cost went to fitting; the rest trains at the q whose
    // law predicts the lowest loss. DCLM-style and no-filter train on all of c.
    const auto train = static_cast<std::int64_t>(std::llround(static_cast<double>(c) - fit.cost));
    if (train < 1) {
      ++unaffordable;
      ctx.log().warn(fmt::format("law pipeline: budget {} examples does not cover its fit ({:.0f} examples); no row", c, fit.cost));
    } else {
      std::size_t pick = 0;
      for (std::size_t i = 0; i < o.quantiles.size(); ++i) {
        const RepetitionLaw& law = fit.laws[i];
        law_csv.row(o.quantiles[i], law.unique, std::exp(law.log_a), law.b, law.tau, static_cast<double>(train),
                    law(static_cast<double>(train)), NAN);
        if (law.log_loss(static_cast<double>(train)) < fit.laws[pick].log_loss(static_cast<double>(train))) pick = i;
      }
      law_q.push_back(o.quantiles[pick]);
      const auto chosen_law = losses(ctx, runner, qqt_recipe(o.quantiles[pick], o.dedup, o.dedup_range), Scale::Target, train, o.seeds, "qqt_law");
      const auto dclm_c = losses(ctx, runner, qqt_recipe(o.dclm_quantile, o.dedup, o.dedup_range), Scale::Target, c, o.seeds, "qqt_dclm_budget");
      const auto nofilter_c = losses(ctx, runner, qqt_recipe(1.0, o.dedup, o.dedup_range), Scale::Target, c, o.seeds, "qqt_nofilter_budget");
      const struct { const char* name; double q; const std::vector<double>& v; } law_rows[] = {
          {"law", o.quantiles[pick], chosen_law}, {"dclm_top10", o.dclm_quantile, dclm_c}, {"no_filter", 1.0, nofilter_c}};
      for (const auto& row : law_rows) {
        const auto ci = nexp::stats::mean_t_interval(row.v);
        front.row(static_cast<double>(c), row.name, static_cast<double>(c), row.q, ci.estimate, ci.low, ci.high);
      }
      const auto ld = nexp::stats::paired_t_interval(dclm_c, chosen_law), ln = nexp::stats::paired_t_interval(nofilter_c, chosen_law);
      if (ld.estimate < law_least_dclm) law_least_dclm = ld.estimate, law_gain_dclm = ld;
      if (ln.estimate < law_least_nofilter) law_least_nofilter = ln.estimate, law_gain_nofilter = ln;
    }
    bar.advance();
  }
  ctx.summary("best_quantile_min_compute", best_q.front());
  ctx.summary("best_quantile_max_compute", best_q.back());
  ctx.summary_interval("frontier_gain_vs_dclm", gain_dclm);
  ctx.summary_interval("frontier_gain_vs_nofilter", gain_nofilter);
  ctx.summary("law_budgets_unaffordable", unaffordable);
  ctx.summary("law_quantile_min_compute", law_q.empty() ? NAN : law_q.front());
  ctx.summary("law_quantile_max_compute", law_q.empty() ? NAN : law_q.back());
  ctx.summary_interval("frontier_gain_law_vs_dclm", law_gain_dclm);
  ctx.summary_interval("frontier_gain_law_vs_nofilter", law_gain_nofilter);
  ctx.summary("law_fit_rmse", std::sqrt(nexp::stats::mean(law_sq_err)));
  ctx.summary("seconds", seconds_since(t0));
}

}  // namespace curation_scaling
