// core/src/launchers.cpp: the local launcher (trials as child processes, --jobs at once, a failure
// stops nothing) and the Slurm job array it submits; with them the sweep folder and trial states
// (sweep_folder.cpp, trial_state.cpp) they read. A small shell script stands in for `nexp run-trial`,
// and another for sbatch, so that the launchers' own behaviour is what is measured.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::sweeps;
namespace fs = std::filesystem;

namespace {

fs::path executable(const TempDir& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir.write(name, text);
  ::chmod(p.c_str(), 0755);
  return p;
}

// `run-trial <sweep> <index>`: records its arguments and its start and end (ns), sleeps, and leaves a
// completed status (mse = index / 1000), except trial 1, which exits with 3 and leaves none.
fs::path fake_run_trial(const TempDir& dir, const SweepPlan& plan) {
  for (const auto& t : plan.trials) dir.write("folder-" + std::to_string(t.index), t.folder.string());
  const std::string d = dir.path.string();
  return executable(dir, "run-trial.sh",
                    "i=$4\necho \"$*\" > " + d + "/args-$i\ndate +%s%N > " + d + "/start-$i\nsleep 0.3\n"
                    "date +%s%N > " + d + "/end-$i\n[ \"$i\" = 1 ] && exit 3\nf=$(cat " + d + "/folder-$i)\n"
                    "mkdir -p \"$f\"\necho \"{\\\"status\\\": \\\"completed\\\", \\\"summary\\\": {\\\"mse\\\": $i.0e-3}}\" > \"$f/status.json\"\n");
}

long long number_in(const fs::path& file) {
  long long v = -1;
  std::ifstream(file) >> v;
  return v;
}

// The most trials that were running at one moment (from each one's start and end).
int most_at_once(const TempDir& dir, int trials) {
  int most = 0;
  for (int i = 0; i < trials; ++i) {
    const long long at = number_in(dir.path / ("start-" + std::to_string(i)));
    int running = 0;
    for (int j = 0; j < trials; ++j)
      running += number_in(dir.path / ("start-" + std::to_string(j))) <= at &&
                 at < number_in(dir.path / ("end-" + std::to_string(j)));
    most = std::max(most, running);
  }
  return most;
}

}  // namespace

TEST(Launchers, LocalRunsJobsTrialsAtOnceAndPastAFailure) {
  TempDir dir;
  const SweepPlan plan = seed_sweep(dir, 5);
  EXPECT_EQ(load_sweep(plan.folder).trials.size(), 5u) << "sweep.yaml reads back";
  LaunchOptions o;
  o.nexp_command = {"/bin/sh", fake_run_trial(dir, plan).string()};
  o.jobs = 2;
  const SweepOutcome out = launch_local(plan, o);
  EXPECT_EQ(out.total, 5);
  EXPECT_EQ(out.completed, 4);
  EXPECT_EQ(out.failed, 1);
  EXPECT_EQ(out.skipped, 0);
  EXPECT_FALSE(out.stopped);
  EXPECT_EQ(most_at_once(dir, 5), 2) << "two at once, never three";
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
  for (const auto& t : plan.trials) {
    EXPECT_EQ(read_file(dir.path / ("args-" + std::to_string(t.index))),
              "-q run-trial " + plan.folder.string() + " " + std::to_string(t.index) + " --threads " +
                  std::to_string(threads) + "\n");
    const TrialStatus s = trial_status(t);
    if (t.index == 1) {
      EXPECT_EQ(s.state, TrialState::Failed);
      EXPECT_EQ(s.error, "the trial process exited with code 3 before finishing; see " +
                             (plan.folder / "logs" / "trial-0001.log").string());
    } else {
      EXPECT_EQ(s.state, TrialState::Completed) << t.index;
      EXPECT_DOUBLE_EQ(s.summary.at("mse"), t.index * 1e-3);
    }
  }
  // Run again: nothing left to do; with --retry-failed, the failed trial alone.
  fs::remove(dir.path / "args-0");
  EXPECT_EQ(pending_trials(plan, false), std::vector<int>{});
  const SweepOutcome again = launch_local(plan, o);
  EXPECT_EQ(again.skipped, 5);
  EXPECT_EQ(again.completed + again.failed, 0);
  EXPECT_EQ(pending_trials(plan, true), std::vector<int>{1});
  o.retry_failed = true;
  const SweepOutcome retried = launch_local(plan, o);
  EXPECT_EQ(retried.skipped, 4);
  EXPECT_EQ(retried.failed, 1);
  EXPECT_FALSE(fs::exists(dir.path / "args-0")) << "a completed trial is never started again";
}

// The array holds the pending trials (a completed one is left out); each task maps to its trial
// through the array file that the script names; the script carries the config's slurm block.
TEST(Launchers, SlurmArrayScriptNamesEveryPendingTrial) {
  TempDir dir;
  const SweepPlan plan = seed_sweep(dir, 5, "slurm: {partition: debug, time: '00:10:00', max_parallel: 3}\n");
  settle_trial(plan, 2, "completed", {{"mse", 0.5}});
  const fs::path bin = dir.path / "bin";
  executable(dir, "bin/sbatch", "#!/bin/sh\necho \"$*\" > " + (dir.path / "sbatch-args").string() + "\necho '4242;cluster'\n");
  const std::string path = ::getenv("PATH");
  ::setenv("PATH", (bin.string() + ":" + path).c_str(), 1);
  LaunchOptions o;
  o.nexp_command = {"/opt/nexp/bin/nexp", "--plugin-dir", "/p q"};
  o.requeue = true;
  o.wait = false;
  const SweepOutcome out = launch_slurm(plan, o);
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(out.total, 5);
  EXPECT_EQ(out.skipped, 1);

  const fs::path slurm = plan.folder / "slurm";
  EXPECT_EQ(read_file(dir.path / "sbatch-args"), "--parsable " + (slurm / "job-1.sh").string() + "\n");
  const fs::path array = slurm / "array-1.txt";
  EXPECT_EQ(read_file(array), "0\n1\n3\n4\n");
  const std::vector<int> expected{0, 1, 3, 4};
  for (int task = 0; task < 4; ++task) EXPECT_EQ(trial_of_array_task(array, task), expected[static_cast<size_t>(task)]);
  EXPECT_THROW(trial_of_array_task(array, 4), ConfigError);
  EXPECT_EQ(read_file(slurm / "job-1.sh"),
            "#!/bin/bash\n"
            "#SBATCH --job-name=nexp-sweep\n"
            "#SBATCH --array=0-3%3\n"
            "#SBATCH --output=" + (slurm / "%A_%a.out").string() + "\n"
            "#SBATCH --open-mode=append\n"
            "#SBATCH --cpus-per-task=1\n"
            "#SBATCH --partition=debug\n"
            "#SBATCH --time=00:10:00\n"
            "#SBATCH --requeue\n"
            "#SBATCH --signal=B:USR1@90\n"
            "export OMP_WAIT_POLICY=PASSIVE\n"
            "exec '/opt/nexp/bin/nexp' '--plugin-dir' '/p q' -q run-trial '" + plan.folder.string() +
            "' --array-file '" + array.string() +
            "' --array-task \"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-1}\" --requeue-on-stop\n");
}
