// Typed values of a schema <-> YAML, nested maps and lists of maps included. Validation records every
// problem it finds (key, file:line, expected, found) and goes on, so that one pass reports them all
// (nexp/runtime/experiment.hpp).
#include <fmt/format.h>

#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"
#include "yaml_values.hpp"

namespace nexp {

namespace fs = std::filesystem;
using namespace detail;

namespace {

// Validates one parameter's value (not null). Records a problem and returns nullopt when it is wrong.
std::optional<Value> value_from_node(const YAML::Node& node, const Param& p, const std::string& path,
                                     const std::string& owner, const Origins& origins, Problems& problems) {
  const std::string key = path.substr(path.rfind('.') + 1);
  if (p.type() == Type::Map) {
    if (!node.IsMap()) {
      problems.add(fmt::format("{}: '{}' must be a map ({}), found {}", origins.at(path, node), path, p.help(),
                               describe_node(node)));
      return std::nullopt;
    }
    return std::make_shared<const Params>(params_from_node(node, *p.nested(), path, owner, origins, problems));
  }
  if (p.type() == Type::MapList) {
    if (!node.IsSequence()) {
      problems.add(fmt::format("{}: '{}' must be a list of maps ({}), found {}", origins.at(path, node), path,
                               p.help(), describe_node(node)));
      return std::nullopt;
    }
    std::vector<Params> items;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item = join_path(path, std::to_string(i));
      if (!node[i].IsMap())
        problems.add(fmt::format("{}: '{}' must be a map, found {}", origins.at(item, node[i]), item,
                                 describe_node(node[i])));
      else
        items.push_back(params_from_node(node[i], *p.nested(), item, owner, origins, problems));
    }
    return items;
  }
  Value v;
  if (auto err = convert(node, p.type(), v); !err.empty()) {
    problems.add(fmt::format("{}: '{}' {}. {}: {}", origins.at(path, node), path, err, key, p.help()));
    return std::nullopt;
  }
  if (auto err = p.check(v); !err.empty()) {
    problems.add(fmt::format("{}: '{}' is out of range: {}; expected {}. {}: {}", origins.at(path, node), path, err,
                             p.constraint(), key, p.help()));
    return std::nullopt;
  }
  return v;
}

bool has_required(const Schema& schema) {
  for (const auto& p : schema.params())
    if (p.is_required()) return true;
  return false;
}

// Fills what the config left out: defaults, or a problem for a required parameter.
void fill_missing(std::map<std::string, Value>& values, const YAML::Node& node, const Schema& schema,
                  const std::string& section, const std::string& owner, const Origins& origins, Problems& problems) {
  for (const auto& p : schema.params()) {
    if (values.count(p.name())) continue;
    const std::string path = join_path(section, p.name());
    if (p.type() == Type::Map && !p.is_optional() && has_required(*p.nested())) {
      // The nested map's own required keys are what is missing.
      values[p.name()] = std::make_shared<const Params>(
          params_from_node(YAML::Node(), *p.nested(), path, owner, origins, problems));
    } else if (p.is_required()) {
      problems.add(fmt::format("{}: '{}' is required by '{}' and has no default; add `{}: <{}>` under {}: ({})",
                               origins.at(section, node), path, owner, p.name(), p.constraint(),
                               section.empty() ? "the top level" : section, p.help()));
    } else if (!p.is_optional()) {
      values[p.name()] = p.fallback();
    }
  }
}

}  // namespace

namespace detail {

Params params_from_node(const YAML::Node& node, const Schema& schema, const std::string& section,
                        const std::string& owner, const Origins& origins, Problems& problems) {
  std::map<std::string, Value> values;
  if (node.IsDefined() && !node.IsNull() && !node.IsMap()) {
    problems.add(fmt::format("{}: '{}' must be a map of parameters of '{}', but it is {}", origins.at(section, node),
                             section, owner, describe_node(node)));
    return Params();
  }
  if (node.IsDefined() && node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      const std::string path = join_path(section, key);
      const Param* p = schema.find(key);
      if (!p) {
        problems.add(fmt::format("{}: unknown key '{}': '{}' has no parameter '{}'.{} See `nexp describe {}`",
                                 origins.at(path, it->first), path, owner, key, suggestion(key, schema.names()),
                                 owner));
      } else if (it->second.IsNull()) {
        if (!p->is_optional())
          problems.add(fmt::format("{}: '{}' has no value; expected {} ({}). Give a value or delete the key to use "
                                   "the default",
                                   origins.at(path, it->second), path, p->constraint(), p->help()));
      } else if (auto v = value_from_node(it->second, *p, path, owner, origins, problems)) {
        values[key] = std::move(*v);
      } else {
        values[key] = p->fallback();  // reported; keeps the later checks from repeating it as missing
      }
    }
  }
  fill_missing(values, node, schema, section, owner, origins, problems);
  return Params(std::move(values));
}

}  // namespace detail

Params params_from_yaml(const YAML::Node& node, const Schema& schema, const std::string& section,
                        const std::string& owner, const fs::path& source) {
  Problems problems;
  Params out = params_from_node(node, schema, section, owner, Origins(source, {}), problems);
  problems.raise();
  return out;
}

YAML::Node params_to_yaml(const Params& params, const Schema& schema) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& p : schema.params()) {
    if (!params.has(p.name())) continue;
    const Value& v = params.get(p.name());
    if (p.type() == Type::Map) {
      out[p.name()] = params_to_yaml(params.get_map(p.name()), *p.nested());
    } else if (p.type() == Type::MapList) {
      YAML::Node list(YAML::NodeType::Sequence);
      for (const auto& item : params.get_maps(p.name())) list.push_back(params_to_yaml(item, *p.nested()));
      out[p.name()] = list;
    } else {
      out[p.name()] = value_to_yaml(v);
    }
  }
  // Values not in the schema (none after validation) would be dropped silently; keep them visible.
  for (const auto& [k, v] : params.values())
    if (!schema.find(k)) out[k] = value_to_yaml(v);
  return out;
}

}  // namespace nexp
