#pragma once
// Shared helpers of the core unit tests.
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/registry.hpp"
#include "nexp/runtime/runner.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/text.hpp"

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

// The message of the PluginError that loading `file` into `r` raises ("" when it loads).
inline std::string refusal(Registry& r, const std::filesystem::path& file) {
  try {
    load_plugin(r, file);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "";
}
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Core logs warnings and errors only, for every test of the binary.
struct QuietLogging : ::testing::Environment {
  void SetUp() override { configure_logging(Verbosity::Quiet); }
};
inline ::testing::Environment* const quiet_logging = ::testing::AddGlobalTestEnvironment(new QuietLogging);

// A config loaded through the whole pipeline (file, overrides, interpolation, validation), with the
// scaffold's method: test_experiment.cpp and the files of the pipeline's pieces.
namespace pipeline {

inline const char* const kBase = R"(method: scaffold_check.fit
params:
  steps: 50
  lr: 0.05
dataset:
  name: scaffold_check.linear
  n: 40
seed: 3
)";

inline Experiment load(const std::string& yaml, std::vector<std::string> overrides = {}) {
  TempDir dir;
  auto file = dir.write("exp.yaml", yaml);
  std::vector<Override> os;
  for (const auto& o : overrides) os.push_back(parse_override(o));
  return load_experiment(file, os, registry_with_scaffold());
}

// The message of the ConfigError that loading raises ("" if none).
inline std::string error_of(const std::string& yaml, std::vector<std::string> overrides = {}) {
  try {
    load(yaml, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace pipeline

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

// Runs of the scaffold's smoke config, in this process: test_run.cpp, test_tracking.cpp, test_run_signals.cpp.
namespace scaffold_runs {

inline Experiment scaffold_experiment(const std::filesystem::path& runs, std::vector<std::string> extra = {}) {
  std::vector<Override> os = {parse_override("runs_dir=" + runs.string()), parse_override("threads=1")};
  for (const auto& e : extra) os.push_back(parse_override(e));
  return load_experiment(NEXP_SCAFFOLD_SMOKE, os, registry_with_scaffold());
}

inline RunResult run(const Experiment& e, int stop_after = 0) {
  RunOptions o;
  o.handle_signals = false;
  o.stop_after_checkpoints = stop_after;
  o.command_line = "test";
  return run_experiment(e, o, registry_with_scaffold());
}

}  // namespace scaffold_runs

// Sweeps of the scaffold's method whose trials the tests settle by hand: test_launchers.cpp,
// test_sweep_results.cpp, test_report.cpp.
namespace sweeps {

// A prepared sweep over seed=0..n-1 of <dir>/sweep.yaml (objective mse, min), nothing run yet.
inline SweepPlan seed_sweep(const TempDir& dir, int n, const std::string& more_config = "") {
  const auto config = dir.write("sweep.yaml", "method: scaffold_check.fit\ndataset: scaffold_check.linear\nobjective: mse\n"
                                               "runs_dir: " + (dir.path / "runs").string() + "\n" + more_config);
  SweepPlan plan = plan_sweep(config, {}, {"seed=range(0," + std::to_string(n) + ")"}, registry_with_scaffold());
  prepare_sweep_folder(plan, false);
  return plan;
}

// The status.json and config.yaml that a trial which ended `status` leaves behind.
inline void settle_trial(const SweepPlan& plan, int index, const std::string& status,
                         const std::map<std::string, double>& summary, const std::string& error = "") {
  const SweepTrial& t = plan.trials.at(static_cast<size_t>(index));
  std::filesystem::create_directories(t.folder);
  nlohmann::json j = {{"id", t.folder.filename().string()}, {"experiment", plan.experiment}, {"method", plan.method},
                      {"status", status}, {"error", error}, {"seconds", 1.5}, {"sweep", plan.folder.string()},
                      {"trial", index}, {"summary", summary}, {"config_hash", t.hash}};
  std::ofstream(t.folder / "status.json") << json_dump(j, 2);
  std::ofstream(t.folder / "config.yaml") << t.config;
}

}  // namespace sweeps

// A results.yaml that uses every key: test_reproduce_schema.cpp and test_reproduce_table.cpp.
namespace results {

inline const char* const kValid = R"yaml(# a comment that --record keeps
plugin: demo
tables:
  - id: main
    columns: [{key: claim, title: claim (paper)}, {key: measured, title: nexp measured}, {key: command, title: command}]
  - id: second
    columns: [{key: what, title: what}, {key: value, title: value}]
rows:
  - id: headline
    claim: fewer hours down
    paper: "-18.3%"
    command: {config: configs/demo/headline.yaml, overrides: [params.platform=gpu, threads=1]}
    checks:
      - {id: down, metric: downtime_reduction, paper: 0.183, recorded: 0.2176, compare: {ci: [lo, hi]}, scale: -100, show: "{:.1f}%"}
      - {id: lo, metric: downtime_reduction_ci_low, recorded: 0.2030, scale: -100, show: "{:.1f}"}
      - {id: hi, metric: downtime_reduction_ci_high, recorded: 0.2340, scale: -100, show: "{:.1f}"}
    text: {measured: "**{down}** [{hi}, {lo}] (interval {down.lo} to {down.hi})"}
    cost: 95
  - id: count
    table: second
    claim: all graphs agree
    command: {config: configs/demo/smoke.yaml}
    checks:
      - {id: n, metric: agree, recorded: 60}   # exact
      - {id: hours, artifact: table.csv, column: hours, where: {policy: incumbent}, recorded: 132140, show: "{:,.0f}"}
      - {id: bound, metric: bound, recorded: 5.3e-12, show: "{:.1u}"}
    text: {what: "{claim}", value: "{n} of 60; {hours} h; bound {bound}"}
    cost: 2.5
    quick: true
)yaml";

}  // namespace results

}  // namespace nexp::test
