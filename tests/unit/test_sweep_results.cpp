// core/src/sweep_results.cpp: trials ranked by the objective, trials.csv, best.yaml, and the status line.
#include <gtest/gtest.h>

#include <sstream>

#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::sweeps;

TEST(SweepResults, TheBestTrialByTheObjectiveAndOneCsvRowPerTrial) {
  TempDir dir;
  const SweepPlan plan = seed_sweep(dir, 4);
  settle_trial(plan, 0, "completed", {{"mse", 0.5}, {"weight_error", 2}});
  settle_trial(plan, 1, "completed", {{"mse", 0.25}, {"weight_error", 3}});
  settle_trial(plan, 2, "failed", {}, "boom, twice");
  std::ostringstream out;
  write_sweep_results(plan, out);
  const std::string printed = out.str();
  // Ranked by mse (min): trial 1 first, trial 0 second, the others unranked.
  EXPECT_LT(printed.find("\n1     1      completed"), printed.find("\n2     0      completed")) << printed;
  EXPECT_HAS(printed, "best: trial 1 seed=1  mse = 0.25\n");
  EXPECT_HAS(read_file(plan.folder / "best.yaml"),
             "# Best trial of the sweep by mse (min): trial 1, seed=1; mse = 0.25\n# Re-run: nexp run " +
                 (plan.folder / "best.yaml").string() + "\n" + plan.trials[1].config);

  const std::string csv = read_file(plan.folder / "trials.csv");
  std::vector<std::string> lines;
  for (std::istringstream in(csv); lines.emplace_back(), std::getline(in, lines.back());) {}
  lines.pop_back();
  ASSERT_EQ(lines.size(), 5u) << csv;
  EXPECT_EQ(lines[0], "trial,status,seed,objective,mse,weight_error,seconds,folder,error");
  EXPECT_EQ(lines[1], "0,completed,0,0.5,0.5,2,1.500," + plan.trials[0].folder.filename().string() + ",");
  EXPECT_EQ(lines[2], "1,completed,1,0.25,0.25,3,1.500," + plan.trials[1].folder.filename().string() + ",");
  EXPECT_EQ(lines[3].substr(0, 11), "2,failed,2,");
  EXPECT_EQ(lines[3].substr(lines[3].size() - 14), ",\"boom, twice\"");

  std::ostringstream status;
  print_sweep_status(plan, status);
  EXPECT_EQ(status.str().substr(0, status.str().find('\n')),
            "sweep " + plan.folder.string() + ": 4 trials, 2 completed, 0 running, 1 failed, 0 interrupted, 1 pending");
}
