// core/src/hal.cpp: device ids, the cpu backend (what it reports of this host), and how `device: auto`
// and explicit ids resolve against the registered backends.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "nexp/error.hpp"
#include "nexp/runtime/hal.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

namespace {

// A device of a test backend: `torch` is its details["torch"] ("" leaves it out, as the cpu does).
class TestDevice final : public Device {
 public:
  TestDevice(std::string backend, int index, std::string torch)
      : backend_(std::move(backend)), index_(index), torch_(std::move(torch)) {}
  DeviceInfo info() const override {
    DeviceInfo i;
    i.id = backend_ + ":" + std::to_string(index_);
    i.backend = backend_;
    i.index = index_;
    i.name = "test device";
    if (!torch_.empty()) i.details["torch"] = torch_;
    return i;
  }
  Telemetry telemetry() const override { return {}; }
  Health health() const override { return {}; }
  std::string tensor_device() const override { return "cpu"; }

 private:
  std::string backend_;
  int index_;
  std::string torch_;
};

struct TestBackend {
  std::string name;
  int priority;
  int devices;
  std::string torch;  // of each device
};

// Registers `backends` into `r` as the plugin `plugin` (their names: `<plugin>.<name>`).
void add_backends(Registry& r, const std::string& plugin, const std::vector<TestBackend>& backends) {
  r.register_plugin({plugin, "0", "test backends", "none", "", "", ""}, [&](Registrar& reg) {
    for (const TestBackend& b : backends)
      reg.device_backend(plugin + "." + b.name, "a test backend", [b, plugin](const Params&) {
           struct Backend final : DeviceBackend {
             TestBackend b;
             std::string plugin;
             Backend(TestBackend spec, std::string slug) : b(std::move(spec)), plugin(std::move(slug)) {}
             std::vector<std::shared_ptr<Device>> devices() override {
               std::vector<std::shared_ptr<Device>> out;
               for (int i = 0; i < b.devices; ++i) out.push_back(std::make_shared<TestDevice>(plugin + "." + b.name, i, b.torch));
               return out;
             }
           };
           return std::make_shared<Backend>(b, plugin);
         }).auto_priority(b.priority);
  });
}

std::string resolve_error(const Registry& r, const std::string& id) {
  try {
    resolve_device(r, id, Params{});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The value of `key` in /proc/meminfo, in bytes (-1 when absent).
double meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string k, unit;
  double kb = 0;
  while (in >> k >> kb) {
    std::getline(in, unit);
    if (k == key + ":") return kb * 1024;
  }
  return -1;
}

}  // namespace

TEST(Hal, DeviceIdsSplitIntoBackendAndIndex) {
  EXPECT_EQ(parse_device_id("cuda:1"), std::make_pair(std::string("cuda"), 1));
  EXPECT_EQ(parse_device_id("cpu"), std::make_pair(std::string("cpu"), 0));
  EXPECT_EQ(parse_device_id("simaccel:123456"), std::make_pair(std::string("simaccel"), 123456));
  for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1.5", "cuda:1234567"}) {
    try {
      parse_device_id(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_HAS(e.what(), std::string("device '") + bad + "': expected <backend>:<index>");
    }
  }
}

// The cpu backend has exactly one device, which describes this host as /proc and the C++ runtime
// see it; cuda is listed too, with devices or with the reason it has none.
TEST(Hal, TheCpuBackendDescribesThisHost) {
  const Registry registry;  // core's own backends
  const auto listing = list_devices(registry);
  const DeviceListing *cpu = nullptr, *cuda = nullptr;
  for (const auto& l : listing) {
    if (l.backend == "cpu") cpu = &l;
    if (l.backend == "cuda") cuda = &l;
  }
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->devices.empty(), !cuda->error.empty()) << "no GPU comes with its reason: " << cuda->error;
  ASSERT_EQ(cpu->devices.size(), 1u);
  EXPECT_EQ(cpu->error, "");
  const DeviceInfo info = cpu->devices[0]->info();
  EXPECT_EQ(info.id, "cpu");
  EXPECT_EQ(info.backend, "cpu");
  EXPECT_EQ(info.index, 0);
  EXPECT_FALSE(info.name.empty());
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      EXPECT_EQ(info.name, line.substr(line.find(':') + 2));
      break;
    }
  EXPECT_EQ(info.cores, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(static_cast<double>(info.memory_bytes), meminfo_bytes("MemTotal"));
#if defined(__x86_64__)
  EXPECT_EQ(info.details.at("arch"), "x86_64");
#endif
  EXPECT_EQ(cpu->devices[0]->tensor_device(), "cpu");

  // Health: unhealthy only with under 3% of the memory available (or above 95 C), each problem named.
  const Health h = cpu->devices[0]->health();
  EXPECT_EQ(h.ok, h.problems.empty());
  if (meminfo_bytes("MemAvailable") > 0.05 * meminfo_bytes("MemTotal")) {
    for (const auto& p : h.problems) EXPECT_EQ(p.find("memory"), std::string::npos) << p;
  }
  const Telemetry t = cpu->devices[0]->telemetry();
  ASSERT_TRUE(t.values.count("utilization_pct"));
  EXPECT_GE(t.values.at("utilization_pct"), 0.0);
  EXPECT_LE(t.values.at("utilization_pct"), 100.0);
  ASSERT_TRUE(t.values.count("memory_used_bytes"));
  EXPECT_GT(t.values.at("memory_used_bytes"), 0.0);
  EXPECT_LE(t.values.at("memory_used_bytes"), meminfo_bytes("MemTotal"));
  EXPECT_GE(t.values.at("load_1m"), 0.0);
}

// `auto` takes the first usable device of the backend with the highest priority that has one; a
// negative priority (a simulator) is never chosen; an explicit id names what is there when it fails.
TEST(Hal, AutoPicksTheHighestPriorityBackendWithAUsableDevice) {
  // Above cuda's 100, so that the answer is the same with or without a GPU here.
  Registry r;
  add_backends(r, "first", {{"low", 105, 2, ""}, {"empty", 150, 0, ""}, {"unusable", 120, 1, "not usable: no driver"},
                            {"sim", -1, 3, ""}});
  EXPECT_EQ(resolve_device(r, "auto", Params{})->info().id, "first.low:0");
  add_backends(r, "second", {{"top", 180, 1, "usable"}});
  EXPECT_EQ(resolve_device(r, "auto", Params{})->info().id, "second.top:0");

  Registry with_sim;
  add_backends(with_sim, "third", {{"sim", -1, 3, ""}});
  EXPECT_NE(resolve_device(with_sim, "auto", Params{})->info().backend, "third.sim") << "a simulator is never auto";
  EXPECT_EQ(resolve_device(with_sim, "third.sim:2", Params{})->info().id, "third.sim:2") << "named explicitly, it is used";

  EXPECT_EQ(resolve_device(r, "first.low:1", Params{})->info().id, "first.low:1");
  EXPECT_HAS(resolve_error(r, "first.low:2"), "device 'first.low:2' does not exist here: backend 'first.low' has 2 devices");
  EXPECT_HAS(resolve_error(r, "first.empty:0"), "backend 'first.empty' has 0 devices");
  EXPECT_HAS(resolve_error(r, "first.unusable:0"),
             "device 'first.unusable:0' (test device) is present, but not usable: no driver");
  EXPECT_HAS(resolve_error(r, "tpu:0"), "no backend 'tpu' is registered");

  // With core's backends only: cuda when it has a device LibTorch can use, else the cpu, the very
  // same object as `cpu:0`.
  const Registry core;
  bool usable_gpu = false;
  for (const auto& l : list_devices(core))
    for (const auto& d : l.devices)
      usable_gpu |= l.backend == "cuda" && d->info().details.at("torch") == "usable";
  const auto picked = resolve_device(core, "auto", Params{});
  EXPECT_EQ(picked->info().backend, usable_gpu ? "cuda" : "cpu");
  if (!usable_gpu) {
    EXPECT_EQ(picked, resolve_device(core, "cpu:0", Params{}));
  }
  EXPECT_HAS(resolve_error(core, "cpu:1"), "backend 'cpu' has 1 device. Use `device: auto`");
}
