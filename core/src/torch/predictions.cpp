// Prediction metrics and the tensor device of a HAL device (nexp/torch.hpp).
#include <ATen/ATen.h>

#include <fmt/format.h>

#include <cmath>

#include "nexp/error.hpp"
#include "nexp/torch.hpp"
#include "torch_components.hpp"

namespace nexp {

c10::Device torch_device(const Device& device) {
  const std::string id = device.tensor_device();
  try {
    return c10::Device(id);
  } catch (const c10::Error&) {
    throw Error(fmt::format("device '{}' names its tensor device '{}', which LibTorch does not know (expected e.g. "
                            "cpu, cuda:0); its backend's tensor_device() must return LibTorch's device syntax",
                            device.info().id, id));
  }
}

c10::Device torch_device(RunContext& ctx) { return torch_device(ctx.device()); }

std::map<std::string, double> score_predictions(RunContext& ctx, std::int64_t step, const std::string& prefix,
                                                const at::Tensor& probs, const at::Tensor& labels) {
  TORCH_CHECK(probs.dim() == 2 && labels.dim() == 1 && probs.size(0) == labels.size(0),
              "score_predictions: expected probs [N, C] and labels [N], got ", probs.sizes(), " and ", labels.sizes());
  at::Tensor p = probs.detach().to(at::kCPU, at::kDouble), y = labels.detach().to(at::kCPU, at::kLong);
  std::map<std::string, double> out;
  for (const MetricSpec* m : ctx.prediction_metrics(prefix)) out[prefix + "_" + m->name] = m->from_predictions(p, y);
  ctx.log_metrics(step, out);
  for (const auto& [k, v] : out) ctx.summary(k, v);
  return out;
}

// probs: [N, C] double, labels: [N] long (score_predictions converts).
double core_prediction_metric(const std::string& name, const at::Tensor& probs, const at::Tensor& labels) {
  if (name == "accuracy") return probs.argmax(1).eq(labels).to(at::kDouble).mean().item<double>();
  if (name == "nll") return -probs.gather(1, labels.unsqueeze(1)).clamp_min(1e-12).log().mean().item<double>();
  if (name == "brier") {
    at::Tensor onehot = at::zeros_like(probs).scatter_(1, labels.unsqueeze(1), 1.0);
    return (probs - onehot).pow(2).sum(1).mean().item<double>();
  }
  if (name == "ece") {  // 15 equal-width bins of the top class's confidence
    auto [conf, pred] = probs.max(1);
    at::Tensor correct = pred.eq(labels).to(at::kDouble);
    const double n = static_cast<double>(probs.size(0));
    double ece = 0;
    for (int b = 0; b < 15; ++b) {
      at::Tensor in = conf.gt(b / 15.0).logical_and(conf.le((b + 1) / 15.0));
      const double count = in.sum().item<double>();
      if (count > 0)
        ece += count / n * std::fabs(conf.masked_select(in).mean().item<double>() - correct.masked_select(in).mean().item<double>());
    }
    return ece;
  }
  throw Error(fmt::format("'{}' is not one of core's prediction metrics (accuracy, nll, ece, brier)", name));
}

}  // namespace nexp
