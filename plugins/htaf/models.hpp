#pragma once
// The networks of the paper's experiments, each a torch module whose only non-linearity of interest is
// htaf::activate (so that an experiment changes the activation and nothing else).
//   Dhn   deep Heaviside network: MLP with H hidden units                        (paper: DHN)
//   Snn   LIF MLP, BPTT through H(v - theta) with h' backward                    (paper: SNN)
//         v_t = beta v_{t-1} + W x_t - theta s_{t-1},  s_t = H(v_t - theta),  t = 1..T, direct coding
//         (x_t = x); logits = mean_t (W_out s_t + b_out), a non-spiking readout
//   Bnn   binary MLP: sign units 2 H(BN(W_b x)) - 1, binary weights W_b = sign(W) with latent reals W
//         (one straight-through weight estimator for every activation, latent weights clipped to [-1, 1])
//   Icbm  small CNN -> m units through the activation -> linear head             (paper: ICBM)
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <vector>

#include "activations.hpp"

namespace htaf {

struct Unit {  // the activation and how it runs
  Activation act;
  Mode mode = Mode::Surrogate;
  at::Tensor operator()(const at::Tensor& x, bool training) const { return activate(x, act, mode, training); }
};

// A network whose first and last weight matrices are known (for the gradient ratio).
struct Net : torch::nn::Module {
  virtual at::Tensor forward(const at::Tensor& x) = 0;  // logits; training mode from is_training()
  virtual at::Tensor first_weight() = 0;
  virtual at::Tensor last_weight() = 0;
  virtual void after_step() {}
};

struct Dhn : Net {
  Dhn(std::int64_t inputs, std::int64_t width, std::int64_t depth, std::int64_t classes, Unit unit);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor first_weight() override { return layers[0]->weight; }
  at::Tensor last_weight() override { return head->weight; }
  std::vector<torch::nn::Linear> layers;
  torch::nn::Linear head{nullptr};
  Unit unit;
};

// One LIF layer over T steps of the same input current I = W x (direct coding): spikes [T, B, n].
at::Tensor lif_spikes(const at::Tensor& current, std::int64_t steps, double beta, double theta, const Unit& unit,
                      bool training);

struct Snn : Net {
  Snn(std::int64_t inputs, std::int64_t hidden, std::int64_t classes, std::int64_t steps, double beta, double theta,
      Unit unit);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor first_weight() override { return fc1->weight; }
  at::Tensor last_weight() override { return fc2->weight; }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  std::int64_t steps;
  double beta, theta;
  Unit unit;
  double last_rate = 0;  // firing rate of the last forward
};

// sign(w) in {-1, +1} (0 -> +1) forward, identity backward (the latent weights stay in [-1, 1]).
at::Tensor binarize_weight(const at::Tensor& w);
// The sign unit 2 H(x) - 1 through the activation op.
at::Tensor sign_unit(const at::Tensor& x, const Unit& unit, bool training);

struct Bnn : Net {
  Bnn(std::int64_t inputs, const std::vector<std::int64_t>& hidden, std::int64_t classes, Unit unit);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor first_weight() override { return layers[0]->weight; }
  at::Tensor last_weight() override { return head->weight; }
  void after_step() override;  // clip latent weights to [-1, 1]
  std::vector<torch::nn::Linear> layers;
  std::vector<torch::nn::BatchNorm1d> norms;
  torch::nn::Linear head{nullptr};
  Unit unit;
};

struct Icbm : Net {
  Icbm(std::int64_t channels, std::int64_t image, std::int64_t units, std::int64_t classes, Unit unit);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor features(const at::Tensor& x);          // pre-activations of the bottleneck [B, m]
  at::Tensor bottleneck(const at::Tensor& x, bool hard);  // unit outputs: h (hard = false) or H
  at::Tensor first_weight() override { return conv1->weight; }
  at::Tensor last_weight() override { return head->weight; }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc{nullptr}, head{nullptr};
  Unit unit;
};

}  // namespace htaf
