// Experiment configs: YAML, overrides, interpolation, validation (nexp/runtime/experiment.hpp).
#include "nexp/runtime/experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTopLevelKeys = {"experiment", "method", "params", "dataset", "device", "seed",
                                                "metrics", "objective", "sweep", "slurm", "threads", "runs_dir"};

// Where a value came from, for messages: "config 'x.yaml', line 4" or "override 'params.lr=abc'".
class Origins {
 public:
  Origins(fs::path source, std::map<std::string, std::string> overridden)
      : source_(std::move(source)), overridden_(std::move(overridden)) {}

  std::string at(const std::string& key, const YAML::Node& node) const {
    // The longest overridden prefix of key wins: `dataset=x` explains `dataset.name`.
    std::string probe = key;
    while (!probe.empty()) {
      if (auto it = overridden_.find(probe); it != overridden_.end())
        return fmt::format("command-line override '{}'", it->second);
      auto dot = probe.rfind('.');
      if (dot == std::string::npos) break;
      probe.resize(dot);
    }
    if (node.IsDefined() && !node.Mark().is_null())
      return fmt::format("config '{}', line {}", source_.string(), node.Mark().line + 1);
    return fmt::format("config '{}'", source_.string());
  }
  const fs::path& source() const { return source_; }

 private:
  fs::path source_;
  std::map<std::string, std::string> overridden_;
};

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Scalar: return fmt::format("'{}'", node.Scalar());
    default: return "an undefined value";
  }
}

std::string join_path(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  std::string part;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  return parts;
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  auto c = closest(word, candidates);
  if (!c.empty()) return fmt::format(" Did you mean '{}'?", c);
  if (candidates.empty()) return "";
  return fmt::format(" Valid keys: {}.", fmt::join(candidates, ", "));
}

// ---------------------------------------------------------------- scalar conversion

bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno == 0 && end && *end == '\0') { out = v; return true; }
  // 1e3 and 10.0 are integers written as floats; accept them when exact.
  double d = 0;
  std::istringstream ss(s);
  if (ss >> d && ss.eof() && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
    out = static_cast<std::int64_t>(d);
    return true;
  }
  return false;
}

bool parse_float(const std::string& s, double& out) {
  static const std::map<std::string, double> special = {
      {".inf", INFINITY}, {".Inf", INFINITY}, {".INF", INFINITY}, {"inf", INFINITY},
      {"-.inf", -INFINITY}, {"-.Inf", -INFINITY}, {"-inf", -INFINITY}, {".nan", NAN}, {"nan", NAN}};
  if (auto it = special.find(s); it != special.end()) { out = it->second; return true; }
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno == ERANGE || !end || *end != '\0') return false;
  out = v;
  return true;
}

bool parse_bool(const std::string& s, bool& out) {
  static const std::set<std::string> yes = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
  static const std::set<std::string> no = {"false", "False", "FALSE", "no", "No", "off", "Off"};
  if (yes.count(s)) { out = true; return true; }
  if (no.count(s)) { out = false; return true; }
  return false;
}

// Converts `node` to the parameter's type; returns an empty message on success.
std::string convert(const YAML::Node& node, Type type, Value& out) {
  auto scalar_to = [&](const YAML::Node& n, Type t, Value& v) -> bool {
    if (!n.IsScalar()) return false;
    const std::string& s = n.Scalar();
    switch (t) {
      case Type::Bool: { bool b; if (!parse_bool(s, b)) return false; v = b; return true; }
      case Type::Int: { std::int64_t i; if (!parse_int(s, i)) return false; v = i; return true; }
      case Type::Float: { double d; if (!parse_float(s, d)) return false; v = d; return true; }
      case Type::String: v = s; return true;
      default: return false;
    }
  };
  auto element_type = [](Type t) {
    return t == Type::IntList ? Type::Int : t == Type::FloatList ? Type::Float : Type::String;
  };
  switch (type) {
    case Type::Bool: case Type::Int: case Type::Float: case Type::String:
      if (!scalar_to(node, type, out)) return fmt::format("expected {}, found {}", type_name(type), describe_node(node));
      return {};
    case Type::IntList: case Type::FloatList: case Type::StringList: {
      std::vector<YAML::Node> items;
      if (node.IsSequence()) for (const auto& item : node) items.push_back(item);
      else if (node.IsScalar()) items.push_back(node);  // a single value is a list of one
      else return fmt::format("expected {}, found {}", type_name(type), describe_node(node));
      std::vector<std::int64_t> ints;
      std::vector<double> floats;
      std::vector<std::string> strings;
      for (size_t i = 0; i < items.size(); ++i) {
        Value v;
        if (!scalar_to(items[i], element_type(type), v))
          return fmt::format("expected {}, but element {} is {}", type_name(type), i, describe_node(items[i]));
        if (type == Type::IntList) ints.push_back(std::get<std::int64_t>(v));
        else if (type == Type::FloatList) floats.push_back(std::get<double>(v));
        else strings.push_back(std::get<std::string>(v));
      }
      if (type == Type::IntList) out = ints;
      else if (type == Type::FloatList) out = floats;
      else out = strings;
      return {};
    }
  }
  return "unknown type";
}

YAML::Node value_to_yaml(const Value& value) {
  const Type t = type_of(value);
  // Lists start as an empty sequence, so that an empty list is written `[]`, not `~`.
  YAML::Node n(t == Type::IntList || t == Type::FloatList || t == Type::StringList ? YAML::NodeType::Sequence
                                                                                    : YAML::NodeType::Null);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(v)) n = ".nan";
          else if (std::isinf(v)) n = v > 0 ? ".inf" : "-.inf";
          else n = v;
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          for (double x : v) n.push_back(x);
          n.SetStyle(YAML::EmitterStyle::Flow);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<std::string>>) {
          for (const auto& x : v) n.push_back(x);
          n.SetStyle(YAML::EmitterStyle::Flow);
        } else {
          n = v;
        }
      },
      value);
  if (n.IsSequence()) n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

// ---------------------------------------------------------------- interpolation

class Interpolator {
 public:
  Interpolator(YAML::Node root, const Origins& origins) : root_(std::move(root)), origins_(origins) {}

  void run() { visit(root_, ""); }

 private:
  void visit(YAML::Node node, const std::string& path) {
    if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it)
        visit(it->second, join_path(path, it->first.as<std::string>()));
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i) visit(node[i], join_path(path, std::to_string(i)));
    } else if (node.IsScalar() && node.Scalar().find("${") != std::string::npos) {
      node = resolve(node, path);
    }
  }

  YAML::Node resolve(const YAML::Node& node, const std::string& path) {
    if (active_.count(path))
      throw ConfigError(fmt::format("{}: key '{}' refers to itself through ${{...}} (cycle: {}). Break the cycle",
                                    origins_.at(path, node), path, fmt::join(active_, " -> ")));
    active_.insert(path);
    const std::string text = node.Scalar();
    YAML::Node result;
    // A value that is exactly one reference keeps the referenced node's type.
    if (text.rfind("${", 0) == 0 && text.find('}') == text.size() - 1 && text.find("${", 2) == std::string::npos) {
      result = lookup(text.substr(2, text.size() - 3), path, node);
    } else {
      std::string out;
      size_t pos = 0;
      while (pos < text.size()) {
        size_t start = text.find("${", pos);
        if (start == std::string::npos) { out += text.substr(pos); break; }
        size_t end = text.find('}', start);
        if (end == std::string::npos)
          throw ConfigError(fmt::format("{}: key '{}' has an unterminated interpolation in '{}'; close it with '}}'",
                                        origins_.at(path, node), path, text));
        out += text.substr(pos, start - pos);
        YAML::Node ref = lookup(text.substr(start + 2, end - start - 2), path, node);
        if (!ref.IsScalar())
          throw ConfigError(fmt::format("{}: key '{}' embeds '${{{}}}' in text, but that is {}, not a single value",
                                        origins_.at(path, node), path, text.substr(start + 2, end - start - 2),
                                        describe_node(ref)));
        out += ref.Scalar();
        pos = end + 1;
      }
      result = YAML::Node(out);
    }
    active_.erase(path);
    return result;
  }

  YAML::Node lookup(const std::string& ref, const std::string& path, const YAML::Node& at) {
    if (ref.rfind("env:", 0) == 0) {
      std::string name = ref.substr(4), fallback;
      bool has_fallback = false;
      if (auto comma = name.find(','); comma != std::string::npos) {
        fallback = name.substr(comma + 1);
        name = name.substr(0, comma);
        has_fallback = true;
      }
      if (const char* v = std::getenv(name.c_str())) return YAML::Node(std::string(v));
      if (has_fallback) return YAML::Node(fallback);
      throw ConfigError(fmt::format("{}: key '{}' uses '${{env:{}}}', but the environment variable {} is not set. "
                                    "Set it, or give a default: '${{env:{},default}}'",
                                    origins_.at(path, at), path, name, name, name));
    }
    YAML::Node cur = root_;
    std::string walked;
    for (const auto& part : split_path(ref)) {
      YAML::Node next;
      if (cur.IsMap()) next = cur[part];
      else if (cur.IsSequence()) {
        std::int64_t i;
        if (parse_int(part, i) && i >= 0 && static_cast<size_t>(i) < cur.size()) next = cur[static_cast<size_t>(i)];
      }
      if (!next.IsDefined() || (!cur.IsMap() && !cur.IsSequence())) {
        std::vector<std::string> keys;
        if (cur.IsMap())
          for (auto it = cur.begin(); it != cur.end(); ++it) keys.push_back(join_path(walked, it->first.as<std::string>()));
        throw ConfigError(fmt::format("{}: key '{}' refers to '${{{}}}', which is not set in the config.{}",
                                      origins_.at(path, at), path, ref, suggestion(join_path(walked, part), keys)));
      }
      walked = join_path(walked, part);
      cur.reset(next);  // re-point the handle; `cur = next` would overwrite the node cur refers to
    }
    if (cur.IsScalar() && cur.Scalar().find("${") != std::string::npos) return resolve(cur, walked);
    return cur;
  }

  YAML::Node root_;
  const Origins& origins_;
  std::set<std::string> active_;
};

}  // namespace

// ---------------------------------------------------------------- public helpers

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t prev = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cur = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
        prev = cur;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  // Close means a few edits relative to the length, or one name containing the other.
  if (best.empty()) return "";
  bool contains = !word.empty() && (best.find(word) != std::string::npos || word.find(best) != std::string::npos);
  if (best_d <= std::max<size_t>(2, word.size() / 3) || contains) return best;
  return "";
}

Override parse_override(const std::string& text) {
  Override o;
  o.text = text;
  std::string body = text;
  if (!body.empty() && body[0] == '~') {
    o.kind = Override::Kind::Remove;
    body = body.substr(1);
    if (auto eq = body.find('='); eq != std::string::npos) body = body.substr(0, eq);  // `~a.b=v`: v ignored
    o.key = body;
  } else {
    if (!body.empty() && body[0] == '+') o.kind = Override::Kind::Add, body = body.substr(1);
    auto eq = body.find('=');
    if (eq == std::string::npos)
      throw ConfigError(fmt::format("override '{}' has no '='. Write key=value to set, +key=value to add, ~key to "
                                    "delete (e.g. params.lr=0.01)",
                                    text));
    o.key = body.substr(0, eq);
    o.value = body.substr(eq + 1);
  }
  auto valid = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; };
  if (o.key.empty() || !std::all_of(o.key.begin(), o.key.end(), valid) || o.key.front() == '.' ||
      o.key.back() == '.' || o.key.find("..") != std::string::npos)
    throw ConfigError(fmt::format("override '{}': '{}' is not a key path; expected dotted names such as "
                                  "params.lr or dataset.n",
                                  text, o.key));
  return o;
}

YAML::Node read_yaml_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw ConfigError(fmt::format("config file '{}' does not exist (working directory '{}'). Check the path; "
                                  "the shipped experiments are under configs/<plugin>/",
                                  file.string(), fs::current_path().string()));
  if (fs::is_directory(file, ec))
    throw ConfigError(fmt::format("config '{}' is a folder, not a YAML file; name one of the .yaml files in it",
                                  file.string()));
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("config file '{}' cannot be read; check its permissions", file.string()));
  try {
    YAML::Node root = YAML::Load(in);
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap())
      throw ConfigError(fmt::format("config '{}' must be a YAML map of keys (method:, params:, ...), but its top "
                                    "level is {}",
                                    file.string(), describe_node(root)));
    return root;
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("config '{}', line {}, column {}: malformed YAML: {}. Check indentation (spaces, "
                                  "not tabs), colons after keys, and quotes around values with ':' or '#'",
                                  file.string(), e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

namespace {
Params params_from_node(const YAML::Node& node, const Schema& schema, const std::string& section,
                        const std::string& owner, const Origins& origins) {
  std::map<std::string, Value> values;
    if (node.IsDefined() && !node.IsNull() && !node.IsMap())
      throw ConfigError(fmt::format("{}: '{}' must be a map of parameters of '{}', but it is {}",
                                    origins.at(section, node), section, owner, describe_node(node)));
    if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        const std::string path = join_path(section, key);
        const Param* p = schema.find(key);
        if (!p)
          throw ConfigError(fmt::format("{}: unknown key '{}': '{}' has no parameter '{}'.{} See `nexp describe {}`",
                                        origins.at(path, it->first), path, owner, key,
                                        suggestion(key, schema.names()), owner));
        if (it->second.IsNull()) {
          if (p->is_optional()) continue;
          throw ConfigError(fmt::format("{}: '{}' has no value; expected {} ({}). Give a value or delete the key to "
                                        "use the default",
                                        origins.at(path, it->second), path, p->constraint(), p->help()));
        }
        Value v;
        if (auto err = convert(it->second, p->type(), v); !err.empty())
          throw ConfigError(fmt::format("{}: '{}' {}. {}: {}",
                                        origins.at(path, it->second), path, err, key, p->help()));
        if (auto err = p->check(v); !err.empty())
          throw ConfigError(fmt::format("{}: '{}' is out of range: {}; expected {}. {}: {}",
                                        origins.at(path, it->second), path, err, p->constraint(), key, p->help()));
        values[key] = std::move(v);
      }
    }
    for (const auto& p : schema.params()) {
      if (values.count(p.name())) continue;
      if (p.is_required())
        throw ConfigError(fmt::format("{}: '{}' is required by '{}' and has no default; add `{}: <{}>` under {}: "
                                      "({})",
                                      origins.at(section, node), join_path(section, p.name()), owner, p.name(),
                                      p.constraint(), section, p.help()));
      if (!p.is_optional()) values[p.name()] = p.fallback();
    }
  return Params(std::move(values));
}
}  // namespace

Params params_from_yaml(const YAML::Node& node, const Schema& schema, const std::string& section,
                        const std::string& owner, const fs::path& source) {
  return params_from_node(node, schema, section, owner, Origins(source, {}));
}

YAML::Node params_to_yaml(const Params& params, const Schema& schema) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& p : schema.params())
    if (params.has(p.name())) out[p.name()] = value_to_yaml(params.get(p.name()));
  // Values not in the schema (none after validation) would be dropped silently; keep them visible.
  for (const auto& [k, v] : params.values())
    if (!schema.find(k)) out[k] = value_to_yaml(v);
  return out;
}

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, const fs::path& source,
                     const Registry& registry) {
  (void)registry;
  for (const auto& o : overrides) {
    auto parts = split_path(o.key);
    if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), parts[0]) == kTopLevelKeys.end())
      throw ConfigError(fmt::format("override '{}': unknown top-level key '{}'.{}", o.text, parts[0],
                                    suggestion(parts[0], kTopLevelKeys)));
    // Walk to the parent, creating maps on the way (validation later rejects keys that do not exist).
    YAML::Node parent = root;
    std::string walked;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      walked = join_path(walked, parts[i]);
      YAML::Node child = parent[parts[i]];
      if (child.IsScalar() && (parts[i] == "dataset" || parts[i] == "device") && i == 0) {
        // `dataset: mnist` is shorthand for `dataset: {name: mnist}`; expand it so that dataset.x can be set.
        YAML::Node expanded(YAML::NodeType::Map);
        expanded[parts[i] == "dataset" ? "name" : "id"] = child.Scalar();
        parent[parts[i]] = expanded;
        child.reset(parent[parts[i]]);
      }
      if (!child.IsDefined() || child.IsNull()) {
        if (o.kind == Override::Kind::Remove)
          throw ConfigError(fmt::format("override '{}': cannot delete '{}': '{}' is not in the config", o.text, o.key, walked));
        parent[parts[i]] = YAML::Node(YAML::NodeType::Map);
        child.reset(parent[parts[i]]);
      } else if (!child.IsMap()) {
        throw ConfigError(fmt::format("override '{}': '{}' is {}, not a map, so it has no key '{}'", o.text, walked,
                                      describe_node(child), parts[i + 1]));
      }
      parent.reset(child);
    }
    const std::string& leaf = parts.back();
    const bool exists = parent[leaf].IsDefined() && !parent[leaf].IsNull();
    switch (o.kind) {
      case Override::Kind::Remove:
        if (!exists)
          throw ConfigError(fmt::format("override '{}': cannot delete '{}': it is not in the config", o.text, o.key));
        parent.remove(leaf);
        break;
      case Override::Kind::Add:
        if (exists)
          throw ConfigError(fmt::format("override '{}': '{}' is already in the config (value {}); use '{}={}' to "
                                        "change it",
                                        o.text, o.key, describe_node(parent[leaf]), o.key, o.value));
        [[fallthrough]];
      case Override::Kind::Set: {
        YAML::Node value;
        try {
          value = o.value.empty() ? YAML::Node(YAML::NodeType::Null) : YAML::Load(o.value);
        } catch (const YAML::Exception& e) {
          throw ConfigError(fmt::format("override '{}': the value '{}' is not valid YAML ({}); quote it in the shell, "
                                        "e.g. '{}=\"{}\"'",
                                        o.text, o.value, e.msg, o.key, o.value));
        }
        // Switching a map-valued dataset or device by name keeps its parameters.
        if (parts.size() == 1 && (leaf == "dataset" || leaf == "device") && exists && parent[leaf].IsMap() &&
            value.IsScalar()) {
          parent[leaf][leaf == "dataset" ? "name" : "id"] = value;
        } else {
          parent[leaf] = value;
        }
        break;
      }
    }
  }
  (void)source;
}

// ---------------------------------------------------------------- resolution

Experiment resolve_experiment(YAML::Node root, const fs::path& source, const std::vector<Override>& overrides,
                              const Registry& registry) {
  std::map<std::string, std::string> overridden;
  for (const auto& o : overrides) overridden[o.key] = o.text;
  Origins origins(source, overridden);
  apply_overrides(root, overrides, source, registry);
  Interpolator(root, origins).run();

  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), key) == kTopLevelKeys.end())
      throw ConfigError(fmt::format("{}: unknown top-level key '{}'.{}", origins.at(key, it->first), key,
                                    suggestion(key, kTopLevelKeys)));
  }
  auto scalar = [&](const std::string& key, const char* expected) -> std::optional<std::string> {
    const YAML::Node n = root[key];
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    if (!n.IsScalar())
      throw ConfigError(fmt::format("{}: '{}' must be {}, found {}", origins.at(key, n), key, expected, describe_node(n)));
    return n.Scalar();
  };
  auto integer = [&](const std::string& key, std::int64_t lo, std::int64_t fallback) -> std::int64_t {
    auto s = scalar(key, "an integer");
    if (!s) return fallback;
    std::int64_t v;
    if (!parse_int(*s, v) || v < lo)
      throw ConfigError(fmt::format("{}: '{}' must be an integer >= {}, found '{}'", origins.at(key, root[key]), key,
                                    lo, *s));
    return v;
  };

  Experiment e;
  e.source = source;
  e.experiment = scalar("experiment", "a name").value_or(source.stem().string());
  if (e.experiment.empty() || e.experiment.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos || e.experiment[0] == '.')
    throw ConfigError(fmt::format("{}: experiment name '{}' names a folder under runs/, so it may hold only letters, "
                                  "digits, '_', '-' and '.'",
                                  origins.at("experiment", root["experiment"]), e.experiment));

  // method and params
  auto method = scalar("method", "a method name such as htc.decide");
  if (!method)
    throw ConfigError(fmt::format("{}: no 'method:' key. Every experiment names the method to run, e.g. "
                                  "`method: htc.decide`; `nexp list` shows them",
                                  origins.at("method", root)));
  const MethodSpec* spec = registry.find_method(*method);
  if (!spec) {
    std::vector<std::string> names;
    for (const auto* m : registry.methods()) names.push_back(m->name);
    std::string why;
    auto slug = method->substr(0, method->find('.'));
    for (const auto& f : registry.failures())
      if (f.path.find("libnexp_plugin_" + slug + ".so") != std::string::npos)
        why = fmt::format(" Plugin '{}' failed to load: {}", slug, f.message);
    if (why.empty() && !registry.plugin(slug) && slug != *method)
      why = fmt::format(" No plugin '{}' is loaded; build it, or point --plugin-dir / NEXP_PLUGIN_PATH at its folder.", slug);
    throw ConfigError(fmt::format("{}: unknown method '{}'.{}{} `nexp list` shows the methods there are",
                                  origins.at("method", root["method"]), *method, suggestion(*method, names), why));
  }
  e.method = spec->name;
  e.params = params_from_node(root["params"], spec->schema, "params", spec->name, origins);
  const std::string plugin_slug = spec->name.substr(0, spec->name.find('.'));

  // dataset
  if (const YAML::Node d = root["dataset"]; d.IsDefined() && !d.IsNull()) {
    YAML::Node params(YAML::NodeType::Map);  // the dataset map less its name
    if (d.IsScalar()) {
      e.dataset = d.Scalar();
    } else if (d.IsMap()) {
      if (!d["name"].IsDefined() || !d["name"].IsScalar())
        throw ConfigError(fmt::format("{}: 'dataset' is a map without 'name:'; write `dataset: {{name: <dataset>, "
                                      "...parameters}}` or just `dataset: <dataset>`",
                                      origins.at("dataset", d)));
      e.dataset = d["name"].Scalar();
      for (auto it = d.begin(); it != d.end(); ++it)
        if (it->first.as<std::string>() != "name") params[it->first] = it->second;
    } else {
      throw ConfigError(fmt::format("{}: 'dataset' must be a name or a map with 'name:', found {}",
                                    origins.at("dataset", d), describe_node(d)));
    }
    const DatasetSpec* ds = registry.find_dataset(e.dataset);
    if (!ds) {
      std::vector<std::string> names;
      for (const auto* x : registry.datasets()) names.push_back(x->name);
      throw ConfigError(fmt::format("{}: unknown dataset '{}'.{} `nexp list` shows the datasets there are",
                                    origins.at("dataset.name", d.IsMap() ? d["name"] : d), e.dataset,
                                    suggestion(e.dataset, names)));
    }
    if (!spec->datasets.empty()) {
      auto matches = [&](const std::string& pattern) {
        if (!pattern.empty() && pattern.back() == '*') return e.dataset.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
        return e.dataset == pattern;
      };
      if (std::none_of(spec->datasets.begin(), spec->datasets.end(), matches))
        throw ConfigError(fmt::format("{}: method '{}' does not take dataset '{}'; it accepts {}",
                                      origins.at("dataset", d), spec->name, e.dataset, fmt::join(spec->datasets, ", ")));
    }
    e.dataset_params = params_from_node(params, ds->schema, "dataset", ds->name, origins);
  } else if (!spec->datasets.empty()) {
    throw ConfigError(fmt::format("{}: method '{}' needs a dataset ({}); add `dataset: <name>`",
                                  origins.at("dataset", root), spec->name, fmt::join(spec->datasets, ", ")));
  }

  // device
  if (const YAML::Node d = root["device"]; d.IsDefined() && !d.IsNull()) {
    YAML::Node options(YAML::NodeType::Map);
    if (d.IsScalar()) {
      e.device = d.Scalar();
    } else if (d.IsMap() && d["id"].IsDefined() && d["id"].IsScalar()) {
      e.device = d["id"].Scalar();
      for (auto it = d.begin(); it != d.end(); ++it)
        if (it->first.as<std::string>() != "id") options[it->first.as<std::string>()] = it->second;
    } else {
      throw ConfigError(fmt::format("{}: 'device' must be cpu, cuda:N, auto, <backend>:N, or a map "
                                    "{{id: <backend>:N, ...options}}; found {}",
                                    origins.at("device", d), describe_node(d)));
    }
    if (e.device != "auto") {
      auto colon = e.device.find(':');
      std::string backend = e.device.substr(0, colon);
      bool index_ok = colon == std::string::npos ||
                      (colon + 1 < e.device.size() &&
                       e.device.find_first_not_of("0123456789", colon + 1) == std::string::npos);
      const DeviceBackendSpec* b = registry.find_backend(backend);
      if (!b || !index_ok) {
        std::vector<std::string> names{"auto"};
        for (const auto* x : registry.backends()) names.push_back(x->name);
        throw ConfigError(fmt::format("{}: device '{}' is not of the form auto, <backend> or <backend>:<index> with a "
                                      "known backend ({}).{}",
                                      origins.at("device", d), e.device, fmt::join(names, ", "),
                                      b ? "" : suggestion(backend, names)));
      }
      e.device_options = params_from_node(options, b->schema, "device", b->name, origins);
    } else if (options.size() > 0) {
      throw ConfigError(fmt::format("{}: 'device: auto' takes no options; name the backend (e.g. id: simaccel:0) to "
                                    "pass options",
                                    origins.at("device", d)));
    }
  }

  e.seed = static_cast<std::uint64_t>(integer("seed", 0, 0));
  e.threads = static_cast<int>(integer("threads", 0, 0));
  e.runs_dir = scalar("runs_dir", "a folder path").value_or(default_runs_dir());

  // metrics: each must be something the method produces.
  auto produced = [&](const std::string& name) {
    if (std::find(spec->metrics.begin(), spec->metrics.end(), name) != spec->metrics.end()) return true;
    if (!spec->predictions) return false;
    if (const MetricSpec* m = registry.find_metric(name); m && m->from_predictions) return true;
    auto us = name.rfind('_');  // "<prefix>_<metric>", e.g. test_accuracy
    if (us == std::string::npos) return false;
    const MetricSpec* m = registry.find_metric(name.substr(us + 1));
    return m && m->from_predictions;
  };
  auto producible = [&] {
    std::vector<std::string> names = spec->metrics;
    if (spec->predictions)
      for (const auto* m : registry.metrics())
        if (m->from_predictions) names.push_back(m->name);
    return names;
  };
  if (const YAML::Node m = root["metrics"]; m.IsDefined() && !m.IsNull()) {
    std::vector<YAML::Node> items;
    if (m.IsSequence()) for (const auto& x : m) items.push_back(x);
    else if (m.IsScalar()) items.push_back(m);
    else throw ConfigError(fmt::format("{}: 'metrics' must be a list of metric names, found {}", origins.at("metrics", m), describe_node(m)));
    for (const auto& x : items) {
      if (!x.IsScalar())
        throw ConfigError(fmt::format("{}: each entry of 'metrics' must be a name, found {}", origins.at("metrics", x), describe_node(x)));
      if (!produced(x.Scalar()))
        throw ConfigError(fmt::format("{}: method '{}' cannot produce metric '{}'. It produces: {}.{}",
                                      origins.at("metrics", x), spec->name, x.Scalar(), fmt::join(producible(), ", "),
                                      suggestion(x.Scalar(), producible())));
      e.metrics.push_back(x.Scalar());
    }
  } else {
    e.metrics = spec->metrics;
  }

  // objective: {metric, mode} or just the metric's name
  if (const YAML::Node o = root["objective"]; o.IsDefined() && !o.IsNull()) {
    Objective obj;
    std::string mode;
    if (o.IsScalar()) obj.metric = o.Scalar();
    else if (o.IsMap() && o["metric"].IsDefined() && o["metric"].IsScalar()) {
      obj.metric = o["metric"].Scalar();
      if (o["mode"].IsDefined()) mode = o["mode"].as<std::string>();
      for (auto it = o.begin(); it != o.end(); ++it) {
        auto k = it->first.as<std::string>();
        if (k != "metric" && k != "mode")
          throw ConfigError(fmt::format("{}: unknown key 'objective.{}'; objective takes metric and mode (min|max)",
                                        origins.at("objective." + k, it->first), k));
      }
    } else {
      throw ConfigError(fmt::format("{}: 'objective' must be {{metric: <name>, mode: min|max}}, found {}",
                                    origins.at("objective", o), describe_node(o)));
    }
    if (!produced(obj.metric))
      throw ConfigError(fmt::format("{}: the objective '{}' is not a metric that method '{}' produces ({}).{}",
                                    origins.at("objective", o), obj.metric, spec->name, fmt::join(producible(), ", "),
                                    suggestion(obj.metric, producible())));
    if (mode.empty()) {
      const MetricSpec* ms = registry.find_metric(obj.metric, plugin_slug);
      if (!ms) ms = registry.find_metric(obj.metric.substr(obj.metric.rfind('_') + 1));
      if (!ms || ms->direction == Direction::None)
        throw ConfigError(fmt::format("{}: metric '{}' has no direction; say `objective: {{metric: {}, mode: min}}` "
                                      "or `mode: max`",
                                      origins.at("objective", o), obj.metric, obj.metric));
      obj.mode = ms->direction;
    } else if (mode == "min" || mode == "max") {
      obj.mode = mode == "min" ? Direction::Minimize : Direction::Maximize;
    } else {
      throw ConfigError(fmt::format("{}: objective.mode must be 'min' or 'max', found '{}'",
                                    origins.at("objective.mode", o["mode"]), mode));
    }
    e.objective = obj;
  }

  if (root["sweep"].IsDefined() && !root["sweep"].IsNull()) e.sweep = YAML::Clone(root["sweep"]);
  if (root["slurm"].IsDefined() && !root["slurm"].IsNull()) e.slurm = YAML::Clone(root["slurm"]);
  return e;
}

Experiment load_experiment(const fs::path& file, const std::vector<Override>& overrides, const Registry& registry) {
  return resolve_experiment(read_yaml_file(file), file, overrides, registry);
}

// ---------------------------------------------------------------- the resolved form

YAML::Node Experiment::to_yaml() const {
  const Registry& registry = Registry::global();
  YAML::Node out(YAML::NodeType::Map);
  out["experiment"] = experiment;
  out["method"] = method;
  if (const MethodSpec* m = registry.find_method(method)) out["params"] = params_to_yaml(params, m->schema);
  else out["params"] = params_to_yaml(params, Schema{});
  if (!dataset.empty()) {
    YAML::Node d(YAML::NodeType::Map);
    d["name"] = dataset;
    const DatasetSpec* ds = registry.find_dataset(dataset);
    YAML::Node p = params_to_yaml(dataset_params, ds ? ds->schema : Schema{});
    for (auto it = p.begin(); it != p.end(); ++it) d[it->first] = it->second;
    out["dataset"] = d;
  }
  if (device_options.values().empty()) {
    out["device"] = device;
  } else {
    YAML::Node d(YAML::NodeType::Map);
    d["id"] = device;
    const DeviceBackendSpec* b = registry.find_backend(device.substr(0, device.find(':')));
    YAML::Node p = params_to_yaml(device_options, b ? b->schema : Schema{});
    for (auto it = p.begin(); it != p.end(); ++it) d[it->first] = it->second;
    out["device"] = d;
  }
  out["seed"] = seed;
  YAML::Node m(YAML::NodeType::Sequence);
  for (const auto& x : metrics) m.push_back(x);
  m.SetStyle(YAML::EmitterStyle::Flow);
  out["metrics"] = m;
  if (objective) {
    YAML::Node o(YAML::NodeType::Map);
    o["metric"] = objective->metric;
    o["mode"] = objective->mode == Direction::Minimize ? "min" : "max";
    out["objective"] = o;
  }
  out["threads"] = threads;
  out["runs_dir"] = runs_dir;
  if (sweep.IsDefined() && !sweep.IsNull()) out["sweep"] = sweep;
  if (slurm.IsDefined() && !slurm.IsNull()) out["slurm"] = slurm;
  return out;
}

std::string Experiment::to_yaml_text() const {
  YAML::Emitter em;
  em << to_yaml();
  return std::string(em.c_str()) + "\n";
}

std::string Experiment::config_hash() const {
  YAML::Node n = to_yaml();
  for (const char* k : {"experiment", "runs_dir", "threads", "sweep", "slurm"}) n.remove(k);
  YAML::Emitter em;
  em << n;
  return sha256_hex(em.c_str());
}

}  // namespace nexp
