// core/src/run_signals.cpp: stop signals while a run is in progress.
#include <gtest/gtest.h>

#include <signal.h>

#include <nlohmann/json.hpp>

#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::scaffold_runs;
using json = nlohmann::json;

// A second stop signal while core closes the run (after the method stopped at a checkpoint) does not
// touch the status that is being written: the run ends interrupted (checkpointed), and nexp exits
// with 130. --resume continues from the last committed checkpoint.
TEST(Runs, ASecondSignalWhileTheRunClosesEndsItCheckpointedWith130) {
  TempDir dir;
  Experiment e = scaffold_experiment(dir.path / "runs");
  RunResult full = run(e);
  RunOptions o;
  o.handle_signals = true;
  o.stop_after_checkpoints = 3;
  o.on_finished = [](const RunResult&) {
    ::raise(SIGINT);  // the first stop signal (the stop itself came from stop_after_checkpoints)
    ::raise(SIGINT);  // the second
  };
  RunResult part = run_experiment(e, o, registry_with_scaffold());
  EXPECT_EQ(part.status, RunStatus::Interrupted);
  EXPECT_EQ(part.reason, "checkpointed");
  EXPECT_TRUE(part.aborted);
  EXPECT_EQ(part.exit_code(), 130);
  const json status = json::parse(read_file(part.folder / "status.json"));
  EXPECT_EQ(status["status"], "interrupted");
  EXPECT_EQ(status["reason"], "checkpointed");
  EXPECT_EQ(read_file(part.folder / "checkpoints" / "LATEST"), "ckpt-000003");
  RunOptions quiet;
  quiet.handle_signals = false;
  RunResult resumed = resume_run(part.folder, quiet, registry_with_scaffold());
  ASSERT_EQ(resumed.status, RunStatus::Completed) << resumed.error;
  EXPECT_EQ(resumed.summary, full.summary);
  EXPECT_EQ(resumed.exit_code(), 0);
}
