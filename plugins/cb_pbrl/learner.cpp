#include "learner.hpp"

#include <cmath>
#include <limits>

#include <nexp/stats.hpp>

namespace cb_pbrl {

namespace {

double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }
double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

// Adam (Kingma and Ba 2015) on one parameter vector.
struct Adam {
  VectorXd m, v;
  int t = 0;
  void step(VectorXd& x, const VectorXd& g, double lr) {
    if (m.size() != x.size()) m = v = VectorXd::Zero(x.size());
    ++t;
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g.cwiseProduct(g);
    const double c1 = 1 - std::pow(0.9, t), c2 = 1 - std::pow(0.999, t);
    x.array() -= lr * (m.array() / c1) / ((v.array() / c2).sqrt() + 1e-8);
  }
};

}  // namespace

VectorXd Params::c() const {
  VectorXd out(ph.size());
  for (Eigen::Index i = 0; i < ph.size(); ++i) out(i) = mask(i) * softplus(ph(i));
  return out;
}

CostSensitivity cost_sensitivity(const Cmdp& m, const MatrixXd& pi, const VectorXd& c, double lam, double alpha) {
  const PolicyEval eval(m, pi);
  const VectorXd& occ = eval.occupancy();
  const VectorXd Vc = eval.values(c);
  MatrixXd gQ(m.S, m.A);
  VectorXd y = VectorXd::Zero(m.S);
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a) {
      double Qc = c(s);
      for (const auto& t : m.next(s, a)) Qc += m.gamma * t.p * Vc(t.next);
      gQ(s, a) = occ(s) * pi(s, a) * (Qc - Vc(s)) / alpha;
      for (const auto& t : m.next(s, a)) y(t.next) += m.gamma * t.p * gQ(s, a);
    }
  CostSensitivity out;
  out.dr = gQ.rowwise().sum() + eval.adjoint(y);
  out.dlam = -c.dot(out.dr);
  out.dc = occ - lam * out.dr;
  return out;
}

HyperGradient hypergradient(const Cmdp& m, const Params& x, const MatrixXd& pi, double lam,
                            const std::vector<Query>& queries, Coupling coupling, const LabelModel& model, double alpha,
                            bool implicit) {
  const VectorXd c = x.c();
  const Likelihood L = likelihood(queries, x.r(), c, lam, coupling, model);
  VectorXd slope(x.ph.size());  // d c / d ph
  for (Eigen::Index i = 0; i < x.ph.size(); ++i) slope(i) = x.mask(i) * sigmoid(x.ph(i));
  HyperGradient out;
  out.F = L.F;
  out.dlam_dF = L.dlam;
  out.dth = L.dr.cwiseProduct(x.mask);
  out.dph = L.dc.cwiseProduct(slope);
  if (implicit && coupling == Coupling::Lagrangian && lam > 0) {
    const CostSensitivity cs = cost_sensitivity(m, pi, c, lam, alpha);
    if (std::abs(cs.dlam) > 1e-300) {
      out.active = true;
      out.dth -= (L.dlam / cs.dlam) * cs.dr.cwiseProduct(x.mask);
      out.dph -= (L.dlam / cs.dlam) * cs.dc.cwiseProduct(slope);
    }
  }
  return out;
}

double oracle_return(const Grid& g, double d) {
  if (d == g.budget) return g.expert.Jr;
  return solve_occupancy_lp(g.m, std::max(d, g.least_cost)).Jr;
}

Deployment deploy(const Grid& g, const Params& x, double d, double alpha, bool constrained) {
  const Cmdp& m = g.m;
  MatrixXd pi;
  Deployment out;
  if (constrained) {
    const LowerSolution sol = solve_lower(m, x.r(), x.c(), d, alpha, 1e-9);
    pi = sol.pi;
    out.lam = sol.lam;
  } else {
    pi = soft_policy(solve_soft_q(m, x.r(), alpha, 1e-10), alpha);
  }
  const PolicyEval eval(m, pi);
  out.ret = eval.value(m.r);
  out.cost = eval.value(m.c);
  out.violation = std::max(0.0, out.cost - d);
  out.normalized_return = (out.ret - g.random_return) / (oracle_return(g, d) - g.random_return);
  return out;
}

namespace {

// The inner loop: N steps of (2)-(4), or the exact solve when N = 0.
void inner_loop(const Cmdp& m, const Params& x, const LearnerConfig& cfg, bool constrained, double d, MatrixXd& Q,
                MatrixXd& pi, double& lam) {
  const VectorXd r = x.r(), c = constrained ? x.c() : VectorXd::Zero(m.S);
  if (cfg.inner_steps == 0) {
    LowerSolution warm;
    warm.Q = Q, warm.lam = lam;
    const LowerSolution sol = solve_lower(m, r, c, constrained ? d : 0.0, cfg.alpha, 1e-10, &warm);
    Q = sol.Q, pi = sol.pi, lam = sol.lam;
    return;
  }
  for (int n = 0; n < cfg.inner_steps; ++n) {
    Q = soft_backup(m, r - lam * c, Q, cfg.alpha);
    pi = soft_policy(Q, cfg.alpha);
    if (constrained) lam = std::max(0.0, lam + cfg.lam_lr * (PolicyEval(m, pi).value(c) - d));
  }
}

Coupling coupling_of(Mode mode) {
  return mode == Mode::Bilevel ? Coupling::Lagrangian : mode == Mode::Unconstrained ? Coupling::RewardOnly
                                                                                    : Coupling::Reward;
}

}  // namespace

LearnerResult train(const Grid& g, const LearnerConfig& cfg, std::uint64_t seed, const StepLog& step_log) {
  const Cmdp& m = g.m;
  const double d = cfg.budget_scale * g.budget;
  const Coupling coupling = coupling_of(cfg.mode);
  const bool constrained = cfg.mode != Mode::Unconstrained;
  Params x;
  x.mask = VectorXd::Ones(m.S);
  x.mask(g.absorbing()) = 0;
  x.th = VectorXd::Zero(m.S);
  x.ph = VectorXd::Constant(m.S, -4.0);  // c = softplus(-4) = 0.018: every cell starts nearly free
  auto rng = nexp::Random::stream(seed, "queries");
  auto held_rng = nexp::Random::stream(seed, "heldout");
  const MatrixXd& expert = g.expert.pi;
  LabelModel held_labels = cfg.labels;
  held_labels.soft = true, held_labels.noise_free = false;
  const std::vector<Query> heldout = sample_queries(m, {{&expert, 1}, {nullptr, 1}}, cfg.heldout, g.horizon,
                                                    cfg.segment_min, cfg.segment_max, g.expert_lam, held_labels, held_rng);
  MatrixXd Q = MatrixXd::Zero(m.S, m.A), pi = MatrixXd::Constant(m.S, m.A, 1.0 / m.A);
  double lam = 0, sq_sum = 0;
  std::vector<Query> offline;
  if (cfg.mode == Mode::TwoStage)
    offline = sample_queries(m, {{&expert, 1}, {nullptr, 1}}, cfg.outer_steps * cfg.queries_per_step, g.horizon,
                             cfg.segment_min, cfg.segment_max, g.expert_lam, cfg.labels, rng);
  Adam adam_th, adam_ph;
  const int every = std::max(1, cfg.outer_steps / 20);
  for (int k = 0; k < cfg.outer_steps; ++k) {
    std::vector<Query> fresh;
    if (cfg.mode != Mode::TwoStage) {
      inner_loop(m, x, cfg, constrained, d, Q, pi, lam);
      fresh = sample_queries(m, {{&pi, cfg.mix_learner}, {&expert, cfg.mix_expert}, {nullptr, cfg.mix_random}},
                             cfg.queries_per_step, g.horizon, cfg.segment_min, cfg.segment_max, g.expert_lam,
                             cfg.labels, rng);
    }
    const auto& batch = cfg.mode == Mode::TwoStage ? offline : fresh;
    const bool implicit = cfg.implicit && cfg.mode == Mode::Bilevel;
    const HyperGradient hg = hypergradient(m, x, pi, lam, batch, coupling, cfg.labels, cfg.alpha, implicit);
    if (cfg.track_heldout_gradient) {
      const HyperGradient h = hypergradient(m, x, pi, lam, heldout, coupling, cfg.labels, cfg.alpha, implicit);
      sq_sum += h.dth.squaredNorm() + h.dph.squaredNorm();
    }
    if (cfg.adam) {
      adam_th.step(x.th, hg.dth, cfg.lr);
      adam_ph.step(x.ph, hg.dph, cfg.lr);
    } else {
      x.th -= cfg.lr * hg.dth;
      x.ph -= cfg.lr * hg.dph;
    }
    if (step_log && ((k + 1) % every == 0 || k + 1 == cfg.outer_steps))
      step_log(k + 1, {{"upper_loss", hg.F}, {"lam", lam}, {"hypergrad_sq", hg.dth.squaredNorm() + hg.dph.squaredNorm()}});
  }
  LearnerResult out;
  out.x = x;
  const Deployment dep = deploy(g, x, d, cfg.alpha, constrained);
  out.normalized_return = dep.normalized_return, out.ret = dep.ret, out.cost = dep.cost;
  out.violation = dep.violation, out.lam = dep.lam, out.budget = d;
  LabelModel truth = cfg.labels;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.pref_accuracy_better = better_accuracy(heldout, m.r, m.c, g.expert_lam, truth.utility, x.r(), x.c(),
                                             coupling == Coupling::Lagrangian ? dep.lam : 0.0);
  out.pref_accuracy_safer = coupling == Coupling::RewardOnly ? nan : safer_accuracy(heldout, m.c, x.c());
  std::vector<double> scores;
  for (int s = 0; s < g.rows * g.cols; ++s)
    if (g.cells[s] != '#') scores.push_back(x.c()(s));
  out.cost_auc = coupling == Coupling::RewardOnly ? nan : nexp::stats::roc_auc(scores, g.hazard_labels());
  out.queries = cfg.outer_steps * cfg.queries_per_step;
  out.hypergrad_sq_avg = cfg.track_heldout_gradient ? sq_sum / cfg.outer_steps : nan;
  return out;
}

}  // namespace cb_pbrl
