#pragma once
// The hardware abstraction layer. A backend enumerates devices; a device reports what it is, how it
// is doing, and where a method's tensors run. CPU and CUDA backends live in core; a plugin can
// register a backend for a custom accelerator (see plugins/simaccel).
//
// The HAL does not depend on LibTorch (core does not link it): a device names its tensor device in
// LibTorch's syntax, and nexp::torch_device() (<nexp/torch.hpp>) turns that into a c10::Device.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nexp/config.hpp"
#include "nexp/options.hpp"
#include "nexp/export.hpp"

namespace nexp {

struct NEXP_API DeviceInfo {
  std::string id;       // "cpu", "cuda:0", "simaccel:1": what a config's `device:` names
  std::string backend;  // "cpu", "cuda", "simaccel"
  int index = 0;
  std::string name;                  // product name
  std::int64_t memory_bytes = -1;    // total memory, -1 when unknown
  int cores = -1;                    // compute units (CPU cores, SMs), -1 when unknown
  std::map<std::string, std::string> details;  // driver, UUID, bus id, ...
};

// A telemetry snapshot. Keys in use (units in the name): utilization_pct, temperature_c, power_w,
// memory_used_bytes, ecc_sbe_total, ecc_dbe_total, retired_pages, pcie_replay_total, link_up (0/1),
// link_errors_total, clock_mhz, throttled (0/1). A backend reports what its hardware has.
struct NEXP_API Telemetry {
  std::map<std::string, double> values;
};

struct NEXP_API Health {
  bool ok = true;
  std::vector<std::string> problems;  // one line each, e.g. "double-bit ECC errors: 2"
};

class NEXP_API Device {
 public:
  virtual ~Device();
  virtual DeviceInfo info() const = 0;
  virtual Telemetry telemetry() const = 0;
  virtual Health health() const = 0;
  // Where this device's tensors live, in LibTorch's device syntax: "cpu", "cuda:1", "privateuseone:0".
  // A simulated accelerator that computes on the host says "cpu".
  virtual std::string tensor_device() const = 0;
  // Called by core at each step a method reports (log_metrics, progress). A simulated accelerator
  // injects its faults here (slow down, hang, raise); real devices do nothing.
  virtual void on_step(std::int64_t step);
};

class NEXP_API DeviceBackend {
 public:
  virtual ~DeviceBackend();
  // The devices present now; an empty list when the backend has none (no GPU, no driver).
  virtual std::vector<std::shared_ptr<Device>> devices() = 0;
};

// options: the backend's parameters, from a config's `device:` map (e.g. fault injection).
using DeviceBackendFactory = std::function<std::shared_ptr<DeviceBackend>(const Params& options)>;

struct NEXP_API DeviceBackendSpec {
  // The `<name>` of `device: <name>:N`. A plugin's backend is named after it: `<slug>` or
  // `<slug>.<name>`, so that `nexp run` knows which plugin to load from the config alone.
  std::string name;
  std::string summary;
  Schema schema;
  // `device: auto` takes the first device of the available backend with the highest priority
  // (cuda 100, cpu 0); a simulator registers a negative one so that auto never picks it.
  int priority = -1;
  DeviceBackendFactory make;

  std::function<void(const Params&)> bind_check;  // as MethodSpec::bind_check

  // The backend's options (a config's `device:` map less its id), declared once as a struct.
  template <class T>
  DeviceBackendSpec& options() {
    schema = options_schema<T>();
    bind_check = [](const Params& p) { (void)bind<T>(p); };
    return *this;
  }
  DeviceBackendSpec& auto_priority(int p) { priority = p; return *this; }
};

}  // namespace nexp
