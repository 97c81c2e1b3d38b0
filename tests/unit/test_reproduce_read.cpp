// core/src/reproduce_read.cpp: a check's value read from a run's summary, an artifact, or a sweep's trials.
#include <gtest/gtest.h>

#include <cmath>

#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
namespace fs = std::filesystem;

TEST(Reproduce, ReadsSummariesArtifactsAndSweepTrials) {
  TempDir dir;
  const fs::path runs = dir.path / "runs";
  Registry& registry = registry_with_scaffold();
  const std::vector<Override> os = {parse_override("runs_dir=" + runs.string()), parse_override("threads=1")};
  RunOptions ro;
  ro.handle_signals = false;
  const RunResult r = run_experiment(load_experiment(NEXP_SCAFFOLD_SMOKE, os, registry), ro, registry);
  ASSERT_EQ(r.status, RunStatus::Completed) << r.error;
  write_file_atomic(r.folder / "artifacts" / "t.csv", "policy,hours,note\nincumbent,10,\"a, b\"\noracle,4,x\nincumbent,20,y\n");

  ResultCheck c;
  c.metric = "mse";
  std::string why;
  ASSERT_TRUE(read_check(c, r.folder, &why)) << why;
  EXPECT_DOUBLE_EQ(*read_check(c, r.folder, nullptr), r.summary.at("mse"));
  c.metric = "nothing";
  EXPECT_FALSE(read_check(c, r.folder, &why));
  EXPECT_NE(why.find("no 'nothing'"), std::string::npos) << why;

  ResultCheck a;
  a.artifact = "t.csv";
  a.column = "hours";
  a.where = {{"policy", {"oracle"}}};
  EXPECT_DOUBLE_EQ(*read_check(a, r.folder, nullptr), 4);
  a.where = {{"policy", {"incumbent", "oracle"}}};
  a.aggregate = "sum";
  EXPECT_DOUBLE_EQ(*read_check(a, r.folder, nullptr), 34) << "any of a list";
  a.aggregate = "only";
  a.where = {{"policy", {"incumbent"}}};
  EXPECT_FALSE(read_check(a, r.folder, &why)) << "two rows match and no aggregate";
  EXPECT_NE(why.find("2 values match"), std::string::npos) << why;
  a.aggregate = "mean";
  EXPECT_DOUBLE_EQ(*read_check(a, r.folder, nullptr), 15);
  a.aggregate = "count";
  EXPECT_DOUBLE_EQ(*read_check(a, r.folder, nullptr), 2);

  // A sweep: seeds 0..2 for two learning rates; the mean over one lr's trials, minus the other's.
  SweepPlan plan = plan_sweep(NEXP_SCAFFOLD_SMOKE, os, {"params.lr=0.01,0.05", "seed=range(0,3)"}, registry);
  prepare_sweep_folder(plan, false);
  std::map<std::string, std::vector<double>> mse;
  for (const auto& t : plan.trials) {
    const RunResult tr = run_trial(plan, t.index, 1, ro, registry);
    ASSERT_EQ(tr.status, RunStatus::Completed) << tr.error;
    mse[t.value("params.lr")].push_back(tr.summary.at("mse"));
  }
  ResultCheck s;
  s.metric = "mse";
  s.trials = {{"params.lr", {"0.05"}}};
  s.aggregate = "mean";
  const double mean05 = (mse["0.05"][0] + mse["0.05"][1] + mse["0.05"][2]) / 3;
  const double mean01 = (mse["0.01"][0] + mse["0.01"][1] + mse["0.01"][2]) / 3;
  EXPECT_NEAR(*read_check(s, plan.folder, nullptr), mean05, 1e-12);
  s.baseline = {{"params.lr", {"0.01"}}};
  EXPECT_NEAR(*read_check(s, plan.folder, nullptr), mean05 - mean01, 1e-12);

  // Paired on the seed: mean(d) -+ t sd(d) / sqrt(3), d_i = mse(0.05, seed i) - mse(0.01, seed i), and
  // t = t(0.975; 2 dof) = sqrt(2 q^2 / (1 - q^2)) with q = 0.95 (the t(2) CDF in closed form).
  std::vector<double> d(3);
  for (int i = 0; i < 3; ++i) d[i] = mse["0.05"][i] - mse["0.01"][i];
  const double dm = (d[0] + d[1] + d[2]) / 3;
  const double sd = std::sqrt(((d[0] - dm) * (d[0] - dm) + (d[1] - dm) * (d[1] - dm) + (d[2] - dm) * (d[2] - dm)) / 2);
  const double half = 4.302652729749464 * sd / std::sqrt(3.0);
  s.aggregate = "paired_lo";
  EXPECT_NEAR(*read_check(s, plan.folder, nullptr), dm - half, 1e-9);
  // Unpaired, over one lr's seeds: mean -+ t sd / sqrt(3), the same t.
  ResultCheck m = s;
  m.baseline.clear();
  const std::vector<double>& x = mse["0.05"];
  const double sx = std::sqrt(((x[0] - mean05) * (x[0] - mean05) + (x[1] - mean05) * (x[1] - mean05) +
                               (x[2] - mean05) * (x[2] - mean05)) / 2);
  m.aggregate = "mean_lo";
  EXPECT_NEAR(*read_check(m, plan.folder, nullptr), mean05 - 4.302652729749464 * sx / std::sqrt(3.0), 1e-9);
  m.aggregate = "mean_hi";
  EXPECT_NEAR(*read_check(m, plan.folder, nullptr), mean05 + 4.302652729749464 * sx / std::sqrt(3.0), 1e-9);
  m.trials = {{"params.lr", {"0.05"}}, {"seed", {"1"}}};
  EXPECT_FALSE(read_check(m, plan.folder, &why)) << "one value has no interval";
  EXPECT_NE(why.find("needs two values or more"), std::string::npos) << why;
  s.aggregate = "paired_hi";
  EXPECT_NEAR(*read_check(s, plan.folder, nullptr), dm + half, 1e-9);
  s.baseline = {{"seed", {"0"}}};
  EXPECT_FALSE(read_check(s, plan.folder, &why)) << "every trial of lr 0.05 claims the one seed-0 partner";
  EXPECT_NE(why.find("no partner of its own"), std::string::npos) << why;
  s.trials = {{"params.lr", {"0.05"}}, {"seed", {"2"}}};
  s.baseline.clear();
  s.aggregate = "only";
  EXPECT_DOUBLE_EQ(*read_check(s, plan.folder, nullptr), mse["0.05"][2]);
  s.trials = {{"params.lr", {"0.5"}}};
  EXPECT_FALSE(read_check(s, plan.folder, &why));
  EXPECT_NE(why.find("no trial of the sweep matches"), std::string::npos) << why;
}
