#pragma once
// ddr's methods: training and evaluation on real images, and the grid-transfer experiment.
//   ddr.train     trains one variant (AdamW, warmup + cosine, augmentation) with checkpoints and resume
//   ddr.eval      evaluates a model saved by ddr.train on any patch grid
//   ddr.transfer  trains (or loads) models and evaluates them on other patch grids, closed-form frequency
//                 bias against Swin's bicubically resized table
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>
#include <nexp/tensor_dataset.hpp>
#include <nexp/torch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modules.hpp"

namespace ddr {

// ---- options (declared once: the schema, `nexp describe` and the values the methods read)

// The model: variant and sizes, shared by ddr.train and ddr.transfer.
struct ModelOptions {
  std::string variant = "ddr";
  std::int64_t dim = 48, depth = 4, heads = 4, patch = 4;
  double mlp_ratio = 2.0, gate_init = 0.5;
  std::int64_t frequencies = 0;

  static void declare(nexp::Options<ModelOptions>& o) {
    o.add("variant", &ModelOptions::variant,
          "architecture: ddr = DDR blocks with the frequency bias (the full model); ddr_swin / ddr_none swap the "
          "bias; ddr_no_attention / ddr_no_spectral drop a branch; vit_* are plain ViT blocks with the named bias")
        .choices(variant_names());
    o.add("dim", &ModelOptions::dim, "token width C").min(8);
    o.add("depth", &ModelOptions::depth, "number of blocks").min(1);
    o.add("heads", &ModelOptions::heads, "attention heads (dim must be a multiple)").min(1);
    o.add("patch", &ModelOptions::patch, "patch size in pixels; the training grid is image / patch (28 / 4 = 7)")
        .min(1);
    o.add("mlp_ratio", &ModelOptions::mlp_ratio, "MLP hidden width as a multiple of dim").range(0.25, 8);
    o.add("gate_init", &ModelOptions::gate_init, "initial value of the per-layer DDR gates g_a, g_s, g_m").range(0, 2);
    o.add("frequencies", &ModelOptions::frequencies,
          "frequencies K of the frequency bias (2K parameters per head); 0 = 2 (2M - 1), i.e. 26 at a 7x7 grid")
        .min(0);
  }
};

// Training (AdamW, warmup + cosine, augmentation) and evaluation, shared by ddr.train and ddr.transfer.
struct FitOptions {
  std::int64_t epochs = 2, batch_size = 64;
  double lr = 5e-3, min_lr = 1e-5, weight_decay = 0.05;
  std::int64_t warmup_steps = 50;
  double label_smoothing = 0.0;
  std::int64_t augment_shift = 1;
  bool augment_flip = false;
  std::int64_t log_every = 50, eval_batch = 500;

  static void declare(nexp::Options<FitOptions>& o) {
    o.add("epochs", &FitOptions::epochs, "passes over the training images").min(1);
    o.add("batch_size", &FitOptions::batch_size, "training batch size").min(1);
    o.add("lr", &FitOptions::lr, "peak AdamW learning rate").range(1e-6, 1);
    o.add("min_lr", &FitOptions::min_lr, "learning rate at the end of the cosine schedule").range(0, 1);
    o.add("weight_decay", &FitOptions::weight_decay,
          "AdamW decoupled weight decay (matrices and filters; not gates, norms, biases or position-bias parameters)")
        .range(0, 1);
    o.add("warmup_steps", &FitOptions::warmup_steps, "linear warmup steps before the cosine decay").min(0);
    o.add("label_smoothing", &FitOptions::label_smoothing, "label smoothing of the cross-entropy").range(0, 0.5);
    o.add("augment_shift", &FitOptions::augment_shift,
          "random translation of training images by up to this many pixels (zero padding); 0 = off")
        .range(0, 8);
    o.add("augment_flip", &FitOptions::augment_flip,
          "random horizontal flips of training images (sensible for Fashion-MNIST, not for digits)");
    o.add("log_every", &FitOptions::log_every, "steps between train_loss lines in metrics.jsonl").min(1);
    o.add("eval_batch", &FitOptions::eval_batch, "batch size of evaluation").min(1);
  }
};

// ddr.train
struct TrainOptions : ModelOptions, FitOptions {
  std::int64_t checkpoint_every = 200;
  std::int64_t val_size = 0, val_every = 0;
  static void declare(nexp::Options<TrainOptions>& o) {
    o.inherit<ModelOptions>();
    o.inherit<FitOptions>();
    o.add("checkpoint_every", &TrainOptions::checkpoint_every, "steps between checkpoints (and at the end)").min(1);
    o.add("val_size", &TrainOptions::val_size,
          "the last val_size training images are held out as a validation set (not trained on); 0 = none")
        .min(0);
    o.add("val_every", &TrainOptions::val_every,
          "steps between val_accuracy lines in metrics.jsonl (what a sweep's pruner reads), and at the end; "
          "needs val_size > 0; 0 = only at the end")
        .min(0);
  }
};

// ddr.eval
struct EvalOptions {
  std::string model;
  std::int64_t grid = 0;
  BiasTransfer bias_transfer = BiasTransfer::ClosedForm;
  std::int64_t eval_batch = 250;
  static void declare(nexp::Options<EvalOptions>& o) {
    o.add("model", &EvalOptions::model,
          "the model.pt a ddr.train run wrote (<run folder>/artifacts/model.pt); model.json must sit beside it")
        .required();
    o.add("grid", &EvalOptions::grid,
          "patch grid side to evaluate on (inputs resized to grid * patch pixels); 0 = the training grid")
        .min(0);
    o.add("bias_transfer", &EvalOptions::bias_transfer,
          "how a frequency bias reaches another grid: closed_form (evaluate the series) or interpolate (tabulate on "
          "the training grid, resize bicubically like Swin's table)",
          {{"closed_form", BiasTransfer::ClosedForm}, {"interpolate", BiasTransfer::Interpolate}});
    o.add("eval_batch", &EvalOptions::eval_batch, "batch size of evaluation").min(1);
  }
};

// ddr.transfer
struct TransferOptions : ModelOptions, FitOptions {
  std::vector<std::string> variants = {"ddr", "ddr_swin"};
  int replicas = 1;
  std::vector<std::int64_t> grids = {7, 14};
  std::optional<std::vector<std::string>> models;
  static void declare(nexp::Options<TransferOptions>& o) {
    o.inherit<ModelOptions>();
    o.inherit<FitOptions>();
    o.add("variants", &TransferOptions::variants, "variants to train and compare").choices(variant_names());
    o.add("replicas", &TransferOptions::replicas, "models per variant; replica r trains with seed + r").range(1, 10);
    o.add("grids", &TransferOptions::grids,
          "patch grid sides to evaluate on (the first should be the training grid)")
        .min(2);
    o.add("models", &TransferOptions::models, "model.pt files of ddr.train runs to evaluate instead of training");
  }
};

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
