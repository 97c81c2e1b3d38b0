// core/src/registry.cpp: a plugin's registration is all or nothing, and a second plugin of the same
// name is refused naming both files.
#include <gtest/gtest.h>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

TEST(Loader, RollsBackAThrowingRegistration) {
  Registry r;
  auto msg = refusal(r, fixture("fixture_throws"));
  EXPECT_TRUE(contains(msg, "fixture registration failure")) << msg;
  EXPECT_TRUE(contains(msg, "Nothing of it was registered")) << msg;
  EXPECT_EQ(r.find_method("fixture_throws.half"), nullptr);
  EXPECT_EQ(r.plugin("fixture_throws"), nullptr);
}

TEST(Loader, RefusesADuplicateNameNamingBothFiles) {
  Registry r;
  load_plugin(r, fixture("scaffold_check"));
  auto msg = refusal(r, fixture("fixture_duplicate"));
  EXPECT_TRUE(contains(msg, "libnexp_plugin_scaffold_check.so")) << msg;
  EXPECT_TRUE(contains(msg, "libnexp_plugin_fixture_duplicate.so")) << msg;
  EXPECT_EQ(r.find_method("scaffold_check.other"), nullptr);
}
