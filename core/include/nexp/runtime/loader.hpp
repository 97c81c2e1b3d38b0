#pragma once
// Finds and loads plugins. dlopen(RTLD_NOW | RTLD_LOCAL) from the main thread before any worker
// thread exists; every refusal names the file, the expected and the actual value. Nothing is ever
// dlclose'd: a plugin's static destructors would run after LibTorch's at exit and crash.
//
// Loading costs: a plugin that links LibTorch brings it in (~1 s of static initialisation), so
// `nexp run` loads only the plugins its config names (load_plugins_for); `nexp list`, `describe` and
// `devices` load them all (load_plugins).
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "nexp/runtime/registry.hpp"

namespace nexp {

// The folders searched, in order: each --plugin-dir, then $NEXP_PLUGIN_PATH (':'-separated), then the
// build tree's plugins/ next to the executable and the installed lib/nexp/plugins.
NEXP_API std::vector<std::filesystem::path> plugin_search_path(
    const std::vector<std::filesystem::path>& explicit_dirs);

// Loads one plugin file into the registry. Throws PluginError.
NEXP_API const PluginRecord& load_plugin(Registry& registry, const std::filesystem::path& file);

// Loads every libnexp_plugin_*.so in `dirs` that the registry does not have from the same file yet.
// A refused plugin is recorded in the registry's failures and returned; the others still load.
NEXP_API std::vector<LoadFailure> load_plugins(Registry& registry,
                                               const std::vector<std::filesystem::path>& dirs);

// ---- Only what a config needs

// The component names a config gives for its method, dataset (or dataset.name) and device (or
// device.id): as written in the file, as values of a `sweep: {params: ...}` axis, and in command-line
// overrides and -m axes over those keys (each value of an axis counts).
struct NEXP_API ConfigNames {
  std::set<std::string> methods, datasets, devices;
};
NEXP_API ConfigNames names_in_config(const YAML::Node& config, const std::vector<std::string>& overrides);

// The plugin a component name belongs to: the name up to its first '.' or ':' ("ddr.train" -> ddr,
// "simaccel:1" -> simaccel). The registrar holds every plugin to it; core's names have no plugin.
NEXP_API std::string slug_of(const std::string& name);

// Loads the plugins `names` need: for each name the registry does not know, the plugin of its slug
// (libnexp_plugin_<slug>.so, from the first folder of `dirs` that has it). When a name is still
// unknown after that (a typo, an interpolated value), loads every plugin, so that the error the config
// then gets lists everything there is. Returns the failures, as load_plugins does.
NEXP_API std::vector<LoadFailure> load_plugins_for(Registry& registry,
                                                   const std::vector<std::filesystem::path>& dirs,
                                                   const ConfigNames& names);

}  // namespace nexp
