#include "policies.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace drwatson {

namespace {

std::vector<int> concat(std::vector<int> a, const std::vector<int>& b) {
  for (int x : b)
    if (std::find(a.begin(), a.end(), x) == a.end()) a.push_back(x);
  return a;
}

const ActionSpec& action_of(const FleetSpec& f, int a) { return f.actions[static_cast<std::size_t>(a)]; }

}  // namespace

// ---------------------------------------------------------------- incumbent

IncumbentPolicy::IncumbentPolicy(const FleetSpec& fleet) : fleet_(&fleet), vocab_(fleet) {}

std::pair<int, int> IncumbentPolicy::match(const Observation& obs) const {
  const PlatformSpec& platform = fleet_->platforms[static_cast<std::size_t>(obs.platform)];
  for (std::size_t r = 0; r < platform.rules.size(); ++r) {
    const RuleSpec& rule = platform.rules[r];
    const std::int64_t raw = vocab_.find_raw(rule.raw);
    int best = kNoIndex;
    double first = std::numeric_limits<double>::infinity();
    for (std::size_t n = 0; n < obs.candidates.size(); ++n)
      for (const auto& e : obs.candidates[n].events)
        if (vocab_.raw_of(obs.platform, e.kind) == raw && e.value >= rule.above && e.minutes < first)
          first = e.minutes, best = static_cast<int>(n);
    if (best != kNoIndex) return {best, static_cast<int>(r)};
  }
  return {kNoIndex, kNoIndex};
}

std::vector<int> IncumbentPolicy::fixed_qa(int action) const {
  if (action == kNoIndex || !action_of(*fleet_, action).pulls_node()) return {};
  std::vector<int> plan = concat(fleet_->qa_minimum, fleet_->incumbent.qa);
  if (action_of(*fleet_, action).level >= 4) plan = concat(plan, fleet_->incumbent.qa_after_part);
  return plan;
}

Decision IncumbentPolicy::decide(const Observation& obs, const SweepResult& sweep, const Truth*) const {
  Decision d;
  d.cause = fleet_->incumbent.restart_cause;
  auto pull = [&](int node, int action, int cause) {
    d.cause = cause;
    d.suspect = node;
    const NodeView& v = obs.candidates[static_cast<std::size_t>(node)];
    // Repeat offenders go to a person, whatever the symptom.
    if (v.recent_incidents >= fleet_->incumbent.repeat_incidents) action = fleet_->manual_action();
    if (!action_of(*fleet_, action).pulls_node()) return;
    d.node = node;
    d.action = action;
    d.qa = fixed_qa(action);
  };
  // Restarting: unless the node that reported the most is a repeat offender.
  auto restart = [&] {
    const int s = suspect(*fleet_, obs);
    if (s != kNoIndex && obs.candidates[static_cast<std::size_t>(s)].recent_incidents >= fleet_->incumbent.repeat_incidents)
      pull(s, fleet_->manual_action(), fleet_->incumbent.restart_cause);
    if (!fleet_->causes[static_cast<std::size_t>(d.cause)].node_fault) d.suspect = kNoIndex;
  };
  if (sweep.done) {
    if (sweep.flagged != kNoIndex) pull(sweep.flagged, fleet_->incumbent.after_sweep, fleet_->incumbent.after_sweep_cause);
    else restart();
    return d;
  }
  auto [node, rule] = match(obs);
  if (rule == kNoIndex) {  // nothing node-specific and no collective symptom
    restart();
    return d;
  }
  const RuleSpec& r = fleet_->platforms[static_cast<std::size_t>(obs.platform)].rules[static_cast<std::size_t>(rule)];
  if (r.sweep) {
    d.sweep = true;
    return d;
  }
  pull(node, r.action, r.cause);
  return d;
}

Step IncumbentPolicy::escalate(const RepairState& state, const Truth*) const {
  const int last = state.actions.back();
  const int level = action_of(*fleet_, last).level;
  Step s;
  s.action = fleet_->manual_action();
  if (static_cast<int>(state.actions.size()) < fleet_->incumbent.max_attempts) {
    // The runbook of the diagnosed cause (its known repairs, cheapest first), then the generic ladder.
    std::vector<int> runbook;
    if (state.diagnosis != kNoIndex)
      for (const auto& f : fleet_->causes[static_cast<std::size_t>(state.diagnosis)].fixes) runbook.push_back(f.action);
    std::sort(runbook.begin(), runbook.end(), [&](int a, int b) { return action_of(*fleet_, a).level < action_of(*fleet_, b).level; });
    if (level < 4) runbook = concat(runbook, fleet_->incumbent.ladder);
    for (int a : runbook)
      if (action_of(*fleet_, a).level > level) {
        s.action = a;
        break;
      }
  }
  s.qa = fixed_qa(s.action);
  return s;
}

// ---------------------------------------------------------------- oracle

Decision OraclePolicy::decide(const Observation&, const SweepResult&, const Truth* truth) const {
  Decision d;
  d.cause = truth->cause;
  const CauseSpec& c = fleet_->causes[static_cast<std::size_t>(truth->cause)];
  if (!c.node_fault) return d;
  d.suspect = d.node = truth->culprit;
  d.action = c.fixes[static_cast<std::size_t>(truth->fix)].action;
  return d;
}

Step OraclePolicy::escalate(const RepairState& state, const Truth* truth) const {
  // The minimal repair did not take (p_fix < 1): try it once more, then a person.
  Step s;
  const CauseSpec& c = fleet_->causes[static_cast<std::size_t>(truth->cause)];
  s.action = state.actions.size() < 2 ? c.fixes[static_cast<std::size_t>(truth->fix)].action : fleet_->manual_action();
  return s;
}

// ---------------------------------------------------------------- cost model

CostModel::CostModel(const FleetSpec& fleet, CostParameters params)
    : fleet_(&fleet), params_(std::move(params)), classes_(fleet) {
  const double minimum = minutes(fleet.qa_minimum);
  for (const auto& e : classes_.entries)
    proper_.push_back(e.cause == kNoIndex || !fleet.causes[static_cast<std::size_t>(e.cause)].node_fault
                          ? 0.0
                          : action_of(fleet, e.action).minutes + minimum);
  stall_ = fleet.job.nodes * (fleet.job.restart_minutes + fleet.job.host_select_minutes + fleet.job.checkpoint_minutes / 2.0);
}

bool CostModel::node_fault(int k) const {
  const auto& e = classes_.entries[static_cast<std::size_t>(k)];
  return e.cause != kNoIndex && fleet_->causes[static_cast<std::size_t>(e.cause)].node_fault;
}

double CostModel::fix(int action, int k) const {
  if (!node_fault(k)) return 1.0;
  return params_.fix[static_cast<std::size_t>(action)][static_cast<std::size_t>(k)];
}

double CostModel::test_fails(int t, int k) const {
  const auto test = static_cast<std::size_t>(t);
  if (!node_fault(k)) return params_.false_alarm[test];
  return params_.detect[test][static_cast<std::size_t>(classes_.entries[static_cast<std::size_t>(k)].cause)];
}

double CostModel::sweep_find(int k) const {
  const int cause = classes_.entries[static_cast<std::size_t>(k)].cause;
  return cause == kNoIndex ? 0.0 : params_.sweep_find[static_cast<std::size_t>(cause)];
}

double CostModel::detect(const std::vector<int>& plan, int k) const {
  double pass = 1.0;
  for (int t : plan) pass *= 1.0 - test_fails(t, k);
  return 1.0 - pass;
}

double CostModel::minutes(const std::vector<int>& plan) const {
  double m = 0;
  for (int t : plan) m += fleet_->tests[static_cast<std::size_t>(t)].minutes;
  return m;
}

double CostModel::leave(int k) const {
  const auto& e = classes_.entries[static_cast<std::size_t>(k)];
  if (e.cause == kNoIndex || !fleet_->causes[static_cast<std::size_t>(e.cause)].node_fault) return 0.0;
  return stall_ + proper_[static_cast<std::size_t>(k)];
}

double CostModel::residual(int action, const std::vector<int>& plan, int k) const {
  const double det = detect(plan, k);
  const auto& e = classes_.entries[static_cast<std::size_t>(k)];
  if (e.cause == kNoIndex || !fleet_->causes[static_cast<std::size_t>(e.cause)].node_fault)
    return det * minutes(plan);  // a false alarm costs another round of QA
  const double f = fix(action, k);
  return (1.0 - f) * (det * proper_[static_cast<std::size_t>(k)] + (1.0 - det) * leave(k));
}

std::vector<int> CostModel::plan_qa(int action, const std::vector<double>& p, double target) const {
  std::vector<int> plan = fleet_->qa_minimum;
  // Per class: the probability it is there and survived the action; each test multiplies by (1 - det).
  std::vector<double> alive(p.size(), 0.0);
  for (std::size_t k = 0; k < p.size(); ++k) {
    const auto& e = classes_.entries[k];
    if (e.cause == kNoIndex || !fleet_->causes[static_cast<std::size_t>(e.cause)].node_fault) continue;
    alive[k] = p[k] * (1.0 - fix(action, static_cast<int>(k)));
  }
  auto survive = [&](int t, std::size_t k) { return 1.0 - test_fails(t, static_cast<int>(k)); };
  for (int t : plan)
    for (std::size_t k = 0; k < p.size(); ++k)
      if (alive[k] > 0) alive[k] *= survive(t, k);
  double risk = std::accumulate(alive.begin(), alive.end(), 0.0);
  while (risk > target) {
    int best = kNoIndex;
    double best_rate = 0, best_risk = risk;
    for (std::size_t t = 0; t < fleet_->tests.size(); ++t) {
      if (std::find(plan.begin(), plan.end(), static_cast<int>(t)) != plan.end()) continue;
      double r = 0;
      for (std::size_t k = 0; k < p.size(); ++k)
        if (alive[k] > 0) r += alive[k] * survive(static_cast<int>(t), k);
      const double rate = (risk - r) / std::max(fleet_->tests[t].minutes, 1e-3);
      if (rate > best_rate) best_rate = rate, best = static_cast<int>(t), best_risk = r;
    }
    if (best == kNoIndex) break;  // no test can see what is left
    plan.push_back(best);
    for (std::size_t k = 0; k < p.size(); ++k)
      if (alive[k] > 0) alive[k] *= survive(best, k);
    risk = best_risk;
  }
  return plan;
}

// ---------------------------------------------------------------- posterior-driven policies

PosteriorPolicy::PosteriorPolicy(std::string name, const FleetSpec& fleet, std::shared_ptr<const Classifier> classifier,
                                 CostParameters params, DecisionOptions options)
    : name_(std::move(name)), fleet_(&fleet), classifier_(std::move(classifier)), options_(options),
      cost_(fleet, std::move(params)),
      ladder_(fleet) {}

std::vector<std::vector<double>> PosteriorPolicy::joint(const Observation& obs, const SweepResult& sweep) const {
  const auto q = classifier_->posteriors(obs);
  const std::size_t n = q.size(), K = static_cast<std::size_t>(cost_.classes().size());
  // One culprit among the candidates: P(culprit = i) is proportional to the odds that i is not healthy.
  std::vector<double> logit(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double h = std::clamp(q[i][ClassTable::kHealthy], 1e-9, 1.0 - 1e-9);
    logit[i] = std::log1p(-h) - std::log(h);
  }
  const double top = *std::max_element(logit.begin(), logit.end());
  double z = 0;
  for (auto& l : logit) z += (l = std::exp(l - top));
  std::vector<std::vector<double>> J(n, std::vector<double>(K, 0.0));
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double sick = 1.0 - q[i][ClassTable::kHealthy];
    for (std::size_t k = 1; k < K; ++k) {
      double p = (logit[i] / z) * (sick > 1e-12 ? q[i][k] / sick : 1.0 / static_cast<double>(K - 1));
      if (sweep.done) {
        const double sf = cost_.sweep_find(static_cast<int>(k));
        p *= sweep.flagged == kNoIndex ? 1.0 - sf : (static_cast<int>(i) == sweep.flagged ? sf : 0.0);
      }
      J[i][k] = p;
      total += p;
    }
  }
  if (total <= 0) {  // the sweep contradicted the model outright: trust the sweep
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 1; k < K; ++k)
        J[i][k] = (sweep.flagged == kNoIndex || static_cast<int>(i) == sweep.flagged) ? 1.0 : 0.0;
    total = 0;
    for (auto& row : J) total += std::accumulate(row.begin(), row.end(), 0.0);
  }
  for (auto& row : J)
    for (auto& p : row) p /= total;
  return J;
}

PosteriorPolicy::Choice PosteriorPolicy::best_repair(const std::vector<double>& p_node, double p_elsewhere_leave,
                                                     const std::vector<int>& exclude) const {
  Choice best;
  best.cost = std::numeric_limits<double>::infinity();
  // The repairs the posterior makes plausible: the minimal fix of every class holding at least
  // `plausible` of the node's fault mass (the most likely class always counts). Repairs no plausible
  // diagnosis calls for, like a person for every doubt, are not on the menu.
  double sick = 0, top = 0;
  for (std::size_t k = 1; k < p_node.size(); ++k) sick += p_node[k], top = std::max(top, p_node[k]);
  std::vector<bool> menu(fleet_->actions.size(), false);
  for (std::size_t k = 1; k < p_node.size(); ++k)
    if (p_node[k] > 0 && (p_node[k] >= options_.plausible * sick || p_node[k] == top))
      menu[static_cast<std::size_t>(cost_.classes().entries[k].action)] = true;
  for (std::size_t a = 0; a < fleet_->actions.size(); ++a) {
    const int action = static_cast<int>(a);
    if (!menu[a] || !fleet_->actions[a].pulls_node()) continue;
    if (std::find(exclude.begin(), exclude.end(), action) != exclude.end()) continue;
    std::vector<int> plan = cost_.plan_qa(action, p_node, options_.residual_risk);
    double c = fleet_->actions[a].minutes + cost_.minutes(plan) + p_elsewhere_leave;
    for (std::size_t k = 1; k < p_node.size(); ++k)
      if (p_node[k] > 0) c += p_node[k] * cost_.residual(action, plan, static_cast<int>(k));
    c += std::max(0.0, 1.0 - sick) * cost_.residual(action, plan, ClassTable::kHealthy);
    if (c < best.cost) best = {c, action, std::move(plan)};
  }
  return best;
}

Decision PosteriorPolicy::decide(const Observation& obs, const SweepResult& sweep, const Truth*) const {
  const auto J = joint(obs, sweep);
  const std::size_t n = J.size(), K = static_cast<std::size_t>(cost_.classes().size());
  Decision d;
  if (!options_.cost_aware) {
    std::size_t bi = 0, bk = 1;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 1; k < K; ++k)
        if (J[i][k] > J[bi][bk]) bi = i, bk = k;
    const int action = cost_.classes().entries[bk].action;
    d.cause = cost_.classes().entries[bk].cause;
    if (!fleet_->actions[static_cast<std::size_t>(action)].pulls_node()) return d;
    d.suspect = static_cast<int>(bi);
    d.node = static_cast<int>(bi);
    d.action = action;
    d.qa = ladder_.fixed_qa(action);
    return d;
  }

  // Expected downtime of the best immediate decision under a joint posterior.
  auto evaluate = [&](const std::vector<std::vector<double>>& P, Decision& out) {
    double leave_all = 0;
    std::vector<double> leave_at(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 1; k < K; ++k) leave_at[i] += P[i][k] * cost_.leave(static_cast<int>(k));
    for (double l : leave_at) leave_all += l;
    double best = leave_all;  // restart the job on the same nodes
    out = Decision{};
    for (std::size_t i = 0; i < n; ++i) {
      Choice c = best_repair(P[i], leave_all - leave_at[i], {});
      if (c.cost < best) {
        best = c.cost;
        out = Decision{};
        out.node = static_cast<int>(i);
        out.action = c.action;
        out.qa = c.qa;
      }
    }
    return best;
  };
  const double now = evaluate(J, d);
  // The diagnosis: the most probable (node, class); a cause that lives on no node blames none.
  auto diagnose = [&](Decision& out) {
    double best = -1;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 1; k < K; ++k)
        if (J[i][k] > best) best = J[i][k], out.cause = cost_.classes().entries[k].cause, out.suspect = static_cast<int>(i);
    if (!fleet_->causes[static_cast<std::size_t>(out.cause)].node_fault) out.suspect = kNoIndex;
  };
  diagnose(d);
  if (sweep.done || fleet_->job.sweep_minutes <= 0) return d;

  // Value of a triage sweep: it points at the culprit with probability sweep_find(cause).
  double with_sweep = cost_.job_wait(fleet_->job.sweep_minutes);
  std::vector<std::vector<double>> none = J;
  double p_none = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> flagged(K, 0.0);
    double p_flag = 0;
    for (std::size_t k = 1; k < K; ++k) {
      const double sf = cost_.sweep_find(static_cast<int>(k));
      flagged[k] = J[i][k] * sf;
      p_flag += flagged[k];
      none[i][k] = J[i][k] * (1.0 - sf);
      p_none += none[i][k];
    }
    if (p_flag <= 0) continue;
    double leave = 0;  // restarting although the sweep pointed at node i
    for (std::size_t k = 1; k < K; ++k) leave += (flagged[k] /= p_flag) * cost_.leave(static_cast<int>(k));
    with_sweep += p_flag * std::min(best_repair(flagged, 0.0, {}).cost, leave);
  }
  if (p_none > 0) {
    for (auto& row : none)
      for (auto& p : row) p /= p_none;
    Decision ignored;
    with_sweep += p_none * evaluate(none, ignored);
  }
  if (with_sweep < now) {
    d = Decision{};
    d.sweep = true;
    diagnose(d);
  }
  return d;
}

Decision PosteriorPolicy::decide_single(const std::vector<double>& q, double pull_overhead) const {
  Decision d;
  const std::size_t K = q.size();
  double leave = 0, best_p = -1;
  for (std::size_t k = 1; k < K; ++k) {
    leave += q[k] * cost_.leave(static_cast<int>(k));
    if (q[k] > best_p) best_p = q[k], d.cause = cost_.classes().entries[k].cause;
  }
  if (q[ClassTable::kHealthy] >= best_p) d.cause = kNoIndex;
  if (d.cause != kNoIndex && fleet_->causes[static_cast<std::size_t>(d.cause)].node_fault) d.suspect = 0;
  std::vector<double> sick = q;
  sick[ClassTable::kHealthy] = 0;
  Choice c = best_repair(sick, 0.0, {});
  if (c.cost + pull_overhead < leave) d.node = 0, d.action = c.action, d.qa = c.qa;
  return d;
}

Step PosteriorPolicy::escalate(const RepairState& state, const Truth*) const {
  Step s;
  const int attempts = static_cast<int>(state.actions.size());
  const auto J = joint(*state.obs, state.sweep);
  const auto& row = J[static_cast<std::size_t>(state.node)];
  const std::size_t K = row.size();
  if (!options_.cost_aware) {
    // The next most likely class at this node whose repair has not been tried; then a person.
    s.action = fleet_->manual_action();
    if (attempts < options_.max_attempts) {
      std::vector<std::size_t> order(K - 1);
      std::iota(order.begin(), order.end(), 1);
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
      for (std::size_t k : order) {
        const int a = cost_.classes().entries[k].action;
        if (fleet_->actions[static_cast<std::size_t>(a)].pulls_node() &&
            std::find(state.actions.begin(), state.actions.end(), a) == state.actions.end()) {
          s.action = a;
          break;
        }
      }
    }
    s.qa = ladder_.fixed_qa(s.action);
    return s;
  }

  // Bayesian update on the repair history: each class is either still faulty or was fixed by one of
  // the actions; the QA outcomes (pass up to the failing test, then fail) weigh both states.
  std::vector<double> faulty(K, 0.0), fixed(K, 0.0);
  double sum = 0;
  for (std::size_t k = 1; k < K; ++k) sum += row[k];
  for (std::size_t k = 1; k < K; ++k) faulty[k] = row[k];
  fixed[0] = std::max(0.0, 1.0 - sum);  // the node was not the culprit at all
  for (std::size_t r = 0; r < state.actions.size(); ++r) {
    const auto& plan = state.plans[r];
    const int failed = state.failed_test[r];
    for (std::size_t k = 0; k < K; ++k) {
      const double f = k == 0 ? 0.0 : cost_.fix(state.actions[r], static_cast<int>(k));
      fixed[k] += faulty[k] * f;
      faulty[k] *= 1.0 - f;
      double like_faulty = 1, like_fixed = 1;
      for (int t : plan) {
        const double det = cost_.test_fails(t, static_cast<int>(k));
        const double alarm = cost_.test_fails(t, ClassTable::kHealthy);
        if (t == failed) {
          like_faulty *= det, like_fixed *= alarm;
          break;
        }
        like_faulty *= 1.0 - det, like_fixed *= 1.0 - alarm;
      }
      faulty[k] *= like_faulty;
      fixed[k] *= like_fixed;
    }
  }
  double z = 0;
  for (std::size_t k = 0; k < K; ++k) z += faulty[k] + fixed[k];
  std::vector<double> p(K, 0.0);
  double healthy = 0;
  for (std::size_t k = 0; k < K; ++k) {
    p[k] = z > 0 ? faulty[k] / z : 0.0;
    healthy += z > 0 ? fixed[k] / z : 0.0;
  }
  p[0] = healthy;
  if (attempts >= options_.max_attempts) {
    s.action = fleet_->manual_action();
    s.qa = cost_.plan_qa(s.action, p, options_.residual_risk);
    return s;
  }
  Choice c = best_repair(p, 0.0, state.actions);
  if (c.action == kNoIndex) c.action = fleet_->manual_action(), c.qa = cost_.plan_qa(c.action, p, options_.residual_risk);
  s.action = c.action;
  s.qa = c.qa;
  return s;
}

}  // namespace drwatson
