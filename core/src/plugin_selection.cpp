// Which component names a config gives, so that `nexp run` loads only their plugins
// (nexp/runtime/loader.hpp). Read from the raw tree and the overrides as typed, with the override
// grammar that config resolution uses (override_grammar.hpp): nothing is validated here, and a name
// that this misses or misreads only makes the loader fall back to loading every plugin.
#include <string_view>

#include "nexp/error.hpp"
#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/overrides.hpp"
#include "override_grammar.hpp"

namespace nexp {

namespace {

using detail::Element;

// The set a config key names into: method, dataset, dataset.name, device, device.id.
std::set<std::string>* slot(ConfigNames& names, std::string_view key) {
  if (key == "method") return &names.methods;
  if (key == "dataset" || key == "dataset.name") return &names.datasets;
  if (key == "device" || key == "device.id") return &names.devices;
  return nullptr;
}

// The key that holds the name when the section is a map: `dataset: {name: ...}`, `device: {id: ...}`.
const char* key_of_map(std::string_view key) { return key == "dataset" ? "name" : key == "device" ? "id" : nullptr; }

// The names in a value of the override grammar: a primitive or quoted name, each of several (a,b),
// each item of a list, each argument of a sweep function (choice(a,b)), a map's name key.
void add_element(const Element& e, const char* key_of_map, std::set<std::string>& into) {
  switch (e.kind) {
    case Element::Kind::Primitive:
    case Element::Kind::Quoted:
      if (!e.text.empty()) into.insert(e.text);
      break;
    case Element::Kind::List:
    case Element::Kind::Function:
      for (const auto& item : e.items) add_element(item, key_of_map, into);
      break;
    case Element::Kind::Dict:
      for (size_t i = 0; i < e.keys.size() && key_of_map; ++i)
        if (e.keys[i] == key_of_map) add_element(e.items[i], nullptr, into);
      break;
  }
}

void add_expression(const std::string& text, const char* key_of_map, std::set<std::string>& into) {
  try {
    for (const auto& e : detail::parse_value(text, text, 0)) add_element(e, key_of_map, into);
  } catch (const ConfigError&) {
    // Malformed: resolution reports it, with the column.
  }
}

// A config value as written in the file: a name, or a map with the name under `key_of_map`.
void add_node(const YAML::Node& node, const char* key_of_map, std::set<std::string>& into) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (node.IsScalar()) into.insert(node.Scalar());
  else if (node.IsMap() && key_of_map) add_node(node[key_of_map], nullptr, into);
  else if (node.IsSequence())  // `device: [cpu, simaccel:0]`
    for (const auto& element : node) add_node(element, key_of_map, into);
}

// `sweep: {params: {key: [v, ...] | expression}}`, as resolve_sweep reads it.
void add_sweep_axes(const YAML::Node& config, ConfigNames& names) {
  const YAML::Node sweep = config["sweep"];
  const YAML::Node axes = sweep.IsDefined() && sweep.IsMap() ? sweep["params"] : YAML::Node();
  if (!axes.IsDefined() || !axes.IsMap()) return;
  for (const auto& axis : axes) {
    if (!axis.first.IsScalar()) continue;
    const std::string key = axis.first.Scalar();
    auto* into = slot(names, key);
    if (!into) continue;
    if (axis.second.IsScalar()) add_expression(axis.second.Scalar(), key_of_map(key), *into);
    else if (axis.second.IsSequence())
      for (const auto& value : axis.second) add_node(value, key_of_map(key), *into);
  }
}

}  // namespace

std::string slug_of(const std::string& name) { return name.substr(0, name.find_first_of(".:")); }

ConfigNames names_in_config(const YAML::Node& config, const std::vector<std::string>& overrides) {
  ConfigNames names;
  if (config.IsMap()) {
    for (const char* key : {"method", "dataset", "device"}) add_node(config[key], key_of_map(key), *slot(names, key));
    add_sweep_axes(config, names);
  }
  // Overrides and -m axes as typed: key=v, +key=v, ++key=v (~key deletes and names nothing).
  for (const std::string& text : overrides) {
    Override o;
    try {
      o = parse_override(text);
    } catch (const ConfigError&) {
      continue;  // resolution reports it
    }
    if (o.kind == Override::Kind::Remove || !o.has_value) continue;
    if (auto* into = slot(names, o.key)) add_expression(o.value, key_of_map(o.key), *into);
  }
  return names;
}

}  // namespace nexp
