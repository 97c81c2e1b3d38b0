// The simulated experiments: every arm on the hard tasks (arms.yaml), the router against the fixed
// arms (router.yaml), and the closed forms against Monte Carlo (theory.yaml).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <nexp/table.hpp>

#include "methods.hpp"
#include "router.hpp"
#include "theory.hpp"

namespace llm_channel {

// ---------------------------------------------------------------- dataset

std::string SimDataset::describe() const {
  std::string names;
  for (const auto& c : configs) names += (names.empty() ? "" : ", ") + c.name;
  return fmt::format("llm_channel.sim: {} tasks, configurations {} (from {})", tasks.size(), names, file);
}

std::shared_ptr<nexp::Dataset> make_sim(const SimOptions& o, nexp::RunContext& ctx) {
  auto d = std::make_shared<SimDataset>();
  d->file = o.channels;
  const auto all = read_channel_file(o.channels);
  if (o.config == "all") d->configs = all;
  else d->configs = {find_config(all, o.config, o.channels)};
  d->tasks = make_tasks(o, ctx.stream("tasks"));
  return d;
}

std::vector<double> default_lams() {
  std::vector<double> lams = {0};
  for (int i = 0; i <= 40; ++i) lams.push_back(1e-3 * std::pow(5e4, i / 40.0));  // 1e-3 .. 50, log-spaced
  return lams;
}

namespace {

struct Cell {
  double quality = 0, cost = 0, calls = 0;
};

// Mean quality, cost and calls of `arm` on `task` over `repeats` independent draws; draw r uses the
// stream (purpose, (key * repeats + r)), so every cell is reproducible on its own.
Cell evaluate(const ChannelConfig& config, const Task& task, const Arm& arm, int repeats, const nexp::RunContext& ctx,
              const char* purpose, std::uint64_t key) {
  Cell cell;
  for (int r = 0; r < repeats; ++r) {
    SimChannel ch(config, task, ctx.stream(purpose, key * static_cast<std::uint64_t>(repeats) + static_cast<std::uint64_t>(r)));
    const Outcome out = run_arm(arm, ch);
    cell.quality += ch.quality(out.answer), cell.cost += out.cost, cell.calls += out.calls;
  }
  cell.quality /= repeats, cell.cost /= repeats, cell.calls /= repeats;
  return cell;
}

// The tasks x arms table of one configuration.
struct Tables {
  ArmTable table;
  std::vector<double> calls;
};
Tables arm_table(const ChannelConfig& config, std::size_t config_index, const std::vector<Task>& tasks,
                 const std::vector<Arm>& arms, int repeats, nexp::RunContext& ctx, const char* purpose) {
  Tables t{ArmTable(tasks.size(), arms.size()), std::vector<double>(tasks.size() * arms.size(), 0.0)};
  auto bar = ctx.progress(static_cast<std::int64_t>(tasks.size()), fmt::format("{} {}", purpose, config.name));
  for (std::size_t j = 0; j < tasks.size(); ++j) {
    for (std::size_t a = 0; a < arms.size(); ++a) {
      const auto key = (config_index * tasks.size() + j) * arms.size() + a;
      const Cell c = evaluate(config, tasks[j], arms[a], repeats, ctx, purpose, key);
      t.table.q(j, a) = c.quality, t.table.c(j, a) = c.cost, t.calls[j * arms.size() + a] = c.calls;
    }
    bar.advance();
  }
  return t;
}

std::vector<std::vector<double>> embeddings(const std::vector<Task>& tasks) {
  std::vector<std::vector<double>> e;
  for (const auto& t : tasks) e.push_back(t.embedding);
  return e;
}

}  // namespace

// ---------------------------------------------------------------- llm_channel.arms

namespace {

// The arm with the largest mean of Q - lam C over `tasks` (ties: cheaper, then lower index).
std::size_t best_arm(const ArmTable& t, const std::vector<std::size_t>& tasks, double lam) {
  std::size_t best = 0;
  double best_u = -std::numeric_limits<double>::infinity(), best_c = 0;
  for (std::size_t a = 0; a < t.arms; ++a) {
    double u = 0, c = 0;
    for (std::size_t j : tasks) u += t.q(j, a) - lam * t.c(j, a), c += t.c(j, a);
    if (u > best_u + 1e-12 || (std::abs(u - best_u) <= 1e-12 && c < best_c)) best = a, best_u = u, best_c = c;
  }
  return best;
}

}  // namespace

namespace {

// Two analyses that read the simulator's truth (never available to an arm): the quality a critic
// adds after four rounds, and what 15-vote plurality adds over one sample on tasks where the model's
// most likely answer is right ("easy") or wrong ("hard": the attractor or another).
struct ArmsAnalysis {
  double critic_gain = 0, vote_gain_easy = 0, vote_gain_hard = 0, single_accuracy = 0;
  int easy = 0, hard = 0;
};

ArmsAnalysis analyse(const ChannelConfig& config, const std::vector<Task>& tasks, const ArmTable& t,
                     const std::vector<Arm>& arms) {
  ArmsAnalysis a;
  const int models = static_cast<int>(config.models.size());
  for (int m = 0; m < models; ++m) {
    const auto single = static_cast<std::size_t>(find_arm(arms, fmt::format("single/m{}", m)));
    const auto critic = static_cast<std::size_t>(find_arm(arms, fmt::format("critic/m{}/r4", m)));
    const auto votes = static_cast<std::size_t>(find_arm(arms, fmt::format("plurality/m{}/n15", m)));
    for (std::size_t j = 0; j < tasks.size(); ++j) {
      a.critic_gain += (t.q(j, critic) - t.q(j, single)) / (models * tasks.size());
      a.single_accuracy += t.q(j, single) / (models * tasks.size());
      const auto p = SimChannel(config, tasks[j], nexp::Random(0)).distribution(m, config.temperature);
      const bool easy = std::max_element(p.begin(), p.end()) == p.begin();
      (easy ? a.vote_gain_easy : a.vote_gain_hard) += t.q(j, votes) - t.q(j, single);
      ++(easy ? a.easy : a.hard);
    }
  }
  a.vote_gain_easy /= std::max(a.easy, 1), a.vote_gain_hard /= std::max(a.hard, 1);
  return a;
}

}  // namespace

void run_arms(nexp::RunContext& ctx) {
  const auto o = ctx.options<ArmsOptions>();
  auto& data = ctx.dataset_as<SimDataset>();
  const auto arms = standard_arms(static_cast<int>(data.configs.front().models.size()));
  ctx.log().info("{} arms x {} tasks x {} configurations, {} draws each", arms.size(), data.tasks.size(),
                 data.configs.size(), o.repeats);
  using C = nexp::CsvColumn;
  nexp::CsvWriter arm_csv(ctx.artifacts_dir() / "arms.csv",
                          {C::text("config"), C::text("arm"), C::real("quality"), C::real("normalized_cost"),
                           C::real("utility"), C::integer("task_wins")});
  nexp::CsvWriter win_csv(ctx.artifacts_dir() / "winners.csv",
                          {C::text("config"), C::integer("task"), C::text("kind"), C::real("difficulty"),
                           C::text("winner"), C::real("quality"), C::real("normalized_cost")});
  std::map<std::string, int> wins;  // per (config, task) winners, by arm name
  std::set<std::string> config_winners;
  std::vector<std::size_t> all(data.tasks.size());
  std::iota(all.begin(), all.end(), 0);
  int cells = 0;
  double help = 0, hurt = 0, easy = 0, hard = 0;
  int helping = 0, hurting = 0;
  for (std::size_t ci = 0; ci < data.configs.size(); ++ci) {
    const auto& config = data.configs[ci];
    const auto t = arm_table(config, ci, data.tasks, arms, o.repeats, ctx, "arms").table;
    std::vector<int> task_wins(arms.size(), 0);
    for (std::size_t j = 0; j < data.tasks.size(); ++j) {
      const std::size_t w = best_arm(t, {j}, o.lam);
      ++task_wins[w], ++wins[arms[w].name], ++cells;
      win_csv.row(config.name, j, kind_name(data.tasks[j].kind), data.tasks[j].difficulty, arms[w].name, t.q(j, w), t.c(j, w));
    }
    const auto a = analyse(config, data.tasks, t, arms);
    // The boundary of (T2): the critic helps where its fixed point c* exceeds the accuracy it starts from.
    const bool contractive = config.critic.fixed_point() > a.single_accuracy;
    (contractive ? help : hurt) += a.critic_gain;
    ++(contractive ? helping : hurting);
    easy += a.vote_gain_easy / data.configs.size(), hard += a.vote_gain_hard / data.configs.size();
    ctx.log().info("{}: critic c* {:.2f} vs single-shot accuracy {:.2f}: 4 rounds change quality by {:+.3f}; 15 votes "
                   "{:+.3f} on easy ({}), {:+.3f} on hard ({}) task-models", config.name, config.critic.fixed_point(),
                   a.single_accuracy, a.critic_gain, a.vote_gain_easy, a.easy, a.vote_gain_hard, a.hard);
    const std::size_t best = best_arm(t, all, o.lam);
    config_winners.insert(arms[best].name);
    for (std::size_t a = 0; a < arms.size(); ++a) {
      double q = 0, c = 0;
      for (std::size_t j : all) q += t.q(j, a) / all.size(), c += t.c(j, a) / all.size();
      arm_csv.row(config.name, arms[a].name, q, c, q - o.lam * c, task_wins[a]);
      if (a == best) ctx.log().info("{}: best fixed arm {} (quality {:.3f}, cost {:.2f})", config.name, arms[a].name, q, c);
    }
  }
  int top = 0;
  for (const auto& [name, n] : wins) top = std::max(top, n);
  ctx.summary("distinct_winning_arms", static_cast<double>(config_winners.size()));
  ctx.summary("distinct_task_winners", static_cast<double>(wins.size()));
  ctx.summary("max_arm_win_share", static_cast<double>(top) / cells);
  ctx.summary("critic_gain_contractive", helping ? help / helping : NAN);
  ctx.summary("critic_gain_weak", hurting ? hurt / hurting : NAN);
  ctx.summary("vote_gain_easy", easy);
  ctx.summary("vote_gain_hard", hard);
}

// ---------------------------------------------------------------- llm_channel.router

namespace {

// Per-task test outcomes of every policy: the fixed arms, then the router at each lam.
struct PolicyOutcomes {
  std::vector<std::vector<double>> quality, cost, calls;  // [policy][task]
};

// 5-fold cross-validation over tasks: each test task is routed with the table of the other folds.
std::vector<std::vector<std::size_t>> route_cross_validated(const ArmTable& table, const std::vector<Task>& tasks,
                                                            const RouterOptions& o, nexp::Random rng) {
  const std::size_t n = tasks.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<std::size_t> fold(n);
  for (std::size_t i = 0; i < n; ++i) fold[order[i]] = i % static_cast<std::size_t>(o.folds);
  const auto emb = embeddings(tasks);
  std::vector<std::vector<std::size_t>> choice(o.lams.size(), std::vector<std::size_t>(n));  // [lam][task]
  for (std::size_t f = 0; f < static_cast<std::size_t>(o.folds); ++f) {
    std::vector<std::size_t> train;
    for (std::size_t j = 0; j < n; ++j)
      if (fold[j] != f) train.push_back(j);
    for (std::size_t i = 0; i < n; ++i) {
      if (fold[i] != f) continue;
      const auto est = knn_estimate(table, train, emb, emb[i], static_cast<std::size_t>(o.k), o.similarity_weights);
      for (std::size_t l = 0; l < o.lams.size(); ++l) choice[l][i] = choose_arm(est, o.lams[l]);
    }
  }
  return choice;
}

PolicyOutcomes policy_outcomes(const Tables& test, const std::vector<std::vector<std::size_t>>& choice) {
  const auto& t = test.table;
  PolicyOutcomes p;
  auto add = [&](auto pick) {
    std::vector<double> q(t.tasks), c(t.tasks), k(t.tasks);
    for (std::size_t j = 0; j < t.tasks; ++j) {
      const std::size_t a = pick(j);
      q[j] = t.q(j, a), c[j] = t.c(j, a), k[j] = test.calls[j * t.arms + a];
    }
    p.quality.push_back(q), p.cost.push_back(c), p.calls.push_back(k);
  };
  for (std::size_t a = 0; a < t.arms; ++a) add([a](std::size_t) { return a; });
  for (const auto& lam_choice : choice) add([&](std::size_t j) { return lam_choice[j]; });
  return p;
}

// The frontier measures of the test tasks `idx` (a bootstrap resample, or every task).
FrontierMeasures measures_on(const PolicyOutcomes& p, std::size_t arms, const std::vector<std::size_t>& idx,
                             const std::vector<std::size_t>& single, double tolerance_se) {
  std::vector<Point> fixed, router;
  for (std::size_t k = 0; k < p.quality.size(); ++k) {
    std::vector<double> q, c;
    for (std::size_t j : idx) q.push_back(p.quality[k][j]), c.push_back(p.cost[k][j]);
    const Point pt{nexp::stats::mean(q), nexp::stats::mean(c), nexp::stats::standard_error(q)};
    (k < arms ? fixed : router).push_back(pt);
  }
  return frontier_measures(fixed, router, single, tolerance_se);
}

void write_frontier(const std::filesystem::path& file, const PolicyOutcomes& p, const std::vector<Arm>& arms,
                    const std::vector<double>& lams) {
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(file, {C::text("policy"), C::real("lam"), C::real("quality"), C::real("normalized_cost"),
                             C::real("calls")});
  for (std::size_t k = 0; k < p.quality.size(); ++k) {
    const auto q = nexp::stats::mean(p.quality[k]), c = nexp::stats::mean(p.cost[k]), n = nexp::stats::mean(p.calls[k]);
    if (k < arms.size()) out.row(arms[k].name, std::nullopt, q, c, n);
    else out.row("router", lams[k - arms.size()], q, c, n);
  }
}

}  // namespace

void run_router(nexp::RunContext& ctx) {
  auto o = ctx.options<RouterOptions>();
  if (o.lams.empty()) o.lams = default_lams();
  auto& data = ctx.dataset_as<SimDataset>();
  if (data.configs.size() != 1)
    throw nexp::ConfigError(fmt::format(
        "llm_channel.router routes within one channel configuration, but dataset.config is `all` ({} "
        "configurations). Set dataset.config to one of them, e.g. dataset.config={}.",
        data.configs.size(), data.configs.front().name));
  const auto& config = data.configs.front();
  const auto arms = standard_arms(static_cast<int>(config.models.size()));
  const Tables train = arm_table(config, 0, data.tasks, arms, o.table_repeats, ctx, "table");
  const Tables test = arm_table(config, 0, data.tasks, arms, o.test_repeats, ctx, "test");
  const auto choice = route_cross_validated(train.table, data.tasks, o, ctx.stream("folds"));
  const auto outcomes = policy_outcomes(test, choice);
  write_frontier(ctx.artifacts_dir() / "frontier.csv", outcomes, arms, o.lams);

  std::vector<std::size_t> single;
  for (std::size_t a = 0; a < arms.size(); ++a)
    if (arms[a].op == Operator::Single) single.push_back(a);
  const std::size_t n = data.tasks.size();
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const auto whole = measures_on(outcomes, arms.size(), all, single, o.tolerance_se);
  ctx.log().info("strongest fixed arm: {}", arms[whole.strongest_arm].name);
  // Paired bootstrap over test tasks: every policy is resampled on the same tasks; the same resamples
  // (the same stream) for each measure.
  const std::pair<const char*, double FrontierMeasures::*> names[] = {
      {"cost_cut_at_matched_quality", &FrontierMeasures::cost_cut_at_matched_quality},
      {"quality_gain_at_matched_cost", &FrontierMeasures::quality_gain_at_matched_cost},
      {"quality_gain_vs_single_shot", &FrontierMeasures::quality_gain_vs_single_shot},
      {"frontier_covered", &FrontierMeasures::frontier_covered},
      {"mean_gain_over_frontier", &FrontierMeasures::mean_gain_over_frontier}};
  for (const auto& [name, member] : names) {
    nexp::Random rng = ctx.stream("bootstrap");
    const auto ci = nexp::stats::bootstrap(
        n, [&, m = member](const std::vector<std::size_t>& idx) { return measures_on(outcomes, arms.size(), idx, single, o.tolerance_se).*m; },
        rng, 0.95, o.resamples);
    if (std::isnan(ci.estimate)) {
      // On the whole test set the router never reaches the strongest arm's quality: no interval either.
      ctx.summary_interval(name, nexp::stats::Interval{});
    } else {
      ctx.summary_interval(name, ci);
    }
    if (member == &FrontierMeasures::cost_cut_at_matched_quality)
      ctx.summary("matched_quality_share", static_cast<double>(ci.resamples) / o.resamples);
  }
  const auto& s = arms[whole.strongest_arm];
  ctx.summary("strongest_arm_quality", nexp::stats::mean(outcomes.quality[whole.strongest_arm]));
  ctx.summary("strongest_arm_cost", nexp::stats::mean(outcomes.cost[whole.strongest_arm]));
  ctx.log().info("strongest arm {}: quality {:.3f} at cost {:.2f}", s.name,
                 nexp::stats::mean(outcomes.quality[whole.strongest_arm]), nexp::stats::mean(outcomes.cost[whole.strongest_arm]));
}

// ---------------------------------------------------------------- llm_channel.theory

namespace {

std::vector<double> even_precisions(const TheoryOptions& o) {
  std::vector<double> p;
  for (int i = 0; i < o.branches; ++i) p.push_back(o.precision_min + (o.precision_max - o.precision_min) * i / (o.branches - 1));
  return p;
}

// Simulated accuracy after each round of a critic (Bernoulli chains), beside the closed form.
void refinement_rows(nexp::CsvWriter& out, const char* critic, double a, double b, const TheoryOptions& o,
                     nexp::Random rng, nexp::RunContext& ctx, const std::string& prefix) {
  std::vector<char> right(static_cast<std::size_t>(o.chains));
  for (auto& r : right) r = rng.bernoulli(o.c0);
  double c = 0;
  for (int t = 1; t <= o.rounds; ++t) {
    for (auto& r : right) r = r ? !rng.bernoulli(a) : rng.bernoulli(b);
    c = static_cast<double>(std::count(right.begin(), right.end(), 1)) / o.chains;
    out.row(critic, t, c, refinement_accuracy(o.c0, a, b, t), refinement_fixed_point(a, b));
  }
  ctx.summary(prefix + "_fixed_point", refinement_fixed_point(a, b));
  ctx.summary(prefix + "_gain", c - o.c0);
  ctx.summary(prefix + "_gain_closed_form", refinement_accuracy(o.c0, a, b, o.rounds) - o.c0);
}

}  // namespace

namespace {

// MSE of both estimators over a grid of tau around tau*, and the Monte Carlo crossing: the zero of a
// line through the differences at 0.8 .. 1.2 tau*.
double averaging_sweep(const std::vector<double>& p, const TheoryOptions& o, nexp::RunContext& ctx) {
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "averaging.csv",
                      {C::real("tau"), C::real("mse_uniform"), C::real("mse_weighted"), C::real("difference_se"),
                       C::real("mse_uniform_first_order"), C::real("mse_weighted_first_order")});
  const double star = tau_star(p);
  std::vector<double> taus, diffs;
  int i = 0;
  for (double f : {0.25, 0.5, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5, 2.0}) {
    nexp::Random rng = ctx.stream("sweep", static_cast<std::uint64_t>(i++));
    const auto mc = averaging_mse_monte_carlo(p, f * star, o.replicas, rng);
    out.row(f * star, mc.uniform, mc.weighted, mc.difference_se, mse_uniform_first_order(p),
            mse_weighted_first_order(p, f * star));
    if (f >= 0.8 && f <= 1.2) taus.push_back(f * star), diffs.push_back(mc.weighted - mc.uniform);
  }
  const auto fit = nexp::stats::fit_line(taus, diffs);
  return -fit.intercept / fit.slope;
}

// Chen et al.'s easy/hard mix: exact plurality accuracy against the number of votes.
void vote_curve(nexp::RunContext& ctx) {
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "votes.csv",
                      {C::integer("n"), C::real("easy"), C::real("hard"), C::real("mix")});
  const std::vector<double> easy = {0.85, 0.1, 0.05}, hard = {0.38, 0.47, 0.15};
  double best = -1, first = 0, last = 0;
  int best_n = 1;
  for (int n = 1; n <= 41; n += 2) {
    const double e = plurality_accuracy_exact(easy, n), h = plurality_accuracy_exact(hard, n), mix = (e + h) / 2;
    out.row(n, e, h, mix);
    if (n == 1) first = mix;
    if (mix > best) best = mix, best_n = n;
    last = mix;
  }
  ctx.summary("vote_accuracy_n1", first);
  ctx.summary("vote_accuracy_peak", best);
  ctx.summary("vote_peak_n", best_n);
  ctx.summary("vote_accuracy_n41", last);
}

}  // namespace

void run_theory(nexp::RunContext& ctx) {
  const auto o = ctx.options<TheoryOptions>();
  if (o.precision_max < o.precision_min)
    throw nexp::ConfigError(fmt::format("llm_channel.theory: params.precision_max ({}) is below params.precision_min "
                                        "({}); give an interval [min, max]", o.precision_max, o.precision_min));
  const auto p = even_precisions(o);
  const double star = tau_star(p), tau = o.tau < 0 ? star : o.tau;
  nexp::Random rng = ctx.stream("averaging");
  const auto mc = averaging_mse_monte_carlo(p, tau, o.replicas, rng);
  ctx.summary("tau_star", star);
  ctx.summary("tau", tau);
  ctx.summary("mse_uniform", mc.uniform);
  ctx.summary("mse_weighted", mc.weighted);
  ctx.summary("mse_difference_se", mc.difference_se);
  ctx.summary("mse_uniform_first_order", mse_uniform_first_order(p));
  ctx.summary("mse_weighted_first_order", mse_weighted_first_order(p, tau));
  ctx.summary("weighting_wins", mc.weighted < mc.uniform ? 1 : 0);
  if (o.sweep) ctx.summary("tau_star_monte_carlo", averaging_sweep(p, o, ctx));
  vote_curve(ctx);

  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "refinement.csv",
                      {C::text("critic"), C::integer("round"), C::real("accuracy"), C::real("closed_form"),
                       C::real("fixed_point")});
  refinement_rows(out, "weak", o.weak_break, o.weak_fix, o, ctx.stream("refine", 0), ctx, "refine_weak");
  refinement_rows(out, "strong", o.strong_break, o.strong_fix, o, ctx.stream("refine", 1), ctx, "refine_strong");
}

}  // namespace llm_channel
