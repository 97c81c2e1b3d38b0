#pragma once
// The fleet description: everything the simulator and the policies know about a fleet, read from a
// YAML file a user edits to describe their own (configs/drwatson/fleet.yaml is the default, seeded
// from public reliability figures). Names in the file (causes, actions, tests, symptom kinds, raw
// codes) are resolved to indices once, here, so the simulator works on integers.
//
// The file is validated against schemas declared as option structs (nexp/options.hpp): job, noise,
// lemons and actions declare themselves below; the sections that name other entries (platforms and
// their rules, causes and their symptoms, tests, background, incumbent) have file-side structs in
// fleet.cpp, bound first and then resolved to indices. Maps keyed by names the file itself defines
// (kinds, platforms, causes, a test's detect, a cause's count and fixes) are read by hand.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nexp {
template <class T>
class Options;
}  // namespace nexp

namespace drwatson {

constexpr int kNoIndex = -1;

// Where an event is seen, relative to the node the fault lives on.
enum class Role { Origin, Node, Peers };
// When, relative to the job interruption the fault triggers.
enum class Phase { Precursor, Trigger, After };

// Slots of an event inside a node: devices 0..devices-1, then these.
constexpr int kSlotHost = 16, kSlotNetwork = 17, kSlotJob = 18, kSlots = 19;

// One way a root cause shows itself: a symptom kind emitted with probability p per manifestation.
struct SymptomSpec {
  int kind = kNoIndex;
  double p = 0;
  Role role = Role::Origin;
  Phase phase = Phase::Trigger;
  double value_lo = 0, value_hi = 0;  // magnitude (a count, degrees above nominal, ...); 0 = none
  bool confusable = false;            // shared with other causes: scaled by noise.ambiguity
  bool all_devices = false;           // seen on every device of the node (a PSU, an IO board)
  int only_fix = kNoIndex;            // emitted only when the fault needs this fix (index in CauseSpec::fixes)
  int slot = kNoIndex;                // fixed slot (host, network); kNoIndex = the faulty device
};

// A fault that needs action `action` as its minimal repair, with probability `share`.
struct FixOption {
  int action = kNoIndex;
  double share = 0;
};

struct CauseSpec {
  std::string name;
  std::string part;               // the component that fails: accel, nic, psu, ...; "none" for software
  bool node_fault = true;         // false: the node is healthy (software bug, dependency, NCCL timeout)
  std::vector<double> count;      // per platform: observed count (the mix), the rate follows the total
  std::vector<FixOption> fixes;   // the minimal repair, a distribution (transient vs hard faults)
  double recur_per_day = 1.0;     // hazard of striking again while unfixed and in service
  double sweep_find = 0;          // probability a triage sweep points at the faulty node
  std::vector<SymptomSpec> symptoms;
};

// A rung of the repair ladder. level: 0 restart the job, 1 reset the device, 2 reboot, 3 reimage,
// 4 replace a part, 5 manual repair by a person.
struct ActionSpec {
  std::string name;
  int level = 0;
  std::string part;          // for level 4: the part replaced
  double minutes = 0;        // time the node is out for this action (before QA)
  double p_fix = 1.0;        // probability the action fixes a fault it covers
  bool pulls_node() const { return level > 0; }
  static void declare(nexp::Options<ActionSpec>& o);
};

struct TestSpec {
  std::string name;
  double minutes = 0;
  std::vector<double> detect;  // per cause: probability the test fails on a node with that fault
  double false_alarm = 0;      // probability it fails on a healthy node
};

// A symptom kind as one platform reports it.
struct CodeSpec {
  std::string raw;     // the platform's own name, e.g. XID_79, ICI_LINK_DOWN
  std::string family;  // the coarse family shared by all platforms: memory, device, link, ...
};

// One incumbent rule: when `raw` is seen (with value >= above), take `action`. Rules are ordered:
// the first rule that matches any candidate wins (catalog first, then counter thresholds).
struct RuleSpec {
  std::string raw;
  double above = 0;
  int action = kNoIndex;  // kNoIndex with sweep: no node-specific evidence, run a triage sweep
  int cause = kNoIndex;   // the diagnosis the rule stands for (what the catalog says the code means)
  bool sweep = false;
};

struct PlatformSpec {
  std::string name;
  std::string description;
  int devices = 8;                     // accelerators per node
  double rate_per_node_day = 3.79e-3;  // first faults per node-day (the hazard the simulator draws from)
  double target_rate_per_node_day = 0; // the published interruption rate the incumbent is calibrated to (0: none)
  std::vector<CodeSpec> codes;         // indexed by symptom kind; raw empty when the platform cannot see it
  std::vector<RuleSpec> rules;         // the incumbent's catalog and thresholds, in priority order
};

struct JobSpec {
  int nodes = 1024;
  int spares = 16;
  double horizon_days = 54;
  double checkpoint_minutes = 30;
  double restart_minutes = 20;     // job recovery
  double host_select_minutes = 3;  // host selection and restart
  double sweep_minutes = 20;       // a triage sweep (collective bisection) while the job waits
  static void declare(nexp::Options<JobSpec>& o);
};

struct NoiseSpec {
  double ambiguity = 1.0;     // scales symptoms shared between causes; below 1 a cause's own become surer
  double drop = 0.15;         // probability a telemetry event is lost
  double background = 1.0;    // scales the benign background event rates
  double value_sigma = 0.3;   // log-normal noise on magnitudes
  double window_hours = 6;    // how far back the diagnosis looks
  int candidates = 4;         // nodes presented to the diagnosis per interruption
  static void declare(nexp::Options<NoiseSpec>& o);
};

struct BackgroundSpec {
  int kind = kNoIndex;
  double per_day = 0;  // per node, before noise.background
  double value_lo = 0, value_hi = 0;
  int slot = kNoIndex;  // kNoIndex: a random device
};

struct LemonSpec {
  double fraction = 0.15;
  double multiplier = 5.0;
  double manual_clears = 0.5;  // probability a manual repair finds and fixes the chronic problem
  static void declare(nexp::Options<LemonSpec>& o);
};

struct IncumbentSpec {
  std::vector<int> qa;            // the fixed suite after every repair
  std::vector<int> qa_after_part;  // added after a part replacement or manual repair
  std::vector<int> ladder;        // escalation order of actions by level; after the last (or a part), manual
  int after_sweep = kNoIndex;     // the action for a node a triage sweep points at
  int after_sweep_cause = kNoIndex;  // and the diagnosis that goes with it
  int restart_cause = kNoIndex;   // the diagnosis when nothing node-specific is found
  int repeat_incidents = 2;       // this many earlier incidents on a node in 30 days -> manual repair
  int max_attempts = 3;           // failed repairs before a person takes over
};

struct FleetSpec {
  std::vector<std::string> kinds;        // symptom kinds (the simulator's ground-truth vocabulary)
  std::vector<PlatformSpec> platforms;
  std::vector<CauseSpec> causes;
  std::vector<ActionSpec> actions;
  std::vector<TestSpec> tests;
  std::vector<BackgroundSpec> background;
  JobSpec job;
  NoiseSpec noise;
  LemonSpec lemons;
  IncumbentSpec incumbent;
  std::vector<int> qa_minimum;  // every pulled node runs at least these (all policies but the oracle)
  std::string source;           // where it was read from, for messages

  int platform_index(const std::string& name) const;
  int cause_index(const std::string& name) const;
  int action_index(const std::string& name) const;
  int test_index(const std::string& name) const;
  int kind_index(const std::string& name) const;
  int manual_action() const;   // the level-5 action
  int restart_action() const;  // the level-0 action

  // Whether `action` repairs a fault of `cause` whose minimal repair is `required` (before p_fix):
  // the same action; a reset/reboot/reimage at or above the required level when that is <= 3; a part
  // replacement covers resets and reboots (it power-cycles the node) and its own part; a manual repair
  // covers everything. Software faults (level 0) need nothing from the node.
  bool covers(int action, int cause, int required) const;
};

// Reads and validates a fleet file. Throws nexp::ConfigError naming the file, the key and the problem.
FleetSpec load_fleet(const std::filesystem::path& file);
FleetSpec parse_fleet(const std::string& yaml_text, const std::string& source);

// The fault classes a diagnosis model predicts: every (cause, minimal fix) pair, plus "healthy".
struct ClassTable {
  struct Entry {
    int cause = kNoIndex;  // kNoIndex for healthy
    int fix = kNoIndex;    // index in CauseSpec::fixes
    int action = kNoIndex; // the fix's action
  };
  std::vector<Entry> entries;  // entries[0] is healthy
  std::map<std::pair<int, int>, int> index;  // (cause, fix) -> class
  explicit ClassTable(const FleetSpec& fleet);
  int size() const { return static_cast<int>(entries.size()); }
  static constexpr int kHealthy = 0;
  int of(int cause, int fix) const { return cause < 0 ? kHealthy : index.at({cause, fix}); }
};

}  // namespace drwatson
