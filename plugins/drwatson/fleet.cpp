#include "fleet.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <nexp/error.hpp>

namespace drwatson {

namespace {

// Reads one fleet file; every error names the file, the key path and what was expected.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw nexp::ConfigError(fmt::format("fleet file {}: at '{}': {}. Fix the file (configs/drwatson/fleet.yaml "
                                        "documents every key) or point params.fleet at another one.",
                                        source_, where, what));
  }

  YAML::Node need(const YAML::Node& node, const std::string& key, const std::string& where) const {
    if (!node.IsMap() || !node[key]) fail(where.empty() ? key : where + "." + key, "missing");
    return node[key];
  }

  double number(const YAML::Node& n, const std::string& where) const {
    try {
      return n.as<double>();
    } catch (const YAML::Exception&) {
      fail(where, fmt::format("expected a number, found '{}'", n.IsScalar() ? n.Scalar() : "a map or list"));
    }
  }
  double number_or(const YAML::Node& node, const std::string& key, double fallback, const std::string& where) const {
    return node.IsMap() && node[key] ? number(node[key], where + "." + key) : fallback;
  }
  std::string text(const YAML::Node& n, const std::string& where) const {
    if (!n.IsScalar()) fail(where, "expected a name");
    return n.Scalar();
  }
  bool flag_or(const YAML::Node& node, const std::string& key, bool fallback, const std::string& where) const {
    if (!node.IsMap() || !node[key]) return fallback;
    try {
      return node[key].as<bool>();
    } catch (const YAML::Exception&) {
      fail(where + "." + key, "expected true or false");
    }
  }
  template <class F>
  int resolve(const std::string& name, F&& find, const std::string& what, const std::string& where) const {
    int i = find(name);
    if (i == kNoIndex) fail(where, fmt::format("unknown {} '{}'", what, name));
    return i;
  }

 private:
  std::string source_;
};

template <class T>
int find_named(const std::vector<T>& items, const std::string& name) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return static_cast<int>(i);
  return kNoIndex;
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
  FleetSpec f;
  f.source = source;

  // ---- job, noise, lemons
  const YAML::Node job = r.need(root, "job", "");
  f.job.nodes = static_cast<int>(r.number(r.need(job, "nodes", "job"), "job.nodes"));
  f.job.spares = static_cast<int>(r.number_or(job, "spares", f.job.spares, "job"));
  f.job.horizon_days = r.number_or(job, "horizon_days", f.job.horizon_days, "job");
  f.job.checkpoint_minutes = r.number_or(job, "checkpoint_minutes", f.job.checkpoint_minutes, "job");
  f.job.restart_minutes = r.number_or(job, "restart_minutes", f.job.restart_minutes, "job");
  f.job.host_select_minutes = r.number_or(job, "host_select_minutes", f.job.host_select_minutes, "job");
  f.job.sweep_minutes = r.number_or(job, "sweep_minutes", f.job.sweep_minutes, "job");
  if (f.job.nodes < 2) r.fail("job.nodes", "a synchronous job needs at least 2 nodes");
  if (f.job.spares < 0) r.fail("job.spares", "must be >= 0");
  if (f.job.checkpoint_minutes <= 0 || f.job.horizon_days <= 0) r.fail("job", "checkpoint_minutes and horizon_days must be > 0");

  if (const YAML::Node n = root["noise"]) {
    f.noise.ambiguity = r.number_or(n, "ambiguity", f.noise.ambiguity, "noise");
    f.noise.drop = r.number_or(n, "drop", f.noise.drop, "noise");
    f.noise.background = r.number_or(n, "background", f.noise.background, "noise");
    f.noise.value_sigma = r.number_or(n, "value_sigma", f.noise.value_sigma, "noise");
    f.noise.window_hours = r.number_or(n, "window_hours", f.noise.window_hours, "noise");
    f.noise.candidates = static_cast<int>(r.number_or(n, "candidates", f.noise.candidates, "noise"));
    if (f.noise.drop < 0 || f.noise.drop >= 1) r.fail("noise.drop", "must be in [0, 1)");
    if (f.noise.candidates < 1 || f.noise.candidates > 16) r.fail("noise.candidates", "must be in [1, 16]");
  }
  if (const YAML::Node n = root["lemons"]) {
    f.lemons.fraction = r.number_or(n, "fraction", f.lemons.fraction, "lemons");
    f.lemons.multiplier = r.number_or(n, "multiplier", f.lemons.multiplier, "lemons");
    f.lemons.manual_clears = r.number_or(n, "manual_clears", f.lemons.manual_clears, "lemons");
  }

  // ---- actions
  const YAML::Node actions = r.need(root, "actions", "");
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const std::string where = fmt::format("actions[{}]", i);
    ActionSpec a;
    a.name = r.text(r.need(actions[i], "name", where), where + ".name");
    a.level = static_cast<int>(r.number(r.need(actions[i], "level", where), where + ".level"));
    a.minutes = r.number_or(actions[i], "minutes", 0, where);
    a.p_fix = r.number_or(actions[i], "p_fix", 1.0, where);
    if (actions[i]["part"]) a.part = r.text(actions[i]["part"], where + ".part");
    if (a.level < 0 || a.level > 5) r.fail(where + ".level", "levels are 0 (restart job) .. 5 (manual repair)");
    if (a.level == 4 && a.part.empty()) r.fail(where, "a part replacement (level 4) names its part");
    f.actions.push_back(a);
  }
  if (f.restart_action() == kNoIndex || f.manual_action() == kNoIndex)
    r.fail("actions", "needs one level-0 action (restart the job) and one level-5 action (manual repair)");

  // ---- causes (names first: tests refer to them)
  const YAML::Node causes = r.need(root, "causes", "");
  if (!causes.IsMap()) r.fail("causes", "expected a map from cause name to its description");
  for (auto it = causes.begin(); it != causes.end(); ++it) {
    CauseSpec c;
    c.name = it->first.as<std::string>();
    f.causes.push_back(c);
  }

  // ---- tests
  const YAML::Node tests = r.need(root, "tests", "");
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const std::string where = fmt::format("tests[{}]", i);
    TestSpec t;
    t.name = r.text(r.need(tests[i], "name", where), where + ".name");
    t.minutes = r.number(r.need(tests[i], "minutes", where), where + ".minutes");
    t.false_alarm = r.number_or(tests[i], "false_alarm", 0, where);
    t.detect.assign(f.causes.size(), 0.0);
    if (const YAML::Node d = tests[i]["detect"])
      for (auto it = d.begin(); it != d.end(); ++it) {
        const std::string cname = it->first.as<std::string>();
        int c = r.resolve(cname, [&](const std::string& n) { return f.cause_index(n); }, "cause", where + ".detect");
        t.detect[static_cast<std::size_t>(c)] = r.number(it->second, where + ".detect." + cname);
      }
    f.tests.push_back(t);
  }

  // ---- kinds and platforms
  const YAML::Node platforms = r.need(root, "platforms", "");
  if (!platforms.IsMap()) r.fail("platforms", "expected a map from platform name to its description");
  for (auto it = platforms.begin(); it != platforms.end(); ++it) {
    PlatformSpec p;
    p.name = it->first.as<std::string>();
    const std::string where = "platforms." + p.name;
    p.description = it->second["description"] ? it->second["description"].as<std::string>() : "";
    p.devices = static_cast<int>(r.number_or(it->second, "devices", 8, where));
    p.rate_per_node_day = r.number(r.need(it->second, "rate_per_node_day", where), where + ".rate_per_node_day");
    p.target_rate_per_node_day = r.number_or(it->second, "target_rate_per_node_day", 0, where);
    if (p.devices < 1 || p.devices > kSlotHost) r.fail(where + ".devices", fmt::format("must be in [1, {}]", kSlotHost));
    f.platforms.push_back(p);
  }
  const YAML::Node kinds = r.need(root, "kinds", "");
  if (!kinds.IsMap()) r.fail("kinds", "expected a map from symptom kind to {family, <platform>: RAW_CODE[@family]}");
  for (auto it = kinds.begin(); it != kinds.end(); ++it) {
    const std::string kind = it->first.as<std::string>();
    const std::string where = "kinds." + kind;
    f.kinds.push_back(kind);
    const std::string family = r.text(r.need(it->second, "family", where), where + ".family");
    for (auto& p : f.platforms) {
      CodeSpec code;
      if (const YAML::Node raw = it->second[p.name]) {
        std::string s = r.text(raw, where + "." + p.name);
        auto at = s.find('@');
        code.raw = s.substr(0, at);
        code.family = at == std::string::npos ? family : s.substr(at + 1);
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
  for (auto it = platforms.begin(); it != platforms.end(); ++it) {
    PlatformSpec& p = f.platforms[static_cast<std::size_t>(f.platform_index(it->first.as<std::string>()))];
    const YAML::Node rules = it->second["rules"];
    for (std::size_t i = 0; rules && i < rules.size(); ++i) {
      const std::string where = fmt::format("platforms.{}.rules[{}]", p.name, i);
      RuleSpec rule;
      rule.raw = r.text(r.need(rules[i], "raw", where), where + ".raw");
      rule.above = r.number_or(rules[i], "above", 0, where);
      const std::string action = r.text(r.need(rules[i], "action", where), where + ".action");
      if (action == "sweep") rule.sweep = true;
      else rule.action = r.resolve(action, [&](const std::string& n) { return f.action_index(n); }, "action", where + ".action");
      if (!rule.sweep)
        rule.cause = r.resolve(r.text(r.need(rules[i], "cause", where), where + ".cause"),
                               [&](const std::string& n) { return f.cause_index(n); }, "cause", where + ".cause");
      bool known = std::any_of(p.codes.begin(), p.codes.end(), [&](const CodeSpec& c) { return c.raw == rule.raw; });
      if (!known) r.fail(where + ".raw", fmt::format("platform {} has no raw code {} in `kinds`", p.name, rule.raw));
      p.rules.push_back(rule);
    }
  }

  // ---- causes, in full
  for (auto it = causes.begin(); it != causes.end(); ++it) {
    CauseSpec& c = f.causes[static_cast<std::size_t>(f.cause_index(it->first.as<std::string>()))];
    const std::string where = "causes." + c.name;
    const YAML::Node n = it->second;
    c.part = n["part"] ? r.text(n["part"], where + ".part") : "none";
    c.node_fault = r.flag_or(n, "node_fault", true, where);
    c.recur_per_day = r.number_or(n, "recur_per_day", 1.0, where);
    c.sweep_find = r.number_or(n, "sweep_find", 0.0, where);
    c.count.assign(f.platforms.size(), 0.0);
    const YAML::Node count = r.need(n, "count", where);
    for (auto ct = count.begin(); ct != count.end(); ++ct) {
      const std::string pname = ct->first.as<std::string>();
      int p = r.resolve(pname, [&](const std::string& x) { return f.platform_index(x); }, "platform", where + ".count");
      c.count[static_cast<std::size_t>(p)] = r.number(ct->second, where + ".count." + pname);
    }
    const YAML::Node fixes = r.need(n, "fixes", where);
    double total = 0;
    for (auto ft = fixes.begin(); ft != fixes.end(); ++ft) {
      FixOption o;
      o.action = r.resolve(ft->first.as<std::string>(), [&](const std::string& x) { return f.action_index(x); }, "action",
                           where + ".fixes");
      o.share = r.number(ft->second, where + ".fixes." + ft->first.as<std::string>());
      total += o.share;
      c.fixes.push_back(o);
    }
    if (c.fixes.empty() || total <= 0) r.fail(where + ".fixes", "needs at least one action with a positive share");
    for (auto& o : c.fixes) o.share /= total;
    if (!c.node_fault && (c.fixes.size() != 1 || f.actions[static_cast<std::size_t>(c.fixes[0].action)].level != 0))
      r.fail(where + ".fixes", "a cause with node_fault: false is fixed by restarting the job alone");
    const YAML::Node symptoms = r.need(n, "symptoms", where);
    for (std::size_t i = 0; i < symptoms.size(); ++i) {
      const std::string sw = fmt::format("{}.symptoms[{}]", where, i);
      const YAML::Node s = symptoms[i];
      SymptomSpec sp;
      sp.kind = r.resolve(r.text(r.need(s, "kind", sw), sw + ".kind"), [&](const std::string& x) { return f.kind_index(x); },
                          "symptom kind", sw + ".kind");
      sp.p = r.number(r.need(s, "p", sw), sw + ".p");
      const std::string role = s["role"] ? r.text(s["role"], sw + ".role") : "origin";
      if (role == "origin") sp.role = Role::Origin;
      else if (role == "node") sp.role = Role::Node;
      else if (role == "peers") sp.role = Role::Peers;
      else r.fail(sw + ".role", "one of origin, node, peers");
      const std::string phase = s["phase"] ? r.text(s["phase"], sw + ".phase") : "trigger";
      if (phase == "precursor") sp.phase = Phase::Precursor;
      else if (phase == "trigger") sp.phase = Phase::Trigger;
      else if (phase == "after") sp.phase = Phase::After;
      else r.fail(sw + ".phase", "one of precursor, trigger, after");
      if (const YAML::Node v = s["value"]) {
        if (!v.IsSequence() || v.size() != 2) r.fail(sw + ".value", "expected [low, high]");
        sp.value_lo = r.number(v[0], sw + ".value[0]");
        sp.value_hi = r.number(v[1], sw + ".value[1]");
      }
      sp.confusable = r.flag_or(s, "confusable", false, sw);
      sp.all_devices = r.flag_or(s, "all_devices", false, sw);
      if (const YAML::Node only = s["only"]) {
        int a = r.resolve(r.text(only, sw + ".only"), [&](const std::string& x) { return f.action_index(x); }, "action", sw + ".only");
        for (std::size_t k = 0; k < c.fixes.size(); ++k)
          if (c.fixes[k].action == a) sp.only_fix = static_cast<int>(k);
        if (sp.only_fix == kNoIndex) r.fail(sw + ".only", "names an action that is not among this cause's fixes");
      }
      if (const YAML::Node slot = s["slot"]) {
        const std::string v = r.text(slot, sw + ".slot");
        if (v == "host") sp.slot = kSlotHost;
        else if (v == "network") sp.slot = kSlotNetwork;
        else if (v == "job") sp.slot = kSlotJob;
        else r.fail(sw + ".slot", "one of host, network, job (omit it for the faulty device)");
      }
      if (sp.p < 0 || sp.p > 1) r.fail(sw + ".p", "a probability in [0, 1]");
      c.symptoms.push_back(sp);
    }
  }

  // ---- background
  if (const YAML::Node bg = root["background"])
    for (std::size_t i = 0; i < bg.size(); ++i) {
      const std::string where = fmt::format("background[{}]", i);
      BackgroundSpec b;
      b.kind = r.resolve(r.text(r.need(bg[i], "kind", where), where + ".kind"), [&](const std::string& x) { return f.kind_index(x); },
                         "symptom kind", where + ".kind");
      b.per_day = r.number(r.need(bg[i], "per_day", where), where + ".per_day");
      if (const YAML::Node v = bg[i]["value"]) {
        b.value_lo = r.number(v[0], where + ".value[0]");
        b.value_hi = r.number(v[1], where + ".value[1]");
      }
      if (const YAML::Node slot = bg[i]["slot"]) {
        const std::string v = r.text(slot, where + ".slot");
        b.slot = v == "host" ? kSlotHost : v == "network" ? kSlotNetwork : v == "job" ? kSlotJob : kNoIndex;
      }
      f.background.push_back(b);
    }

  // ---- incumbent and QA minimum
  auto tests_of = [&](const YAML::Node& list, const std::string& where) {
    std::vector<int> out;
    for (std::size_t i = 0; list && i < list.size(); ++i)
      out.push_back(r.resolve(r.text(list[i], where), [&](const std::string& x) { return f.test_index(x); }, "test", where));
    return out;
  };
  const YAML::Node inc = r.need(root, "incumbent", "");
  f.incumbent.qa = tests_of(inc["qa"], "incumbent.qa");
  f.incumbent.qa_after_part = tests_of(inc["qa_after_part"], "incumbent.qa_after_part");
  for (std::size_t i = 0; inc["ladder"] && i < inc["ladder"].size(); ++i)
    f.incumbent.ladder.push_back(r.resolve(r.text(inc["ladder"][i], "incumbent.ladder"),
                                           [&](const std::string& x) { return f.action_index(x); }, "action", "incumbent.ladder"));
  const YAML::Node after = r.need(inc, "after_sweep", "incumbent");
  f.incumbent.after_sweep = r.resolve(r.text(r.need(after, "action", "incumbent.after_sweep"), "incumbent.after_sweep.action"),
                                      [&](const std::string& x) { return f.action_index(x); }, "action", "incumbent.after_sweep.action");
  f.incumbent.after_sweep_cause = r.resolve(r.text(r.need(after, "cause", "incumbent.after_sweep"), "incumbent.after_sweep.cause"),
                                            [&](const std::string& x) { return f.cause_index(x); }, "cause", "incumbent.after_sweep.cause");
  f.incumbent.restart_cause = r.resolve(r.text(r.need(inc, "restart_cause", "incumbent"), "incumbent.restart_cause"),
                                        [&](const std::string& x) { return f.cause_index(x); }, "cause", "incumbent.restart_cause");
  f.incumbent.repeat_incidents = static_cast<int>(r.number_or(inc, "repeat_incidents", 2, "incumbent"));
  f.incumbent.max_attempts = static_cast<int>(r.number_or(inc, "max_attempts", 3, "incumbent"));
  f.qa_minimum = tests_of(root["qa_minimum"], "qa_minimum");
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
