#pragma once
// Metrics: named scalars with a direction. A method reports them through RunContext::log_metrics()
// and RunContext::summary(); prediction metrics (accuracy, NLL, calibration) are computed from class
// probabilities given to nexp::score_predictions() (<nexp/torch.hpp>, in libnexp_torch.so).
#include <functional>
#include <string>

#include "nexp/export.hpp"

namespace at {
class Tensor;
}

namespace nexp {

enum class Direction { Minimize, Maximize, None };

NEXP_API const char* direction_name(Direction direction);  // "min", "max", "none"

// probs: [N, C] class probabilities (rows sum to 1); labels: [N] int64 class indices. Only code that
// links LibTorch calls it; the declaration needs no LibTorch header.
using PredictionMetricFn = std::function<double(const at::Tensor& probs, const at::Tensor& labels)>;

struct NEXP_API MetricSpec {
  std::string name;  // a plugin's metric is registered as "<slug>.<name>"; reported as "<name>"
  Direction direction = Direction::None;
  std::string summary;
  PredictionMetricFn from_predictions;  // set only for metrics computed from predictions
  // A wall-clock measurement: not expected to repeat exactly under the same seed (the conformance
  // suite's same-seed and resume checks skip it).
  bool timing = false;

  MetricSpec& measures_time() { timing = true; return *this; }
};

}  // namespace nexp
