#pragma once
// What a diagnosis sees of one job interruption, how the simulator generates it from a root cause,
// and how it becomes event tokens.
//
// An interruption stops the synchronous job; every node reports something (collective timeouts echo
// on all ranks), so the diagnosis is handed a few candidate nodes: the one the fault lives on and
// peers. Each candidate carries its own event stream over the last window_hours: the fault's symptoms
// (precursors, the trigger, echoes), benign background events, and gaps where telemetry was lost.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "fleet.hpp"
#include "rng.hpp"

namespace drwatson {

struct Event {
  int kind = kNoIndex;   // symptom kind (index into FleetSpec::kinds)
  int slot = 0;          // device index, or kSlotHost / kSlotNetwork / kSlotJob
  double minutes = 0;    // relative to the interruption; negative = before
  double value = 0;      // magnitude: a count, degrees above nominal, ...; 0 = none
};

struct NodeView {
  int node = kNoIndex;                 // fleet node id (simulator), or kNoIndex for a real machine
  std::vector<Event> events;           // sorted by time
  int recent_incidents = 0;            // incidents on this node in the last 30 days
  double days_since_repair = 1e9;      // since it last came back from a repair
};

struct Observation {
  int platform = 0;
  std::vector<NodeView> candidates;
};

// The truth behind an observation (the simulator's; only the oracle and the labels see it).
struct Truth {
  int culprit = kNoIndex;  // index into Observation::candidates of the node the cause lives on
  int cause = kNoIndex;
  int fix = kNoIndex;      // index into CauseSpec::fixes: the minimal repair
};

// The node-level history the generator needs for each candidate.
struct History {
  int recent_incidents = 0;
  double days_since_repair = 1e9;
};

class IncidentGenerator {
 public:
  IncidentGenerator(const FleetSpec& fleet, int platform);

  // One manifestation of a fault of (cause, fix) on candidate `culprit` (its device `device`), with
  // history[i] for each candidate. Every draw comes from stream(seed, Symptom, fault_id, occurrence),
  // so the same fault looks the same to every policy.
  Observation observe(std::uint64_t seed, std::uint64_t fault_id, int occurrence, int cause, int fix, int device,
                      int culprit, const std::vector<History>& history) const;

  // A labelled incident drawn from the platform's mix, for training: cause, fix, position of the
  // culprit and the candidates' histories are drawn too (a quarter are recurrences of unfixed faults).
  std::pair<Observation, Truth> sample(std::uint64_t seed, std::uint64_t index) const;

  const FleetSpec& fleet() const { return *fleet_; }
  int platform() const { return platform_; }
  // The platform's cause mix (counts normalised).
  const std::vector<double>& mix() const { return mix_; }

 private:
  void background(Rng& rng, NodeView& view, int devices) const;
  const FleetSpec* fleet_;
  int platform_;
  std::vector<double> mix_;
};

// The candidate that reported the most in the ten minutes around the interruption, not counting
// collective timeouts (they echo on every rank): the node an operator suspects when nothing else
// points anywhere. kNoIndex when nobody reported anything.
int suspect(const FleetSpec& fleet, const Observation& obs);

// ---------------------------------------------------------------- tokens

// One event as the model sees it: the platform's raw code (one vocabulary across platforms: codes
// with the same name, like the host's MCE, are shared), its coarse family, the platform, the slot,
// a log-scale time bucket and a log-scale value bucket.
struct Token {
  std::int64_t raw = 0, family = 0, platform = 0, slot = 0, time = 0, value = 0;
};

class Vocabulary {
 public:
  static constexpr std::int64_t kPad = 0, kCls = 1, kMask = 2, kHistory = 3;  // kHistory + 0..5
  static constexpr std::int64_t kFirstCode = kHistory + 6;
  static constexpr std::int64_t kTimeBuckets = 16, kValueBuckets = 8;

  explicit Vocabulary(const FleetSpec& fleet);
  std::int64_t raw_size() const { return static_cast<std::int64_t>(raw_names_.size()); }
  std::int64_t family_size() const { return static_cast<std::int64_t>(family_names_.size()); }
  // The raw code id of `kind` on `platform`, or -1 when that platform cannot see it.
  std::int64_t raw_of(int platform, int kind) const { return raw_[static_cast<std::size_t>(platform)][static_cast<std::size_t>(kind)]; }
  std::int64_t family_of_raw(std::int64_t raw) const { return family_of_raw_[static_cast<std::size_t>(raw)]; }
  const std::string& raw_name(std::int64_t raw) const { return raw_names_[static_cast<std::size_t>(raw)]; }
  std::int64_t find_raw(const std::string& name) const;
  const std::vector<std::string>& raw_names() const { return raw_names_; }

  static std::int64_t time_bucket(double minutes);
  static std::int64_t value_bucket(double value);

  // [CLS, HISTORY, events...] of one candidate, at most max_len tokens (the latest events are kept).
  std::vector<Token> tokens(int platform, const NodeView& view, int max_len) const;

 private:
  std::vector<std::vector<std::int64_t>> raw_;  // [platform][kind]
  std::vector<std::string> raw_names_, family_names_;
  std::vector<std::int64_t> family_of_raw_;
};

}  // namespace drwatson
