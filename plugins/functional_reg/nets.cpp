#include "nets.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>

namespace functional_reg {

NetShape net_shape(Architecture a, const NetOptions& o, std::int64_t n) {
  NetShape s;
  const double dn = static_cast<double>(n);
  if (a == Architecture::Bottleneck) {
    const double j = static_cast<double>(o.J);
    s.width = std::clamp<std::int64_t>(std::llround(std::pow(dn, j / (j + 2.0))), 8, 128);
    s.depth = 2;
  } else {
    s.width = std::clamp<std::int64_t>(std::llround(std::sqrt(dn)), 16, 128);
    s.depth = 3;
  }
  if (o.width > 0) s.width = o.width;
  if (o.depth > 0) s.depth = o.depth;
  return s;
}

namespace {

at::Tensor to_tensor(const Matrix& m) {
  // Eigen is column-major: copy through the transpose.
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m.cast<float>();
  return torch::from_blob(r.data(), {r.rows(), r.cols()}, at::kFloat).clone();
}

Vector to_vector(const at::Tensor& t) {
  at::Tensor c = t.to(at::kDouble).contiguous().view({-1});
  return Eigen::Map<const Vector>(c.data_ptr<double>(), c.numel());
}

torch::nn::Sequential relu_stack(std::int64_t in, const NetShape& s) {
  torch::nn::Sequential net;
  for (std::int64_t l = 0; l < s.depth; ++l) {
    net->push_back(torch::nn::Linear(l == 0 ? in : s.width, s.width));
    net->push_back(torch::nn::ReLU());
  }
  net->push_back(torch::nn::Linear(s.depth == 0 ? in : s.width, 1));
  return net;
}

// The first layers of each architecture, before the ReLU stack.
torch::nn::Sequential build(Architecture a, const NetOptions& o, std::int64_t in, const NetShape& s,
                            const Matrix& weight_gram, std::int64_t per_predictor) {
  torch::nn::Sequential net;
  std::int64_t width_in = in;
  if (a == Architecture::Bottleneck) {
    net->push_back(torch::nn::Linear(torch::nn::LinearOptions(in, o.J).bias(false)));
    width_in = o.J;
  } else if (a == Architecture::FuncNN) {
    // Fixed map c -> (c^(p)T G_W)_p (the integrals against the weight basis), then the learned B.
    const std::int64_t P = in / per_predictor, Q = weight_gram.cols();
    Matrix block = Matrix::Zero(in, P * Q);
    for (std::int64_t p = 0; p < P; ++p) block.block(p * per_predictor, p * Q, per_predictor, Q) = weight_gram;
    torch::nn::Linear fixed(torch::nn::LinearOptions(in, P * Q).bias(false));
    fixed->weight.set_data(to_tensor(block.transpose()));
    fixed->weight.set_requires_grad(false);
    net->push_back(fixed);
    net->push_back(torch::nn::Linear(P * Q, o.neurons));
    net->push_back(torch::nn::ReLU());
    width_in = o.neurons;
  }
  if (a == Architecture::Bottleneck && o.linear_link)
    net->push_back(torch::nn::Linear(width_in, 1));
  else
    net->extend(*relu_stack(width_in, s));
  return net;
}

struct Scaler {
  at::Tensor mean, sd;
  at::Tensor operator()(const at::Tensor& x) const { return (x - mean) / sd; }
};

Scaler fit_scaler(const at::Tensor& x) {
  return {x.mean(0, true), x.std(0, true, true).clamp_min(1e-8)};
}

}  // namespace

double gradient_check(Architecture a, const NetOptions& o, std::int64_t inputs, std::uint64_t seed) {
  torch::manual_seed(seed);
  const NetShape s = net_shape(a, o, 100);
  Matrix gf = Matrix::Zero(inputs, o.weight_functions);
  for (Eigen::Index i = 0; i < gf.rows(); ++i)
    for (Eigen::Index j = 0; j < gf.cols(); ++j) gf(i, j) = std::sin(1.0 + i + 3.0 * j);
  torch::nn::Sequential net = build(a, o, inputs, s, gf, inputs);
  net->to(at::kDouble);
  const at::Tensor x = torch::randn({16, inputs}, at::kDouble), y = torch::randn({16, 1}, at::kDouble);
  auto loss = [&] { return (net->forward(x) - y).pow(2).mean(); };
  net->zero_grad();
  loss().backward();
  double worst = 0;
  torch::NoGradGuard ng;
  for (auto& p : net->parameters()) {
    if (!p.requires_grad()) continue;
    at::Tensor flat = p.view({-1}), grad = p.grad().view({-1});
    for (std::int64_t k = 0; k < flat.numel(); ++k) {
      const double h = 1e-6, keep = flat[k].item<double>();
      flat[k] = keep + h;
      const double up = loss().item<double>();
      flat[k] = keep - h;
      const double down = loss().item<double>();
      flat[k] = keep;
      const double fd = (up - down) / (2 * h), ad = grad[k].item<double>();
      worst = std::max(worst, std::abs(fd - ad) / std::max(1e-6, std::abs(fd) + std::abs(ad)));
    }
  }
  return worst;
}

NetFit fit_net(Architecture a, const NetOptions& o, const Matrix& x_train, const Vector& y_train,
               const Matrix& x_validation, const Vector& y_validation, const Matrix& x_test, std::uint64_t seed,
               const Matrix& weight_gram, std::int64_t per_predictor) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  torch::manual_seed(seed);  // parameter initialisation draws from the default generator
  const std::int64_t n = x_train.rows();
  NetFit out;
  out.shape = net_shape(a, o, n);
  // FuncNN integrates curves: its inputs are the coefficients of x - (training mean curve), scaled
  // by one global factor (a per-coefficient scale would not be a function of the curve).
  const at::Tensor xt_raw = to_tensor(x_train), xv_raw = to_tensor(x_validation), xs_raw = to_tensor(x_test);
  Scaler sx = fit_scaler(xt_raw);
  if (a == Architecture::FuncNN) {
    const at::Tensor mean = xt_raw.mean(0, true);
    sx = {mean, (xt_raw - mean).std().clamp_min(1e-8).view({1, 1})};
  }
  const at::Tensor xt = sx(xt_raw), xv = sx(xv_raw), xs = sx(xs_raw);
  const double ymean = y_train.mean();
  const double ysd = std::max(std::sqrt((y_train.array() - ymean).square().mean()), 1e-12);
  const at::Tensor yt = to_tensor((y_train.array() - ymean).matrix() / ysd);
  const at::Tensor yv = to_tensor((y_validation.array() - ymean).matrix() / ysd);

  torch::nn::Sequential net = build(a, o, x_train.cols(), out.shape, weight_gram, per_predictor);
  for (const auto& p : net->parameters())
    if (p.requires_grad()) out.parameters += p.numel();
  std::vector<at::Tensor> trainable;
  for (const auto& p : net->parameters())
    if (p.requires_grad()) trainable.push_back(p);
  torch::optim::Adam opt(trainable, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));

  double best = INFINITY;
  std::vector<at::Tensor> best_state;
  const std::int64_t batch = std::min(o.batch_size, n);
  for (std::int64_t epoch = 1; epoch <= o.max_epochs; ++epoch) {
    net->train();
    const at::Tensor order = at::randperm(n, gen, at::kLong);
    for (std::int64_t s = 0; s + batch <= n; s += batch) {
      const at::Tensor idx = order.slice(0, s, s + batch);
      opt.zero_grad();
      const at::Tensor loss = (net->forward(xt.index_select(0, idx)) - yt.index_select(0, idx)).pow(2).mean();
      loss.backward();
      opt.step();
    }
    out.epochs = epoch;
    double v;
    {
      torch::NoGradGuard ng;
      v = (net->forward(xv) - yv).pow(2).mean().item<double>();
    }
    if (v < best) {
      best = v, out.best_epoch = epoch;
      best_state.clear();
      for (const auto& p : net->parameters()) best_state.push_back(p.detach().clone());
    } else if (epoch - out.best_epoch >= o.patience) {
      break;
    }
  }
  torch::NoGradGuard ng;
  const auto params = net->parameters();
  for (std::size_t k = 0; k < params.size(); ++k) params[k].copy_(best_state[k]);
  net->eval();
  out.validation = (to_vector(net->forward(xv)).array() * ysd + ymean).matrix();
  out.test = (to_vector(net->forward(xs)).array() * ysd + ymean).matrix();
  return out;
}

}  // namespace functional_reg
