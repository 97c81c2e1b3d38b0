// simaccel: a simulated accelerator for nexp's HAL, with fault injection; the reference backend for
// accelerator vendors. Registers the `simaccel` device backend and its known-answer burn-in test.
#include <nexp/nexp.hpp>

#include "simaccel.hpp"

namespace {

using nexp::Param;

void register_components(nexp::Registrar& r) {
  r.device_backend("simaccel", "simulated accelerator (computes on the host CPU) with telemetry and fault injection",
                   [](const nexp::Params& options) { return std::make_shared<simaccel::SimAccelBackend>(simaccel::Options::from(options)); })
      .param(Param::integer("devices", 2, "number of simaccel devices").range(1, 64))
      .param(Param::integer("memory_mb", 16384, "memory per device in MiB").range(1, 1 << 24))
      .param(Param::string("fault", "none", "fault to inject").choices({"none", "stuck", "ecc_storm", "link_flap", "slowdown"}))
      .param(Param::integer("fault_device", 0, "which device carries the fault").range(0, 63))
      .param(Param::integer("onset_step", 3, "first step at which the fault strikes").min(0))
      .param(Param::real("stuck_seconds", 0.5, "how long each step hangs under the stuck fault").range(0, 3600))
      .param(Param::real("slowdown_factor", 5.0, "clock reduction (and step slowdown) under the slowdown fault").range(1, 1000))
      .auto_priority(-10);

  r.metric("max_error", nexp::Direction::Minimize, "largest relative error of the known-answer matmul over all steps");
  r.metric("passed", nexp::Direction::Maximize, "1 when every step matched the known answer and the device reports healthy");
  r.metric("health_ok", nexp::Direction::Maximize, "1 when the device's health check passes after the test");
  r.metric("ecc_errors", nexp::Direction::Minimize, "ECC errors (corrected + uncorrected) the device counted during the test");
  r.metric("step_seconds", nexp::Direction::Minimize, "median seconds per step").measures_time();

  r.method("simaccel.burn_in", "known-answer matmul QA test on the run's device (any backend; simaccel reserves its memory)",
           simaccel::run_burn_in)
      .param(Param::integer("steps", 20, "matmul steps").range(1, 1000000))
      .param(Param::integer("size", 128, "matrix size").range(2, 16384))
      .param(Param::real("tolerance", 1e-3, "largest acceptable relative error").range(0, 1))
      .produces({"max_error", "passed", "health_ok", "ecc_errors", "step_seconds"});
}

}  // namespace

NEXP_PLUGIN(simaccel, "0.1.0", "a simulated accelerator for nexp's HAL with telemetry and fault injection",
            "nexp reference accelerator backend (simulated); companion of DrWatson: AI-driven hardware diagnosis, NeurIPS 2026.",
            register_components)
