// core/src/scaffold.cpp: `nexp new-plugin` writes a results.yaml in sync with its README.
#include <gtest/gtest.h>

#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/scaffold.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

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
