// LibTorch enters the process only with a plugin that links it, and then gets core's settings
// (core/src/torch_runtime.cpp). Each case runs in a process of its own under ctest; run together in
// one process, the first that loads LibTorch decides what the others see, so they check for it.
#include <gtest/gtest.h>

#include "nexp/runtime/torch_runtime.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

TEST(TorchRuntime, APluginWithoutTorchLeavesLibTorchOut) {
  if (torch_runtime()) GTEST_SKIP() << "LibTorch was loaded by an earlier case in this process";
  Registry r;
  load_plugin(r, std::filesystem::path(NEXP_FIXTURE_DIR) / "libnexp_plugin_fixture_crash.so");
  EXPECT_EQ(torch_runtime(), nullptr);
}

TEST(TorchRuntime, ATorchPluginAttachesLibTorchWithTheSeedSetBefore) {
  const bool fresh = torch_runtime() == nullptr;
  seed_torch(7);  // before LibTorch is here (when fresh): applied when it attaches
  Registry r;
  load_plugin(r, fixture("scaffold_check"));
  TorchRuntime* torch = torch_runtime();
  ASSERT_NE(torch, nullptr) << "loading a TORCH plugin attaches libnexp_torch";
  const std::string seeded_before = torch->generator_state();
  seed_torch(7);
  const std::string seeded_after = torch->generator_state();
  if (fresh) {
    EXPECT_EQ(seeded_before, seeded_after) << "the seed set before LibTorch loaded was not applied";
  }
  seed_torch(8);
  EXPECT_NE(torch->generator_state(), seeded_after);
  torch->set_generator_state(seeded_after);
  EXPECT_EQ(torch->generator_state(), seeded_after);
  EXPECT_EQ(&require_torch_runtime(), torch);
}
