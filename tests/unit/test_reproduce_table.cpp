// core/src/reproduce_table.cpp: comparing with the recorded numbers, formatting them, the README tables
// and --record.
#include <gtest/gtest.h>

#include <set>

#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test::results;
namespace fs = std::filesystem;

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
  // A zero placeholder takes four significant digits, whatever its own decimals.
  EXPECT_EQ(format_like("0", 0.84123), "0.8412");
  EXPECT_EQ(format_like("0.0", 0.0229), "0.0229");
  EXPECT_EQ(format_like("0", 55916), "55916");
  EXPECT_EQ(format_like("0", 1.5e-7), "1.5e-07");
  EXPECT_EQ(format_like("0", 0.0), "0");
  EXPECT_EQ(format_like("0.5", 0.0229), "0.0229") << "too few decimals to show it at all";
  EXPECT_EQ(format_like("0.5", 0.84123), "0.8") << "else the recorded text's decimals are the user's choice";
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
