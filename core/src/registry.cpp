// The registry and the staging Registrar that makes a plugin's registration all-or-nothing.
#include "nexp/runtime/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>

#include "nexp/version.hpp"

#include "core_components.hpp"

namespace nexp {

namespace {

bool has_prefix(const std::string& name, const std::string& slug) {
  return name.size() > slug.size() + 1 && name.compare(0, slug.size(), slug) == 0 && name[slug.size()] == '.';
}

// A plugin's methods, datasets and device backends carry its slug, so that the owner of a name in a
// config is clear, and `nexp run` loads only the plugins a config names. A backend may be the bare
// slug (`device: simaccel:0`).
void check_component_name(const std::string& what, const std::string& name, const std::string& slug,
                          bool bare_slug_ok = false) {
  auto valid_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'; };
  if (name.empty() || !std::all_of(name.begin(), name.end(), valid_char))
    throw PluginError(fmt::format("plugin '{}': {} name '{}' must be lower-case letters, digits, '_' and '.'",
                                  slug, what, name));
  if (slug != "core" && !has_prefix(name, slug) && !(bare_slug_ok && name == slug))
    throw PluginError(fmt::format("plugin '{}': {} '{}' must be named '{}.<name>'{} so that its owner is clear",
                                  slug, what, name, slug, bare_slug_ok ? fmt::format(" or '{}'", slug) : ""));
}

}  // namespace

// Collects a plugin's components; Registry::register_plugin commits them only if all is well.
class StagingRegistrar final : public Registrar {
 public:
  explicit StagingRegistrar(std::string slug) : slug_(std::move(slug)) {}
  const std::string& plugin_name() const override { return slug_; }

  MethodSpec& method(std::string name, std::string summary, MethodFn run) override {
    check_component_name("method", name, slug_);
    if (!run) throw PluginError(fmt::format("plugin '{}': method '{}' has no run function", slug_, name));
    auto& m = methods.emplace_back();
    m.name = std::move(name);
    m.summary = std::move(summary);
    m.run = std::move(run);
    return m;
  }
  DatasetSpec& dataset(std::string name, std::string summary, DatasetFactory make) override {
    check_component_name("dataset", name, slug_);
    if (!make) throw PluginError(fmt::format("plugin '{}': dataset '{}' has no factory", slug_, name));
    auto& d = datasets.emplace_back();
    d.name = std::move(name);
    d.summary = std::move(summary);
    d.make = std::move(make);
    return d;
  }
  MetricSpec& metric(std::string name, Direction direction, std::string summary) override {
    check_component_name("metric", name, "core");
    auto& m = metrics.emplace_back();
    m.name = slug_ == "core" ? std::move(name) : slug_ + "." + name;
    m.direction = direction;
    m.summary = std::move(summary);
    return m;
  }
  DeviceBackendSpec& device_backend(std::string name, std::string summary, DeviceBackendFactory make) override {
    check_component_name("device backend", name, slug_, /*bare_slug_ok=*/true);
    if (!make) throw PluginError(fmt::format("plugin '{}': device backend '{}' has no factory", slug_, name));
    auto& b = backends.emplace_back();
    b.name = std::move(name);
    b.summary = std::move(summary);
    b.make = std::move(make);
    return b;
  }

  std::string slug_;
  std::deque<MethodSpec> methods;  // deque: references handed out stay valid
  std::deque<DatasetSpec> datasets;
  std::deque<MetricSpec> metrics;
  std::deque<DeviceBackendSpec> backends;
};

struct Registry::Entries {
  template <class Spec>
  struct Owned {
    Spec spec;
    std::string plugin;
  };
  std::map<std::string, Owned<MethodSpec>, std::less<>> methods;
  std::map<std::string, Owned<DatasetSpec>, std::less<>> datasets;
  std::map<std::string, Owned<MetricSpec>, std::less<>> metrics;
  std::map<std::string, Owned<DeviceBackendSpec>, std::less<>> backends;
};

Registry::Registry() : entries_(std::make_unique<Entries>()) {
  PluginRecord core{"core", NEXP_VERSION, "nexp core: shared data sets, prediction metrics, CPU and CUDA devices", "",
                    build_fingerprint(), "", ""};
  register_plugin(core, register_core_components);
}
Registry::~Registry() = default;

void Registry::register_plugin(const PluginRecord& record, const std::function<void(Registrar&)>& fill) {
  if (plugin(record.name)) {
    throw PluginError(fmt::format("a plugin named '{}' is already loaded from '{}'; refusing the second one "
                                  "from '{}'. Remove one of the two files or drop its folder from the search path",
                                  record.name, plugin(record.name)->path.empty() ? "core" : plugin(record.name)->path,
                                  record.path));
  }
  StagingRegistrar staged(record.name);
  try {
    fill(staged);
  } catch (const PluginError&) {
    throw;
  } catch (const std::exception& e) {
    throw PluginError(fmt::format("plugin '{}' ('{}') threw while registering its components: {}. Nothing of "
                                  "it was registered",
                                  record.name, record.path, e.what()));
  }
  // Validate everything before committing anything.
  auto taken = [&](const auto& map, const std::string& name, const char* what) {
    if (auto it = map.find(name); it != map.end())
      throw PluginError(fmt::format("plugin '{}' ('{}') registers {} '{}', which plugin '{}' already registered; "
                                    "nothing of '{}' was registered",
                                    record.name, record.path, what, name, it->second.plugin, record.name));
  };
  auto twice = [&](const auto& staged_list, const char* what) {
    std::set<std::string> seen;
    for (const auto& s : staged_list)
      if (!seen.insert(s.name).second)
        throw PluginError(fmt::format("plugin '{}' registers {} '{}' twice", record.name, what, s.name));
  };
  twice(staged.methods, "method");
  twice(staged.datasets, "dataset");
  twice(staged.metrics, "metric");
  twice(staged.backends, "device backend");
  for (const auto& m : staged.methods) taken(entries_->methods, m.name, "method");
  for (const auto& d : staged.datasets) taken(entries_->datasets, d.name, "dataset");
  for (const auto& m : staged.metrics) taken(entries_->metrics, m.name, "metric");
  for (const auto& b : staged.backends) taken(entries_->backends, b.name, "device backend");
  for (const auto& m : staged.methods) {
    for (const auto& metric : m.metrics) {
      bool staged_here = std::any_of(staged.metrics.begin(), staged.metrics.end(),
                                     [&](const MetricSpec& s) { return s.name == record.name + "." + metric || s.name == metric; });
      if (!staged_here && !find_metric(metric, record.name))
        throw PluginError(fmt::format("plugin '{}': method '{}' produces metric '{}', which is registered neither by "
                                      "the plugin (registrar.metric(\"{}\", ...)) nor by core",
                                      record.name, m.name, metric, metric));
    }
  }
  auto commit = [&](auto& map, auto& specs) {
    for (auto& spec : specs) {
      std::string name = spec.name;  // copied first: the spec is moved into the entry
      map.emplace(std::move(name), typename std::decay_t<decltype(map)>::mapped_type{std::move(spec), record.name});
    }
  };
  commit(entries_->methods, staged.methods);
  commit(entries_->datasets, staged.datasets);
  commit(entries_->metrics, staged.metrics);
  commit(entries_->backends, staged.backends);
  plugins_.push_back(record);
}

namespace {
template <class Map>
auto find_in(const Map& map, std::string_view name) -> decltype(&map.begin()->second.spec) {
  auto it = map.find(name);
  return it == map.end() ? nullptr : &it->second.spec;
}
template <class Map>
auto all_of_map(const Map& map) {
  std::vector<decltype(&map.begin()->second.spec)> out;
  for (const auto& [_, owned] : map) out.push_back(&owned.spec);
  return out;
}
}  // namespace

const MethodSpec* Registry::find_method(std::string_view name) const { return find_in(entries_->methods, name); }
const DatasetSpec* Registry::find_dataset(std::string_view name) const { return find_in(entries_->datasets, name); }
const DeviceBackendSpec* Registry::find_backend(std::string_view name) const {
  return find_in(entries_->backends, name);
}
const MetricSpec* Registry::find_metric(std::string_view name, std::string_view plugin) const {
  if (!plugin.empty() && plugin != "core") {
    if (auto* m = find_in(entries_->metrics, std::string(plugin) + "." + std::string(name))) return m;
  }
  return find_in(entries_->metrics, name);
}

std::vector<const MethodSpec*> Registry::methods() const { return all_of_map(entries_->methods); }
std::vector<const DatasetSpec*> Registry::datasets() const { return all_of_map(entries_->datasets); }
std::vector<const MetricSpec*> Registry::metrics() const { return all_of_map(entries_->metrics); }
std::vector<const DeviceBackendSpec*> Registry::backends() const { return all_of_map(entries_->backends); }

const PluginRecord* Registry::plugin(std::string_view name) const {
  for (const auto& p : plugins_)
    if (p.name == name) return &p;
  return nullptr;
}

const PluginRecord* Registry::owner(std::string_view component) const {
  auto owner_of = [&](const auto& map) -> const PluginRecord* {
    auto it = map.find(component);
    return it == map.end() ? nullptr : plugin(it->second.plugin);
  };
  if (auto* p = owner_of(entries_->methods)) return p;
  if (auto* p = owner_of(entries_->datasets)) return p;
  if (auto* p = owner_of(entries_->metrics)) return p;
  return owner_of(entries_->backends);
}

}  // namespace nexp
