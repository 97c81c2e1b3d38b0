#include "nets.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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
  const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m.cast<float>();
  at::Tensor t = at::empty({r.rows(), r.cols()}, at::kFloat);
  std::memcpy(t.data_ptr<float>(), r.data(), sizeof(float) * static_cast<std::size_t>(r.size()));
  return t;
}

Vector to_vector(const at::Tensor& t) {
  at::Tensor c = t.to(at::kDouble).contiguous().view({-1});
  return Eigen::Map<const Vector>(c.data_ptr<double>(), c.numel());
}

// One affine layer y = x W^T + b, optionally followed by a ReLU. Initialised as LibTorch's Linear
// (and PyTorch's nn.Linear): W by Kaiming-uniform with a = sqrt(5), i.e. U(-1/sqrt(in), 1/sqrt(in)),
// then b from the same interval, both from the global generator, so that a seed gives the weights
// it gave when the networks were built from torch::nn modules.
struct Layer {
  at::Tensor weight, bias;  // bias undefined when there is none
  bool relu = false;
};

Layer affine(std::int64_t in, std::int64_t out, bool bias = true) {
  at::NoGradGuard no_grad;
  Layer l;
  l.weight = at::empty({out, in}, at::kFloat);
  const double gain = std::sqrt(2.0 / (1 + std::pow(std::sqrt(5.0), 2)));
  const double bound = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(in)));
  l.weight.uniform_(-bound, bound);
  if (bias) {
    l.bias = at::empty({out}, at::kFloat);
    const double b = 1 / std::sqrt(static_cast<double>(in));
    l.bias.uniform_(-b, b);
  }
  return l;
}

struct Net {
  std::vector<Layer> layers;

  at::Tensor forward(at::Tensor x) const {
    for (const Layer& l : layers) {
      x = at::linear(x, l.weight, l.bias);
      if (l.relu) x = at::relu(x);
    }
    return x;
  }
  // Every parameter in layer order (weight, then bias), the fixed ones included.
  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> out;
    for (const Layer& l : layers) {
      out.push_back(l.weight);
      if (l.bias.defined()) out.push_back(l.bias);
    }
    return out;
  }
  std::vector<at::Tensor> trainable() const {
    std::vector<at::Tensor> out;
    for (const at::Tensor& p : parameters())
      if (p.requires_grad()) out.push_back(p);
    return out;
  }
};

void relu_stack(Net& net, std::int64_t in, const NetShape& s) {
  for (std::int64_t l = 0; l < s.depth; ++l) {
    net.layers.push_back(affine(l == 0 ? in : s.width, s.width));
    net.layers.back().relu = true;
  }
  net.layers.push_back(affine(s.depth == 0 ? in : s.width, 1));
}

// The first layers of each architecture, then the ReLU stack; parameters in `dtype`, every one
// trainable except FuncNN's fixed integral map.
Net build(Architecture a, const NetOptions& o, std::int64_t in, const NetShape& s, const Matrix& weight_gram,
          std::int64_t per_predictor, at::ScalarType dtype = at::kFloat) {
  Net net;
  std::int64_t width_in = in;
  bool fixed_first = false;
  if (a == Architecture::Bottleneck) {
    net.layers.push_back(affine(in, o.J, false));
    width_in = o.J;
  } else if (a == Architecture::FuncNN) {
    // Fixed map c -> (c^(p)T G_W)_p (the integrals against the weight basis), then the learned B.
    const std::int64_t P = in / per_predictor, Q = weight_gram.cols();
    Matrix block = Matrix::Zero(in, P * Q);
    for (std::int64_t p = 0; p < P; ++p) block.block(p * per_predictor, p * Q, per_predictor, Q) = weight_gram;
    Layer fixed = affine(in, P * Q, false);  // drawn and overwritten, so later layers see the same draws
    fixed.weight = to_tensor(block.transpose());
    net.layers.push_back(fixed);
    net.layers.push_back(affine(P * Q, o.neurons));
    net.layers.back().relu = true;
    width_in = o.neurons;
    fixed_first = true;
  }
  if (a == Architecture::Bottleneck && o.linear_link)
    net.layers.push_back(affine(width_in, 1));
  else
    relu_stack(net, width_in, s);
  for (std::size_t k = 0; k < net.layers.size(); ++k) {
    Layer& l = net.layers[k];
    const bool train = !(fixed_first && k == 0);
    l.weight = l.weight.to(dtype).requires_grad_(train);
    if (l.bias.defined()) l.bias = l.bias.to(dtype).requires_grad_(train);
  }
  return net;
}

// Adam (Kingma and Ba 2015) with L2 weight decay added to the gradient, as torch.optim.Adam:
// m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps).
class Adam {
 public:
  Adam(std::vector<at::Tensor> params, double lr, double weight_decay)
      : params_(std::move(params)), lr_(lr), weight_decay_(weight_decay) {
    for (const at::Tensor& p : params_) {
      m_.push_back(at::zeros_like(p));
      v_.push_back(at::zeros_like(p));
    }
  }
  void zero_grad() {
    for (at::Tensor& p : params_) p.mutable_grad().reset();
  }
  void step() {
    at::NoGradGuard no_grad;
    ++t_;
    const double c1 = 1 - std::pow(kBeta1, t_), c2 = 1 - std::pow(kBeta2, t_);
    for (std::size_t k = 0; k < params_.size(); ++k) {
      at::Tensor g = params_[k].grad();
      if (!g.defined()) continue;
      if (weight_decay_ != 0) g = g.add(params_[k], weight_decay_);
      m_[k].mul_(kBeta1).add_(g, 1 - kBeta1);
      v_[k].mul_(kBeta2).addcmul_(g, g, 1 - kBeta2);
      const at::Tensor denom = (v_[k].sqrt() / std::sqrt(c2)).add_(kEps);
      params_[k].addcdiv_(m_[k], denom, -lr_ / c1);
    }
  }

 private:
  static constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  std::vector<at::Tensor> params_, m_, v_;
  double lr_, weight_decay_;
  std::int64_t t_ = 0;
};

struct Scaler {
  at::Tensor mean, sd;
  at::Tensor operator()(const at::Tensor& x) const { return (x - mean) / sd; }
};

Scaler fit_scaler(const at::Tensor& x) {
  return {x.mean(0, true), x.std(0, true, true).clamp_min(1e-8)};
}

}  // namespace

double gradient_check(Architecture a, const NetOptions& o, std::int64_t inputs, std::uint64_t seed) {
  at::manual_seed(seed);
  const NetShape s = net_shape(a, o, 100);
  Matrix gf = Matrix::Zero(inputs, o.weight_functions);
  for (Eigen::Index i = 0; i < gf.rows(); ++i)
    for (Eigen::Index j = 0; j < gf.cols(); ++j) gf(i, j) = std::sin(1.0 + i + 3.0 * j);
  const Net net = build(a, o, inputs, s, gf, inputs, at::kDouble);
  const at::Tensor x = at::randn({16, inputs}, at::kDouble), y = at::randn({16, 1}, at::kDouble);
  auto loss = [&] { return (net.forward(x) - y).pow(2).mean(); };
  loss().backward();
  double worst = 0;
  at::NoGradGuard ng;
  for (const at::Tensor& p : net.trainable()) {
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
  at::manual_seed(seed);  // parameter initialisation draws from the global generator
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

  const Net net = build(a, o, x_train.cols(), out.shape, weight_gram, per_predictor);
  const std::vector<at::Tensor> trainable = net.trainable();
  for (const at::Tensor& p : trainable) out.parameters += p.numel();
  Adam opt(trainable, o.lr, o.weight_decay);

  double best = INFINITY;
  std::vector<at::Tensor> best_state;
  const std::int64_t batch = std::min(o.batch_size, n);
  for (std::int64_t epoch = 1; epoch <= o.max_epochs; ++epoch) {
    const at::Tensor order = at::randperm(n, gen, at::kLong);
    for (std::int64_t s = 0; s + batch <= n; s += batch) {
      const at::Tensor idx = order.slice(0, s, s + batch);
      opt.zero_grad();
      const at::Tensor loss = (net.forward(xt.index_select(0, idx)) - yt.index_select(0, idx)).pow(2).mean();
      loss.backward();
      opt.step();
    }
    out.epochs = epoch;
    double v;
    {
      at::NoGradGuard ng;
      v = (net.forward(xv) - yv).pow(2).mean().item<double>();
    }
    if (v < best) {
      best = v, out.best_epoch = epoch;
      best_state.clear();
      for (const at::Tensor& p : net.parameters()) best_state.push_back(p.detach().clone());
    } else if (epoch - out.best_epoch >= o.patience) {
      break;
    }
  }
  at::NoGradGuard ng;
  const std::vector<at::Tensor> params = net.parameters();
  for (std::size_t k = 0; k < params.size(); ++k) params[k].copy_(best_state[k]);
  out.validation = (to_vector(net.forward(xv)).array() * ysd + ymean).matrix();
  out.test = (to_vector(net.forward(xs)).array() * ysd + ymean).matrix();
  return out;
}

}  // namespace functional_reg
