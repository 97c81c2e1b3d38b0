#pragma once
// Diagnosis policies, behind one interface: given an interruption, which node to pull, which repair
// to apply, and which QA tests must pass before the node returns; after a QA failure, what next.
//
//   IncumbentPolicy   rule-based: a per-platform catalog of raw codes (NVIDIA's Xid catalog style)
//                     and counter thresholds in priority order, a triage sweep when no node-specific
//                     evidence exists, a fixed QA suite and a fixed escalation ladder.
//   PosteriorPolicy   driven by a Classifier's per-node posterior over (cause, minimal fix):
//                     with the decision layer (DrWatson): expected-downtime minimisation over pull /
//                     restart / sweep and over actions, QA planned to a residual-risk target, Bayesian
//                     escalation; without it: argmax class, the incumbent's QA suite and ladder.
//   OraclePolicy      knows the culprit, the cause and the minimal fix; needs no QA.
//
// Only the oracle is handed the simulator's truth. The others get the fleet's public view
// (estimate.hpp: no fault-process parameter in it) and, where they plan, the CostParameters
// estimated from a training period.
#include <memory>
#include <string>
#include <vector>

#include "estimate.hpp"
#include "fleet.hpp"
#include "incidents.hpp"

namespace drwatson {

struct SweepResult {
  bool done = false;
  int flagged = kNoIndex;  // candidate index the sweep points at, kNoIndex when it found nothing
};

struct Decision {
  bool sweep = false;      // run a triage sweep (job waits) and decide again with its result
  int node = kNoIndex;     // candidate to pull; kNoIndex: restart the job on the same nodes
  int action = kNoIndex;   // the repair for the pulled node
  std::vector<int> qa;     // tests that must pass before it returns
  // The diagnosis, which the action need not follow (a cost-aware policy may hedge): the candidate
  // the policy blames (kNoIndex: none, e.g. a software fault) and the root cause it names.
  int suspect = kNoIndex;
  int cause = kNoIndex;
};

// What a policy knows about a pulled node while it is in repair.
struct RepairState {
  const Observation* obs = nullptr;
  SweepResult sweep;                     // the triage sweep's result at decision time
  int node = kNoIndex;                   // candidate index
  int diagnosis = kNoIndex;              // the cause the decision named
  std::vector<int> actions;              // applied so far, in order
  std::vector<std::vector<int>> plans;   // the QA plan run after each
  std::vector<int> failed_test;          // the test that failed after each (QA stops at the first failure)
};

struct Step {
  int action = kNoIndex;
  std::vector<int> qa;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // The oracle: the simulator hands it the truth, and tells it whether a repair worked (no QA).
  virtual bool omniscient() const { return false; }
  virtual Decision decide(const Observation& obs, const SweepResult& sweep, const Truth* truth) const = 0;
  virtual Step escalate(const RepairState& state, const Truth* truth) const = 0;
};

// Per-candidate posterior over the ClassTable's classes ([candidates][classes], rows sum to 1).
class Classifier {
 public:
  virtual ~Classifier() = default;
  virtual std::vector<std::vector<double>> posteriors(const Observation& obs) const = 0;
};

class IncumbentPolicy final : public Policy {
 public:
  explicit IncumbentPolicy(const FleetSpec& fleet);
  std::string name() const override { return "incumbent"; }
  Decision decide(const Observation& obs, const SweepResult& sweep, const Truth* truth) const override;
  Step escalate(const RepairState& state, const Truth* truth) const override;

  // The first rule (in priority order) that an observation matches: (candidate, rule index), or
  // (kNoIndex, kNoIndex) when none does. Public for tests and for `diagnose`'s explanation.
  std::pair<int, int> match(const Observation& obs) const;
  std::vector<int> fixed_qa(int action) const;

 private:
  const FleetSpec* fleet_;
  Vocabulary vocab_;
};

class OraclePolicy final : public Policy {
 public:
  explicit OraclePolicy(const FleetSpec& fleet) : fleet_(&fleet) {}
  std::string name() const override { return "oracle"; }
  bool omniscient() const override { return true; }
  Decision decide(const Observation& obs, const SweepResult& sweep, const Truth* truth) const override;
  Step escalate(const RepairState& state, const Truth* truth) const override;

 private:
  const FleetSpec* fleet_;
};

struct DecisionOptions {
  bool cost_aware = true;         // false: argmax class, fixed QA suite, incumbent-style ladder
  double residual_risk = 0.02;    // QA planning target: P(node returns with its fault) per repair
  int max_attempts = 3;           // then a person takes over
  double plausible = 0.05;        // a class with this share of a node's fault mass puts its fix on the menu
};

// The cost model the decision layer minimises: expected production downtime in node-minutes (a
// minute the job stands still costs job.nodes node-minutes; a pulled node costs its own minutes out
// of service). Durations and the taxonomy come from the fleet's layout; every probability from
// `params` (estimated from a training period, or the oracle's). Public so that tests can check it.
class CostModel {
 public:
  CostModel(const FleetSpec& fleet, CostParameters params);
  // P(action fixes a fault of class k) (0 for a class it does not cover; 1 for healthy/software).
  double fix(int action, int k) const;
  // P(the plan fails on a node in class k) (false alarms for healthy).
  double detect(const std::vector<int>& plan, int k) const;
  // P(test t fails on a node in class k): its detection of k's cause, or its false alarm.
  double test_fails(int t, int k) const;
  // P(a triage sweep points at a faulty node of class k).
  double sweep_find(int k) const;
  bool node_fault(int k) const;
  double minutes(const std::vector<int>& plan) const;
  // Leaving class k's fault in service: one more interruption, then its proper repair.
  double leave(int k) const;
  // Node-minutes lost while the whole job waits `minutes` (a triage sweep).
  double job_wait(double minutes) const { return fleet_->job.nodes * minutes; }
  // Expected cost of the repair (a, plan) on a node of class k, beyond the action's and plan's time.
  double residual(int action, const std::vector<int>& plan, int k) const;
  // The cheapest plan (greedy in risk removed per minute, after the mandatory minimum) whose
  // residual risk sum_k p[k] (1 - fix(a,k)) prod_t (1 - det_t(k)) is <= target.
  std::vector<int> plan_qa(int action, const std::vector<double>& p, double target) const;
  const ClassTable& classes() const { return classes_; }
  const FleetSpec& fleet() const { return *fleet_; }
  const CostParameters& parameters() const { return params_; }

 private:
  const FleetSpec* fleet_;
  CostParameters params_;
  ClassTable classes_;
  std::vector<double> proper_;  // per class: node-minutes of its minimal fix plus the minimum QA
  double stall_;                // node-minutes the job loses per interruption
};

class PosteriorPolicy final : public Policy {
 public:
  PosteriorPolicy(std::string name, const FleetSpec& fleet, std::shared_ptr<const Classifier> classifier,
                  CostParameters params, DecisionOptions options);
  std::string name() const override { return name_; }
  Decision decide(const Observation& obs, const SweepResult& sweep, const Truth* truth) const override;
  Step escalate(const RepairState& state, const Truth* truth) const override;

  // One machine on its own (diagnose): q is its posterior over classes, healthy included; no
  // one-culprit assumption, and no sweep. `pull_overhead`: node-minutes that taking it out costs on
  // top of the repair (0 when its job has already stopped; a drain and restart of the job when not).
  Decision decide_single(const std::vector<double>& q, double pull_overhead = 0) const;
  const CostModel& cost_model() const { return cost_; }

  // Joint posterior P(culprit = n, class = k) over candidates x classes, assuming one culprit.
  std::vector<std::vector<double>> joint(const Observation& obs, const SweepResult& sweep) const;

 private:
  struct Choice {
    double cost = 0;
    int action = kNoIndex;
    std::vector<int> qa;
  };
  Choice best_repair(const std::vector<double>& p_node, double p_elsewhere_leave, const std::vector<int>& exclude) const;
  std::string name_;
  const FleetSpec* fleet_;
  std::shared_ptr<const Classifier> classifier_;
  DecisionOptions options_;
  CostModel cost_;
  IncumbentPolicy ladder_;  // the fixed QA suite and ladder used without the decision layer
};

}  // namespace drwatson
