// simaccel: a simulated accelerator for nexp's HAL, with fault injection; the reference backend for
// accelerator vendors. Registers the `simaccel` device backend and its known-answer burn-in test.
#include <nexp/nexp.hpp>

#include "simaccel.hpp"

namespace {

std::shared_ptr<nexp::DeviceBackend> make_backend(const nexp::Params& params) {
  const auto o = nexp::bind<simaccel::DeviceOptions>(params);
  o.check();
  return std::make_shared<simaccel::SimAccelBackend>(o);
}

void register_components(nexp::Registrar& r) {
  r.device_backend("simaccel", "simulated accelerator (computes on the host CPU) with telemetry and fault injection",
                   make_backend)
      .options<simaccel::DeviceOptions>()
      .auto_priority(-10);

  r.metric("max_error", nexp::Direction::Minimize, "largest relative error of the known-answer matmul over all steps");
  r.metric("passed", nexp::Direction::Maximize, "1 when every step matched the known answer and the device reports healthy");
  r.metric("health_ok", nexp::Direction::Maximize, "1 when the device's health check passes after the test");
  r.metric("ecc_errors", nexp::Direction::Minimize, "ECC errors (corrected + uncorrected) the device counted during the test");
  r.metric("step_seconds", nexp::Direction::Minimize, "median seconds per step").measures_time();

  r.method("simaccel.burn_in", "known-answer matmul QA test on the run's device (any backend; simaccel reserves its memory)",
           simaccel::run_burn_in)
      .options<simaccel::BurnInOptions>()
      .produces({"max_error", "passed", "health_ok", "ecc_errors", "step_seconds"});
}

}  // namespace

NEXP_PLUGIN(simaccel, "0.1.0", "a simulated accelerator for nexp's HAL with telemetry and fault injection",
            "nexp reference accelerator backend (simulated); companion of DrWatson: AI-driven hardware diagnosis, NeurIPS 2026.",
            register_components)
