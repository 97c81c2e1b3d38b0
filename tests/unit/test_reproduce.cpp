// nexp reproduce: results.yaml validation, tolerances, number formats, the README's generated tables,
// recording new values in place, reading values back from runs and sweeps, and every shipped plugin's
// results.yaml against its README.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/runner.hpp"
#include "nexp/runtime/scaffold.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
namespace fs = std::filesystem;

namespace {

const char* kValid = R"yaml(# a comment that --record keeps
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

// What load_results says about `text`: the message of the ConfigError ("" when it loads).
std::string error_of(const std::string& text) {
  try {
    parse_results(text, "plugins/demo/results.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

struct Quiet : ::testing::Environment {
  void SetUp() override { configure_logging(Verbosity::Quiet); }
};
const auto* quiet = ::testing::AddGlobalTestEnvironment(new Quiet);

}  // namespace

TEST(Reproduce, ReadsEveryKey) {
  const ResultsFile f = parse_results(kValid, "plugins/demo/results.yaml");
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.plugin, "demo");
  EXPECT_EQ(f.readme, fs::path("plugins/demo/README.md"));
  const ResultRow& h = f.rows[0];
  EXPECT_EQ(h.table, "main") << "the first table is the default";
  EXPECT_EQ(h.command.text(), "nexp run configs/demo/headline.yaml params.platform=gpu threads=1");
  EXPECT_EQ(h.checks[0].compare.kind, ResultCompare::Kind::Interval);
  EXPECT_EQ(h.checks[0].compare.low_ref, "lo");
  EXPECT_DOUBLE_EQ(*h.checks[0].paper, 0.183);
  EXPECT_EQ(h.checks[0].recorded_text, "0.2176");
  EXPECT_EQ(h.checks[0].recorded_line, 13) << "0-based: the file's line 14";
  EXPECT_FALSE(h.quick);
  const ResultRow& c = f.rows[1];
  EXPECT_TRUE(c.quick);
  EXPECT_EQ(c.checks[1].where.at("policy"), std::vector<std::string>{"incumbent"});
  EXPECT_EQ(c.checks[1].source(), "table.csv: hours policy=incumbent");
  EXPECT_DOUBLE_EQ(c.cost, 2.5);
}

TEST(Reproduce, SchemaErrorsNameFileLineKeyExpectedAndFound) {
  std::string e = error_of(replace(kValid, "quick: true", "quick: sometimes"));
  EXPECT_NE(e.find("plugins/demo/results.yaml', line 29"), std::string::npos) << e;
  EXPECT_NE(e.find("rows[1] (count) > quick: expected true or false, found 'sometimes'"), std::string::npos) << e;

  e = error_of(replace(kValid, "metric: agree,", "metirc: agree,"));
  EXPECT_NE(e.find("unknown key 'metirc'. Did you mean 'metric'?"), std::string::npos) << e;
  EXPECT_NE(e.find("line 24"), std::string::npos) << e;

  e = error_of(replace(kValid, "    cost: 95\n", ""));
  EXPECT_NE(e.find("rows[0]: key 'cost' is required"), std::string::npos) << e;

  e = error_of(replace(kValid, "recorded: 60}", "recorded: sixty}"));
  EXPECT_NE(e.find("checks[0] > recorded: expected a finite number, found 'sixty'"), std::string::npos) << e;

  e = error_of(replace(kValid, "recorded: 60}", "recorded: 60, compare: roughly}"));
  EXPECT_NE(e.find("expected exact, {abs: X}, {rel: X} or {ci: [low, high]}"), std::string::npos) << e;
  EXPECT_NE(e.find("found 'roughly'"), std::string::npos) << e;

  e = error_of(replace(kValid, "ci: [lo, hi]", "ci: [lo, high]"));
  EXPECT_NE(e.find("ci bound 'high' is neither a number nor a check of this row"), std::string::npos) << e;

  e = error_of(replace(kValid, "{n} of 60", "{m} of 60"));
  EXPECT_NE(e.find("'{m}' in column 'value' is not a check of this row"), std::string::npos) << e;

  e = error_of(replace(kValid, "id: count", "id: headline"));
  EXPECT_NE(e.find("row id 'headline' is used twice"), std::string::npos) << e;

  e = error_of(replace(kValid, "table: second", "table: third"));
  EXPECT_NE(e.find("no table 'third'"), std::string::npos) << e;

  e = error_of(replace(kValid, "show: \"{:,.0f}\"", "show: \"{:q}\""));
  EXPECT_NE(e.find("is not a number format"), std::string::npos) << e;

  e = error_of(replace(kValid, "overrides: [params.platform=gpu,", "overrides: [params.platform=gpu,acc_t,"));
  EXPECT_NE(e.find("override 'acc_t' has no '='"), std::string::npos) << "a list item is one override: " << e;
  e = error_of(replace(kValid, "overrides: [params.platform=gpu,", "overrides: ['params.platform=gpu,acc_t',"));
  EXPECT_NE(e.find("is a sweep axis; put it under `sweep:`"), std::string::npos) << e;

  e = error_of(replace(kValid, "    quick: true\n", "    quick: true\n    needs: [{paht: x}]\n"));
  EXPECT_NE(e.find("unknown key 'paht'. Did you mean 'path'?"), std::string::npos) << e;

  e = error_of(replace(kValid, "{id: n, metric: agree,", "{id: n, metric: agree, artifact: x.csv,"));
  EXPECT_NE(e.find("give either `metric:`"), std::string::npos) << e;

  e = error_of("plugin: demo\nrows: [{id: a, claim: c, command: {external: ./bench.sh}, cost: 1, quick: true}]\n");
  EXPECT_NE(e.find("cannot be quick"), std::string::npos) << e;
}

TEST(Reproduce, ExactMeansEqualAtTheRecordedDigits) {
  const ResultsFile f = parse_results(kValid, "r.yaml");
  const ResultRow& row = f.rows[1];
  const ResultCheck& n = *row.check("n");
  EXPECT_TRUE(within_tolerance(row, n, 60));
  EXPECT_TRUE(within_tolerance(row, n, 60.4));
  EXPECT_FALSE(within_tolerance(row, n, 59)) << "an integer is exact";
  EXPECT_FALSE(within_tolerance(row, n, std::nan("")));
  ResultCheck four = n;
  four.recorded = 0.2176;
  four.recorded_text = "0.2176";
  EXPECT_TRUE(within_tolerance(row, four, 0.21764));
  EXPECT_TRUE(within_tolerance(row, four, 0.21755)) << "rounds to 0.2176 (half a unit of the last digit)";
  EXPECT_FALSE(within_tolerance(row, four, 0.21766));
  const ResultCheck& bound = *row.check("bound");
  EXPECT_TRUE(within_tolerance(row, bound, 5.26e-12));
  EXPECT_FALSE(within_tolerance(row, bound, 5.36e-12)) << "two significant digits of 5.3e-12";

  ResultCheck tol = four;
  tol.compare.kind = ResultCompare::Kind::Absolute;
  tol.compare.amount = 0.01;
  EXPECT_TRUE(within_tolerance(row, tol, 0.2276));
  EXPECT_FALSE(within_tolerance(row, tol, 0.2277));
  tol.compare.kind = ResultCompare::Kind::Relative;
  tol.compare.amount = 0.5;
  EXPECT_TRUE(within_tolerance(row, tol, 0.3264));
  EXPECT_FALSE(within_tolerance(row, tol, 0.33));

  const ResultRow& h = f.rows[0];  // down in [lo, hi] = [0.2030, 0.2340], bounds read from the other checks
  EXPECT_TRUE(within_tolerance(h, h.checks[0], 0.2031));
  EXPECT_TRUE(within_tolerance(h, h.checks[0], 0.2340));
  EXPECT_FALSE(within_tolerance(h, h.checks[0], 0.2029));
  EXPECT_EQ(h.checks[0].compare.describe(), "in [lo, hi]");
}

TEST(Reproduce, FormatsNumbersAsTheReadmeShowsThem) {
  const ResultsFile f = parse_results(kValid, "r.yaml");
  EXPECT_EQ(format_recorded(f.rows[0].checks[0]), "-21.8%");
  EXPECT_EQ(format_recorded(f.rows[1].checks[1]), "132,140");
  EXPECT_EQ(format_recorded(f.rows[1].checks[2]), "5.3·10⁻¹²");
  EXPECT_EQ(format_recorded(f.rows[1].checks[0]), "60") << "no show: as written";
  EXPECT_EQ(format_value(f.rows[1].checks[0], 59), "59");
  EXPECT_EQ(format_like("0.2176", 0.218149), "0.2181");
  EXPECT_EQ(format_like("60", 59.0), "59");
  EXPECT_EQ(format_like("5.3e-12", 4.96e-12), "5.0e-12");
  EXPECT_EQ(format_like("1.25E+3", 1300), "1.30E3");
}

TEST(Reproduce, ReadmeTablesAreGeneratedBetweenTheirMarkers) {
  const ResultsFile f = parse_results(kValid, "plugins/demo/results.yaml");
  EXPECT_EQ(render_results_table(f, f.tables[0]),
            "| claim (paper) | nexp measured | command |\n|---|---|---|\n"
            "| fewer hours down | **-21.8%** [-23.4, -20.3] (interval -20.3 to -23.4) | "
            "`nexp run configs/demo/headline.yaml params.platform=gpu threads=1` |\n");
  EXPECT_EQ(render_results_table(f, f.tables[1]),
            "| what | value |\n|---|---|\n| all graphs agree | 60 of 60; 132,140 h; bound 5.3·10⁻¹² |\n");

  const std::string readme =
      "# demo\n\nProse before.\n\n<!-- results:main -->\nold table\n<!-- /results:main -->\nProse between.\n"
      "<!-- results:second (hand-written note) -->\n<!-- /results:second -->\nProse after.\n";
  EXPECT_EQ(stale_tables(f, readme), (std::vector<std::string>{"main", "second"}));
  const std::string out = regenerate_readme(f, readme);
  EXPECT_TRUE(stale_tables(f, out).empty());
  EXPECT_EQ(regenerate_readme(f, out), out) << "regenerating twice changes nothing";
  EXPECT_EQ(out.find("old table"), std::string::npos);
  for (const char* prose : {"# demo\n\nProse before.\n\n<!-- results:main (generated", "-->\nProse between.\n<!-- results:second",
                            "<!-- /results:second -->\nProse after.\n"})
    EXPECT_NE(out.find(prose), std::string::npos) << prose << " in\n" << out;
  EXPECT_NE(out.find("-->\n\n| what | value |\n|---|---|\n| all graphs agree |"), std::string::npos) << out;

  try {
    regenerate_readme(f, "# demo\n<!-- results:main -->\n<!-- /results:main -->\n");
    FAIL() << "a table without markers must be an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no block for the results table 'second'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<!-- /results:second -->"), std::string::npos) << e.what();
  }
}

TEST(Reproduce, RecordingRewritesOnlyTheNumbers) {
  const ResultsFile f = parse_results(kValid, "r.yaml");
  const std::string out = record_values(f, kValid, {{{"headline", "down"}, 0.219449}, {{"count", "n"}, 59}, {{"count", "hours"}, 98765.4}},
                                        {{"count", 3.14159}, {"headline", 101.2}});
  EXPECT_NE(out.find("# a comment that --record keeps\n"), std::string::npos);
  EXPECT_NE(out.find("{id: down, metric: downtime_reduction, paper: 0.183, recorded: 0.2194, compare:"), std::string::npos) << out;
  EXPECT_NE(out.find("{id: n, metric: agree, recorded: 59}   # exact"), std::string::npos) << out;
  EXPECT_NE(out.find("recorded: 98765, show:"), std::string::npos) << out;
  EXPECT_NE(out.find("    cost: 3.1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    cost: 101\n"), std::string::npos) << out;
  const ResultsFile g = parse_results(out, "r.yaml");
  EXPECT_DOUBLE_EQ(g.rows[0].checks[0].recorded, 0.2194);
  EXPECT_DOUBLE_EQ(g.rows[1].checks[0].recorded, 59);
  EXPECT_DOUBLE_EQ(g.rows[0].checks[1].recorded, 0.2030) << "unrecorded values stay";
}

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
  s.trials = {{"params.lr", {"0.05"}}, {"seed", {"2"}}};
  s.baseline.clear();
  s.aggregate = "only";
  EXPECT_DOUBLE_EQ(*read_check(s, plan.folder, nullptr), mse["0.05"][2]);
  s.trials = {{"params.lr", {"0.5"}}};
  EXPECT_FALSE(read_check(s, plan.folder, &why));
  EXPECT_NE(why.find("no trial of the sweep matches"), std::string::npos) << why;
}

// Every shipped plugin: its results.yaml validates, names configs that exist, and its README holds
// exactly the tables the file generates (edit results.yaml, then `nexp reproduce <slug> --write-readme`).
TEST(Reproduce, EveryPluginReadmeMatchesItsResultsFile) {
  const fs::path root = NEXP_SOURCE_DIR;
  const auto files = find_results_files(root);
  std::set<std::string> plugins;
  for (const auto& d : fs::directory_iterator(root / "plugins"))
    if (fs::exists(d.path() / "plugin.cpp")) plugins.insert(d.path().filename().string());
  ASSERT_FALSE(plugins.empty());
  for (const auto& slug : plugins)
    EXPECT_TRUE(fs::exists(root / "plugins" / slug / "results.yaml")) << "plugin " << slug << " has no results.yaml";
  for (const auto& file : files) {
    const ResultsFile f = load_results(file);
    EXPECT_EQ(f.plugin, file.parent_path().filename().string()) << file;
    for (const auto& row : f.rows) {
      if (row.command.is_external()) continue;
      EXPECT_TRUE(fs::exists(root / row.command.config)) << file << " row " << row.id << ": " << row.command.config;
    }
    const auto stale = stale_tables(f, read_file(f.readme));
    EXPECT_TRUE(stale.empty()) << f.readme << ": the results tables " << ::testing::PrintToString(stale)
                               << " differ from " << file << "; run `nexp reproduce " << f.plugin << " --write-readme`";
  }
}

// `nexp new-plugin` writes a results.yaml with a smoke row that loads and matches its README.
TEST(Reproduce, TheScaffoldShipsAResultsFileInSyncWithItsReadme) {
  TempDir dir;
  scaffold_plugin("fresh_idea", dir.path, false);
  const ResultsFile f = load_results(dir.path / "plugins" / "fresh_idea" / "results.yaml");
  EXPECT_EQ(f.plugin, "fresh_idea");
  ASSERT_FALSE(f.rows.empty());
  EXPECT_TRUE(f.rows.front().quick);
  EXPECT_EQ(f.rows.front().command.config, "configs/fresh_idea/smoke.yaml");
  EXPECT_TRUE(stale_tables(f, read_file(f.readme)).empty()) << read_file(f.readme);
}
