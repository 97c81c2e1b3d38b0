// core/src/report.cpp: `nexp report` of run folders and of a sweep folder: the summary values, the
// metric plots, the configs, and every text that came from a file or a user escaped for HTML.
#include <gtest/gtest.h>

#include "nexp/error.hpp"
#include "nexp/runtime/report.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using namespace nexp::test::sweeps;
namespace fs = std::filesystem;

namespace {

// Two run folders as a run leaves them; the second failed, with markup in its id and its error.
struct TwoRuns {
  TempDir dir;
  fs::path a, b;
  TwoRuns() {
    a = dir.path / "a";
    dir.write("a/status.json", R"({"id": "run-a", "method": "demo.fit", "status": "completed", "seconds": 1.5,
                                   "summary": {"mse": 0.125, "acc": 0.8125}})");
    dir.write("a/config.yaml", "method: demo.fit\nparams: {lr: 0.1, note: \"a < b & c\"}\n");
    dir.write("a/metrics.jsonl", "{\"step\": 1, \"mse\": 0.5}\n{\"step\": 2, \"mse\": 0.25}\n");
    b = dir.path / "b";
    dir.write("b/status.json", R"({"id": "run-b<x>", "method": "demo.fit", "status": "failed", "seconds": 0.25,
                                   "error": "bad <tag> & \"quote\"", "summary": {"mse": 0.0625}})");
    dir.write("b/config.yaml", "method: demo.fit\nparams: {lr: 0.2}\n");
  }
};

}  // namespace

TEST(Report, RunsShowTheirValuesAndEscapeEveryText) {
  TwoRuns runs;
  const std::string one = render_report({runs.a});
  EXPECT_HAS(one, "<title>Run run-a (demo.fit)</title>");
  EXPECT_HAS(one, "<tr><th>run</th><th>method</th><th>status</th><th>seconds</th><th>acc</th><th>mse</th></tr>"
                  "<tr><td>run-a</td><td>demo.fit</td><td>completed</td><td>1.5</td><td>0.8125</td><td>0.125</td></tr>");
  EXPECT_HAS(one, "class='title'>mse</text>");
  EXPECT_HAS(one, "<h2>Config of run-a</h2><pre>method: demo.fit\nparams: {lr: 0.1, note: &quot;a &lt; b &amp; c&quot;}\n</pre>");
  EXPECT_EQ(one.find("Parameters that differ"), std::string::npos) << "one run has nothing to compare";

  const std::string two = render_report({runs.a, runs.b});
  EXPECT_HAS(two, "<title>2 runs compared</title>");
  EXPECT_HAS(two, "<tr><td>run-b&lt;x&gt;</td><td>demo.fit</td><td>failed</td><td>0.25</td><td></td><td>0.0625</td></tr>");
  EXPECT_HAS(two, "<p class='status-failed'>run-b&lt;x&gt;: bad &lt;tag&gt; &amp; &quot;quote&quot;</p>");
  // Only the parameters whose values differ, with "-" where a run has none.
  EXPECT_HAS(two, "<h2>Parameters that differ</h2><table><tr><th>parameter</th><th>run-a</th><th>run-b&lt;x&gt;</th></tr>"
                  "<tr><td>params.lr</td><td>0.1</td><td>0.2</td></tr>"
                  "<tr><td>params.note</td><td>a &lt; b &amp; c</td><td>-</td></tr></table>");
  for (const char* raw : {"<tag>", "run-b<x>", "a < b"}) EXPECT_EQ(two.find(raw), std::string::npos) << raw;
  EXPECT_THROW(render_report({}), ConfigError);
}

TEST(Report, ASweepShowsEachTrialsObjective) {
  TempDir dir;
  const SweepPlan plan = seed_sweep(dir, 3);
  settle_trial(plan, 0, "completed", {{"mse", 0.5}});
  settle_trial(plan, 1, "completed", {{"mse", 0.25}});
  settle_trial(plan, 2, "failed", {}, "x<y");
  const std::string html = render_report({plan.folder});
  EXPECT_HAS(html, "<title>Sweep sweep</title>");
  EXPECT_HAS(html, "<p>3 trials of <b>scaffold_check.fit</b>; objective: mse (min)</p>");
  EXPECT_HAS(html, "<tr><th>trial</th><th>status</th><th>seed</th><th>mse</th></tr>"
                   "<tr><td>0</td><td>completed</td><td>0</td><td>0.5</td></tr>"
                   "<tr><td>1</td><td>completed</td><td>1</td><td>0.25</td></tr>"
                   "<tr><td>2</td><td>failed</td><td>2</td><td>nan</td></tr></table>");
  EXPECT_HAS(html, "<h2>Objective against each swept parameter</h2>");
  EXPECT_HAS(html, "<h2>Base config</h2><pre>");
  try {
    render_report({plan.folder, plan.trials[0].folder});
    FAIL() << "a sweep among runs was accepted";
  } catch (const ConfigError& e) {
    EXPECT_HAS(e.what(), "is a sweep; report one sweep on its own, or several runs");
  }
}

TEST(Report, BestSoFarImportanceAndPrunedCurves) {
  TempDir dir;
  const SweepPlan plan = seed_sweep(dir, 6);
  // Seeds 0..4 completed with mse 5, 4, ..., 1 (seed explains all of it); trial 5 pruned after two steps.
  for (int i = 0; i < 5; ++i) {
    settle_trial(plan, i, "completed", {{"mse", 5.0 - i}});
    std::ofstream(plan.trials[i].folder / "metrics.jsonl") << "{\"step\": 1, \"mse\": " << 9 - i << "}\n";
  }
  settle_trial(plan, 5, "pruned", {{"mse", 30}});
  std::ofstream(plan.trials[5].folder / "metrics.jsonl") << "{\"step\": 1, \"mse\": 40}\n{\"step\": 2, \"mse\": 30}\n";
  const std::string html = render_report({plan.folder});
  EXPECT_HAS(html, "<h2>Best so far</h2>");
  EXPECT_HAS(html, "class='legend'>best so far</text>");
  // seed separates the objective completely: eta^2 = 1.
  EXPECT_HAS(html, "<td>seed</td><td><span style='display:inline-block;width:300px;height:10px;background:#1f77b4'></span> 1.00</td>");
  EXPECT_HAS(html, "(pruned)</text>");
  EXPECT_HAS(html, "stroke='#b5b5b5' stroke-width='1.6' stroke-dasharray='4 3'");
  // 6 curves: two panels of at most 5, each with its legend beside the frame (the svg is wider than it).
  EXPECT_HAS(html, "class='title'>mse (1/2)</text>");
  EXPECT_HAS(html, "class='title'>mse (2/2)</text>");
  EXPECT_HAS(html, "<svg xmlns='http://www.w3.org/2000/svg' width='810' height='280' class='plot'>");
}
