#pragma once
// Methods: a paper's algorithm or experiment, with a typed parameter schema.
#include <functional>
#include <string>
#include <vector>

#include "nexp/config.hpp"
#include "nexp/options.hpp"
#include "nexp/export.hpp"

namespace nexp {

class RunContext;

using MethodFn = std::function<void(RunContext& ctx)>;

struct NEXP_API MethodSpec {
  std::string name;  // "<slug>.<method>", e.g. "htc.decide"
  std::string summary;
  Schema schema;  // from the options struct: options<T>()
  // Binds a validated Params to the options struct and discards it (the conformance suite checks that
  // the declared defaults bind).
  std::function<void(const Params&)> bind_check;
  // Metrics the method reports (logged or summarised); each must be registered by the plugin or
  // core. The config's `metrics:` list may name only these (and prediction metrics, below).
  std::vector<std::string> metrics;
  // Calls nexp::score_predictions() (<nexp/torch.hpp>), so core's prediction metrics (accuracy, nll, ece, brier)
  // can be asked for.
  bool predictions = false;
  // Saves checkpoints and continues from RunContext::checkpoint() when resumed.
  bool resumable = false;
  // Dataset names (or "<prefix>.*" patterns) the method accepts; empty: any dataset, or none.
  std::vector<std::string> datasets;
  MethodFn run;

  // The method's options, declared once as a struct (nexp/options.hpp); the method reads them with
  // ctx.options<T>().
  template <class T>
  MethodSpec& options() {
    schema = options_schema<T>();
    bind_check = [](const Params& p) { (void)bind<T>(p); };
    return *this;
  }
  MethodSpec& produces(std::vector<std::string> names) { metrics = std::move(names); return *this; }
  MethodSpec& scores_predictions() { predictions = true; return *this; }
  MethodSpec& supports_resume() { resumable = true; return *this; }
  MethodSpec& accepts(std::vector<std::string> patterns) { datasets = std::move(patterns); return *this; }
};

}  // namespace nexp
