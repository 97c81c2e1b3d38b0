#pragma once
// The models that ablation and target runs train: one-hidden-layer ReLU MLPs, D-H-C, with the forward
// pass, the gradient of each stage's objective and plain minibatch SGD with momentum written out, so
// that a run of a few thousand examples costs milliseconds (no autograd graph).
//
//   z = relu(x W1 + b1) W2 + b2,  log pi(.|x) = log_softmax(z)                     shapes: x [B, D], z [B, C]
//   cross entropy (pretrain, sft)   L = -mean log pi(y|x)                           dL/dz = (p - e_y) / B
//   DPO (Rafailov et al. 2023)      L = -mean log sigma(beta [(log pi(c) - log pi_ref(c))
//                                                              - (log pi(r) - log pi_ref(r))])
//                                   dL/dz = -beta (1 - sigma(.)) (e_c - e_r) / B
//   REINFORCE (Williams 1992)       a ~ pi(.|x), reward R = 1[a = y], baseline b = mean R in the batch;
//                                   surrogate L = -mean (R - b) log pi(a|x),  dL/dz = -(R - b)(e_a - p) / B
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace curation_scaling {

enum class Objective { CrossEntropy, Dpo, Reinforce };

struct Mlp {
  at::Tensor w1, b1, w2, b2;  // [D, H], [H], [H, C], [C]
  Mlp clone() const;
};

// He-normal weights and zero biases from a generator seeded with `seed`.
Mlp init_mlp(std::int64_t in, std::int64_t hidden, std::int64_t classes, std::uint64_t seed,
             at::ScalarType dtype = at::kFloat);
at::Tensor mlp_logits(const Mlp& m, const at::Tensor& x);

// One minibatch of a stage. label: y (cross entropy, the reward's answer) or c (DPO); rejected: r (DPO);
// ref_logp: log pi_ref [B, C] (DPO); action: a (REINFORCE, sampled by sample_actions).
struct Batch {
  at::Tensor x, label, rejected, ref_logp, action;
};

// The objective at m on the batch, and its gradient (same shapes as m) in *grad when grad is given.
double objective_and_grad(const Mlp& m, Objective objective, const Batch& b, double beta, Mlp* grad);
// a ~ pi(.|x) by inverse CDF of uniforms from `gen`.
at::Tensor sample_actions(const at::Tensor& logits, at::Generator& gen);

struct SgdSettings {
  double lr = 0.05, momentum = 0.9, beta = 0.5;
  std::int64_t batch = 64, epochs = 1;
};

// Trains m in place on the rows `order` of (x, label, rejected) in that order (epochs times), with
// `reference` the frozen policy of DPO (ignored otherwise). Sampling draws from a generator seeded `seed`.
void train_mlp(Mlp& m, const Mlp* reference, Objective objective, const at::Tensor& x, const at::Tensor& label,
               const at::Tensor& rejected, const at::Tensor& order, const SgdSettings& s, std::uint64_t seed);

// Mean cross entropy of the labels (the clean test loss every stage is judged by).
double mean_cross_entropy(const Mlp& m, const at::Tensor& x, const at::Tensor& y);
// Per-example cross entropy, [N] double.
at::Tensor cross_entropy_each(const Mlp& m, const at::Tensor& x, const at::Tensor& y);

}  // namespace curation_scaling
