// The methods of experiments.hpp.
#include "experiments.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <nexp/stats.hpp>
#include <nexp/table.hpp>

namespace stable_fairness {
namespace {

using C = nexp::CsvColumn;

// One mixture fitted on a split: program (4) on validation, evaluated on test.
struct MixtureFit {
  bool feasible = false;
  ConeSolution solution;
  Eigen::VectorXd alpha, val_pred, test_pred;  // expected predictions of the randomised mixture
  double val_accuracy = NAN, test_accuracy = NAN, test_dp = NAN, test_eo = NAN;
  double val_constant = NAN, test_constant = NAN, certified = NAN;
};

MixtureFit fit_mixture(const Split& s, const BasePredictors& b, Notion notion, Norm norm, double tau, double delta) {
  MixtureFit m;
  m.solution = solve_cone_program(mixture_program(s.val, b.val, notion, norm, tau));
  m.feasible = m.solution.feasible;
  if (!m.feasible) return m;
  m.alpha = m.solution.alpha.cwiseMax(0.0);
  m.alpha /= m.alpha.sum();
  m.val_pred = b.val * m.alpha;
  m.test_pred = b.test * m.alpha;
  m.val_accuracy = accuracy(s.val, m.val_pred);
  m.test_accuracy = accuracy(s.test, m.test_pred);
  m.test_dp = dp_gap(s.test, m.test_pred);
  m.test_eo = eo_gap(s.test, m.test_pred);
  m.val_constant = lipschitz_constant(group_rates(s.val, m.val_pred, notion), norm);
  m.test_constant = lipschitz_constant(group_rates(s.test, m.test_pred, notion), norm);
  m.certified = m.val_constant + confidence_term(s.val, s.test, notion, norm, static_cast<int>(b.models.size()), delta);
  return m;
}

// The best single base predictor whose validation constant is at most tau (highest validation accuracy).
int best_single(const Split& s, const BasePredictors& b, Notion notion, Norm norm, double tau) {
  int best = -1;
  double best_acc = -1;
  for (Eigen::Index k = 0; k < b.val.cols(); ++k) {
    if (lipschitz_constant(group_rates(s.val, b.val.col(k), notion), norm) > tau) continue;
    const double a = accuracy(s.val, b.val.col(k));
    if (a > best_acc) best_acc = a, best = static_cast<int>(k);
  }
  return best;
}

Eigen::VectorXd labels(const Sample& s) {
  Eigen::VectorXd y(static_cast<Eigen::Index>(s.size()));
  for (std::size_t i = 0; i < s.size(); ++i) y(static_cast<Eigen::Index>(i)) = s.y[i];
  return y;
}

// Exponentiated gradient's randomised classifier: expected predictions on val and test, the duality
// gap nu of Algorithm 1's pair with the iterations it took, and whether the final LP replaced its average.
struct EgFit {
  Eigen::VectorXd val, test;
  double gap = NAN;
  int iterations = 0;
  bool lp = false;
};

// Exponentiated gradient with the logistic-regression oracle (cost-sensitive classification as weighted
// classification: label 1[c_i < 0], weight |c_i|); with `final_lp`, fairlearn's last step: the LP over
// the classifiers found replaces Algorithm 1's average when it is feasible.
EgFit fit_eg(const Split& s, Notion notion, double eps, const Logistic& init, int iterations, double l2,
             bool final_lp) {
  const Sample& tr = s.train;
  const auto n = static_cast<double>(tr.size());
  const Eigen::VectorXd y = labels(tr);
  const Eigen::VectorXd cost = (1 - 2 * y.array()).matrix() / n;
  const Eigen::MatrixXd a = notion == Notion::DP ? dp_moments(tr) : eo_moments(tr);
  std::vector<Logistic> models;
  std::vector<Eigen::VectorXd> train_preds;
  Eigen::VectorXd warm = init.w;
  auto oracle = [&](const Eigen::VectorXd& c) {
    const Eigen::VectorXd target = (c.array() < 0).cast<double>();
    Eigen::VectorXd w = c.cwiseAbs() * n;
    if (w.sum() <= 0) w.setOnes();
    models.push_back(fit_logistic(tr.x, target, w, l2, &warm));
    warm = models.back().w;
    train_preds.push_back(models.back().predict(tr.x));
    return train_preds.back();
  };
  EgOptions o;
  o.iterations = iterations;
  auto res = exponentiated_gradient(y.mean(), cost, a, eps, o, oracle);
  EgFit fit;
  if (final_lp) {
    Eigen::MatrixXd h(static_cast<Eigen::Index>(tr.size()), static_cast<Eigen::Index>(train_preds.size()));
    for (std::size_t t = 0; t < train_preds.size(); ++t) h.col(static_cast<Eigen::Index>(t)) = train_preds[t];
    const Eigen::VectorXd q = eg_final_lp(h, cost, a, eps);
    if (q.size() > 0) {
      for (std::size_t t = 0; t < res.weights.size(); ++t) res.weights[t] = q(static_cast<Eigen::Index>(t));
      fit.lp = true;
    }
  }
  fit.val = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(s.val.size()));
  fit.test = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(s.test.size()));
  for (std::size_t t = 0; t < models.size(); ++t)
    if (res.weights[t] > 0) {
      fit.val += res.weights[t] * models[t].predict(s.val.x);
      fit.test += res.weights[t] * models[t].predict(s.test.x);
    }
  fit.gap = res.gap, fit.iterations = res.iterations;
  return fit;
}

// The notion's gap on a sample under TV: the classical max-min gap of its rates.
double notion_gap(const Sample& s, const Eigen::VectorXd& pred, Notion notion) {
  return lipschitz_constant(group_rates(s, pred, notion), Norm::TV);
}

}  // namespace

// ---------------------------------------------------------------- stable_fairness.mixture

void run_mixture(nexp::RunContext& ctx) {
  const auto o = ctx.options<MixtureOptions>();
  const auto& table = ctx.dataset_as<FairTable>();
  ctx.log().info("{}", table.describe());
  const Split& s = table.split;
  const auto base = train_base(s, o.notion, o.base());
  const auto m = fit_mixture(s, base, o.notion, o.norm, o.tau, o.delta);
  ctx.summary("feasible", m.feasible ? 1 : 0);
  ctx.summary("base_predictors", static_cast<double>(base.models.size()));
  if (!m.feasible) {
    ctx.log().warn("tau = {} is infeasible: no mixture of the {} base predictors has a validation constant this small "
                   "(phase I's least violation {:.3g}); raise tau",
                   o.tau, base.models.size(), m.solution.phase1);
    return;
  }
  {
    nexp::CsvWriter out(ctx.artifacts_dir() / "alpha.csv",
                        {C::text("predictor"), C::real("alpha"), C::real("val_accuracy"), C::real("val_constant")});
    for (Eigen::Index k = 0; k < m.alpha.size(); ++k)
      out.row(base.names[static_cast<std::size_t>(k)], m.alpha(k), accuracy(s.val, base.val.col(k)),
              lipschitz_constant(group_rates(s.val, base.val.col(k), o.notion), o.norm));
  }
  auto rng = ctx.stream("shift");
  const auto shift = composition_shift(s.test, m.test_pred, o.notion, o.norm, rng, o.shift_points, o.shift_draws);
  {
    nexp::CsvWriter out(ctx.artifacts_dir() / "shift.csv", {C::integer("block"), C::integer("group0"),
                                                            C::integer("group1"), C::real("share"),
                                                            C::real("positive_rate"), C::real("accuracy")});
    for (const auto& p : shift.points) out.row(p.block, p.g0, p.g1, p.share, p.rate, p.accuracy);
  }
  ctx.summary("val_accuracy", m.val_accuracy);
  ctx.summary("test_accuracy", m.test_accuracy);
  ctx.summary("test_dp_gap", m.test_dp);
  ctx.summary("test_eo_gap", m.test_eo);
  ctx.summary("val_constant", m.val_constant);
  ctx.summary("test_constant", m.test_constant);
  ctx.summary("certified_gap", m.certified);
  ctx.summary("certificate_holds", m.test_constant <= m.certified ? 1 : 0);
  ctx.summary_interval("shift_slope", {shift.slope, shift.slope_low, shift.slope_high});
  ctx.summary("kkt_stationarity", m.solution.stationarity);
}

// ---------------------------------------------------------------- stable_fairness.frontier

void run_frontier(nexp::RunContext& ctx) {
  const auto o = ctx.options<FrontierOptions>();
  const auto& table = ctx.dataset_as<FairTable>();
  ctx.log().info("{}; {} splits", table.describe(), o.splits);
  nexp::CsvWriter out(ctx.artifacts_dir() / "frontier.csv",
                      {C::text("method"), C::real("tau"), C::real("val_accuracy"), C::real("test_accuracy"),
                       C::real("test_dp_gap"), C::real("test_eo_gap"), C::integer("split"), C::real("test_gap")});
  // Per split: the mixture's and the best single predictor's test accuracy at the headline tau, and the
  // exponentiated-gradient points (test gap, test accuracy).
  std::vector<double> mix_acc, mix_gap, single_acc, eg_at_mix, eg_duality_gaps, eg_iterations, eg_lp;
  auto progress = ctx.progress(o.splits, "splits");
  for (int i = 0; i < o.splits && !ctx.stop_requested(); ++i) {
    const Split s = table.split_at(i);
    const auto base = train_base(s, o.notion, o.base());
    auto row = [&](const std::string& method, double tau, const Eigen::VectorXd& val, const Eigen::VectorXd& test) {
      out.row(method, tau, accuracy(s.val, val), accuracy(s.test, test), dp_gap(s.test, test), eo_gap(s.test, test), i,
              notion_gap(s.test, test, o.notion));
    };
    row("lr", NAN, base.val.col(0), base.test.col(0));
    const Eigen::VectorXd yt = labels(s.train);
    const auto rw = fit_logistic(s.train.x, yt, reweighing_weights(s.train), o.l2, &base.models[0].w);
    row("reweighing", NAN, rw.predict(s.val.x), rw.predict(s.test.x));
    if (o.notion != Notion::DP) {
      const auto post = fit_hardt(s.train.x * base.models[0].w, s.train.y, s.train.g, s.train.groups);
      row("hardt", NAN, post.predict(base.models[0].score(s.val.x), s.val.g),
          post.predict(base.models[0].score(s.test.x), s.test.g));
    }
    for (double tau : o.taus) {
      const auto m = fit_mixture(s, base, o.notion, o.norm, tau, 0);
      if (m.feasible) row("mixture", tau, m.val_pred, m.test_pred);
      const int k = best_single(s, base, o.notion, o.norm, tau);
      if (k >= 0) row("best_single", tau, base.val.col(k), base.test.col(k));
      if (std::abs(tau - o.headline_tau) < 1e-12) {
        mix_acc.push_back(m.feasible ? m.test_accuracy : NAN);
        mix_gap.push_back(m.feasible ? notion_gap(s.test, m.test_pred, o.notion) : NAN);
        single_acc.push_back(k >= 0 ? accuracy(s.test, base.test.col(k)) : NAN);
      }
    }
    std::vector<std::pair<double, double>> eg;  // (test gap, test accuracy)
    for (double eps : o.eps) {
      const auto fit = fit_eg(s, o.notion, eps, base.models[0], o.eg_iterations, o.l2, o.eg_lp);
      row("eg", eps, fit.val, fit.test);
      eg.push_back({notion_gap(s.test, fit.test, o.notion), accuracy(s.test, fit.test)});
      eg_duality_gaps.push_back(fit.gap), eg_iterations.push_back(fit.iterations), eg_lp.push_back(fit.lp);
    }
    // EG's accuracy at the mixture's test gap: linear interpolation of its points sorted by gap, with
    // the unconstrained logistic regression as the end eps -> infinity of EG's curve.
    eg.push_back({notion_gap(s.test, base.test.col(0), o.notion), accuracy(s.test, base.test.col(0))});
    std::sort(eg.begin(), eg.end());
    double at = NAN;
    if (!mix_gap.empty() && !std::isnan(mix_gap.back()))
      for (std::size_t j = 0; j + 1 < eg.size(); ++j)
        if (eg[j].first <= mix_gap.back() && mix_gap.back() <= eg[j + 1].first) {
          const double w = eg[j + 1].first > eg[j].first ? (mix_gap.back() - eg[j].first) / (eg[j + 1].first - eg[j].first) : 0;
          at = (1 - w) * eg[j].second + w * eg[j + 1].second;
          break;
        }
    eg_at_mix.push_back(at);
    progress.advance();
  }
  auto paired = [](const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> x, y;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!std::isnan(a[i]) && !std::isnan(b[i])) x.push_back(100 * a[i]), y.push_back(100 * b[i]);
    return std::make_pair(x, y);
  };
  const auto [ma, sa] = paired(mix_acc, single_acc);
  const auto [mb, ea] = paired(mix_acc, eg_at_mix);
  ctx.summary_interval("mixture_minus_single_pp", nexp::stats::paired_t_interval(ma, sa));
  ctx.summary_interval("mixture_minus_eg_pp", nexp::stats::paired_t_interval(mb, ea));
  ctx.summary("eg_matched_splits", static_cast<double>(mb.size()));
  // Over the splits where program (4) was feasible at the headline tau.
  auto feasible = [](std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    return v;
  };
  ctx.summary_interval("mixture_test_accuracy", nexp::stats::mean_t_interval(feasible(mix_acc)));
  ctx.summary_interval("mixture_test_gap", nexp::stats::mean_t_interval(feasible(mix_gap)));
  ctx.summary("eg_median_duality_gap", nexp::stats::median(eg_duality_gaps));
  ctx.summary("eg_mean_iterations", nexp::stats::mean(eg_iterations));
  ctx.summary("eg_lp_share", nexp::stats::mean(eg_lp));
}

// ---------------------------------------------------------------- stable_fairness.certify

void run_certify(nexp::RunContext& ctx) {
  const auto o = ctx.options<CertifyOptions>();
  const auto& table = ctx.dataset_as<FairTable>();
  ctx.log().info("{}; {} splits", table.describe(), o.splits);
  nexp::CsvWriter out(ctx.artifacts_dir() / "certify.csv",
                      {C::integer("split"), C::boolean("feasible"), C::real("val_constant"), C::real("test_constant"),
                       C::real("certified_delta"), C::boolean("holds_plain"), C::boolean("holds_delta"),
                       C::real("test_accuracy")});
  std::int64_t runs = 0, fail_plain = 0, fail_delta = 0;
  auto progress = ctx.progress(o.splits, "splits");
  for (int i = 0; i < o.splits && !ctx.stop_requested(); ++i) {
    const Split s = table.split_at(i);
    const auto m = fit_mixture(s, train_base(s, o.notion, o.base()), o.notion, o.norm, o.tau, o.delta);
    progress.advance();
    if (!m.feasible) {
      out.row(i, false, NAN, NAN, NAN, false, false, NAN);
      continue;
    }
    const bool plain = m.test_constant <= m.val_constant, with = m.test_constant <= m.certified;
    ++runs, fail_plain += !plain, fail_delta += !with;
    out.row(i, true, m.val_constant, m.test_constant, m.certified, plain, with, m.test_accuracy);
  }
  ctx.summary("feasible_splits", static_cast<double>(runs));
  ctx.summary_interval("violation_rate_plain", nexp::stats::clopper_pearson_interval(fail_plain, runs));
  ctx.summary_interval("violation_rate_delta", nexp::stats::clopper_pearson_interval(fail_delta, runs));
}

// ---------------------------------------------------------------- stable_fairness.shift

void run_shift(nexp::RunContext& ctx) {
  const auto o = ctx.options<ShiftOptions>();
  const auto& table = ctx.dataset_as<FairTable>();
  ctx.log().info("{}; {} splits", table.describe(), o.splits);
  nexp::CsvWriter curves(ctx.artifacts_dir() / "shift.csv",
                         {C::real("tau"), C::integer("split"), C::integer("block"), C::integer("group0"),
                          C::integer("group1"), C::real("share"), C::real("positive_rate"), C::real("accuracy")});
  nexp::CsvWriter slopes(ctx.artifacts_dir() / "shift_summary.csv",
                         {C::real("tau"), C::integer("split"), C::real("certified_gap"), C::real("test_constant"),
                          C::real("shift_slope"), C::real("slope_ci_low"), C::real("slope_ci_high"),
                          C::real("test_accuracy")});
  std::vector<double> taus, measured;
  std::vector<int> split_of;  // the split of each (tau, slope) pair
  std::int64_t within = 0, total = 0;
  double excess = -INFINITY;
  auto progress = ctx.progress(o.splits, "splits");
  for (int i = 0; i < o.splits && !ctx.stop_requested(); ++i) {
    const Split s = table.split_at(i);
    const auto base = train_base(s, o.notion, o.base());
    for (std::size_t t = 0; t < o.taus.size(); ++t) {
      const auto m = fit_mixture(s, base, o.notion, o.norm, o.taus[t], o.delta);
      if (!m.feasible) continue;
      auto rng = ctx.stream("shift", static_cast<std::uint64_t>(i) * 1000 + t);
      const auto sh = composition_shift(s.test, m.test_pred, o.notion, o.norm, rng, o.shift_points, o.shift_draws);
      for (const auto& p : sh.points) curves.row(o.taus[t], i, p.block, p.g0, p.g1, p.share, p.rate, p.accuracy);
      slopes.row(o.taus[t], i, m.certified, m.test_constant, sh.slope, sh.slope_low, sh.slope_high, m.test_accuracy);
      taus.push_back(o.taus[t]), measured.push_back(sh.slope), split_of.push_back(i);
      ++total, within += sh.slope_low <= m.certified;
      excess = std::max(excess, sh.slope - m.certified);
    }
    progress.advance();
  }
  ctx.summary("slope_within_certificate_share", total ? static_cast<double>(within) / total : NAN);
  ctx.summary("max_slope_minus_certified", excess);
  // Spearman's correlation of the pooled (tau, slope) pairs, with a percentile bootstrap interval that
  // resamples whole splits (the taus of one split share its base predictors and test set).
  const auto splits_run = static_cast<std::size_t>(split_of.empty() ? 0 : split_of.back() + 1);
  auto spearman_of = [&](const std::vector<std::size_t>& draw) {
    std::vector<double> x, y;
    for (std::size_t d : draw)
      for (std::size_t j = 0; j < taus.size(); ++j)
        if (split_of[j] == static_cast<int>(d)) x.push_back(taus[j]), y.push_back(measured[j]);
    return nexp::stats::spearman(x, y);
  };
  nexp::stats::Interval rho{spearman_of({0}), NAN, NAN};
  if (splits_run > 1) {
    auto rng = ctx.stream("spearman");
    rho = nexp::stats::bootstrap(splits_run, spearman_of, rng, 0.95, 2000);
  }
  ctx.summary_interval("slope_tau_spearman", rho);
}

}  // namespace stable_fairness
