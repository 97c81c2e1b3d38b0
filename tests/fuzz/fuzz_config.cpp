// Fuzz target for config loading (core/src/experiment.cpp, interpolation.cpp, overrides.cpp,
// params_yaml.cpp, yaml_values.cpp): what `nexp run config.yaml key=value ...` does before anything runs.
// The input is a YAML config, optionally followed by a line `#%overrides` and one override per line.
// For any input:
//   1. finding the plugins the config names, then loading it (an Experiment), return or refuse the
//      input with a ConfigError, nothing else;
//   2. what loads writes its resolved config (a run folder's config.yaml), which loads again to the
//      same config hash: a run folder reproduces its run.
#include <cstdint>
#include <fstream>
#include <string>

#include "fuzz_registry.hpp"
#include "fuzz_support.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/overrides.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nexp;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = fuzz::split_parts(input, "#%overrides", 2);
  const auto file = fuzz::scratch() / "config.yaml";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << parts[0];
  Registry& registry = fuzz::registry();

  const std::vector<std::string> overrides = fuzz::lines_of(parts[1]);
  Experiment e;
  const bool loaded = fuzz::accepted("config", input, [&] {
    (void)names_in_config(read_yaml_file(file), overrides);  // what `nexp run` reads first: which plugins to load
    const SplitOverrides split = split_overrides(overrides, /*multirun=*/false);
    e = load_experiment(file, split.overrides, registry);
  });
  if (!loaded) return 0;
  std::string text, hash;
  fuzz::must("config", input, "a loaded config cannot be written", [&] {
    text = e.to_yaml_text();
    hash = e.config_hash();
  });
  std::string again;
  fuzz::must("config", input, "the resolved config does not load again:\n" + text, [&] {
    again = resolve_experiment(YAML::Load(text), file, {}, registry).config_hash();
  });
  if (again != hash) fuzz::fail("config", "the resolved config loads to another hash:\n" + text, input);
  return 0;
}
