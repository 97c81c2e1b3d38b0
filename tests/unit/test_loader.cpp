// core/src/loader.cpp: the loader refuses each kind of bad plugin with a message naming the file, the
// expected and the found.
#include <gtest/gtest.h>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

TEST(Loader, LoadsTheScaffoldPlugin) {
  Registry r;
  const PluginRecord& p = load_plugin(r, fixture("scaffold_check"));
  EXPECT_EQ(p.name, "scaffold_check");
  EXPECT_EQ(p.fingerprint, build_fingerprint());
  ASSERT_NE(r.find_method("scaffold_check.fit"), nullptr);
  EXPECT_TRUE(r.find_method("scaffold_check.fit")->resumable);
  ASSERT_NE(r.find_metric("mse", "scaffold_check"), nullptr);
  EXPECT_EQ(r.find_metric("mse", "scaffold_check")->name, "scaffold_check.mse");
  EXPECT_EQ(r.find_metric("mse", "scaffold_check")->direction, Direction::Minimize);
}

TEST(Loader, RefusesAWrongAbiVersion) {
  Registry r;
  auto msg = refusal(r, fixture("fixture_wrong_abi"));
  EXPECT_TRUE(contains(msg, "plugin ABI version " + std::to_string(NEXP_ABI_VERSION + 41))) << msg;
  EXPECT_TRUE(contains(msg, "supports version " + std::to_string(NEXP_ABI_VERSION))) << msg;
  EXPECT_TRUE(contains(msg, "libnexp_plugin_fixture_wrong_abi.so")) << msg;
}

TEST(Loader, RefusesAMissingEntryPoint) {
  Registry r;
  auto msg = refusal(r, fixture("fixture_no_entry"));
  EXPECT_TRUE(contains(msg, "no entry point 'nexp_plugin_get_info'")) << msg;
  EXPECT_TRUE(contains(msg, "libnexp_plugin_fixture_no_entry.so")) << msg;
}

TEST(Loader, RefusesAForeignFingerprint) {
  Registry r;
  auto msg = refusal(r, fixture("fixture_fingerprint"));
  EXPECT_TRUE(contains(msg, "found 'compiler gcc 99'")) << msg;
  EXPECT_TRUE(contains(msg, std::string("expected 'compiler ") + NEXP_COMPILER_ + "'")) << msg;
}

TEST(Loader, RefusesAFileThatIsNotASharedObject) {
  Registry r;
  TempDir dir;
  auto file = dir.write("libnexp_plugin_text.so", "this is not an ELF file\n");
  auto msg = refusal(r, file);
  EXPECT_TRUE(contains(msg, "is not a shared object")) << msg;
  EXPECT_TRUE(contains(msg, file.string())) << msg;
}

TEST(Loader, LoadPluginsKeepsGoingPastARefusal) {
  Registry r;
  TempDir dir;
  std::filesystem::copy_file(fixture("scaffold_check"), dir.path / "libnexp_plugin_scaffold_check.so");
  dir.write("libnexp_plugin_broken.so", "garbage");
  auto failures = load_plugins(r, {dir.path});
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_TRUE(contains(failures[0].path, "libnexp_plugin_broken.so"));
  EXPECT_NE(r.plugin("scaffold_check"), nullptr);
  EXPECT_EQ(r.failures().size(), 1u);
}
