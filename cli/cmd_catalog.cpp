// nexp list, nexp describe, nexp devices.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/hal.hpp"

namespace nexp::cli {

namespace {

using json = nlohmann::json;

std::string default_text(const Param& p) {
  if (p.is_required()) return "(required)";
  if (p.is_optional()) return "(unset)";
  std::string s = to_string(p.fallback());
  return s.empty() ? "\"\"" : s;
}

json schema_json(const Schema& schema) {
  json out = json::array();
  for (const auto& p : schema.params()) {
    json j{{"name", p.name()}, {"type", type_name(p.type())}, {"constraint", p.constraint()}, {"help", p.help()},
           {"required", p.is_required()}};
    if (!p.is_required() && !p.is_optional()) j["default"] = to_string(p.fallback());
    if (p.lower()) j["min"] = *p.lower();
    if (p.upper()) j["max"] = *p.upper();
    if (!p.allowed().empty()) j["choices"] = p.allowed();
    if (p.nested()) j["params"] = schema_json(*p.nested());
    out.push_back(j);
  }
  return out;
}

// A nested map's parameters follow it as `map.key` (a list of maps: `list[].key`).
void add_rows(const Schema& schema, const std::string& prefix, std::vector<std::vector<std::string>>& rows) {
  for (const auto& p : schema.params()) {
    const bool nested = p.nested() != nullptr;
    rows.push_back({prefix + p.name(), p.constraint(), nested ? "" : default_text(p), p.help()});
    if (nested) add_rows(*p.nested(), prefix + p.name() + (p.type() == Type::MapList ? "[]." : "."), rows);
  }
}

void print_schema(const Schema& schema) {
  if (schema.empty()) {
    std::cout << "  (no parameters)\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  add_rows(schema, "", rows);
  print_table(std::cout, {"parameter", "type", "default", "help"}, rows);
}

std::string owner_name(const Registry& r, const std::string& component) {
  const PluginRecord* p = r.owner(component);
  return p ? p->name : "?";
}

void list(App& app, const std::string& what, bool as_json) {
  Registry& r = app.with_all_plugins();
  auto want = [&](const char* kind) { return what.empty() || what == kind; };
  json j;
  if (want("methods")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto* m : r.methods()) {
      rows.push_back({m->name, m->summary});
      j["methods"].push_back({{"name", m->name}, {"summary", m->summary}, {"plugin", owner_name(r, m->name)}});
    }
    if (!as_json) std::cout << "methods\n", print_table(std::cout, {"name", "summary"}, rows), std::cout << "\n";
  }
  if (want("datasets")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto* d : r.datasets()) {
      rows.push_back({d->name, d->summary});
      j["datasets"].push_back({{"name", d->name}, {"summary", d->summary}, {"plugin", owner_name(r, d->name)}});
    }
    if (!as_json) std::cout << "datasets\n", print_table(std::cout, {"name", "summary"}, rows), std::cout << "\n";
  }
  if (want("metrics")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto* m : r.metrics()) {
      rows.push_back({m->name, direction_name(m->direction), m->from_predictions ? "predictions" : "reported", m->summary});
      j["metrics"].push_back({{"name", m->name}, {"direction", direction_name(m->direction)}, {"summary", m->summary}});
    }
    if (!as_json) std::cout << "metrics\n", print_table(std::cout, {"name", "dir", "source", "summary"}, rows), std::cout << "\n";
  }
  if (want("backends")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto* b : r.backends()) {
      rows.push_back({b->name, b->summary});
      j["backends"].push_back({{"name", b->name}, {"summary", b->summary}, {"plugin", owner_name(r, b->name)}});
    }
    if (!as_json) std::cout << "device backends\n", print_table(std::cout, {"name", "summary"}, rows), std::cout << "\n";
  }
  if (want("plugins")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : r.plugins()) {
      rows.push_back({p.name, p.version, p.path.empty() ? "(built in)" : p.path});
      j["plugins"].push_back({{"name", p.name}, {"version", p.version}, {"file", p.path}, {"sha256", p.sha256}});
    }
    for (const auto& f : r.failures()) {
      rows.push_back({"(refused)", "", f.path});
      j["refused"].push_back({{"file", f.path}, {"error", f.message}});
    }
    if (!as_json) std::cout << "plugins\n", print_table(std::cout, {"name", "version", "file"}, rows);
  }
  if (as_json) std::cout << j.dump(2) << std::endl;
}

void describe_method(const Registry& r, const MethodSpec& m, bool as_json) {
  const PluginRecord* p = r.owner(m.name);
  const std::string plugin = p ? p->name : "";
  if (as_json) {
    json metrics = json::array();
    for (const auto& x : m.metrics) {
      const MetricSpec* ms = r.find_metric(x, plugin);
      metrics.push_back({{"name", x}, {"direction", ms ? direction_name(ms->direction) : "none"}});
    }
    std::cout << json{{"kind", "method"}, {"name", m.name}, {"summary", m.summary}, {"plugin", plugin},
                      {"citation", p ? p->citation : ""}, {"params", schema_json(m.schema)}, {"metrics", metrics},
                      {"predictions", m.predictions}, {"resumable", m.resumable}, {"datasets", m.datasets}}
                     .dump(2)
              << std::endl;
    return;
  }
  std::cout << m.name << ": " << m.summary << "\n";
  if (p) std::cout << "plugin: " << p->name << " " << p->version << (p->path.empty() ? "" : " (" + p->path + ")") << "\n";
  if (p && !p->citation.empty()) std::cout << "cite: " << p->citation << "\n";
  std::cout << "datasets: " << (m.datasets.empty() ? std::string("any") : fmt::format("{}", fmt::join(m.datasets, ", ")))
            << "\nresumable: " << (m.resumable ? "yes" : "no") << "\n\nparams\n";
  print_schema(m.schema);
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : m.metrics) {
    const MetricSpec* ms = r.find_metric(x, plugin);
    rows.push_back({x, ms ? direction_name(ms->direction) : "?", ms ? ms->summary : ""});
  }
  if (m.predictions)
    for (const auto* ms : r.metrics())
      if (ms->from_predictions) rows.push_back({"<split>_" + ms->name, direction_name(ms->direction), ms->summary});
  std::cout << "\nmetrics\n";
  print_table(std::cout, {"name", "dir", "summary"}, rows);
}

enum class Component { Dataset, Backend };

// A data set or a device backend: its summary, plugin and option schema.
void describe_component(const Registry& r, Component kind, const std::string& name, const std::string& summary,
                        const Schema& schema, bool as_json) {
  if (as_json) {
    std::cout << json{{"kind", kind == Component::Backend ? "device backend" : "dataset"}, {"name", name}, {"summary", summary}, {"plugin", owner_name(r, name)},
                      {"params", schema_json(schema)}}
                     .dump(2)
              << std::endl;
    return;
  }
  std::cout << name << ": " << summary << "\nplugin: " << owner_name(r, name) << "\n";
  if (kind == Component::Backend)
    std::cout << "use: device: " << name << ":0   (options: device: {id: " << name << ":0, ...})\n\noptions\n";
  else
    std::cout << "\nparams\n";
  print_schema(schema);
}

void describe_metric(const MetricSpec& m, bool as_json) {
  if (as_json) {
    std::cout << json{{"kind", "metric"}, {"name", m.name}, {"direction", direction_name(m.direction)},
                      {"summary", m.summary}, {"from_predictions", static_cast<bool>(m.from_predictions)}}
                     .dump(2)
              << std::endl;
    return;
  }
  std::cout << m.name << " (" << direction_name(m.direction) << "): " << m.summary << "\n";
}

void describe_plugin(const Registry& r, const PluginRecord& p) {
  std::cout << p.name << " " << p.version << ": " << p.summary << "\n";
  if (!p.citation.empty()) std::cout << "cite: " << p.citation << "\n";
  if (!p.path.empty()) std::cout << "file: " << p.path << "\nsha256: " << p.sha256 << "\n";
  std::cout << "methods:";
  for (const auto* m : r.methods())
    if (owner_name(r, m->name) == p.name) std::cout << " " << m->name;
  std::cout << "\ndatasets:";
  for (const auto* d : r.datasets())
    if (owner_name(r, d->name) == p.name) std::cout << " " << d->name;
  std::cout << "\n";
}

void describe(App& app, const std::string& name, bool as_json) {
  Registry& r = app.with_all_plugins();
  if (const MethodSpec* m = r.find_method(name)) return describe_method(r, *m, as_json);
  if (const DatasetSpec* d = r.find_dataset(name))
    return describe_component(r, Component::Dataset, d->name, d->summary, d->schema, as_json);
  if (const DeviceBackendSpec* b = r.find_backend(name))
    return describe_component(r, Component::Backend, b->name, b->summary, b->schema, as_json);
  if (const MetricSpec* m = r.find_metric(name)) return describe_metric(*m, as_json);
  if (const PluginRecord* p = r.plugin(name)) return describe_plugin(r, *p);
  std::vector<std::string> names;
  for (const auto* m : r.methods()) names.push_back(m->name);
  for (const auto* d : r.datasets()) names.push_back(d->name);
  for (const auto* m : r.metrics()) names.push_back(m->name);
  for (const auto* b : r.backends()) names.push_back(b->name);
  for (const auto& p : r.plugins()) names.push_back(p.name);
  auto c = closest(name, names);
  throw ConfigError(fmt::format("nothing named '{}' is registered (no method, dataset, metric, device backend or "
                                "plugin).{} `nexp list` shows everything",
                                name, c.empty() ? "" : fmt::format(" Did you mean '{}'?", c)));
}

void devices(App& app, bool as_json) {
  json j = json::array();
  std::vector<std::vector<std::string>> rows;
  for (const auto& listing : list_devices(app.with_all_plugins())) {
    if (listing.devices.empty()) {
      rows.push_back({listing.backend + ":-", "(none: " + (listing.error.empty() ? "no device" : listing.error) + ")", "", "", "", ""});
      j.push_back({{"backend", listing.backend}, {"devices", json::array()}, {"error", listing.error}});
      continue;
    }
    for (const auto& d : listing.devices) {
      DeviceInfo info = d->info();
      Telemetry t = d->telemetry();
      Health h = d->health();
      std::string memory = info.memory_bytes >= 0 ? fmt::format("{:.1f} GiB", info.memory_bytes / 1073741824.0) : "?";
      std::vector<std::string> tele;
      for (const auto& [k, v] : t.values) tele.push_back(fmt::format("{}={}", k, format_number(v)));
      rows.push_back({info.id, info.name, info.cores >= 0 ? std::to_string(info.cores) : "?", memory,
                      h.ok ? "ok" : fmt::format("{}", fmt::join(h.problems, "; ")), fmt::format("{}", fmt::join(tele, " "))});
      json tj = json::object();
      for (const auto& [k, v] : t.values) tj[k] = v;
      j.push_back({{"id", info.id}, {"backend", info.backend}, {"name", info.name}, {"cores", info.cores},
                   {"memory_bytes", info.memory_bytes}, {"details", info.details}, {"telemetry", tj},
                   {"healthy", h.ok}, {"problems", h.problems}});
    }
  }
  if (as_json) std::cout << j.dump(2) << std::endl;
  else print_table(std::cout, {"device", "name", "cores", "memory", "health", "telemetry"}, rows);
}

}  // namespace

void add_catalog_commands(CLI::App& cli, App& app) {
  auto what = std::make_shared<std::string>();
  auto json_flag = std::make_shared<bool>(false);
  auto* l = cli.add_subcommand("list", "List methods, datasets, metrics, device backends and plugins");
  l->add_option("what", *what, "only one kind")->check(CLI::IsMember({"methods", "datasets", "metrics", "backends", "plugins"}));
  l->add_flag("--json", *json_flag, "machine-readable output");
  l->callback([&app, what, json_flag] { list(app, *what, *json_flag); });

  auto name = std::make_shared<std::string>();
  auto djson = std::make_shared<bool>(false);
  auto* d = cli.add_subcommand("describe", "Describe a method, dataset, metric, device backend or plugin");
  d->add_option("name", *name, "e.g. htc.decide")->required();
  d->add_flag("--json", *djson, "machine-readable output");
  d->callback([&app, name, djson] { describe(app, *name, *djson); });

  auto vjson = std::make_shared<bool>(false);
  auto* v = cli.add_subcommand("devices", "List the devices of every backend with their telemetry and health");
  v->add_flag("--json", *vjson, "machine-readable output");
  v->callback([&app, vjson] { devices(app, *vjson); });
}

}  // namespace nexp::cli
