// YAML scalars <-> typed values, key paths, origins of values, and reading a config file.
#include "yaml_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"

namespace nexp {

namespace fs = std::filesystem;
using detail::describe_node;

namespace detail {

const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = {"experiment", "method", "params", "dataset", "device", "seed",
                                                "metrics", "objective", "sweep", "slurm", "distributed", "llm", "threads", "runs_dir"};
  return keys;
}

std::string Origins::at(const std::string& key, const YAML::Node& node) const {
  // The longest overridden prefix of key wins: `dataset=x` explains `dataset.name`.
  std::string probe = key;
  while (!probe.empty()) {
    if (auto it = overridden_.find(probe); it != overridden_.end())
      return it->second;  // "command-line override '...'", or where a sweep axis was written
    auto dot = probe.rfind('.');
    if (dot == std::string::npos) break;
    probe.resize(dot);
  }
  if (node.IsDefined() && !node.Mark().is_null())
    return fmt::format("config '{}', line {}", source_.string(), node.Mark().line + 1);
  return fmt::format("config '{}'", source_.string());
}

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

// YAML 1.2's core schema: decimal ([-+]?[0-9]+, leading zeros decimal), 0x hex, 0o octal.
bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  int base = 10;
  std::size_t skip = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) base = s[1] == 'x' ? 16 : 8, skip = 2;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str() + skip, &end, base);
  if (errno == 0 && end && *end == '\0' && (skip == 0 || std::isxdigit(static_cast<unsigned char>(s[2])))) {
    out = v;
    return true;
  }
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
    case Type::Map: case Type::MapList:
      return "is a map or a list of maps: validate it with its schema (params_from_node)";
  }
  return "unknown type";
}

void Problems::raise() const {
  if (messages_.empty()) return;
  if (messages_.size() == 1) throw ConfigError(messages_.front());
  std::string all = fmt::format("{} problems in the config:", messages_.size());
  for (const auto& m : messages_) all += "\n  - " + m;
  throw ConfigError(all);
}

namespace {

// A real as `to_string` writes it (0.2, not yaml-cpp's 0.20000000000000001; 3.0 stays a real), or YAML's
// spelling of the non-finite ones.
YAML::Node real_to_yaml(double v) {
  if (std::isnan(v)) return YAML::Node(".nan");
  if (std::isinf(v)) return YAML::Node(v > 0 ? ".inf" : "-.inf");
  return YAML::Node(to_string(Value(v)));
}

}  // namespace

YAML::Node value_to_yaml(const Value& value) {
  const Type t = type_of(value);
  if (t == Type::Map) {
    YAML::Node m(YAML::NodeType::Map);
    for (const auto& [k, v] : std::get<std::shared_ptr<const Params>>(value)->values()) m[k] = value_to_yaml(v);
    return m;
  }
  if (t == Type::MapList) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& item : std::get<std::vector<Params>>(value)) list.push_back(value_to_yaml(std::make_shared<const Params>(item)));
    return list;
  }
  // Lists start as an empty sequence, so that an empty list is written `[]`, not `~`.
  YAML::Node n(t == Type::IntList || t == Type::FloatList || t == Type::StringList ? YAML::NodeType::Sequence
                                                                                    : YAML::NodeType::Null);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          n = real_to_yaml(v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          for (double x : v) n.push_back(real_to_yaml(x));
          n.SetStyle(YAML::EmitterStyle::Flow);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<std::string>>) {
          for (const auto& x : v) n.push_back(x);
          n.SetStyle(YAML::EmitterStyle::Flow);
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t> ||
                             std::is_same_v<T, std::string>) {
          n = v;
        }  // maps were handled above
      },
      value);
  if (n.IsSequence()) n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

}  // namespace detail

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

}  // namespace nexp
