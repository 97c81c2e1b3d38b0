#pragma once
// The LibTorch side of the SDK, in libnexp_torch.so. Only a plugin that uses LibTorch includes it;
// it says so with nexp_add_plugin(<slug> TORCH ...), which links this library and LibTorch (its
// TORCH_PCH_SOURCES reuse the shared precompiled <torch/torch.h>). A plugin without TORCH never loads
// LibTorch.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/csrc/api/include/torch/version.h>

#include <cstdint>
#include <map>
#include <string>

#include "nexp/device.hpp"
#include "nexp/run_context.hpp"
#include "nexp/tensor_dataset.hpp"
#include "nexp/version.hpp"

namespace nexp {

namespace detail {
constexpr bool same_text(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || same_text(a + 1, b + 1));
}
}  // namespace detail
static_assert(detail::same_text(TORCH_VERSION, NEXP_TORCH_VERSION),
              "this plugin is compiled against other LibTorch headers than the LibTorch nexp was built with "
              "(NEXP_TORCH_VERSION); build it against the same LibTorch");

// The c10::Device of a HAL device (from its tensor_device(), e.g. "cpu", "cuda:1").
NEXP_API c10::Device torch_device(const Device& device);
// Where a run's tensors go: torch_device(ctx.device()).
NEXP_API c10::Device torch_device(RunContext& ctx);

// Computes the prediction metrics the config selects (core's accuracy, nll, ece and brier, and any a
// plugin registered with MetricSpec::from_predictions) from probs [N, C] and labels [N], logs them at
// `step` as "<prefix>_<metric>", records them as summaries and returns them.
NEXP_API std::map<std::string, double> score_predictions(RunContext& ctx, std::int64_t step, const std::string& prefix,
                                                         const at::Tensor& probs, const at::Tensor& labels);

}  // namespace nexp
