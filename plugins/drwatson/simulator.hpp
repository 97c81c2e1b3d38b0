#pragma once
// The discrete-event fleet simulator.
//
// One large synchronous job runs on job.nodes nodes with job.spares spares. Nodes age only while the
// job runs; each fails at its own rate (lemons several times as often) with root causes drawn from the
// platform's mix. Any failure stops the whole job: it loses the work since its last checkpoint, waits
// for the restart (and a triage sweep, and a spare when none is left), and a diagnosis policy decides
// which node to pull and how to repair it. The pulled node goes through repair actions and QA tests,
// escalating while QA fails; it returns to the spare pool when QA passes, with its fault fixed or
// not. A fault left in service (wrong node, wrong action, QA miss, or no pull) strikes again.
//
// All draws come from counter-based streams keyed by what they are for (rng.hpp), so policies run
// with the same seed share their random numbers (common random numbers).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "estimate.hpp"
#include "fleet.hpp"
#include "incidents.hpp"
#include "policies.hpp"

namespace drwatson {

// What one simulated fleet-run measured. Times in hours.
struct ReplicaMetrics {
  double downtime = 0;       // production downtime, node-hours: job.nodes x job_downtime + node_downtime
  double job_downtime = 0;   // job standing still or redoing lost work
  double node_downtime = 0;  // pulled nodes out of service (repair, QA, escalation, manual repair)
  double qa_time = 0;        // node-hours of QA tests
  double ettr = 0;           // effective training time ratio of the job
  double interruptions = 0;
  double first_faults = 0;   // interruptions by a fault's first manifestation
  double recurrences = 0;    // interruptions by a fault left unfixed
  double correct = 0;        // diagnoses that name the right node and the right root cause
  double fixed_first = 0;    // first decisions whose repair fixes the fault (right node, covering action)
  double pulls = 0;
  double healthy_pulls = 0;  // pulled nodes that had nothing wrong
  double escapes = 0;        // pulled nodes that went back into service with a fault (QA missed it)
  double manual_repairs = 0;
  double sweeps = 0;
  double spare_wait = 0;     // hours the job waited for a spare
  double accuracy() const { return interruptions > 0 ? correct / interruptions : 0; }
  double fix_rate() const { return interruptions > 0 ? fixed_first / interruptions : 0; }
  double repeat_rate() const { return interruptions > 0 ? recurrences / interruptions : 0; }
  double mttr() const { return pulls > 0 ? node_downtime / pulls : 0; }
  double escape_rate() const { return pulls > 0 ? escapes / pulls : 0; }
  std::map<std::string, double> as_map() const;
};

// One interruption as the simulator saw it (for tests and the run's artifacts).
struct IncidentRecord {
  double day = 0;
  int node = kNoIndex, cause = kNoIndex, fix = kNoIndex, occurrence = 0;
  bool lemon = false;
  int pulled = kNoIndex, action = kNoIndex;
  bool sweep = false, correct = false;
};

struct SimOptions {
  int platform = 0;
  std::uint64_t seed = 0;
  double horizon_days = -1;  // < 0: the fleet file's
  std::vector<IncidentRecord>* log = nullptr;
  RepairHistory* history = nullptr;  // when set, the tickets of every repair, QA run and sweep
};

ReplicaMetrics simulate(const FleetSpec& fleet, const Policy& policy, const SimOptions& options);

// The per-node first-fault rate of a platform (per minute), normal and lemon.
std::pair<double, double> node_rates(const FleetSpec& fleet, int platform);

}  // namespace drwatson
