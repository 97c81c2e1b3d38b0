#pragma once
// Finds and loads plugins. dlopen(RTLD_NOW | RTLD_LOCAL) from the main thread before any worker
// thread exists; every refusal names the file, the expected and the actual value. Nothing is ever
// dlclose'd: a plugin's static destructors would run after LibTorch's at exit and crash.
#include <filesystem>
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

// Loads every libnexp_plugin_*.so in `dirs`. A refused plugin is recorded in the registry's
// failures and returned; the others still load.
NEXP_API std::vector<LoadFailure> load_plugins(Registry& registry,
                                               const std::vector<std::filesystem::path>& dirs);

}  // namespace nexp
