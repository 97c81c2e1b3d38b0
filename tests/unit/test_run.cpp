// core/src/run.cpp: a run folder, checkpoints and resume, threads, and failures whatever their text.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/runner.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/text.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::scaffold_runs;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::vector<json> metric_lines(const fs::path& folder) {
  std::vector<json> out;
  std::ifstream in(folder / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

// A plugin whose method fails on request with a message that is not UTF-8, as a reader quoting a
// latin-1 or binary file would.
struct FailOptions {
  std::string kind = "method";
  std::int64_t padding = 0;
  static void declare(Options<FailOptions>& o) {
    o.add("kind", &FailOptions::kind, "what to throw").choices({"data", "method", "int"});
    o.add("padding", &FailOptions::padding, "bytes added to the message").min(0);
  }
};

Registry& registry_with_failing_method() {
  static bool registered = false;
  Registry& registry = registry_with_scaffold();
  if (!registered) {
    registered = true;
    registry.register_plugin({"unit_fail", "0", "fails on request", "none", "", "", ""}, [](Registrar& r) {
      r.method("unit_fail.run", "throws what `kind` says", [](RunContext& ctx) {
         const auto o = ctx.options<FailOptions>();
         const std::string& kind = o.kind;
         const std::string quoted = "line 1 reads 'caf\xe9 \xff' " + std::string(o.padding, '.');
         if (kind == "data") throw DataError("cannot parse the data file: " + quoted);
         if (kind == "method") throw Error("the method failed on " + quoted);
         throw 42;  // not a std::exception
       }).options<FailOptions>();
    });
  }
  return registry;
}

RunResult run_failing(const TempDir& dir, const std::string& kind, int padding = 0) {
  const fs::path config = dir.write("fail.yaml", "method: unit_fail.run\nparams: {kind: " + kind + ", padding: " +
                                                     std::to_string(padding) + "}\n");
  Experiment e = load_experiment(config, {parse_override("runs_dir=" + (dir.path / "runs").string())},
                                 registry_with_failing_method());
  RunOptions o;
  o.handle_signals = false;
  return run_experiment(e, o, registry_with_failing_method());
}

}  // namespace

TEST(Runs, AFolderHoldsEverythingToReproduceTheRun) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs");
  RunResult r = run(e);
  ASSERT_EQ(r.status, RunStatus::Completed) << r.error;
  EXPECT_EQ(r.folder.parent_path().filename(), "smoke");
  EXPECT_EQ(r.id.substr(16, 8), e.config_hash().substr(0, 8)) << "the id carries the config hash";
  for (const char* f : {"config.yaml", "overrides.txt", "meta.json", "status.json", "metrics.jsonl", "log.txt"})
    EXPECT_TRUE(fs::exists(r.folder / f)) << f;
  EXPECT_TRUE(fs::is_directory(r.folder / "artifacts"));
  json status = json::parse(read_file(r.folder / "status.json"));
  EXPECT_EQ(status["status"], "completed");
  EXPECT_EQ(status["config_hash"], e.config_hash());
  EXPECT_GT(status["summary"]["mse"].get<double>(), 0.0);
  json meta = json::parse(read_file(r.folder / "meta.json"));
  EXPECT_EQ(meta["plugin"]["sha256"], sha256_file(fixture("scaffold_check")));
  EXPECT_EQ(meta["seed"], 0);
  EXPECT_EQ(meta["device"]["id"], "cpu");
  EXPECT_TRUE(meta.contains("git"));
  // smoke.yaml: 100 steps, a metrics line every 10.
  auto lines = metric_lines(r.folder);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines.back()["step"], 100);
  // The saved config reproduces the run: same hash, same result.
  Experiment again = load_experiment(r.folder / "config.yaml", {}, registry_with_scaffold());
  EXPECT_EQ(again.config_hash(), e.config_hash());
  EXPECT_EQ(run(again).summary, r.summary);
}

TEST(Runs, ResumeFromACheckpointEndsWhereTheFullRunEnds) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs");
  RunResult full = run(e);
  RunResult part = run(e, /*stop_after=*/3);
  ASSERT_EQ(part.status, RunStatus::Interrupted);
  EXPECT_EQ(json::parse(read_file(part.folder / "status.json"))["status"], "interrupted");
  EXPECT_EQ(metric_lines(part.folder).size(), 3u);
  RunOptions o;
  o.handle_signals = false;
  RunResult resumed = resume_run(part.folder, o, registry_with_scaffold());
  ASSERT_EQ(resumed.status, RunStatus::Completed) << resumed.error;
  EXPECT_EQ(resumed.summary, full.summary);
  // Each step appears once in metrics.jsonl, as in the uninterrupted run.
  auto a = metric_lines(full.folder), b = metric_lines(resumed.folder);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["step"], b[i]["step"]);
    EXPECT_EQ(a[i]["mse"], b[i]["mse"]);
  }
  EXPECT_TRUE(json::parse(read_file(resumed.folder / "meta.json")).contains("resumed"));
  EXPECT_THROW(resume_run(resumed.folder, o, registry_with_scaffold()), ConfigError) << "completed runs do not resume";
}

TEST(Runs, AMissingDeviceFailsTheRunWithAClearStatus) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs", {"device=cuda:7"});
  RunResult r = run(e);
  EXPECT_EQ(r.status, RunStatus::Failed);
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_NE(r.error.find("cuda:7"), std::string::npos) << r.error;
  json status = json::parse(read_file(r.folder / "status.json"));
  EXPECT_EQ(status["status"], "failed");
  EXPECT_EQ(status["error"], r.error);
}

// A sweep's share of the cores caps a trial's threads; the config's own `threads:` wins when smaller,
// and --threads (RunOptions::threads) overrides the config. meta.json records what was used.
TEST(Runs, ThreadsFollowTheConfigTheCapAndTheOverride) {
  TempDir dir;
  auto threads_used = [&](const std::string& config_threads, int threads, int max_threads) {
    Experiment e = scaffold_experiment(dir.path / "runs", {"threads=" + config_threads, "seed=" + std::to_string(threads * 10 + max_threads)});
    RunOptions o;
    o.handle_signals = false;
    o.threads = threads;
    o.max_threads = max_threads;
    RunResult r = run_experiment(e, o, registry_with_scaffold());
    EXPECT_EQ(r.status, RunStatus::Completed) << r.error;
    return json::parse(read_file(r.folder / "meta.json"))["threads"].get<int>();
  };
  EXPECT_EQ(threads_used("1", 0, 2), 1) << "the config's smaller count wins over the sweep's share";
  EXPECT_EQ(threads_used("2", 0, 1), 1) << "the share caps a larger count";
  EXPECT_EQ(threads_used("0", 0, 1), 1) << "an unset count (all cores) takes the share";
  EXPECT_EQ(threads_used("1", 2, 0), 2) << "an explicit --threads overrides the config";
  configure_threads(1);
}

// A method's error that quotes bytes which are not UTF-8 (json's dump throws on them) still ends the
// run failed: readable \xNN in the result, status.json and the index; exit 2 for a data error, 1 for
// a method failure, and 1 for an exception of no std type.
TEST(Runs, AnErrorThatIsNotUtf8EndsTheRunFailed) {
  TempDir dir;
  for (const auto& [kind, code] : std::vector<std::pair<std::string, int>>{{"data", 2}, {"method", 1}, {"int", 1}}) {
    RunResult r = run_failing(dir, kind);
    EXPECT_EQ(r.status, RunStatus::Failed) << kind;
    EXPECT_EQ(r.exit_code(), code) << kind;
    EXPECT_EQ(invalid_utf8_offset(r.error), std::string::npos) << kind;
    if (kind != "int") EXPECT_NE(r.error.find("'caf\\xE9 \\xFF'"), std::string::npos) << r.error;
    else EXPECT_NE(r.error.find("not a std::exception"), std::string::npos) << r.error;
    const json status = json::parse(read_file(r.folder / "status.json"));
    EXPECT_EQ(status["status"], "failed") << kind;
    EXPECT_EQ(status["error"], r.error) << kind;
    auto row = RunIndex(dir.path / "runs").find(r.id);
    ASSERT_TRUE(row.has_value()) << kind;
    EXPECT_EQ(row->status, RunStatus::Failed) << kind;
    EXPECT_EQ(row->error, r.error) << kind;
  }
}

// When status.json cannot be written the usual way (here: a file-size limit that the full status
// exceeds), the last resort writes a short one in plain ASCII; the run still reads as failed.
TEST(Runs, AStatusThatCannotBeWrittenFallsBackToPlainAscii) {
  TempDir dir;
  struct rlimit before {};
  ::getrlimit(RLIMIT_FSIZE, &before);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead
  struct rlimit limit = before;
  limit.rlim_cur = 4096;
  ::setrlimit(RLIMIT_FSIZE, &limit);
  RunResult r = run_failing(dir, "method", /*padding=*/4500);
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(r.status, RunStatus::Failed);
  const std::string text = read_file(r.folder / "status.json");
  for (unsigned char c : text) ASSERT_LT(c, 0x80) << text;
  const json status = json::parse(text);
  EXPECT_EQ(status["status"], "failed");
  EXPECT_EQ(status["method"], "unit_fail.run");
  const std::string error = status["error"];
  EXPECT_EQ(error.rfind("writing status.json failed (", 0), 0u) << error;
  EXPECT_NE(error.find("File too large"), std::string::npos) << error;
  EXPECT_NE(error.find("the method failed on line 1 reads 'caf\\xE9 \\xFF'"), std::string::npos) << error;
  EXPECT_EQ(read_run_folder(r.folder).status, RunStatus::Failed);
}
