// core/src/tracking.cpp: the run index (queries, rebuild, concurrent writers) and runs whose process is gone.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::scaffold_runs;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Any pid above the kernel's pid_max belongs to no process.
long unused_pid() {
  long max = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> max;
  return max + 1;
}

}  // namespace

TEST(Runs, IndexAnswersQueriesAndRebuildsFromFolders) {
  TempDir dir;
  const fs::path runs = dir.path / "runs";
  for (int seed : {1, 2, 3}) ASSERT_EQ(run(scaffold_experiment(runs, {"seed=" + std::to_string(seed)})).status, RunStatus::Completed);
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

// A run marked running whose process is gone (its pid unused, or reused by another process) reads
// as interrupted (process gone): from the folder, in the index after refresh_running and reindex.
TEST(Runs, ARunningRunWhoseProcessIsGoneReadsAsInterrupted) {
  TempDir dir;
  const fs::path runs = dir.path / "runs";
  RunResult r = run(scaffold_experiment(runs));
  ASSERT_EQ(r.status, RunStatus::Completed) << r.error;
  json status = json::parse(read_file(r.folder / "status.json"));
  status["status"] = "running";
  auto mark = [&](long pid, std::uint64_t start) {
    status["pid"] = pid;
    status["process_start"] = start;
    write_file_atomic(r.folder / "status.json", status.dump());
  };
  const RunProcess self = RunProcess::self();
  ASSERT_GT(self.start, 0u);
  mark(self.pid, self.start);
  EXPECT_EQ(read_run_folder(r.folder).status, RunStatus::Running) << "this process is alive";
  RunIndex(runs).upsert(read_run_folder(r.folder));
  EXPECT_EQ(RunIndex(runs).refresh_running(), 0);
  mark(self.pid, self.start + 1);
  EXPECT_EQ(read_run_folder(r.folder).status_text(), "interrupted (process gone)") << "a reused pid";
  mark(unused_pid(), 0);
  EXPECT_EQ(read_run_folder(r.folder).status_text(), "interrupted (process gone)") << "an unused pid";
  EXPECT_TRUE(process_gone(status));
  EXPECT_EQ(RunIndex(runs).refresh_running(), 1);
  RunQuery q;
  q.status = RunStatus::Interrupted;
  auto found = RunIndex(runs).query(q);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].reason, "process gone");
  EXPECT_EQ(RunIndex(runs).reindex(), 1);
  EXPECT_EQ(RunIndex(runs).query(q).size(), 1u);
  status["host"] = "another-host";
  EXPECT_FALSE(process_gone(status)) << "a run of another host is never judged from here";
  status["host"] = self.host;
  mark(self.pid, self.start);
  EXPECT_THROW(resume_run(r.folder, RunOptions{}, registry_with_scaffold()), ConfigError) << "a live run is not resumed";
}

// A status.json damaged by hand or by another version: fields of the wrong type or out of range read
// as their defaults (never a nlohmann exception, never an overflowing conversion), and the folder is
// indexed like any other (tests/fuzz/corpus/run_folder/regress-wrong-types is such a folder).
TEST(Runs, FieldsOfTheWrongTypeReadAsTheirDefaults) {
  TempDir dir;
  const fs::path folder = dir.path / "runs" / "x" / "20260101-000000-00000000-beef";
  fs::create_directories(folder);
  std::ofstream(folder / "config.yaml") << "method: m\nseed: 1\n";
  std::ofstream(folder / "meta.json") << R"({"device": "cpu"})";
  std::ofstream(folder / "status.json")
      << R"({"id": 5, "status": "completed", "trial": 1e300, "seed": -1, "pid": "x", "seconds": "1", "error": [1]})";
  const RunRecord r = read_run_folder(folder);
  EXPECT_EQ(r.id, folder.filename().string());
  EXPECT_EQ(r.status, RunStatus::Completed);
  EXPECT_EQ(r.trial, -1);
  EXPECT_EQ(r.seed, 0u);
  EXPECT_EQ(r.seconds, 0.0);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.device, "");
  EXPECT_EQ(RunIndex(dir.path / "runs").reindex(), 1);
}

// metrics.jsonl after a crash or a full disk: a torn last line, and lines that are not records, are
// left out (with a warning); every complete record is read.
TEST(Runs, MetricSeriesLeavesOutATornLastLine) {
  TempDir dir;
  std::ofstream(dir.path / "metrics.jsonl") << R"({"step": 1, "x": 0.5})" "\n" R"({"step": "2", "x": 1})" "\n"
                                            << R"({"step": 3, "x": 1.5})" "\n" R"({"step": 4, "x": 2.)";
  const auto series = read_metric_series(dir.path);
  ASSERT_EQ(series.count("x"), 1u);
  const std::vector<std::pair<std::int64_t, double>> want{{1, 0.5}, {3, 1.5}};
  EXPECT_EQ(series.at("x"), want);
}
