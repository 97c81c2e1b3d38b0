#include "fleet.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <nexp/error.hpp>
#include <nexp/options.hpp>
#include <nexp/runtime/experiment.hpp>

namespace drwatson {

// ---------------------------------------------------------------- the file's schema

void JobSpec::declare(nexp::Options<JobSpec>& o) {
  o.add("nodes", &JobSpec::nodes, "nodes of the synchronous job").required().min(2);
  o.add("spares", &JobSpec::spares, "hot spares that replace pulled nodes").min(0);
  o.add("horizon_days", &JobSpec::horizon_days, "simulated wall-clock days (> 0)");
  o.add("checkpoint_minutes", &JobSpec::checkpoint_minutes,
        "work lost at an interruption: the time since the last checkpoint (> 0)");
  o.add("restart_minutes", &JobSpec::restart_minutes, "job recovery after an interruption").min(0);
  o.add("host_select_minutes", &JobSpec::host_select_minutes, "host selection and restart").min(0);
  o.add("sweep_minutes", &JobSpec::sweep_minutes, "a triage sweep (collective bisection) while the job waits").min(0);
}

void NoiseSpec::declare(nexp::Options<NoiseSpec>& o) {
  o.add("ambiguity", &NoiseSpec::ambiguity,
        "scales the symptoms marked confusable (shared between causes); below 1 a cause's own become surer; "
        "0 = clean signatures")
      .range(0, 10);
  o.add("drop", &NoiseSpec::drop, "probability a telemetry event is lost (below 1)").range(0, 1);
  o.add("background", &NoiseSpec::background, "scales the benign background event rates").min(0);
  o.add("value_sigma", &NoiseSpec::value_sigma, "log-normal noise on event magnitudes").min(0);
  o.add("window_hours", &NoiseSpec::window_hours, "how far back a diagnosis reads the logs").min(0);
  o.add("candidates", &NoiseSpec::candidates, "nodes handed to the diagnosis per interruption (the culprit and peers)")
      .range(1, 16);
}

void LemonSpec::declare(nexp::Options<LemonSpec>& o) {
  o.add("fraction", &LemonSpec::fraction, "share of lemon nodes").range(0, 1);
  o.add("multiplier", &LemonSpec::multiplier, "how much more often a lemon node fails").min(0);
  o.add("manual_clears", &LemonSpec::manual_clears, "probability a manual repair finds and fixes the chronic problem")
      .range(0, 1);
}

void ActionSpec::declare(nexp::Options<ActionSpec>& o) {
  o.add("name", &ActionSpec::name, "the action's name (rules, fixes and the ladder refer to it)").required();
  o.add("level", &ActionSpec::level,
        "0 restart the job, 1 reset a device, 2 reboot, 3 reimage, 4 replace a part, 5 manual repair by a person")
      .required()
      .range(0, 5);
  o.add("part", &ActionSpec::part, "the part a level-4 action replaces");
  o.add("minutes", &ActionSpec::minutes, "time the node is out of service for this action (before QA)").min(0);
  o.add("p_fix", &ActionSpec::p_fix, "probability the action fixes a fault it covers").range(0, 1);
}

namespace {

// Where an event is seen when it is not on a device (the faulty one, or a random one for background).
enum class Slot { Device = kNoIndex, Host = kSlotHost, Network = kSlotNetwork, Job = kSlotJob };
const std::vector<std::pair<std::string, Slot>> kSlotNames = {
    {"device", Slot::Device}, {"host", Slot::Host}, {"network", Slot::Network}, {"job", Slot::Job}};
const char* kSlotHelp = "where the event is seen: device (the faulty device; for background, a random one), host, "
                        "network or job";

// The file's side of the specs that refer to other entries by name (resolved in parse_fleet).

struct TestEntry {  // and detect: {cause: probability}, read by hand
  std::string name;
  double minutes = 0, false_alarm = 0;
  static void declare(nexp::Options<TestEntry>& o) {
    o.add("name", &TestEntry::name, "the test's name").required();
    o.add("minutes", &TestEntry::minutes, "how long the test takes").required().min(0);
    o.add("false_alarm", &TestEntry::false_alarm, "probability it fails on a healthy node").range(0, 1);
  }
};

struct RuleEntry {
  std::string raw, action;
  double above = 0;
  std::optional<std::string> cause;
  static void declare(nexp::Options<RuleEntry>& o) {
    o.add("raw", &RuleEntry::raw, "the platform's raw code the rule matches").required();
    o.add("above", &RuleEntry::above, "match only values at or above this (counter thresholds)");
    o.add("action", &RuleEntry::action, "the action to take, or sweep (run a triage sweep)").required();
    o.add("cause", &RuleEntry::cause, "the diagnosis the rule stands for (required unless the action is sweep)");
  }
};

struct PlatformEntry {
  std::string description;
  int devices = 8;
  double rate_per_node_day = 0, target_rate_per_node_day = 0;
  std::vector<RuleEntry> rules;
  static void declare(nexp::Options<PlatformEntry>& o) {
    o.add("description", &PlatformEntry::description, "what the platform is");
    o.add("devices", &PlatformEntry::devices, "accelerators per node").range(1, kSlotHost);
    o.add("rate_per_node_day", &PlatformEntry::rate_per_node_day, "first faults per node-day").required().min(0);
    o.add("target_rate_per_node_day", &PlatformEntry::target_rate_per_node_day,
          "the published interruption rate the incumbent is calibrated to (0: none)")
        .min(0);
    o.add("rules", &PlatformEntry::rules, "the incumbent's catalog and thresholds, in priority order");
  }
};

struct SymptomEntry {
  std::string kind;
  double p = 0;
  Role role = Role::Origin;
  Phase phase = Phase::Trigger;
  std::optional<std::vector<double>> value;
  bool confusable = false, all_devices = false;
  std::optional<std::string> only;
  Slot slot = Slot::Device;
  static void declare(nexp::Options<SymptomEntry>& o) {
    o.add("kind", &SymptomEntry::kind, "the symptom kind (a key of kinds)").required();
    o.add("p", &SymptomEntry::p, "probability per manifestation").required().range(0, 1);
    o.add("role", &SymptomEntry::role, "origin: the faulty device; node: another device of the node; peers: each other candidate",
          {{"origin", Role::Origin}, {"node", Role::Node}, {"peers", Role::Peers}});
    o.add("phase", &SymptomEntry::phase, "when, relative to the interruption the fault triggers",
          {{"precursor", Phase::Precursor}, {"trigger", Phase::Trigger}, {"after", Phase::After}});
    o.add("value", &SymptomEntry::value, "magnitude range [low, high] (a count, degrees above nominal, ...)");
    o.add("confusable", &SymptomEntry::confusable, "shared with other causes: scaled by noise.ambiguity");
    o.add("all_devices", &SymptomEntry::all_devices, "seen on every device of the node (a PSU, an IO board)");
    o.add("only", &SymptomEntry::only, "emitted only when the fault needs this fix (an action among the cause's fixes)");
    o.add("slot", &SymptomEntry::slot, kSlotHelp, kSlotNames);
  }
};

struct CauseEntry {  // and count: {platform: n}, fixes: {action: share}, read by hand
  std::string part = "none";
  bool node_fault = true;
  double recur_per_day = 1.0, sweep_find = 0.0;
  std::vector<SymptomEntry> symptoms;
  static void declare(nexp::Options<CauseEntry>& o) {
    o.add("part", &CauseEntry::part, "the component that fails (accel, nic, psu, ...); none for software");
    o.add("node_fault", &CauseEntry::node_fault, "false: the node is healthy (software bug, dependency, NCCL timeout)");
    o.add("recur_per_day", &CauseEntry::recur_per_day, "hazard of striking again while unfixed and in service").min(0);
    o.add("sweep_find", &CauseEntry::sweep_find, "probability a triage sweep points at the faulty node").range(0, 1);
    o.add("symptoms", &CauseEntry::symptoms, "how the cause shows itself").required();
  }
};

struct BackgroundEntry {
  std::string kind;
  double per_day = 0;
  std::optional<std::vector<double>> value;
  Slot slot = Slot::Device;
  static void declare(nexp::Options<BackgroundEntry>& o) {
    o.add("kind", &BackgroundEntry::kind, "the symptom kind (a key of kinds)").required();
    o.add("per_day", &BackgroundEntry::per_day, "events per node-day, before noise.background").required().min(0);
    o.add("value", &BackgroundEntry::value, "magnitude range [low, high]");
    o.add("slot", &BackgroundEntry::slot, kSlotHelp, kSlotNames);
  }
};

struct AfterSweepEntry {
  std::string action, cause;
  static void declare(nexp::Options<AfterSweepEntry>& o) {
    o.add("action", &AfterSweepEntry::action, "the action for a node a triage sweep points at").required();
    o.add("cause", &AfterSweepEntry::cause, "the diagnosis that goes with it").required();
  }
};

struct IncumbentEntry {
  std::vector<std::string> qa, qa_after_part, ladder;
  AfterSweepEntry after_sweep;
  std::string restart_cause;
  int repeat_incidents = 2, max_attempts = 3;
  static void declare(nexp::Options<IncumbentEntry>& o) {
    o.add("qa", &IncumbentEntry::qa, "the fixed QA suite after every repair");
    o.add("qa_after_part", &IncumbentEntry::qa_after_part, "tests added after a part replacement or manual repair");
    o.add("ladder", &IncumbentEntry::ladder, "escalation order of actions; after the last (or a part), manual repair");
    o.add("after_sweep", &IncumbentEntry::after_sweep, "what a node found by a triage sweep gets");
    o.add("restart_cause", &IncumbentEntry::restart_cause, "the diagnosis when nothing node-specific is found").required();
    o.add("repeat_incidents", &IncumbentEntry::repeat_incidents,
          "a node blamed this often in the last 30 days goes straight to manual repair")
        .min(0);
    o.add("max_attempts", &IncumbentEntry::max_attempts, "failed repairs before a person takes over").min(0);
  }
};

// The file less its name-keyed maps (kinds, platforms, causes), which parse_fleet takes out first.
struct FileEntry {
  JobSpec job;
  NoiseSpec noise;
  LemonSpec lemons;
  std::vector<ActionSpec> actions;
  std::vector<TestEntry> tests;
  std::vector<std::string> qa_minimum;
  IncumbentEntry incumbent;
  std::vector<BackgroundEntry> background;
  static void declare(nexp::Options<FileEntry>& o) {
    o.add("job", &FileEntry::job, "the synchronous training job");
    o.add("noise", &FileEntry::noise, "how noisy the telemetry is");
    o.add("lemons", &FileEntry::lemons, "chronically failing nodes");
    o.add("actions", &FileEntry::actions, "repair actions, the ladder from restart (level 0) to manual repair (5)")
        .required();
    o.add("tests", &FileEntry::tests, "QA tests").required();
    o.add("qa_minimum", &FileEntry::qa_minimum, "tests every pulled node runs at least");
    o.add("incumbent", &FileEntry::incumbent, "the rule-based incumbent");
    o.add("background", &FileEntry::background, "benign events every node shows");
  }
};

const char* kFixHint =
    "Fix the file (configs/drwatson/fleet.yaml documents every key) or point params.fleet at another one.";

// Reads one fleet file: the schema'd parts first (every problem reported at once), then the
// name-keyed maps and the names that refer to other entries (the first problem is reported).
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw nexp::ConfigError(fmt::format("fleet file {}: at '{}': {}. {}", source_, where, what, kFixHint));
  }
  void problem(const std::string& where, const std::string& what) {
    problems_.push_back(fmt::format("at '{}': {}", where, what));
  }
  // `node` validated against T's declared schema and bound to T; a problem is recorded (see check())
  // and T's defaults are returned.
  template <class T>
  T read(const YAML::Node& node, const std::string& section) {
    try {
      return nexp::bind<T>(nexp::params_from_yaml(node, nexp::options_schema<T>(), section, "drwatson", source_));
    } catch (const nexp::ConfigError& e) {
      add(e.what());
      return T{};
    }
  }
  // Throws every recorded problem as one ConfigError.
  void check() const {
    if (problems_.size() == 1) throw nexp::ConfigError(fmt::format("fleet file {}: {}\n{}", source_, problems_[0], kFixHint));
    if (problems_.size() > 1)
      throw nexp::ConfigError(fmt::format("fleet file {}: {} problems:\n  - {}\n{}", source_, problems_.size(),
                                          fmt::join(problems_, "\n  - "), kFixHint));
  }

  double number(const YAML::Node& n, const std::string& where) const {
    try {
      return n.as<double>();
    } catch (const YAML::Exception&) {
      fail(where, fmt::format("expected a number, found '{}'", n.IsScalar() ? n.Scalar() : "a map or list"));
    }
  }
  std::string text(const YAML::Node& n, const std::string& where) const {
    if (!n.IsScalar()) fail(where, "expected a name");
    return n.Scalar();
  }
  template <class F>
  int resolve(const std::string& name, F&& find, const std::string& what, const std::string& where) const {
    int i = find(name);
    if (i == kNoIndex) fail(where, fmt::format("unknown {} '{}'", what, name));
    return i;
  }

 private:
  // One problem, or the items of a message listing several ("N problems in the config:\n  - a\n  - b").
  void add(const std::string& message) {
    const std::string item = "\n  - ";
    std::size_t at = message.find(item);
    if (at == std::string::npos) problems_.push_back(message);
    while (at != std::string::npos) {
      const std::size_t next = message.find(item, at + item.size());
      problems_.push_back(message.substr(at + item.size(), next == std::string::npos ? next : next - at - item.size()));
      at = next;
    }
  }

  std::string source_;
  std::vector<std::string> problems_;
};

template <class T>
int find_named(const std::vector<T>& items, const std::string& name) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return static_cast<int>(i);
  return kNoIndex;
}

// Takes `key` out of the map `node` and returns its value (null when absent): the name-keyed maps are
// read by hand, the rest of the node is then validated against its schema.
YAML::Node take(YAML::Node node, const std::string& key) {
  if (!node.IsMap()) return YAML::Node();
  const YAML::Node value = static_cast<const YAML::Node&>(node)[key];
  if (!value) return YAML::Node();
  node.remove(key);
  return value;
}

bool is_map(const YAML::Node& n) { return n.IsDefined() && n.IsMap(); }

// What the schemas accept, and the name-keyed maps taken out before validation.
struct Sections {
  struct Cause {
    std::string name;
    CauseEntry entry;
    YAML::Node count, fixes;
  };
  FileEntry file;
  std::vector<YAML::Node> detect;  // per test
  YAML::Node kinds;
  std::vector<std::pair<std::string, PlatformEntry>> platforms;
  std::vector<Cause> causes;
};

// Checks the schemas cannot express (strict bounds, one field depending on another).
void check_values(Reader& r, const FileEntry& file) {
  if (file.job.horizon_days <= 0) r.problem("job.horizon_days", "must be > 0");
  if (file.job.checkpoint_minutes <= 0) r.problem("job.checkpoint_minutes", "must be > 0");
  if (file.noise.drop >= 1) r.problem("noise.drop", "must be below 1");
  for (std::size_t i = 0; i < file.actions.size(); ++i)
    if (file.actions[i].level == 4 && file.actions[i].part.empty())
      r.problem(fmt::format("actions.{}", i), "a part replacement (level 4) names its part");
  auto has_level = [&](int level) {
    return std::any_of(file.actions.begin(), file.actions.end(), [&](const ActionSpec& a) { return a.level == level; });
  };
  if (!file.actions.empty() && (!has_level(0) || !has_level(5)))
    r.problem("actions", "needs one level-0 action (restart the job) and one level-5 action (manual repair)");
}

// Validates everything the schemas describe and reports every problem at once.
Sections read_sections(Reader& r, YAML::Node root) {
  Sections s;
  s.kinds = take(root, "kinds");
  const YAML::Node platforms = take(root, "platforms"), causes = take(root, "causes");
  if (const YAML::Node tests = static_cast<const YAML::Node&>(root)["tests"]; tests && tests.IsSequence())
    for (YAML::Node t : tests) s.detect.push_back(take(t, "detect"));
  s.file = r.read<FileEntry>(root, "");
  check_values(r, s.file);

  if (!is_map(s.kinds)) r.problem("kinds", "expected a map from symptom kind to {family, <platform>: RAW_CODE[@family]}");
  if (!is_map(platforms)) r.problem("platforms", "expected a map from platform name to its description");
  for (auto it = platforms.begin(); is_map(platforms) && it != platforms.end(); ++it) {
    const std::string name = it->first.as<std::string>();
    s.platforms.emplace_back(name, r.read<PlatformEntry>(it->second, "platforms." + name));
  }
  if (!is_map(causes)) r.problem("causes", "expected a map from cause name to its description");
  for (auto it = causes.begin(); is_map(causes) && it != causes.end(); ++it) {
    Sections::Cause c;
    c.name = it->first.as<std::string>();
    const std::string where = "causes." + c.name;
    c.count = take(it->second, "count"), c.fixes = take(it->second, "fixes");
    if (!is_map(c.count)) r.problem(where + ".count", "expected a map from platform name to observed count");
    if (!is_map(c.fixes)) r.problem(where + ".fixes", "expected a map from action name to its share");
    c.entry = r.read<CauseEntry>(it->second, where);
    s.causes.push_back(std::move(c));
  }
  r.check();
  return s;
}

void read_tests(const Reader& r, const Sections& s, FleetSpec& f) {
  for (std::size_t i = 0; i < s.file.tests.size(); ++i) {
    const std::string where = fmt::format("tests.{}.detect", i);
    TestSpec t;
    t.name = s.file.tests[i].name;
    t.minutes = s.file.tests[i].minutes;
    t.false_alarm = s.file.tests[i].false_alarm;
    t.detect.assign(f.causes.size(), 0.0);
    const YAML::Node& d = s.detect[i];
    if (!d.IsNull() && !d.IsMap()) r.fail(where, "expected a map from cause name to probability");
    for (auto it = d.begin(); d.IsMap() && it != d.end(); ++it) {
      const std::string cname = it->first.as<std::string>();
      const int c = r.resolve(cname, [&](const std::string& n) { return f.cause_index(n); }, "cause", where);
      t.detect[static_cast<std::size_t>(c)] = r.number(it->second, where + "." + cname);
    }
    f.tests.push_back(t);
  }
}

// kinds: {kind: {family: F, <platform>: RAW_CODE[@family]}}; a platform without an entry cannot see it.
void read_kinds(const Reader& r, const Sections& s, FleetSpec& f) {
  for (auto it = s.kinds.begin(); it != s.kinds.end(); ++it) {
    const std::string kind = it->first.as<std::string>();
    const std::string where = "kinds." + kind;
    f.kinds.push_back(kind);
    const YAML::Node entry = it->second;
    if (!entry.IsMap() || !entry["family"]) r.fail(where + ".family", "missing");
    const std::string family = r.text(entry["family"], where + ".family");
    for (auto k = entry.begin(); k != entry.end(); ++k) {
      const std::string key = k->first.as<std::string>();
      if (key != "family" && f.platform_index(key) == kNoIndex)
        r.fail(where + "." + key, "neither family nor a platform of the file");
    }
    for (auto& p : f.platforms) {
      CodeSpec code;
      if (const YAML::Node raw = entry[p.name]) {
        std::string text = r.text(raw, where + "." + p.name);
        auto at = text.find('@');
        code.raw = text.substr(0, at);
        code.family = at == std::string::npos ? family : text.substr(at + 1);
      }
      p.codes.push_back(code);
    }
  }
  for (auto& p : f.platforms) {  // one raw code, one family
    std::map<std::string, std::string> family_of;
    for (const auto& c : p.codes)
      if (!c.raw.empty() && !family_of.emplace(c.raw, c.family).second && family_of[c.raw] != c.family)
        r.fail("kinds", fmt::format("platform {} reports {} under two families ({} and {})", p.name, c.raw,
                                    family_of[c.raw], c.family));
  }
}

RuleSpec read_rule(const Reader& r, const RuleEntry& e, const PlatformSpec& p, const FleetSpec& f,
                   const std::string& where) {
  RuleSpec rule;
  rule.raw = e.raw;
  rule.above = e.above;
  if (e.action == "sweep") {
    rule.sweep = true;
  } else {
    rule.action = r.resolve(e.action, [&](const std::string& n) { return f.action_index(n); }, "action", where + ".action");
    if (!e.cause) r.fail(where + ".cause", "missing (a rule names its diagnosis unless its action is sweep)");
    rule.cause = r.resolve(*e.cause, [&](const std::string& n) { return f.cause_index(n); }, "cause", where + ".cause");
  }
  const bool known = std::any_of(p.codes.begin(), p.codes.end(), [&](const CodeSpec& c) { return c.raw == rule.raw; });
  if (!known) r.fail(where + ".raw", fmt::format("platform {} has no raw code {} in `kinds`", p.name, rule.raw));
  return rule;
}

void read_platforms(const Reader& r, const Sections& s, FleetSpec& f) {
  for (const auto& [name, e] : s.platforms) {
    PlatformSpec p;
    p.name = name;
    p.description = e.description;
    p.devices = e.devices;
    p.rate_per_node_day = e.rate_per_node_day;
    p.target_rate_per_node_day = e.target_rate_per_node_day;
    f.platforms.push_back(p);
  }
  read_kinds(r, s, f);
  for (std::size_t i = 0; i < s.platforms.size(); ++i) {
    const auto& rules = s.platforms[i].second.rules;
    PlatformSpec& p = f.platforms[i];
    for (std::size_t k = 0; k < rules.size(); ++k)
      p.rules.push_back(read_rule(r, rules[k], p, f, fmt::format("platforms.{}.rules.{}", p.name, k)));
  }
}

SymptomSpec read_symptom(const Reader& r, const SymptomEntry& e, const CauseSpec& c, const FleetSpec& f,
                         const std::string& where) {
  SymptomSpec sp;
  sp.kind = r.resolve(e.kind, [&](const std::string& x) { return f.kind_index(x); }, "symptom kind", where + ".kind");
  sp.p = e.p;
  sp.role = e.role;
  sp.phase = e.phase;
  if (e.value) {
    if (e.value->size() != 2) r.fail(where + ".value", "expected [low, high]");
    sp.value_lo = (*e.value)[0], sp.value_hi = (*e.value)[1];
  }
  sp.confusable = e.confusable;
  sp.all_devices = e.all_devices;
  if (e.only) {
    const int a = r.resolve(*e.only, [&](const std::string& x) { return f.action_index(x); }, "action", where + ".only");
    for (std::size_t k = 0; k < c.fixes.size(); ++k)
      if (c.fixes[k].action == a) sp.only_fix = static_cast<int>(k);
    if (sp.only_fix == kNoIndex) r.fail(where + ".only", "names an action that is not among this cause's fixes");
  }
  sp.slot = static_cast<int>(e.slot);
  return sp;
}

void read_cause(const Reader& r, const Sections::Cause& in, const FleetSpec& f, CauseSpec& c) {
  const std::string where = "causes." + c.name;
  c.part = in.entry.part;
  c.node_fault = in.entry.node_fault;
  c.recur_per_day = in.entry.recur_per_day;
  c.sweep_find = in.entry.sweep_find;
  c.count.assign(f.platforms.size(), 0.0);
  for (auto it = in.count.begin(); it != in.count.end(); ++it) {
    const std::string pname = it->first.as<std::string>();
    const int p = r.resolve(pname, [&](const std::string& x) { return f.platform_index(x); }, "platform", where + ".count");
    c.count[static_cast<std::size_t>(p)] = r.number(it->second, where + ".count." + pname);
  }
  double total = 0;
  for (auto it = in.fixes.begin(); it != in.fixes.end(); ++it) {
    const std::string aname = it->first.as<std::string>();
    FixOption o;
    o.action = r.resolve(aname, [&](const std::string& x) { return f.action_index(x); }, "action", where + ".fixes");
    o.share = r.number(it->second, where + ".fixes." + aname);
    total += o.share;
    c.fixes.push_back(o);
  }
  if (c.fixes.empty() || total <= 0) r.fail(where + ".fixes", "needs at least one action with a positive share");
  for (auto& o : c.fixes) o.share /= total;
  if (!c.node_fault && (c.fixes.size() != 1 || f.actions[static_cast<std::size_t>(c.fixes[0].action)].level != 0))
    r.fail(where + ".fixes", "a cause with node_fault: false is fixed by restarting the job alone");
  for (std::size_t i = 0; i < in.entry.symptoms.size(); ++i)
    c.symptoms.push_back(read_symptom(r, in.entry.symptoms[i], c, f, fmt::format("{}.symptoms.{}", where, i)));
}

void read_background(const Reader& r, const Sections& s, FleetSpec& f) {
  for (std::size_t i = 0; i < s.file.background.size(); ++i) {
    const BackgroundEntry& e = s.file.background[i];
    const std::string where = fmt::format("background.{}", i);
    BackgroundSpec b;
    b.kind = r.resolve(e.kind, [&](const std::string& x) { return f.kind_index(x); }, "symptom kind", where + ".kind");
    b.per_day = e.per_day;
    if (e.value) {
      if (e.value->size() != 2) r.fail(where + ".value", "expected [low, high]");
      b.value_lo = (*e.value)[0], b.value_hi = (*e.value)[1];
    }
    b.slot = static_cast<int>(e.slot);
    f.background.push_back(b);
  }
}

void read_incumbent(const Reader& r, const Sections& s, FleetSpec& f) {
  const IncumbentEntry& in = s.file.incumbent;
  auto tests_of = [&](const std::vector<std::string>& names, const std::string& where) {
    std::vector<int> out;
    for (const auto& n : names)
      out.push_back(r.resolve(n, [&](const std::string& x) { return f.test_index(x); }, "test", where));
    return out;
  };
  auto action = [&](const std::string& name, const std::string& where) {
    return r.resolve(name, [&](const std::string& x) { return f.action_index(x); }, "action", where);
  };
  auto cause = [&](const std::string& name, const std::string& where) {
    return r.resolve(name, [&](const std::string& x) { return f.cause_index(x); }, "cause", where);
  };
  f.incumbent.qa = tests_of(in.qa, "incumbent.qa");
  f.incumbent.qa_after_part = tests_of(in.qa_after_part, "incumbent.qa_after_part");
  for (const auto& a : in.ladder) f.incumbent.ladder.push_back(action(a, "incumbent.ladder"));
  f.incumbent.after_sweep = action(in.after_sweep.action, "incumbent.after_sweep.action");
  f.incumbent.after_sweep_cause = cause(in.after_sweep.cause, "incumbent.after_sweep.cause");
  f.incumbent.restart_cause = cause(in.restart_cause, "incumbent.restart_cause");
  f.incumbent.repeat_incidents = in.repeat_incidents;
  f.incumbent.max_attempts = in.max_attempts;
  f.qa_minimum = tests_of(s.file.qa_minimum, "qa_minimum");
}

}  // namespace

int FleetSpec::platform_index(const std::string& name) const { return find_named(platforms, name); }
int FleetSpec::cause_index(const std::string& name) const { return find_named(causes, name); }
int FleetSpec::action_index(const std::string& name) const { return find_named(actions, name); }
int FleetSpec::test_index(const std::string& name) const { return find_named(tests, name); }
int FleetSpec::kind_index(const std::string& name) const {
  auto it = std::find(kinds.begin(), kinds.end(), name);
  return it == kinds.end() ? kNoIndex : static_cast<int>(it - kinds.begin());
}
int FleetSpec::manual_action() const {
  for (std::size_t i = 0; i < actions.size(); ++i)
    if (actions[i].level == 5) return static_cast<int>(i);
  return kNoIndex;
}
int FleetSpec::restart_action() const {
  for (std::size_t i = 0; i < actions.size(); ++i)
    if (actions[i].level == 0) return static_cast<int>(i);
  return kNoIndex;
}

bool FleetSpec::covers(int action, int cause, int required) const {
  const ActionSpec& a = actions[static_cast<std::size_t>(action)];
  const CauseSpec& c = causes[static_cast<std::size_t>(cause)];
  if (!c.node_fault) return true;  // the node was healthy: any action leaves it healthy
  const ActionSpec& r = actions[static_cast<std::size_t>(c.fixes[static_cast<std::size_t>(required)].action)];
  if (action == c.fixes[static_cast<std::size_t>(required)].action) return true;
  if (a.level == 5) return true;
  if (a.level == 0) return r.level == 0;
  if (r.level <= 3 && a.level <= 3) return a.level >= r.level;
  if (a.level == 4) return r.level <= 2 || (r.level == 4 && a.part == r.part);
  return false;  // a reset/reboot/reimage never replaces a part; a level-5 requirement needs a person
}

ClassTable::ClassTable(const FleetSpec& fleet) {
  entries.push_back({});
  for (std::size_t c = 0; c < fleet.causes.size(); ++c)
    for (std::size_t f = 0; f < fleet.causes[c].fixes.size(); ++f) {
      index[{static_cast<int>(c), static_cast<int>(f)}] = static_cast<int>(entries.size());
      entries.push_back({static_cast<int>(c), static_cast<int>(f), fleet.causes[c].fixes[f].action});
    }
}

FleetSpec parse_fleet(const std::string& yaml_text, const std::string& source) {
  Reader r(source);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    r.fail("(file)", fmt::format("not valid YAML: {}", e.what()));
  }
  if (!root.IsMap()) r.fail("(top level)", "expected a map with job, noise, actions, tests, kinds, platforms, causes");
  const Sections s = read_sections(r, root);
  FleetSpec f;
  f.source = source;
  f.job = s.file.job;
  f.noise = s.file.noise;
  f.lemons = s.file.lemons;
  f.actions = s.file.actions;
  for (const auto& c : s.causes) f.causes.emplace_back().name = c.name;  // names first: tests and rules refer to them
  read_tests(r, s, f);
  read_platforms(r, s, f);
  for (std::size_t i = 0; i < s.causes.size(); ++i) read_cause(r, s.causes[i], f, f.causes[i]);
  read_background(r, s, f);
  read_incumbent(r, s, f);
  return f;
}

FleetSpec load_fleet(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in)
    throw nexp::ConfigError(fmt::format("fleet file '{}' cannot be read. params.fleet names the YAML file that describes the "
                                        "fleet; the default is configs/drwatson/fleet.yaml, relative to the folder nexp "
                                        "runs in.",
                                        file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_fleet(ss.str(), file.string());
}

}  // namespace drwatson
