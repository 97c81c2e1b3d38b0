#pragma once
// What the decision layer plans with, estimated from a training period of the fleet instead of read
// from the fleet file.
//
// The fleet file holds two kinds of facts. The layout and the operator's own procedures (the job,
// the action ladder and its durations, the QA tests and their durations, the taxonomy of causes and
// minimal repairs, the incumbent's rules) are what any operator knows. The parameters of the fault
// process (how often an action fixes a fault, how often a test catches one or fails a healthy node,
// how often a triage sweep finds the culprit, symptom and recurrence probabilities) are what the
// simulator draws outcomes from; a deployed system has to learn them from its repair history.
//
//   public_view(fleet)        the fleet with every fault-process parameter set to NaN: what the
//                             policies (incumbent, logistic, DrWatson) are given
//   training_period(...)      the incumbent on the fleet for `days`, recording its repair tickets
//   estimate_parameters(...)  per (action, class) repair success, per (test, cause) detection, per
//                             test false alarm and per cause sweep yield, each a Beta(1, 1) posterior
//                             mean from the tickets' counts, with the counts kept for intervals
//   oracle_parameters(fleet)  the simulator's true values, for the named oracle arm only
#include <cstdint>
#include <string>
#include <vector>

#include "fleet.hpp"

namespace drwatson {

// What a fleet's repair tickets record, resolved after the fact (the root cause and minimal repair
// found in the end label every pulled node, as they label the fine-tuning incidents): per repair
// round, the node's fault and whether the round's action removed it; per QA test run, the fault
// (kNoIndex: healthy) and the outcome; per triage sweep, the cause and whether it pointed at the
// faulty node. This is the training period the decision layer estimates its cost model from
// (estimate.hpp); nothing else of the simulator's parameters reaches a policy.
struct RepairHistory {
  struct Round {
    int cause = kNoIndex, fix = kNoIndex;  // the node's fault before the round; cause kNoIndex: healthy
    int action = kNoIndex;
    bool fixed = false;                    // the round removed the fault
  };
  struct TestRun {
    int test = kNoIndex, cause = kNoIndex;  // cause kNoIndex: the node was healthy
    bool failed = false;
  };
  struct Sweep {
    int cause = kNoIndex;
    bool found = false;  // it pointed at the faulty node
  };
  std::vector<Round> rounds;
  std::vector<TestRun> tests;
  std::vector<Sweep> sweeps;
  // Each pulled node also runs the whole test battery once before its repair (a qualification
  // campaign), so that tests the incumbent's suite never runs are measured too. Not counted as QA time.
  bool battery = true;
  void append(const RepairHistory& other);
};

// Successes out of trials, and their Beta(1 + hits, 1 + trials - hits) posterior: a uniform prior,
// so an event never observed is planned with probability 1/2 and its interval spans most of [0, 1].
struct Count {
  double hits = 0, trials = 0;
  double mean() const { return (hits + 1.0) / (trials + 2.0); }
  // The posterior's equal-tailed interval (nexp::stats::beta_quantile).
  std::pair<double, double> interval(double level = 0.95) const;
};

// The cost model's probabilities, one number each; counts are empty for the oracle's parameters.
struct CostParameters {
  std::vector<std::vector<double>> fix;     // [action][class]: P(the action removes a fault of the class)
  std::vector<std::vector<double>> detect;  // [test][cause]: P(the test fails on a node with that fault)
  std::vector<double> false_alarm;          // [test]: P(it fails on a healthy node)
  std::vector<double> sweep_find;           // [cause]: P(a triage sweep points at the faulty node)
  // The evidence behind each number (same shapes), when estimated.
  std::vector<std::vector<Count>> fix_counts, detect_counts;
  std::vector<Count> false_alarm_counts, sweep_counts;
  std::string source;       // "oracle" or "estimated from N days"
  double days = 0;          // length of the training period (0 for the oracle)
  std::int64_t incidents = 0;  // labelled interruptions in it
};

// The fleet as an operator knows it: layout, durations, taxonomy and rules kept; p_fix, detect,
// false_alarm, sweep_find, recur_per_day, symptom probabilities and repair shares set to NaN.
FleetSpec public_view(const FleetSpec& fleet);

// The incumbent on `platform` for `days`, in fleets of the fleet file's horizon (the last one shorter)
// seeded from `seed`; returns the tickets and, in `incidents`, the interruptions they cover.
RepairHistory training_period(const FleetSpec& fleet, int platform, std::uint64_t seed, double days,
                              std::int64_t* incidents = nullptr);

// Counts and posterior means from a repair history. `layout` is only read for its shape (actions,
// tests, causes, classes): public_view(fleet) will do.
CostParameters estimate_parameters(const FleetSpec& layout, const RepairHistory& history);

// The simulator's own values (the named oracle only, and tests).
CostParameters oracle_parameters(const FleetSpec& fleet);

}  // namespace drwatson
