// simaccel's own tests: each injected fault shows in telemetry and health from its onset step on,
// only on the faulty device, and memory limits hold.
#include <gtest/gtest.h>

#include <chrono>

#include <nexp/torch.hpp>

#include "simaccel.hpp"

namespace {

simaccel::DeviceOptions with_fault(simaccel::Fault fault) {
  simaccel::DeviceOptions o;
  o.fault = fault;
  o.onset_step = 3;
  o.stuck_seconds = 0.05;
  o.slowdown_factor = 3.0;
  return o;
}

double value(const nexp::Telemetry& t, const char* key) { return t.values.at(key); }

}  // namespace

TEST(SimAccel, HealthyDeviceStaysHealthyUnderLoad) {
  simaccel::SimAccelDevice d(0, simaccel::DeviceOptions{});
  for (int s = 1; s <= 20; ++s) d.on_step(s);
  const auto t = d.telemetry();
  EXPECT_TRUE(d.health().ok);
  EXPECT_EQ(value(t, "ecc_sbe_total"), 0);
  EXPECT_EQ(value(t, "link_up"), 1);
  EXPECT_NEAR(value(t, "temperature_c"), 62, 1);  // warmed up towards its load temperature
  EXPECT_EQ(d.info().id, "simaccel:0");
  EXPECT_EQ(nexp::torch_device(d).type(), c10::kCPU);
}

TEST(SimAccel, EccStormStartsAtOnsetOnTheFaultyDeviceOnly) {
  simaccel::SimAccelDevice faulty(0, with_fault(simaccel::Fault::EccStorm)), other(1, with_fault(simaccel::Fault::EccStorm));
  for (int s = 1; s <= 2; ++s) faulty.on_step(s), other.on_step(s);
  EXPECT_EQ(value(faulty.telemetry(), "ecc_sbe_total"), 0) << "before the onset step";
  for (int s = 3; s <= 10; ++s) faulty.on_step(s), other.on_step(s);
  EXPECT_EQ(value(faulty.telemetry(), "ecc_sbe_total"), 8 * 2500.0);
  EXPECT_EQ(value(faulty.telemetry(), "ecc_dbe_total"), 2);  // steps 3 and 7
  EXPECT_FALSE(faulty.health().ok);
  EXPECT_EQ(value(other.telemetry(), "ecc_sbe_total"), 0);
  EXPECT_TRUE(other.health().ok);
}

TEST(SimAccel, LinkFlapTakesTheLinkDownEveryThirdStep) {
  simaccel::SimAccelDevice d(0, with_fault(simaccel::Fault::LinkFlap));
  int down = 0;
  for (int s = 1; s <= 11; ++s) {
    d.on_step(s);
    down += value(d.telemetry(), "link_up") == 0;
  }
  EXPECT_EQ(down, 3);  // steps 3, 6, 9
  EXPECT_EQ(value(d.telemetry(), "link_errors_total"), 9 * 64.0);
}

TEST(SimAccel, SlowdownThrottlesAndSlowsSteps) {
  simaccel::SimAccelDevice d(0, with_fault(simaccel::Fault::Slowdown));
  d.on_step(1);
  EXPECT_EQ(value(d.telemetry(), "throttled"), 0);
  const auto t0 = std::chrono::steady_clock::now();
  d.on_step(3);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 0.019);  // 0.01 s per unit of slowdown beyond 1
  EXPECT_EQ(value(d.telemetry(), "throttled"), 1);
  EXPECT_GT(value(d.telemetry(), "temperature_c"), 90);
  EXPECT_NEAR(value(d.telemetry(), "clock_mhz"), 660, 1e-9);
}

TEST(SimAccel, StuckDeviceHangsEachStep) {
  simaccel::SimAccelDevice d(0, with_fault(simaccel::Fault::Stuck));
  const auto t0 = std::chrono::steady_clock::now();
  d.on_step(3);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.049);
  EXPECT_FALSE(d.health().ok);
}

TEST(SimAccel, MemoryLimitIsEnforced) {
  simaccel::DeviceOptions o;
  o.memory_mb = 1;
  simaccel::SimAccelDevice d(0, o);
  EXPECT_EQ(d.reserve(512 << 10), 512 << 10);
  EXPECT_THROW(d.reserve(600 << 10), nexp::ConfigError);
  d.release(512 << 10);
  EXPECT_EQ(d.reserve(1 << 20), 1 << 20);
}

TEST(SimAccel, BackendListsItsDevicesWithTheirOwnIds) {
  simaccel::DeviceOptions o;
  o.devices = 3;
  simaccel::SimAccelBackend b(o);
  auto devices = b.devices();
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[2]->info().id, "simaccel:2");
  EXPECT_EQ(devices[2]->info().memory_bytes, 16384ll << 20);
}

TEST(SimAccel, DeviceOptionsBindFromConfigValuesAndRefuseAFaultOnAMissingDevice) {
  const nexp::Params given({{"fault", std::string("link_flap")}, {"fault_device", std::int64_t{2}}});
  auto o = nexp::bind<simaccel::DeviceOptions>(given);
  EXPECT_EQ(o.fault, simaccel::Fault::LinkFlap);
  EXPECT_EQ(o.fault_device, 2);
  EXPECT_EQ(o.devices, 2);  // not given: the declared default
  EXPECT_EQ(simaccel::fault_name(o.fault), "link_flap");
  EXPECT_THROW(o.check(), nexp::ConfigError);  // device 2 of devices 0 and 1
  o.devices = 3;
  EXPECT_NO_THROW(o.check());
}
