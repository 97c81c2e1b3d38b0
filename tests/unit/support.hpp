#pragma once
// Shared helpers of the core unit tests.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/registry.hpp"

namespace nexp::test {

// A fresh temporary folder, removed when the object goes.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/nexp-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    auto p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
};

// scaffold_check is in the folder of good plugins; the fixture_* plugins, which the loader must
// refuse, are in a folder of their own.
inline std::filesystem::path fixture(const std::string& slug) {
  const bool broken = slug.rfind("fixture_", 0) == 0;
  return std::filesystem::path(broken ? NEXP_BROKEN_FIXTURE_DIR : NEXP_FIXTURE_DIR) / ("libnexp_plugin_" + slug + ".so");
}

// The tests' registry, with core's components. Never destroyed: a plugin's specs may hold LibTorch
// objects, which must not be destroyed after LibTorch's own statics at exit.
inline Registry& test_registry() {
  static Registry* registry = new Registry();
  return *registry;
}

// The tests' registry with the scaffold's plugin (method scaffold_check.fit, resumable) loaded.
inline Registry& registry_with_scaffold() {
  static bool loaded = false;
  if (!loaded) {
    loaded = true;
    load_plugin(test_registry(), fixture("scaffold_check"));
  }
  return test_registry();
}

}  // namespace nexp::test
