#include "simaccel.hpp"

#include <ATen/ATen.h>
#include <nexp/torch.hpp>
#include <fmt/format.h>
#include <nexp/stats.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace simaccel {

const std::vector<std::pair<std::string, Fault>>& fault_names() {
  static const std::vector<std::pair<std::string, Fault>> names = {{"none", Fault::None},
                                                                   {"stuck", Fault::Stuck},
                                                                   {"ecc_storm", Fault::EccStorm},
                                                                   {"link_flap", Fault::LinkFlap},
                                                                   {"slowdown", Fault::Slowdown}};
  return names;
}

const std::string& fault_name(Fault fault) {
  for (const auto& [name, value] : fault_names())
    if (value == fault) return name;
  throw std::logic_error("simaccel: a fault without a name");
}

void DeviceOptions::check() const {
  if (fault != Fault::None && fault_device >= devices)
    throw nexp::ConfigError(fmt::format("device option fault_device = {} but simaccel has only {} devices (devices option); "
                                        "put the fault on a device that exists",
                                        fault_device, devices));
}

SimAccelDevice::SimAccelDevice(int index, DeviceOptions options)
    : index_(index), options_(std::move(options)), faulty_(options_.fault != Fault::None && options_.fault_device == index) {}

nexp::DeviceInfo SimAccelDevice::info() const {
  nexp::DeviceInfo i;
  i.id = fmt::format("simaccel:{}", index_);
  i.backend = "simaccel";
  i.index = index_;
  i.name = "SimAccel SA-1 (emulated on the host CPU)";
  i.memory_bytes = options_.memory_mb << 20;
  i.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  i.details["firmware"] = "sa1-fw 1.4.2";
  i.details["link"] = "4 x SA-Link (emulated)";
  i.details["injected_fault"] = faulty_ ? fmt::format("{} from step {}", fault_name(options_.fault), options_.onset_step) : "none";
  i.details["torch"] = "usable";
  return i;
}

nexp::Telemetry SimAccelDevice::telemetry() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nexp::Telemetry t;
  t.values = {{"utilization_pct", utilization_}, {"temperature_c", temperature_}, {"power_w", power_},
              {"clock_mhz", clock_},             {"memory_used_bytes", static_cast<double>(memory_used_)},
              {"ecc_sbe_total", ecc_sbe_},       {"ecc_dbe_total", ecc_dbe_},
              {"link_up", link_up_ ? 1.0 : 0.0}, {"link_errors_total", link_errors_},
              {"throttled", throttled_ ? 1.0 : 0.0}, {"steps", static_cast<double>(steps_)}};
  return t;
}

nexp::Health SimAccelDevice::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nexp::Health h;
  auto problem = [&](std::string s) { h.ok = false, h.problems.push_back(std::move(s)); };
  if (ecc_dbe_ > 0) problem(fmt::format("uncorrected ECC errors: {:.0f}", ecc_dbe_));
  if (ecc_sbe_ > 10000) problem(fmt::format("corrected ECC errors: {:.0f} (storm)", ecc_sbe_));
  if (!link_up_) problem("SA-Link down");
  if (link_errors_ > 0) problem(fmt::format("SA-Link errors: {:.0f}", link_errors_));
  if (throttled_) problem(fmt::format("thermal throttling at {:.0f} C, clock {:.0f} MHz", temperature_, clock_));
  if (hung_) problem("device not responding (a step made no progress)");
  return h;
}

void SimAccelDevice::on_step(std::int64_t step) {
  double sleep_seconds = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++steps_;
    utilization_ = 97.0;
    // A healthy device warms up towards 62 C under load and draws ~350 W.
    temperature_ += (62.0 - temperature_) * 0.3;
    power_ = 350.0;
    const bool active = faulty_ && step >= options_.onset_step;
    if (!active) return;
    switch (options_.fault) {
      case Fault::EccStorm:
        ecc_sbe_ += 2500.0;
        if ((step - options_.onset_step) % 4 == 0) ecc_dbe_ += 1;
        break;
      case Fault::LinkFlap:
        link_up_ = (step - options_.onset_step) % 3 != 0;
        link_errors_ += 64.0;
        break;
      case Fault::Slowdown:
        temperature_ = 96.0;
        throttled_ = true;
        clock_ = 1980.0 / options_.slowdown_factor;
        sleep_seconds = 0.01 * (options_.slowdown_factor - 1.0);
        break;
      case Fault::Stuck:
        hung_ = true;
        utilization_ = 100.0;
        power_ = 120.0;
        sleep_seconds = options_.stuck_seconds;
        break;
      case Fault::None:
        break;
    }
  }
  // The emulated device is slower (or hangs): the caller's step takes this much longer.
  if (sleep_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(sleep_seconds));
}

std::int64_t SimAccelDevice::reserve(std::int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::int64_t limit = options_.memory_mb << 20;
  if (memory_used_ + bytes > limit)
    throw nexp::ConfigError(fmt::format("simaccel:{} is out of memory: {} MiB requested with {} MiB in use, the device has {} "
                                        "MiB (device option memory_mb). Use a smaller working set or more device memory.",
                                        index_, bytes >> 20, memory_used_ >> 20, options_.memory_mb));
  return memory_used_ += bytes;
}

void SimAccelDevice::release(std::int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_used_ = std::max<std::int64_t>(0, memory_used_ - bytes);
}

SimAccelBackend::SimAccelBackend(DeviceOptions options) {
  for (int i = 0; i < options.devices; ++i) devices_.push_back(std::make_shared<SimAccelDevice>(i, options));
}

// ---------------------------------------------------------------- simaccel.burn_in

void run_burn_in(nexp::RunContext& ctx) {
  const auto o = ctx.options<BurnInOptions>();
  const std::int64_t n = o.size, steps = o.steps;
  const double tolerance = o.tolerance;
  auto* accel = dynamic_cast<SimAccelDevice*>(&ctx.device());
  const std::int64_t bytes = 3 * n * n * static_cast<std::int64_t>(sizeof(float));
  if (accel) accel->reserve(bytes);
  // Inputs with a known product, computed once in double precision on the host.
  auto grid = at::arange(n * n, at::kDouble).reshape({n, n});
  const at::Tensor a64 = at::sin(grid * 0.37), b64 = at::cos(grid * 0.11) / static_cast<double>(n);
  const at::Tensor reference = a64.matmul(b64);
  const double scale = reference.abs().max().item<double>();
  const at::Tensor a = a64.to(at::kFloat).to(nexp::torch_device(ctx)), b = b64.to(at::kFloat).to(nexp::torch_device(ctx));
  const nexp::Telemetry before = ctx.device().telemetry();
  double worst = 0;
  std::vector<double> seconds;
  auto bar = ctx.progress(steps, "burn-in");
  for (std::int64_t s = 1; s <= steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    const at::Tensor c = a.matmul(b).to(at::kCPU).to(at::kDouble);
    const double err = (c - reference).abs().max().item<double>() / scale;
    worst = std::max(worst, std::isfinite(err) ? err : 1e300);
    ctx.log_metrics(s, {{"max_error", err}});  // core calls the device's on_step here
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    bar.advance();
  }
  const nexp::Telemetry after = ctx.device().telemetry();
  const nexp::Health health = ctx.device().health();
  if (accel) accel->release(bytes);
  for (const auto& line : health.problems) ctx.log().warn("{}: {}", ctx.device().info().id, line);
  auto delta = [&](const char* key) {
    auto x = after.values.find(key), y = before.values.find(key);
    return x == after.values.end() || y == before.values.end() ? 0.0 : x->second - y->second;
  };
  const bool passed = worst <= tolerance && health.ok;
  ctx.summary("max_error", worst);
  ctx.summary("passed", passed ? 1.0 : 0.0);
  ctx.summary("health_ok", health.ok ? 1.0 : 0.0);
  ctx.summary("ecc_errors", delta("ecc_sbe_total") + delta("ecc_dbe_total"));
  ctx.summary("step_seconds", seconds.empty() ? 0.0 : nexp::stats::median(seconds));
  ctx.log().info("burn-in on {}: {} steps, max relative error {:.2e} (tolerance {:.0e}), health {}: {}", ctx.device().info().id,
                 steps, worst, tolerance, health.ok ? "ok" : "FAILED", passed ? "PASS" : "FAIL");
}

}  // namespace simaccel
