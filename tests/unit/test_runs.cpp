// Run folders, the index, checkpoints and resume.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/runner.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

Experiment scaffold_experiment(const fs::path& runs, std::vector<std::string> extra = {}) {
  std::vector<Override> os = {parse_override("runs_dir=" + runs.string()), parse_override("threads=1")};
  for (const auto& e : extra) os.push_back(parse_override(e));
  return load_experiment(NEXP_SCAFFOLD_SMOKE, os, registry_with_scaffold());
}

RunResult run(const Experiment& e, int stop_after = 0) {
  RunOptions o;
  o.handle_signals = false;
  o.stop_after_checkpoints = stop_after;
  o.command_line = "test";
  return run_experiment(e, o, registry_with_scaffold());
}

std::vector<json> metric_lines(const fs::path& folder) {
  std::vector<json> out;
  std::ifstream in(folder / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

struct Quiet : ::testing::Environment {
  void SetUp() override { configure_logging(Verbosity::Quiet); }
};
const auto* quiet = ::testing::AddGlobalTestEnvironment(new Quiet);

}  // namespace

TEST(Runs, AFolderHoldsEverythingToReproduceTheRun) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs");
  RunResult r = run(e);
  ASSERT_EQ(r.status, "completed") << r.error;
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
  ASSERT_EQ(part.status, "interrupted");
  EXPECT_EQ(json::parse(read_file(part.folder / "status.json"))["status"], "interrupted");
  EXPECT_EQ(metric_lines(part.folder).size(), 3u);
  RunOptions o;
  o.handle_signals = false;
  RunResult resumed = resume_run(part.folder, o, registry_with_scaffold());
  ASSERT_EQ(resumed.status, "completed") << resumed.error;
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

TEST(Runs, IndexAnswersQueriesAndRebuildsFromFolders) {
  TempDir dir;
  const fs::path runs = dir.path / "runs";
  for (int seed : {1, 2, 3}) ASSERT_EQ(run(scaffold_experiment(runs, {"seed=" + std::to_string(seed)})).status, "completed");
  run(scaffold_experiment(runs, {"experiment=other"}));
  RunIndex index(runs);
  RunQuery q;
  q.experiment = "smoke";
  q.sort_metric = "mse";
  q.descending = false;
  auto found = index.query(q);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_LE(found[0].summary["mse"], found[1].summary["mse"]);
  EXPECT_LE(found[1].summary["mse"], found[2].summary["mse"]);
  EXPECT_EQ(found[0].params.at("dataset.name"), "scaffold_check.linear");
  EXPECT_EQ(index.query({}).size(), 4u);
  fs::remove(runs / "nexp.db");
  fs::remove(runs / "nexp.db-wal");
  fs::remove(runs / "nexp.db-shm");
  EXPECT_EQ(RunIndex(runs).reindex(), 4);
  auto by_prefix = RunIndex(runs).find(found[0].id.substr(0, 26));
  ASSERT_TRUE(by_prefix.has_value());
  EXPECT_EQ(by_prefix->id, found[0].id);
  EXPECT_EQ(locate_run(found[0].id, runs), found[0].folder);
}

TEST(Runs, ConcurrentWritersLoseNoRow) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs");
  RunResult r = run(e);
  RunRecord base = read_run_folder(r.folder);
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      RunIndex index(dir.path / "runs");  // one connection per writer, as separate processes have
      for (int i = 0; i < 25; ++i) {
        RunRecord copy = base;
        copy.id = "w" + std::to_string(w) + "-" + std::to_string(i);
        index.upsert(copy);
      }
    });
  for (auto& t : writers) t.join();
  EXPECT_EQ(RunIndex(dir.path / "runs").query({}).size(), 101u);
}

TEST(Runs, AMissingDeviceFailsTheRunWithAClearStatus) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs", {"device=cuda:7"});
  RunResult r = run(e);
  EXPECT_EQ(r.status, "failed");
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
    EXPECT_EQ(r.status, "completed") << r.error;
    return json::parse(read_file(r.folder / "meta.json"))["threads"].get<int>();
  };
  EXPECT_EQ(threads_used("1", 0, 2), 1) << "the config's smaller count wins over the sweep's share";
  EXPECT_EQ(threads_used("2", 0, 1), 1) << "the share caps a larger count";
  EXPECT_EQ(threads_used("0", 0, 1), 1) << "an unset count (all cores) takes the share";
  EXPECT_EQ(threads_used("1", 2, 0), 2) << "an explicit --threads overrides the config";
  configure_threads(1);
}
