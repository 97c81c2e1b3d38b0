#pragma once
// The plugin ABI. A plugin is libnexp_plugin_<slug>.so exporting exactly one symbol,
//   extern "C" const nexp_plugin_info* nexp_plugin_get_info();
// written by the NEXP_PLUGIN macro at the end of its plugin.cpp. The loader checks the ABI version
// and the build fingerprint, then calls register_components with a staging Registrar; only when that
// returns without error are the components added to the registry (a failure is rolled back).
//
// Bump NEXP_ABI_VERSION whenever nexp_plugin_info changes layout or meaning, or any SDK type that
// crosses the boundary (Registrar, the *Spec structs, RunContext, Dataset, Device) changes layout or
// virtual functions. The fingerprint catches the rest: a plugin built by another compiler major,
// another LibTorch, spdlog or fmt, another libstdc++ string ABI, or with CUDA where core has none.
//
// Version 2: core no longer links LibTorch. Device::torch_device() became tensor_device() (a string),
// RunContext::torch_device() and score_predictions() moved to <nexp/torch.hpp> (libnexp_torch), and
// RunContext gained prediction_metrics(); a device backend is named after its plugin.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "nexp/dataset.hpp"
#include "nexp/device.hpp"
#include "nexp/error.hpp"
#include "nexp/export.hpp"
#include "nexp/method.hpp"
#include "nexp/metric.hpp"
#include "nexp/run_context.hpp"
#include "nexp/version.hpp"

#define NEXP_ABI_VERSION 2

namespace nexp {

// Collects one plugin's components. Names are checked as they are added: methods and datasets must
// be "<slug>.<name>"; a metric's name is prefixed with "<slug>." by the registrar.
class NEXP_API Registrar {
 public:
  virtual ~Registrar();
  virtual const std::string& plugin_name() const = 0;
  virtual MethodSpec& method(std::string name, std::string summary, MethodFn run) = 0;
  virtual DatasetSpec& dataset(std::string name, std::string summary, DatasetFactory make) = 0;
  virtual MetricSpec& metric(std::string name, Direction direction, std::string summary) = 0;
  virtual DeviceBackendSpec& device_backend(std::string name, std::string summary,
                                            DeviceBackendFactory make) = 0;

  // A dataset whose factory takes its options struct: make(const Opts&, RunContext&).
  template <class Opts, class Make>
  DatasetSpec& dataset(std::string name, std::string summary, Make make) {
    DatasetFactory factory = [make = std::move(make)](const Params& p, RunContext& ctx) {
      return make(bind<Opts>(p), ctx);
    };
    return dataset(std::move(name), std::move(summary), std::move(factory)).template options<Opts>();
  }
};

}  // namespace nexp

extern "C" {

struct nexp_plugin_info {
  std::uint32_t abi_version;  // NEXP_ABI_VERSION the plugin was built with
  std::uint32_t struct_size;  // sizeof(nexp_plugin_info) in that build
  const char* name;           // the slug
  const char* version;
  const char* summary;
  const char* citation;
  const char* fingerprint;    // nexp_build_fingerprint() of the plugin's build
  // Returns 0 on success; else writes a message into error (NUL-terminated, at most error_size bytes).
  // No exception crosses this boundary.
  int (*register_components)(nexp::Registrar* registrar, char* error, std::size_t error_size);
};

}  // extern "C"

namespace nexp::detail {
// Runs fn(registrar), turning an exception into the C return protocol above.
inline int call_register(void (*fn)(Registrar&), Registrar* registrar, char* error,
                         std::size_t error_size) noexcept {
  auto fail = [&](const char* message) {
    if (error && error_size) {
      std::size_t i = 0;
      for (; message[i] && i + 1 < error_size; ++i) error[i] = message[i];
      error[i] = '\0';
    }
    return 1;
  };
  try {
    fn(*registrar);
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown exception (not derived from std::exception)");
  }
}
}  // namespace nexp::detail

// NEXP_PLUGIN(slug, version, summary, citation, register_fn): the plugin's one entry point.
// register_fn is `void fn(nexp::Registrar&)`.
#define NEXP_PLUGIN(slug, version, summary, citation, register_fn)                                 \
  static int nexp_plugin_register_thunk_(nexp::Registrar* r, char* error, std::size_t size) {      \
    return nexp::detail::call_register(&register_fn, r, error, size);                              \
  }                                                                                                \
  extern "C" __attribute__((visibility("default"))) const nexp_plugin_info* nexp_plugin_get_info() { \
    static const nexp_plugin_info info = {NEXP_ABI_VERSION,                                        \
                                          sizeof(nexp_plugin_info),                                \
                                          #slug,                                                   \
                                          version,                                                 \
                                          summary,                                                 \
                                          citation,                                                \
                                          NEXP_BUILD_FINGERPRINT,                                  \
                                          &nexp_plugin_register_thunk_};                           \
    return &info;                                                                                  \
  }
