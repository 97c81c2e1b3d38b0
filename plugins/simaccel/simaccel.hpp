#pragma once
// simaccel: a simulated accelerator backend for nexp's HAL.
//
// It computes on the host CPU (its tensor_device() is the CPU) but is a device of its own: its own
// ids (simaccel:0, simaccel:1, ...), a memory limit, telemetry (temperature, power, clock, ECC
// counters, link state and errors, throttling) that evolves with the work it does, and faults
// injected from the config's device options, which strike from a given step on (Device::on_step is
// called by core at every step a method reports):
//   stuck      the device hangs: each step blocks for stuck_seconds and makes no progress
//   ecc_storm  a storm of corrected ECC errors with occasional uncorrected ones
//   link_flap  the inter-chip link goes down every few steps, link errors pile up
//   slowdown   thermal throttling: hot, clock cut, each step slowdown_factor times slower
// It is the reference for adding an accelerator to nexp (README.md walks through the steps).
#include <nexp/nexp.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace simaccel {

enum class Fault { None, Stuck, EccStorm, LinkFlap, Slowdown };
// The names configs use for the faults: none, stuck, ecc_storm, link_flap, slowdown.
const std::vector<std::pair<std::string, Fault>>& fault_names();
const std::string& fault_name(Fault fault);

// The backend's options: a config's `device:` map less its id.
struct DeviceOptions {
  int devices = 2;
  std::int64_t memory_mb = 16384;
  Fault fault = Fault::None;
  int fault_device = 0;
  std::int64_t onset_step = 3;
  double stuck_seconds = 0.5;
  double slowdown_factor = 5.0;

  static void declare(nexp::Options<DeviceOptions>& o) {
    o.add("devices", &DeviceOptions::devices, "number of simaccel devices").range(1, 64);
    o.add("memory_mb", &DeviceOptions::memory_mb, "memory per device in MiB").range(1, 1 << 24);
    o.add("fault", &DeviceOptions::fault, "fault to inject", fault_names());
    o.add("fault_device", &DeviceOptions::fault_device, "which device carries the fault").range(0, 63);
    o.add("onset_step", &DeviceOptions::onset_step, "first step at which the fault strikes").min(0);
    o.add("stuck_seconds", &DeviceOptions::stuck_seconds, "how long each step hangs under the stuck fault").range(0, 3600);
    o.add("slowdown_factor", &DeviceOptions::slowdown_factor,
          "clock reduction (and step slowdown) under the slowdown fault")
        .range(1, 1000);
  }
  // Throws nexp::ConfigError when the fault sits on a device the backend does not have.
  void check() const;
};

// simaccel.burn_in's options.
struct BurnInOptions {
  std::int64_t steps = 20;
  std::int64_t size = 128;
  double tolerance = 1e-3;

  static void declare(nexp::Options<BurnInOptions>& o) {
    o.add("steps", &BurnInOptions::steps, "matmul steps").range(1, 1000000);
    o.add("size", &BurnInOptions::size, "matrix size").range(2, 16384);
    o.add("tolerance", &BurnInOptions::tolerance, "largest acceptable relative error").range(0, 1);
  }
};

class SimAccelDevice final : public nexp::Device {
 public:
  SimAccelDevice(int index, DeviceOptions options);
  nexp::DeviceInfo info() const override;
  nexp::Telemetry telemetry() const override;
  nexp::Health health() const override;
  std::string tensor_device() const override { return "cpu"; }
  void on_step(std::int64_t step) override;

  // Claims device memory for a working set; throws nexp::ConfigError when it does not fit. Returns
  // the bytes now in use. release() gives it back.
  std::int64_t reserve(std::int64_t bytes);
  void release(std::int64_t bytes);
  bool faulty() const { return faulty_; }
  Fault fault() const { return options_.fault; }

 private:
  int index_;
  DeviceOptions options_;
  bool faulty_;  // this device carries the injected fault
  mutable std::mutex mutex_;
  std::int64_t steps_ = 0, memory_used_ = 0;
  double temperature_ = 38.0, power_ = 90.0, clock_ = 1980.0, utilization_ = 0.0;
  double ecc_sbe_ = 0, ecc_dbe_ = 0, link_errors_ = 0;
  bool link_up_ = true, throttled_ = false, hung_ = false;
};

class SimAccelBackend final : public nexp::DeviceBackend {
 public:
  explicit SimAccelBackend(DeviceOptions options);
  std::vector<std::shared_ptr<nexp::Device>> devices() override { return devices_; }

 private:
  std::vector<std::shared_ptr<nexp::Device>> devices_;
};

// simaccel.burn_in: a known-answer matmul QA test on the run's device.
void run_burn_in(nexp::RunContext& ctx);

}  // namespace simaccel
