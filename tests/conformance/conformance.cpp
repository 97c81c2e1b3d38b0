// The plugin conformance suite. Every plugin runs it twice (nexp_add_plugin adds both tests):
//   nexp_conformance --plugin libnexp_plugin_<slug>.so --config configs/<slug>/smoke.yaml --load lazy|all
// `lazy` loads what `nexp run` loads: only the plugins the smoke config names, found in the plugin's
// folder (a plugin that works only when another happens to be loaded first fails here). `all` loads
// every plugin of that folder first, as `nexp list` does (a plugin that breaks another fails there).
// It loads the plugin through the real loader, round-trips every schema through YAML, checks that bad
// keys, types and ranges are refused, runs the smoke config to completion with finite metrics, checks
// that the same seed gives the same metrics, and that an interrupted run resumed from its checkpoint
// ends with the same metrics as an uninterrupted one.
#include <gtest/gtest.h>

#include <functional>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/runner.hpp"

namespace fs = std::filesystem;
using namespace nexp;

namespace {

std::string g_plugin, g_config, g_load = "lazy";
fs::path g_runs;

Registry& registry() {
  static Registry* registry = nullptr;  // never destroyed: plugins' specs may hold LibTorch objects
  if (!registry) {
    registry = new Registry();
    const std::vector<fs::path> dirs{fs::path(g_plugin).parent_path()};
    std::vector<LoadFailure> failures = g_load == "all" ? load_plugins(*registry, dirs)
                                                        : load_plugins_for(*registry, dirs, names_in_config(read_yaml_file(g_config), {}));
    for (const auto& f : failures) ADD_FAILURE() << "plugin not loaded: " << f.message;
  }
  return *registry;
}

const PluginRecord& plugin() {
  for (const auto& p : registry().plugins())
    if (p.path == fs::weakly_canonical(g_plugin).string()) return p;
  throw std::runtime_error("the smoke config " + g_config + " does not name " + g_plugin +
                           " (its method, dataset or device must be the plugin's)");
}

Experiment smoke(std::vector<std::string> extra = {}) {
  std::vector<Override> overrides = {parse_override("runs_dir=" + g_runs.string()), parse_override("threads=1")};
  for (const auto& e : extra) overrides.push_back(parse_override(e));
  return load_experiment(g_config, overrides, registry());
}

RunResult run(const Experiment& e, int stop_after_checkpoints = 0) {
  RunOptions options;
  options.handle_signals = false;
  options.stop_after_checkpoints = stop_after_checkpoints;
  return run_experiment(e, options, registry());
}

// Summaries less wall-clock measurements, which never repeat exactly.
std::map<std::string, double> repeatable(const std::map<std::string, double>& summary, const std::string& slug) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : summary) {
    const MetricSpec* m = registry().find_metric(k, slug);
    if (m && m->timing) continue;
    out[k] = v;
  }
  return out;
}

}  // namespace

TEST(Conformance, LoadsThroughTheRealLoader) {
  const PluginRecord& p = plugin();
  EXPECT_EQ(p.fingerprint, build_fingerprint());
  EXPECT_EQ(p.sha256.size(), 64u);
  EXPECT_FALSE(p.summary.empty()) << "NEXP_PLUGIN needs a one-line summary";
  EXPECT_FALSE(p.citation.empty()) << "NEXP_PLUGIN needs the paper's citation";
  int methods = 0;
  for (const auto* m : registry().methods())
    if (registry().owner(m->name)->name == p.name) ++methods;
  EXPECT_GT(methods, 0) << "a plugin registers at least one method";
}

TEST(Conformance, SchemasRoundTripThroughYaml) {
  const PluginRecord& p = plugin();
  // Declared once as an options struct: the validated defaults must bind to it.
  auto round_trip = [&](const std::string& owner, const Schema& schema,
                        const std::function<void(const Params&)>& bind_check) {
    std::map<std::string, Value> defaults;
    for (const auto& param : schema.params()) {
      EXPECT_FALSE(param.help().empty()) << owner << "." << param.name() << " has no help text";
      if (!param.is_required() && !param.is_optional()) defaults[param.name()] = param.fallback();
    }
    Params original(defaults);
    YAML::Node node = YAML::Load(YAML::Dump(params_to_yaml(original, schema)));
    // Required parameters need some value to parse: take the first choice, the minimum, or a stand-in.
    for (const auto& param : schema.params())
      if (param.is_required() && !node[param.name()]) {
        if (!param.allowed().empty()) node[param.name()] = param.allowed().front();
        else if (param.lower()) node[param.name()] = *param.lower();
        else if (param.type() == Type::String) node[param.name()] = "x";
        else node[param.name()] = 1;
      }
    Params back = params_from_yaml(node, schema, "params", owner, "round-trip");
    for (const auto& [k, v] : original.values()) {
      ASSERT_TRUE(back.has(k)) << owner << "." << k;
      EXPECT_EQ(to_string(back.get(k)), to_string(v)) << owner << "." << k;
      EXPECT_EQ(type_of(back.get(k)), type_of(v)) << owner << "." << k;
    }
    if (schema.empty()) return;
    ASSERT_TRUE(bind_check) << owner << " declares parameters but no options struct (use .options<T>())";
    EXPECT_NO_THROW(bind_check(back)) << owner << ": its validated defaults do not bind to its options struct";
  };
  for (const auto* m : registry().methods())
    if (registry().owner(m->name)->name == p.name) {
      round_trip(m->name, m->schema, m->bind_check);
      for (const auto& metric : m->metrics) EXPECT_NE(registry().find_metric(metric, p.name), nullptr) << metric;
    }
  for (const auto* d : registry().datasets())
    if (registry().owner(d->name)->name == p.name) round_trip(d->name, d->schema, d->bind_check);
  for (const auto* b : registry().backends())
    if (registry().owner(b->name)->name == p.name) round_trip(b->name, b->schema, b->bind_check);
}

TEST(Conformance, BadKeysTypesAndRangesAreRefused) {
  Experiment e = smoke();
  try {
    smoke({"params.definitely_not_a_parameter=1"});
    FAIL() << "an unknown parameter was accepted";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("definitely_not_a_parameter"), std::string::npos) << err.what();
  }
  const MethodSpec* m = registry().find_method(e.method);
  for (const auto& param : m->schema.params()) {
    if (param.type() == Type::Int || param.type() == Type::Float) {
      EXPECT_THROW(smoke({"params." + param.name() + "=not_a_number"}), ConfigError) << param.name();
      if (param.lower() && std::isfinite(*param.lower())) {
        EXPECT_THROW(smoke({"params." + param.name() + "=" + std::to_string(*param.lower() - 1.0)}), ConfigError)
            << param.name() << " below its minimum";
      }
    }
    if (param.type() == Type::String && !param.allowed().empty()) {
      EXPECT_THROW(smoke({"params." + param.name() + "=not_one_of_the_choices"}), ConfigError) << param.name();
    }
  }
}

TEST(Conformance, SmokeConfigRunsWithFiniteMetrics) {
  Experiment e = smoke();
  RunResult r = run(e);
  ASSERT_EQ(r.status, RunStatus::Completed) << r.error;
  EXPECT_FALSE(r.summary.empty()) << "the smoke run reported no summary metric";
  for (const auto& [k, v] : r.summary) EXPECT_TRUE(std::isfinite(v)) << k << " = " << v;
  for (const auto& name : e.metrics) EXPECT_TRUE(r.summary.count(name)) << "selected metric " << name << " missing";
  EXPECT_TRUE(fs::exists(r.folder / "status.json"));
  EXPECT_TRUE(fs::exists(r.folder / "meta.json"));
}

TEST(Conformance, SameSeedGivesTheSameMetrics) {
  Experiment e = smoke();
  RunResult a = run(e), b = run(e);
  ASSERT_EQ(a.status, RunStatus::Completed) << a.error;
  ASSERT_EQ(b.status, RunStatus::Completed) << b.error;
  EXPECT_EQ(repeatable(a.summary, plugin().name), repeatable(b.summary, plugin().name));
}

TEST(Conformance, ResumeFromCheckpointGivesTheSameResult) {
  Experiment e = smoke();
  const MethodSpec* m = registry().find_method(e.method);
  if (!m->resumable) GTEST_SKIP() << e.method << " does not declare supports_resume()";
  RunResult full = run(e);
  ASSERT_EQ(full.status, RunStatus::Completed) << full.error;
  RunResult part = run(e, /*stop_after_checkpoints=*/1);
  ASSERT_EQ(part.status, RunStatus::Interrupted) << "the smoke run of a resumable method must save a checkpoint before it ends";
  RunOptions options;
  options.handle_signals = false;
  RunResult resumed = resume_run(part.folder, options, registry());
  ASSERT_EQ(resumed.status, RunStatus::Completed) << resumed.error;
  EXPECT_EQ(repeatable(resumed.summary, plugin().name), repeatable(full.summary, plugin().name));
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--plugin") g_plugin = argv[++i];
    else if (a == "--config") g_config = argv[++i];
    else if (a == "--load") g_load = argv[++i];
  }
  if (g_plugin.empty() || g_config.empty() || (g_load != "lazy" && g_load != "all")) {
    std::fprintf(stderr, "usage: nexp_conformance --plugin <libnexp_plugin_x.so> --config <smoke.yaml> [--load lazy|all]\n");
    return 2;
  }
  char tmpl[] = "/tmp/nexp-conformance-XXXXXX";
  g_runs = fs::path(::mkdtemp(tmpl)) / "runs";
  configure_logging(Verbosity::Quiet);
  configure_threads(1);
  int rc = RUN_ALL_TESTS();
  std::error_code ec;
  fs::remove_all(g_runs.parent_path(), ec);
  return rc;
}
