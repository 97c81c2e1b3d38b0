#pragma once
// The registry of methods, datasets, metrics and device backends: core's own components, then those of
// each plugin the loader accepts. The CLI owns one and passes it to whatever needs it.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nexp/plugin.hpp"

namespace nexp {

struct NEXP_API PluginRecord {
  std::string name, version, summary, citation, fingerprint;
  std::string path;    // the .so file; empty for core
  std::string sha256;  // of the .so file
};

struct NEXP_API LoadFailure {
  std::string path;
  std::string message;
};

class StagingRegistrar;

class NEXP_API Registry {
 public:
  // With core's components (the "core" plugin) registered.
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  const MethodSpec* find_method(std::string_view name) const;
  const DatasetSpec* find_dataset(std::string_view name) const;
  // A plain metric name resolves to "<plugin>.<name>" first (when plugin is given), then to core's.
  const MetricSpec* find_metric(std::string_view name, std::string_view plugin = {}) const;
  const DeviceBackendSpec* find_backend(std::string_view name) const;

  // The plugin that registered a component ("core" for core's own).
  const PluginRecord* owner(std::string_view component) const;
  const PluginRecord* plugin(std::string_view name) const;

  std::vector<const MethodSpec*> methods() const;
  std::vector<const DatasetSpec*> datasets() const;
  std::vector<const MetricSpec*> metrics() const;
  std::vector<const DeviceBackendSpec*> backends() const;
  const std::vector<PluginRecord>& plugins() const { return plugins_; }

  // Plugins the loader refused, kept so that "method not found" can say why.
  const std::vector<LoadFailure>& failures() const { return failures_; }
  void add_failure(LoadFailure failure) { failures_.push_back(std::move(failure)); }

  // Registers a plugin's components all at once: throws PluginError (and adds nothing) when `fill`
  // throws or a name is taken.
  void register_plugin(const PluginRecord& record, const std::function<void(Registrar&)>& fill);

 private:
  struct Entries;
  std::unique_ptr<Entries> entries_;
  std::vector<PluginRecord> plugins_;
  std::vector<LoadFailure> failures_;
};


}  // namespace nexp
