// Fuzz target for the sweep grammar and its expansion (core/src/sweep_grammar.cpp, sweep_plan.cpp):
// what `nexp run config.yaml -m a=1,2 'b=range(0,3)' --dry-run` does. The input is a config (its
// `sweep:` block included), then a line `#%axes` and one -m axis per line (`key=expression`).
// For any input:
//   1. each axis parses or is refused with a ConfigError; a parsed axis has values, or finite bounds
//      lo < hi (loguniform: lo > 0);
//   2. a sweep of at most 256 trials expands, or is refused with a ConfigError; every trial has one
//      value for each axis and a resolved config.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "fuzz_registry.hpp"
#include "fuzz_support.hpp"
#include "nexp/runtime/sweep.hpp"

namespace {

using namespace nexp;

// An upper bound of how many trials the config's own sweep block and the axes make (0: unknown).
std::size_t trial_bound(const std::string& config, const std::vector<SweepAxis>& axes) {
  std::size_t n = 1;
  bool sampled = false;
  for (const auto& a : axes) n *= a.sampled() ? 1 : std::max<std::size_t>(a.values.size(), 1), sampled |= a.sampled();
  try {
    const YAML::Node block = YAML::Load(config)["sweep"];
    if (block.IsMap() && block["params"].IsMap())
      for (auto it = block["params"].begin(); it != block["params"].end(); ++it) {
        if (it->second.IsSequence()) n *= std::max<std::size_t>(it->second.size(), 1);
        if (it->second.IsScalar()) {
          const SweepAxis a = parse_axis("k", it->second.Scalar(), "block");
          n *= a.sampled() ? 1 : std::max<std::size_t>(a.values.size(), 1), sampled |= a.sampled();
        }
        if (n > 100000) return 0;
      }
    if (sampled) {
      const long long samples = block.IsMap() && block["samples"] ? block["samples"].as<long long>() : 1;
      if (samples < 0 || samples > 256) return 0;
      n *= static_cast<std::size_t>(std::max(samples, 1LL));
    }
  } catch (...) {
    return 1;  // the config does not parse: plan_sweep refuses it at once
  }
  return n;
}

void check_axis(const SweepAxis& a, std::string_view input) {
  if (!a.sampled() && a.values.empty()) fuzz::fail("sweep_grammar", "an axis without values: " + a.expression, input);
  if (a.sampled() && !(std::isfinite(a.lo) && std::isfinite(a.hi) && a.lo < a.hi))
    fuzz::fail("sweep_grammar", "a sampled axis without finite bounds lo < hi: " + a.expression, input);
  if (a.kind == SweepAxis::Kind::LogUniform && !(a.lo > 0))
    fuzz::fail("sweep_grammar", "loguniform with a bound <= 0: " + a.expression, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nexp;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = fuzz::split_parts(input, "#%axes", 2);
  const std::vector<std::string> texts = fuzz::lines_of(parts[1]);
  std::vector<SweepAxis> axes;
  for (const auto& text : texts)
    fuzz::accepted("sweep_grammar", input, [&] {
      const Override o = parse_override(text);
      if (!o.has_value) return;
      axes.push_back(parse_axis(o.key, o.value, "fuzz"));
      check_axis(axes.back(), input);
    });
  const std::size_t bound = trial_bound(parts[0], axes);
  if (bound == 0 || bound > 256) return 0;
  const auto file = fuzz::scratch() / "sweep.yaml";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << parts[0];
  SweepPlan plan;
  if (!fuzz::accepted("sweep_grammar", input, [&] { plan = plan_sweep(file, {}, texts, fuzz::registry()); })) return 0;
  for (const auto& a : plan.axes) check_axis(a, input);
  for (const auto& t : plan.trials) {
    if (t.assignment.size() != plan.axes.size())
      fuzz::fail("sweep_grammar", "a trial does not assign every axis", input);
    if (t.config.empty() || t.hash.empty()) fuzz::fail("sweep_grammar", "a trial without its resolved config", input);
  }
  return 0;
}
