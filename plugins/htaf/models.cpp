#include "models.hpp"


namespace htaf {

namespace F = torch::nn::functional;

Dhn::Dhn(std::int64_t inputs, std::int64_t width, std::int64_t depth, std::int64_t classes, Unit u) : unit(u) {
  for (std::int64_t i = 0; i < depth; ++i)
    layers.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(i == 0 ? inputs : width, width)));
  head = register_module("head", torch::nn::Linear(width, classes));
}

at::Tensor Dhn::forward(const at::Tensor& x) {
  at::Tensor h = x.flatten(1);
  for (auto& layer : layers) h = unit(layer->forward(h), is_training());
  return head->forward(h);
}

at::Tensor lif_spikes(const at::Tensor& current, std::int64_t steps, double beta, double theta, const Unit& unit,
                      bool training) {
  at::Tensor v = at::zeros_like(current), s = at::zeros_like(current);
  std::vector<at::Tensor> out;
  for (std::int64_t t = 0; t < steps; ++t) {
    v = v * beta + current - s * theta;  // soft reset by the previous spike
    s = unit(v - theta, training);
    out.push_back(s);
  }
  return at::stack(out);
}

Snn::Snn(std::int64_t inputs, std::int64_t hidden, std::int64_t classes, std::int64_t t, double b, double th, Unit u)
    : steps(t), beta(b), theta(th), unit(u) {
  fc1 = register_module("fc1", torch::nn::Linear(inputs, hidden));
  fc2 = register_module("fc2", torch::nn::Linear(hidden, classes));
}

at::Tensor Snn::forward(const at::Tensor& x) {
  const at::Tensor spikes = lif_spikes(fc1->forward(x.flatten(1)), steps, beta, theta, unit, is_training());
  last_rate = spikes.detach().gt(0.5).to(at::kDouble).mean().item<double>();
  return fc2->forward(spikes).mean(0);
}

at::Tensor binarize_weight(const at::Tensor& w) {
  const at::Tensor sign = at::where(w.ge(0), at::ones_like(w), -at::ones_like(w));
  return w + (sign - w).detach();
}

at::Tensor sign_unit(const at::Tensor& x, const Unit& unit, bool training) { return unit(x, training) * 2.0 - 1.0; }

Bnn::Bnn(std::int64_t inputs, const std::vector<std::int64_t>& hidden, std::int64_t classes, Unit u) : unit(u) {
  std::int64_t in = inputs;
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    layers.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(
                                                                   torch::nn::LinearOptions(in, hidden[i]).bias(false))));
    norms.push_back(register_module("bn" + std::to_string(i), torch::nn::BatchNorm1d(hidden[i])));
    in = hidden[i];
  }
  head = register_module("head", torch::nn::Linear(in, classes));
}

at::Tensor Bnn::forward(const at::Tensor& x) {
  at::Tensor h = x.flatten(1) * 2.0 - 1.0;  // pixels in [-1, 1]
  for (std::size_t i = 0; i < layers.size(); ++i)
    h = sign_unit(norms[i]->forward(at::linear(h, binarize_weight(layers[i]->weight))), unit, is_training());
  return head->forward(h);
}

void Bnn::after_step() {
  at::NoGradGuard no_grad;
  for (auto& layer : layers) layer->weight.clamp_(-1.0, 1.0);
}

Icbm::Icbm(std::int64_t channels, std::int64_t image, std::int64_t units, std::int64_t classes, Unit u) : unit(u) {
  conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 16, 3).padding(1)));
  conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)));
  const std::int64_t side = image / 4;
  fc = register_module("fc", torch::nn::Linear(32 * side * side, units));
  head = register_module("head", torch::nn::Linear(units, classes));
}

at::Tensor Icbm::features(const at::Tensor& x) {
  at::Tensor h = at::max_pool2d(at::relu(conv1->forward(x)), {2, 2});
  h = at::max_pool2d(at::relu(conv2->forward(h)), {2, 2});
  return fc->forward(h.flatten(1));
}

at::Tensor Icbm::bottleneck(const at::Tensor& x, bool hard) {
  const at::Tensor z = features(x);
  if (unit.act.kind == Kind::Relu) return at::relu(z);
  return hard ? math::step(z) : value(unit.act, z);
}

at::Tensor Icbm::forward(const at::Tensor& x) { return head->forward(unit(features(x), is_training())); }

}  // namespace htaf
