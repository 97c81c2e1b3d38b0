#pragma once
// ddr's methods: training and evaluation on real images, and the grid-transfer experiment.
//   ddr.train     trains one variant (AdamW, warmup + cosine, augmentation) with checkpoints and resume
//   ddr.eval      evaluates a model saved by ddr.train on any patch grid
//   ddr.transfer  trains (or loads) models and evaluates them on other patch grids, closed-form frequency
//                 bias against Swin's bicubically resized table
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>
#include <nexp/tensor_dataset.hpp>

#include <cstdint>

#include "modules.hpp"

namespace ddr {

// The model's parameters (variant, sizes) and the training parameters, shared by ddr.train and ddr.transfer.
void add_model_params(nexp::MethodSpec& m);
void add_training_params(nexp::MethodSpec& m);

void run_train(nexp::RunContext& ctx);
void run_eval(nexp::RunContext& ctx);
void run_transfer(nexp::RunContext& ctx);

// ---- pieces the tests use

// Pixel standardisation with the training set's statistics (kept with a saved model).
struct Normalizer {
  double mean = 0.0, std = 1.0;
};

// Random translation by up to `shift` pixels (zero padding) and, with `flip`, a horizontal flip with
// probability 1/2; images [B, C, H, W] in [0, 1]. All randomness from `gen` (on the CPU).
at::Tensor augment(const at::Tensor& images, std::int64_t shift, bool flip, at::Generator& gen);

// Images resized (bilinear) to grid * patch pixels, standardised: the model's input for that grid.
at::Tensor prepare(const at::Tensor& images, std::int64_t grid, std::int64_t patch, const Normalizer& norm);

// Class probabilities [N, classes] (CPU) of `images` evaluated on an n x n patch grid.
at::Tensor predict(Vit& model, const at::Tensor& images, std::int64_t grid, const Normalizer& norm,
                   c10::Device device, std::int64_t batch = 500);

}  // namespace ddr
