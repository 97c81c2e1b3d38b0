// Command-line overrides: `a.b=v`, `+a.b=v`, `++a.b=v`, `~a.b[=v]` (nexp/runtime/overrides.hpp). The
// value grammar is override_grammar.cpp's.
#include "nexp/runtime/overrides.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "nexp/error.hpp"
#include "nexp/runtime/sweep.hpp"
#include "override_grammar.hpp"
#include "yaml_values.hpp"

namespace nexp {

namespace fs = std::filesystem;
using namespace detail;

namespace {

const char* kForms = "Write key=value to set, +key=value to add, ++key=value to add or set, ~key to delete "
                     "(e.g. params.lr=0.01)";

bool valid_key(const std::string& key) {
  auto valid = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; };
  return !key.empty() && std::all_of(key.begin(), key.end(), valid) && key.front() != '.' && key.back() != '.' &&
         key.find("..") == std::string::npos;
}

// The kind from the prefix; returns the length of the prefix.
std::size_t read_kind(const std::string& text, Override& o) {
  if (text.rfind("++", 0) == 0) return o.kind = Override::Kind::ForceAdd, 2;
  if (text.rfind("+", 0) == 0) return o.kind = Override::Kind::Add, 1;
  if (text.rfind("~", 0) == 0) return o.kind = Override::Kind::Remove, 1;
  return o.kind = Override::Kind::Set, 0;
}

// The value of an override as YAML; a sweep (a,b or a function) is refused here: it needs -m.
YAML::Node value_node(const Override& o) {
  const auto elements = parse_value(o.value, o.text, o.text.size() - o.value.size());
  if (elements.size() > 1 || elements.front().kind == Element::Kind::Function)
    throw ConfigError(fmt::format("override '{}' looks like a sweep ({}); add -m to run one trial per value, or "
                                  "quote a plain text value: {}='{}'",
                                  o.text, elements.size() > 1 ? "several values" : "a range or distribution", o.key,
                                  o.value));
  return element_to_yaml(elements.front());
}

// `dataset: mnist` is shorthand for `dataset: {name: mnist}` (and `device:` for `{id: ...}`).
const char* shorthand_key(const std::string& top) {
  return top == "dataset" ? "name" : top == "device" ? "id" : nullptr;
}

// Walks to the parent map of the override's key, creating maps on the way for set/add (validation
// later rejects keys that do not exist). Returns the parent.
YAML::Node walk_to_parent(YAML::Node root, const Override& o, const std::vector<std::string>& parts) {
  YAML::Node parent = root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    walked = join_path(walked, parts[i]);
    YAML::Node child = parent[parts[i]];
    if (i == 0 && child.IsScalar() && shorthand_key(parts[i])) {
      YAML::Node expanded(YAML::NodeType::Map);
      expanded[shorthand_key(parts[i])] = child.Scalar();
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
  return parent;
}

// Two values are the same when their YAML texts are, or when both are the same number.
bool same_value(const YAML::Node& a, const YAML::Node& b) {
  if (YAML::Dump(a) == YAML::Dump(b)) return true;
  double x, y;
  return a.IsScalar() && b.IsScalar() && parse_float(a.Scalar(), x) && parse_float(b.Scalar(), y) && x == y;
}

void remove(YAML::Node parent, const Override& o, const std::string& leaf) {
  const YAML::Node current = parent[leaf];
  if (!current.IsDefined() || current.IsNull())
    throw ConfigError(fmt::format("override '{}': cannot delete '{}': it is not in the config", o.text, o.key));
  if (o.has_value) {
    const YAML::Node expected = value_node(o);
    if (!same_value(current, expected))
      throw ConfigError(fmt::format("override '{}': '{}' is {}, not {}; `~key=value` deletes only a matching value "
                                    "(write ~{} to delete whatever it is)",
                                    o.text, o.key, YAML::Dump(current), YAML::Dump(expected), o.key));
  }
  parent.remove(leaf);
}

// Sets (or adds) the value; a map given for an existing map merges into it, as in Hydra.
void assign(YAML::Node parent, const Override& o, const std::string& leaf, bool top_level) {
  const YAML::Node current = parent[leaf];
  const bool exists = current.IsDefined() && !current.IsNull();
  if (o.kind == Override::Kind::Add && exists)
    throw ConfigError(fmt::format("override '{}': '{}' is already in the config (value {}); use '{}={}' to change it, "
                                  "or '++{}={}' to set it whether or not it is there",
                                  o.text, o.key, describe_node(current), o.key, o.value, o.key, o.value));
  YAML::Node value = value_node(o);
  if (top_level && exists && current.IsMap() && value.IsScalar() && shorthand_key(leaf)) {
    parent[leaf][shorthand_key(leaf)] = value;  // switching a dataset or device by name keeps its options
  } else if (exists && current.IsMap() && value.IsMap()) {
    for (auto it = value.begin(); it != value.end(); ++it) parent[leaf][it->first.as<std::string>()] = it->second;
  } else {
    parent[leaf] = value;
  }
}

}  // namespace

Override parse_override(const std::string& text) {
  Override o;
  o.text = text;
  const std::size_t prefix = read_kind(text, o);
  const std::string body = text.substr(prefix);
  const auto eq = body.find('=');
  o.key = body.substr(0, eq);
  o.has_value = eq != std::string::npos;
  if (o.has_value) o.value = body.substr(eq + 1);
  if (!o.has_value && o.kind != Override::Kind::Remove)
    throw ConfigError(fmt::format("override '{}' has no '='. {}", text, kForms));
  if (!valid_key(o.key))
    throw ConfigError(fmt::format("override '{}': '{}' is not a key path; expected dotted names such as params.lr "
                                  "or dataset.n. {}",
                                  text, o.key, kForms));
  if (o.has_value) parse_value(o.value, text, prefix + eq + 1);  // the grammar's errors, with a caret
  if (o.kind == Override::Kind::Remove && o.value.empty()) o.has_value = false;  // `~key=` deletes whatever it is
  return o;
}

bool is_sweep(const Override& o) {
  if (!o.has_value || o.kind == Override::Kind::Remove) return false;
  const auto elements = parse_value(o.value, o.text, o.text.size() - o.value.size());
  return elements.size() > 1 || elements.front().kind == Element::Kind::Function;
}

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, const fs::path& source,
                     const Registry& registry) {
  (void)registry, (void)source;
  for (const auto& o : overrides) {
    const auto parts = split_path(o.key);
    if (std::find(top_level_keys().begin(), top_level_keys().end(), parts[0]) == top_level_keys().end())
      throw ConfigError(fmt::format("override '{}': unknown top-level key '{}'.{}", o.text, parts[0],
                                    suggestion(parts[0], top_level_keys())));
    YAML::Node parent = walk_to_parent(root, o, parts);
    if (o.kind == Override::Kind::Remove) remove(parent, o, parts.back());
    else assign(parent, o, parts.back(), parts.size() == 1);
  }
}

SplitOverrides split_overrides(const std::vector<std::string>& texts, bool multirun) {
  SplitOverrides out;
  for (const auto& text : texts) {
    Override o = parse_override(text);
    if (is_sweep(o)) {
      if (!multirun)
        throw ConfigError(fmt::format("override '{}' looks like a sweep (several values, or a range or "
                                      "distribution); add -m to run one trial per value, or quote a plain text "
                                      "value: {}='{}'",
                                      text, o.key, o.value));
      out.axes.push_back(text);
    } else {
      out.overrides.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace nexp
