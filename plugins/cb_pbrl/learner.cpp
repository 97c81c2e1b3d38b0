#include "learner.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include <nexp/binary_file.hpp>
#include <nexp/error.hpp>
#include <nexp/stats.hpp>

namespace cb_pbrl {

namespace {

double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

}  // namespace

void Adam::step(VectorXd& x, const VectorXd& g, double lr) {
  if (m.size() != x.size()) m = v = VectorXd::Zero(x.size());
  ++t;
  m = 0.9 * m + 0.1 * g;
  v = 0.999 * v + 0.001 * g.cwiseProduct(g);
  const double c1 = 1 - std::pow(0.9, t), c2 = 1 - std::pow(0.999, t);
  x.array() -= lr * (m.array() / c1) / ((v.array() / c2).sqrt() + 1e-8);
}

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

Trainer::Trainer(const Grid& g, const LearnerConfig& cfg, std::uint64_t seed)
    : g_(g), cfg_(cfg), seed_(seed), d_(cfg.budget_scale * g.budget) {
  const Cmdp& m = g.m;
  x_.mask = VectorXd::Ones(m.S);
  x_.mask(g.absorbing()) = 0;
  x_.th = VectorXd::Zero(m.S);
  x_.ph = VectorXd::Constant(m.S, -4.0);  // c = softplus(-4) = 0.018: every cell starts nearly free
  LabelModel held_labels = cfg.labels;
  held_labels.soft = true, held_labels.noise_free = false;
  auto held_rng = nexp::Random::stream(seed, "heldout");
  heldout_ = sample_queries(m, {{&g.expert.pi, 1}, {nullptr, 1}}, cfg.heldout, g.horizon, cfg.segment_min,
                            cfg.segment_max, g.expert_lam, held_labels, held_rng);
  Q_ = MatrixXd::Zero(m.S, m.A);
  pi_ = MatrixXd::Constant(m.S, m.A, 1.0 / m.A);
  if (cfg.mode == Mode::TwoStage) {
    auto rng = nexp::Random::stream(seed, "offline");
    seen_ = sample_queries(m, {{&g.expert.pi, 1}, {nullptr, 1}}, cfg.outer_steps * cfg.queries_per_step, g.horizon,
                           cfg.segment_min, cfg.segment_max, g.expert_lam, cfg.labels, rng);
  }
}

std::map<std::string, double> Trainer::step() {
  const Cmdp& m = g_.m;
  const Coupling coupling = coupling_of(cfg_.mode);
  const bool constrained = cfg_.mode != Mode::Unconstrained;
  std::vector<Query> fresh;
  if (cfg_.mode != Mode::TwoStage) {
    inner_loop(m, x_, cfg_, constrained, d_, Q_, pi_, lam_);
    auto rng = nexp::Random::stream(seed_, "queries", static_cast<std::uint64_t>(k_));  // resumable: one per step
    fresh = sample_queries(m, {{&pi_, cfg_.mix_learner}, {&g_.expert.pi, cfg_.mix_expert}, {nullptr, cfg_.mix_random}},
                           cfg_.queries_per_step, g_.horizon, cfg_.segment_min, cfg_.segment_max, g_.expert_lam,
                           cfg_.labels, rng);
    if (cfg_.replay) seen_.insert(seen_.end(), fresh.begin(), fresh.end());
  }
  const auto& batch = cfg_.mode == Mode::TwoStage || cfg_.replay ? seen_ : fresh;
  const bool implicit = cfg_.implicit && cfg_.mode == Mode::Bilevel;
  const HyperGradient hg = hypergradient(m, x_, pi_, lam_, batch, coupling, cfg_.labels, cfg_.alpha, implicit);
  if (cfg_.track_heldout_gradient) {
    const HyperGradient h = hypergradient(m, x_, pi_, lam_, heldout_, coupling, cfg_.labels, cfg_.alpha, implicit);
    sq_sum_ += h.dth.squaredNorm() + h.dph.squaredNorm();
  }
  if (cfg_.adam) {
    adam_th_.step(x_.th, hg.dth, cfg_.lr);
    adam_ph_.step(x_.ph, hg.dph, cfg_.lr);
  } else {
    x_.th -= cfg_.lr * hg.dth;
    x_.ph -= cfg_.lr * hg.dph;
  }
  ++k_;
  return {{"upper_loss", hg.F}, {"lam", lam_}, {"hypergrad_sq", hg.dth.squaredNorm() + hg.dph.squaredNorm()}};
}

LearnerResult Trainer::finish() const {
  const Cmdp& m = g_.m;
  const Coupling coupling = coupling_of(cfg_.mode);
  LearnerResult out;
  out.x = x_;
  const Deployment dep = deploy(g_, x_, d_, cfg_.alpha, cfg_.mode != Mode::Unconstrained);
  out.normalized_return = dep.normalized_return, out.ret = dep.ret, out.cost = dep.cost;
  out.violation = dep.violation, out.lam = dep.lam, out.budget = d_;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.pref_accuracy_better = better_accuracy(heldout_, m.r, m.c, g_.expert_lam, cfg_.labels.utility, x_.r(), x_.c(),
                                             coupling == Coupling::Lagrangian ? dep.lam : 0.0);
  out.pref_accuracy_safer = coupling == Coupling::RewardOnly ? nan : safer_accuracy(heldout_, m.c, x_.c());
  std::vector<double> scores;
  for (int s = 0; s < g_.rows * g_.cols; ++s)
    if (g_.cells[s] != '#') scores.push_back(x_.c()(s));
  out.cost_auc = coupling == Coupling::RewardOnly ? nan : nexp::stats::roc_auc(scores, g_.hazard_labels());
  out.queries = static_cast<double>(k_) * cfg_.queries_per_step;
  out.hypergrad_sq_avg = cfg_.track_heldout_gradient && k_ > 0 ? sq_sum_ / k_ : nan;
  return out;
}

// The checkpoint: one binary file of the loop's state (nexp/binary_file.hpp; the held-out set, the
// two-stage offline set and the query streams are functions of the seed and the step, so they are not stored).
namespace {
constexpr std::uint64_t kMagic = 0x6362706272'6c0001ull;  // "cbpbrl", version 1
}  // namespace

void Trainer::save(const std::filesystem::path& file) const {
  nexp::BinaryWriter w(file, kMagic);
  w.u64(static_cast<std::uint64_t>(k_));
  w.f64(lam_), w.f64(sq_sum_);
  w.matrix(x_.th), w.matrix(x_.ph), w.matrix(Q_), w.matrix(pi_);
  for (const Adam* a : {&adam_th_, &adam_ph_}) w.u64(static_cast<std::uint64_t>(a->t)), w.matrix(a->m), w.matrix(a->v);
  const bool stored = cfg_.mode != Mode::TwoStage;  // the offline set is rebuilt from the seed
  w.u64(stored ? seen_.size() : 0);
  if (stored)
    for (const auto& q : seen_) {
      w.matrix(q.n1), w.matrix(q.n2);
      for (double v : {q.better, q.safer, q.unsafe1, q.unsafe2}) w.f64(v);
    }
  w.close();
}

void Trainer::load(const std::filesystem::path& file) {
  nexp::BinaryReader r(file, kMagic, "a cb_pbrl checkpoint (version 1)");
  k_ = static_cast<int>(r.u64());
  lam_ = r.f64(), sq_sum_ = r.f64();
  r.matrix(x_.th), r.matrix(x_.ph), r.matrix(Q_), r.matrix(pi_);
  for (Adam* a : {&adam_th_, &adam_ph_}) {
    a->t = static_cast<int>(r.u64());
    r.matrix(a->m), r.matrix(a->v);
  }
  if (const auto n = r.u64(); n > 0) {  // 0 for two-stage, whose offline set the constructor rebuilt
    if (n > (1u << 24)) throw nexp::DataError(fmt::format("{}: corrupt checkpoint ({} stored queries)", file.string(), n));
    seen_.assign(static_cast<std::size_t>(n), {});
    for (auto& q : seen_) {
      r.matrix(q.n1), r.matrix(q.n2);
      q.better = r.f64(), q.safer = r.f64(), q.unsafe1 = r.f64(), q.unsafe2 = r.f64();
    }
  }
  r.expect_end();
  if (x_.th.size() != g_.m.S || Q_.rows() != g_.m.S)
    throw nexp::DataError(fmt::format("{}: the checkpoint is for a world of {} states, this one has {}", file.string(),
                                      x_.th.size(), g_.m.S));
}

LearnerResult train(const Grid& g, const LearnerConfig& cfg, std::uint64_t seed, const StepLog& step_log) {
  Trainer t(g, cfg, seed);
  const int every = std::max(1, cfg.outer_steps / 20);
  while (t.steps_done() < cfg.outer_steps) {
    const auto values = t.step();
    const int k = t.steps_done();
    if (step_log && (k % every == 0 || k == cfg.outer_steps)) step_log(k, values);
  }
  return t.finish();
}

}  // namespace cb_pbrl
