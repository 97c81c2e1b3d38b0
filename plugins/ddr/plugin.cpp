// ddr: Dual-Domain Residual vision transformer with a frequency-domain relative position bias.
// Registers the plugin's metrics and methods with nexp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;

void register_components(nexp::Registrar& r) {
  r.metric("rpb_params_per_head", Direction::None,
           "learned relative-position-bias parameters per attention head: (2M-1)^2 for Swin's table, 2K for the "
           "frequency bias, 0 without a bias");
  r.metric("parameters", Direction::None, "learned parameters of the whole model");
  r.metric("images_per_second", Direction::Maximize, "training throughput (images per second of training steps)")
      .measures_time();
  r.metric("val_accuracy", Direction::Maximize,
           "accuracy on the held-out validation images (params.val_size > 0), logged every params.val_every steps");
  r.metric("grid", Direction::None, "side of the patch grid the model was evaluated on");
  r.metric("swin_rpb_params_per_head", Direction::None, "parameters per head of Swin's table at the same window");
  r.metric("transfer_closed_form", Direction::Maximize,
           "test accuracy on the largest transfer grid, frequency bias evaluated in closed form");
  r.metric("transfer_tabulated_bicubic", Direction::Maximize,
           "test accuracy on the largest transfer grid, frequency bias tabulated then bicubically resized");
  r.metric("transfer_swin_bicubic", Direction::Maximize,
           "test accuracy on the largest transfer grid, Swin's table bicubically resized");

  r.method("ddr.train", "train a DDR / ViT variant on an image data set (AdamW, warmup + cosine)", ddr::run_train)
      .options<ddr::TrainOptions>()
      .produces({"test_accuracy", "train_loss", "rpb_params_per_head", "parameters", "images_per_second"})
      .scores_predictions()
      .accepts({"fashion_mnist", "mnist"})
      .supports_resume();

  r.method("ddr.eval", "evaluate a model saved by ddr.train on any patch grid", ddr::run_eval)
      .options<ddr::EvalOptions>()
      .produces({"test_accuracy", "rpb_params_per_head", "parameters", "grid"})
      .scores_predictions()
      .accepts({"fashion_mnist", "mnist"});

  r.method("ddr.transfer",
           "train (or load) models on the native grid and evaluate them on other patch grids: closed-form "
           "frequency bias vs Swin's resized table",
           ddr::run_transfer)
      .options<ddr::TransferOptions>()
      .produces({"test_accuracy", "rpb_params_per_head", "swin_rpb_params_per_head", "transfer_closed_form",
                 "transfer_tabulated_bicubic", "transfer_swin_bicubic"})
      .accepts({"fashion_mnist", "mnist"})
      .supports_resume();
}

}  // namespace

NEXP_PLUGIN(ddr, "0.1.0",
            "a frequency-domain relative position bias (3.25x fewer parameters than Swin's table at window 7, "
            "exact transfer to other grids) inside Dual-Domain Residual ViT blocks",
            "Dual-Domain Residual (DDR) vision transformer with a relative positional bias parameterised in the "
            "frequency domain (authors and venue not named in the abstract nexp implements)",
            register_components)
