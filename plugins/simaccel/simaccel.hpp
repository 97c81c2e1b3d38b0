#pragma once
// simaccel: a simulated accelerator backend for nexp's HAL.
//
// It computes on the host CPU (its torch_device() is the CPU) but is a device of its own: its own
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
#include <vector>

namespace simaccel {

struct Options {
  int devices = 2;
  std::int64_t memory_mb = 16384;
  std::string fault = "none";  // none, stuck, ecc_storm, link_flap, slowdown
  int fault_device = 0;
  std::int64_t onset_step = 3;
  double stuck_seconds = 0.5;
  double slowdown_factor = 5.0;
  static Options from(const nexp::Params& p);
};

class SimAccelDevice final : public nexp::Device {
 public:
  SimAccelDevice(int index, Options options);
  nexp::DeviceInfo info() const override;
  nexp::Telemetry telemetry() const override;
  nexp::Health health() const override;
  c10::Device torch_device() const override { return c10::Device(c10::kCPU); }
  void on_step(std::int64_t step) override;

  // Claims device memory for a working set; throws nexp::ConfigError when it does not fit. Returns
  // the bytes now in use. release() gives it back.
  std::int64_t reserve(std::int64_t bytes);
  void release(std::int64_t bytes);
  bool faulty() const { return faulty_; }
  const std::string& fault() const { return options_.fault; }

 private:
  int index_;
  Options options_;
  bool faulty_;  // this device carries the injected fault
  mutable std::mutex mutex_;
  std::int64_t steps_ = 0, memory_used_ = 0;
  double temperature_ = 38.0, power_ = 90.0, clock_ = 1980.0, utilization_ = 0.0;
  double ecc_sbe_ = 0, ecc_dbe_ = 0, link_errors_ = 0;
  bool link_up_ = true, throttled_ = false, hung_ = false;
};

class SimAccelBackend final : public nexp::DeviceBackend {
 public:
  explicit SimAccelBackend(Options options);
  std::vector<std::shared_ptr<nexp::Device>> devices() override { return devices_; }

 private:
  std::vector<std::shared_ptr<nexp::Device>> devices_;
};

// simaccel.burn_in: a known-answer matmul QA test on the run's device.
void run_burn_in(nexp::RunContext& ctx);

}  // namespace simaccel
