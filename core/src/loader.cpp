// The plugin loader (nexp/runtime/loader.hpp).
#include "nexp/runtime/loader.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "nexp/runtime/torch_runtime.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/version.hpp"

namespace nexp {

namespace fs = std::filesystem;

std::vector<fs::path> plugin_search_path(const std::vector<fs::path>& explicit_dirs) {
  std::vector<fs::path> dirs(explicit_dirs.begin(), explicit_dirs.end());
  if (const char* env = std::getenv("NEXP_PLUGIN_PATH"); env && *env) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) dirs.emplace_back(item);
  }
  const fs::path exe = executable_dir();
  dirs.push_back(exe / "plugins");                         // build tree: build/plugins next to build/nexp
  dirs.push_back(exe / ".." / "lib" / "nexp" / "plugins");  // installed: bin/nexp, lib/nexp/plugins
  dirs.push_back(exe / ".." / "lib64" / "nexp" / "plugins");
  std::vector<fs::path> unique;
  for (auto& d : dirs) {
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(d, ec);
    if (ec) canon = d;
    if (std::find(unique.begin(), unique.end(), canon) == unique.end()) unique.push_back(canon);
  }
  return unique;
}

namespace {

bool is_elf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

// The parts of the fingerprint that differ, for the message. Parts are "<what> <value>" (e.g.
// "compiler gcc 12"), matched by what, so that a fingerprint with a part more or less still compares
// part by part.
std::string fingerprint_difference(const std::string& expected, const std::string& actual) {
  auto split = [](const std::string& s) {
    std::vector<std::pair<std::string, std::string>> out;  // what, whole part
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ';')) {
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      out.emplace_back(item.substr(0, item.find(' ')), item);
    }
    return out;
  };
  auto find = [](const auto& parts, const std::string& what) -> std::string {
    for (const auto& [w, part] : parts)
      if (w == what) return part;
    return "(no " + what + ")";
  };
  auto e = split(expected), a = split(actual);
  std::vector<std::string> diffs;
  for (const auto& [what, part] : e)
    if (find(a, what) != part) diffs.push_back(fmt::format("expected '{}', found '{}'", part, find(a, what)));
  for (const auto& [what, part] : a)
    if (find(e, what) != part && find(e, what).rfind("(no ", 0) == 0)
      diffs.push_back(fmt::format("expected no '{}', found '{}'", what, part));
  return fmt::format("{}", fmt::join(diffs, "; "));
}

}  // namespace

const PluginRecord& load_plugin(Registry& registry, const fs::path& file) {
  const std::string path = file.string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw PluginError(fmt::format("plugin '{}': no such file", path));
  if (!is_elf(file))
    throw PluginError(fmt::format("plugin '{}' is not a shared object (expected an ELF file built by "
                                  "nexp_add_plugin(); found other content). Remove it from the plugin folder",
                                  path));

  // RTLD_LOCAL: a plugin's symbols stay its own; it reaches core, LibTorch and spdlog through its
  // own DT_NEEDED entries, which resolve to the copies already loaded.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    throw PluginError(fmt::format("plugin '{}' could not be loaded by dlopen: {}. Rebuild it against this "
                                  "nexp (its libraries must be installed and found through its rpath)",
                                  path, err ? err : "unknown error"));
  }
  // From here on the handle is never closed, also on failure: code of the plugin may already have
  // registered atexit handlers or thread-locals during its static initialisation.
  // A plugin that links libnexp_torch brought LibTorch in: core attaches it and gives it its settings.
  attach_loaded_torch_runtime();
  using GetInfo = const nexp_plugin_info* (*)();
  auto get_info = reinterpret_cast<GetInfo>(::dlsym(handle, "nexp_plugin_get_info"));
  if (!get_info)
    throw PluginError(fmt::format("plugin '{}' has no entry point 'nexp_plugin_get_info' (is it a nexp plugin? "
                                  "its plugin.cpp must end with NEXP_PLUGIN(...) and be built with "
                                  "nexp_add_plugin())",
                                  path));
  const nexp_plugin_info* info = get_info();
  if (!info)
    throw PluginError(fmt::format("plugin '{}': nexp_plugin_get_info() returned null", path));
  if (info->abi_version != NEXP_ABI_VERSION)
    throw PluginError(fmt::format("plugin '{}' was built for plugin ABI version {}, but this nexp ({}) "
                                  "supports version {}; rebuild the plugin against this nexp",
                                  path, info->abi_version, NEXP_VERSION, NEXP_ABI_VERSION));
  if (info->struct_size != sizeof(nexp_plugin_info))
    throw PluginError(fmt::format("plugin '{}': its info struct has {} bytes, expected {}; rebuild it against "
                                  "this nexp",
                                  path, info->struct_size, sizeof(nexp_plugin_info)));
  const std::string fingerprint = info->fingerprint ? info->fingerprint : "";
  if (fingerprint != build_fingerprint())
    throw PluginError(fmt::format("plugin '{}' was built differently from this nexp: {} (core: '{}', plugin: "
                                  "'{}'). Rebuild the plugin with the same compiler and LibTorch as nexp",
                                  path, fingerprint_difference(build_fingerprint(), fingerprint),
                                  build_fingerprint(), fingerprint));
  if (!info->name || !info->register_components)
    throw PluginError(fmt::format("plugin '{}': its info has no name or no register function", path));

  PluginRecord record{info->name,
                      info->version ? info->version : "",
                      info->summary ? info->summary : "",
                      info->citation ? info->citation : "",
                      fingerprint,
                      fs::weakly_canonical(file).string(),
                      sha256_file(file)};
  registry.register_plugin(record, [&](Registrar& staged) {
    char error[2048] = {0};
    if (info->register_components(&staged, error, sizeof error) != 0)
      throw Error(error[0] ? error : "register_components failed without a message");
  });
  return *registry.plugin(record.name);
}

namespace {

bool loaded_from(const Registry& registry, const fs::path& file) {
  std::error_code ec;
  const std::string path = fs::weakly_canonical(file, ec).string();
  for (const auto& p : registry.plugins())
    if (p.path == path) return true;
  for (const auto& f : registry.failures())
    if (f.path == file.string()) return true;
  return false;
}

// Loads `file` unless it was already (or already refused); a refusal is recorded, not thrown.
void try_load(Registry& registry, const fs::path& file, std::vector<LoadFailure>& failures) {
  if (loaded_from(registry, file)) return;
  try {
    load_plugin(registry, file);
  } catch (const std::exception& e) {
    LoadFailure failure{file.string(), e.what()};
    registry.add_failure(failure);
    failures.push_back(std::move(failure));
  }
}

}  // namespace

std::vector<LoadFailure> load_plugins(Registry& registry, const std::vector<fs::path>& dirs) {
  std::vector<LoadFailure> failures;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("libnexp_plugin_", 0) == 0 && entry.path().extension() == ".so") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) try_load(registry, file, failures);
  }
  return failures;
}

std::vector<LoadFailure> load_plugins_for(Registry& registry, const std::vector<fs::path>& dirs,
                                          const ConfigNames& names) {
  using Known = std::function<bool(const std::string&)>;
  const std::vector<std::pair<const std::set<std::string>*, Known>> kinds = {
      {&names.methods, [&](const std::string& n) { return registry.find_method(n) != nullptr; }},
      {&names.datasets, [&](const std::string& n) { return registry.find_dataset(n) != nullptr; }},
      {&names.devices, [&](const std::string& n) {
         return n == "auto" || registry.find_backend(n.substr(0, n.find(':'))) != nullptr;
       }}};
  std::vector<LoadFailure> failures;
  bool all_known = true;
  for (const auto& [kind, known] : kinds)
    for (const std::string& name : *kind) {
      if (known(name)) continue;
      const std::string file = "libnexp_plugin_" + slug_of(name) + ".so";
      std::error_code ec;
      for (const auto& dir : dirs)
        if (fs::is_regular_file(dir / file, ec)) {
          try_load(registry, dir / file, failures);
          break;
        }
      all_known = all_known && known(name);
    }
  if (!all_known) {
    auto rest = load_plugins(registry, dirs);
    failures.insert(failures.end(), rest.begin(), rest.end());
  }
  return failures;
}

}  // namespace nexp
