// Command-line overrides: `a.b=v`, `+a.b=v`, `~a.b` (nexp/runtime/overrides.hpp).
#include "nexp/runtime/overrides.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "nexp/error.hpp"
#include "nexp/runtime/sweep.hpp"
#include "yaml_values.hpp"

namespace nexp {

namespace fs = std::filesystem;
using namespace detail;

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

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, const fs::path& source,
                     const Registry& registry) {
  (void)registry;
  for (const auto& o : overrides) {
    auto parts = split_path(o.key);
    if (std::find(top_level_keys().begin(), top_level_keys().end(), parts[0]) == top_level_keys().end())
      throw ConfigError(fmt::format("override '{}': unknown top-level key '{}'.{}", o.text, parts[0],
                                    suggestion(parts[0], top_level_keys())));
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

SplitOverrides split_overrides(const std::vector<std::string>& texts, bool multirun) {
  SplitOverrides out;
  for (const auto& text : texts) {
    Override o = parse_override(text);
    if (o.kind == Override::Kind::Set && is_sweep_expression(o.value)) {
      if (!multirun)
        throw ConfigError(fmt::format("override '{}' looks like a sweep ({} values or a range/distribution); add -m "
                                      "to run one trial per value, or quote a plain text value: {}='\"{}\"'",
                                      text, o.key, o.key, o.value));
      out.axes.push_back(text);
    } else {
      out.overrides.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace nexp
