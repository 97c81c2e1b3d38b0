// Which plugins a config needs (core/src/plugin_selection.cpp) and loading only those
// (load_plugins_for in core/src/loader.cpp).
#include <gtest/gtest.h>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

namespace {
using Names = std::set<std::string>;
}  // namespace

TEST(PluginSelection, SlugIsTheNameUpToItsFirstDotOrColon) {
  EXPECT_EQ(slug_of("ddr.train"), "ddr");
  EXPECT_EQ(slug_of("htc.random_mixed_graph"), "htc");
  EXPECT_EQ(slug_of("simaccel:1"), "simaccel");
  EXPECT_EQ(slug_of("simaccel.fast:0"), "simaccel");
  EXPECT_EQ(slug_of("mnist"), "mnist");
}

TEST(PluginSelection, NamesComeFromTheConfigInEveryForm) {
  YAML::Node config = YAML::Load(
      "method: ddr.train\n"
      "dataset: {name: htc.random, n: 3}\n"
      "device: {id: 'simaccel:1', fault: none}\n");
  ConfigNames n = names_in_config(config, {});
  EXPECT_EQ(n.methods, (Names{"ddr.train"}));
  EXPECT_EQ(n.datasets, (Names{"htc.random"}));
  EXPECT_EQ(n.devices, (Names{"simaccel:1"}));

  n = names_in_config(YAML::Load("method: moead.classic\ndataset: mnist\ndevice: cpu\n"), {});
  EXPECT_EQ(n.methods, (Names{"moead.classic"}));
  EXPECT_EQ(n.datasets, (Names{"mnist"}));
  EXPECT_EQ(n.devices, (Names{"cpu"}));
}

TEST(PluginSelection, SweepAxesAndOverridesAddTheirValues) {
  YAML::Node config = YAML::Load(
      "method: a.m\n"
      "sweep:\n"
      "  params:\n"
      "    dataset: [b.d1, c.d2]\n"
      "    device.id: choice(cpu, 'e:0')\n"
      "    params.lr: [1, 2]\n");
  ConfigNames n = names_in_config(config, {"method=f.m", "+dataset.name=g.d", "device=h:0,i.x:1", "~dataset",
                                           "params.method=not.a.name", "seed=1,2"});
  EXPECT_EQ(n.methods, (Names{"a.m", "f.m"}));
  EXPECT_EQ(n.datasets, (Names{"b.d1", "c.d2", "g.d"}));
  EXPECT_EQ(n.devices, (Names{"cpu", "e:0", "h:0", "i.x:1"}));
}

TEST(PluginSelection, OverridesAreReadWithTheOverrideGrammar) {
  // ++ (add or set), a quoted value, a map merged into the section, a list, and a sweep function.
  ConfigNames n = names_in_config(YAML::Node(), {"++method=j.m", "device='k:2'", "dataset={name: l.d, n: 3}",
                                                 "method=choice(m.a, 'm.b')", "dataset.name=[n.x, n.y]",
                                                 "~device=k:2", "method=bad(", "device={fault: none}"});
  EXPECT_EQ(n.methods, (Names{"j.m", "m.a", "m.b"}));
  EXPECT_EQ(n.datasets, (Names{"l.d", "n.x", "n.y"}));
  EXPECT_EQ(n.devices, (Names{"k:2"}));
  // The sweep block's expressions too, and its list items written as maps.
  n = names_in_config(YAML::Load("sweep:\n"
                                 "  params:\n"
                                 "    method: 'a.x,b.y'\n"
                                 "    dataset: [{name: c.z, n: 1}, d.w]\n"),
                      {});
  EXPECT_EQ(n.methods, (Names{"a.x", "b.y"}));
  EXPECT_EQ(n.datasets, (Names{"c.z", "d.w"}));
}

TEST(PluginSelection, AMalformedConfigNamesNothingAndDoesNotThrow) {
  EXPECT_TRUE(names_in_config(YAML::Load("[1, 2]"), {"nonsense", "="}).methods.empty());
  EXPECT_TRUE(names_in_config(YAML::Node(), {}).methods.empty());
  ConfigNames n = names_in_config(YAML::Load("method: {weird: map}\nsweep: [1]\n"), {});
  EXPECT_TRUE(n.methods.empty());
}

TEST(PluginSelection, LoadsOnlyThePluginsNamed) {
  Registry r;
  auto failures = load_plugins_for(r, {NEXP_FIXTURE_DIR}, names_in_config(YAML::Load("method: fixture_crash.maybe\ndevice: cpu\n"), {}));
  EXPECT_TRUE(failures.empty());
  EXPECT_NE(r.plugin("fixture_crash"), nullptr);
  EXPECT_EQ(r.plugin("scaffold_check"), nullptr) << "a plugin the config does not name was loaded";
}

TEST(PluginSelection, CoreNamesLoadNothing) {
  Registry r;
  load_plugins_for(r, {NEXP_FIXTURE_DIR}, names_in_config(YAML::Load("dataset: iris\ndevice: auto\n"), {}));
  EXPECT_EQ(r.plugins().size(), 1u) << "only core";
}

TEST(PluginSelection, AnUnknownNameLoadsEveryPluginOnce) {
  Registry r;
  load_plugins_for(r, {NEXP_FIXTURE_DIR}, names_in_config(YAML::Load("method: fixture_crash.maybe\n"), {}));
  // A typo (and an interpolated name) cannot be placed: everything is loaded, so that the error that
  // follows can suggest from all there is. What is loaded already is not loaded twice.
  auto failures = load_plugins_for(r, {NEXP_FIXTURE_DIR}, names_in_config(YAML::Load("method: ${vars.m}\n"), {}));
  EXPECT_TRUE(failures.empty()) << failures.front().message;
  EXPECT_NE(r.plugin("fixture_crash"), nullptr);
  EXPECT_NE(r.plugin("scaffold_check"), nullptr);
  EXPECT_TRUE(load_plugins(r, {NEXP_FIXTURE_DIR}).empty());
}
