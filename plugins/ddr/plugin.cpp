// ddr: Dual-Domain Residual vision transformer with a frequency-domain relative position bias.
// Registers the plugin's metrics and methods with nexp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;
using nexp::Param;

void register_components(nexp::Registrar& r) {
  r.metric("rpb_params_per_head", Direction::None,
           "learned relative-position-bias parameters per attention head: (2M-1)^2 for Swin's table, 2K for the "
           "frequency bias, 0 without a bias");
  r.metric("parameters", Direction::None, "learned parameters of the whole model");
  r.metric("images_per_second", Direction::Maximize, "training throughput (images per second of training steps)")
      .measures_time();
  r.metric("grid", Direction::None, "side of the patch grid the model was evaluated on");
  r.metric("swin_rpb_params_per_head", Direction::None, "parameters per head of Swin's table at the same window");
  r.metric("transfer_closed_form", Direction::Maximize,
           "test accuracy on the largest transfer grid, frequency bias evaluated in closed form");
  r.metric("transfer_tabulated_bicubic", Direction::Maximize,
           "test accuracy on the largest transfer grid, frequency bias tabulated then bicubically resized");
  r.metric("transfer_swin_bicubic", Direction::Maximize,
           "test accuracy on the largest transfer grid, Swin's table bicubically resized");

  auto& train = r.method("ddr.train", "train a DDR / ViT variant on an image data set (AdamW, warmup + cosine)",
                         ddr::run_train);
  ddr::add_model_params(train);
  ddr::add_training_params(train);
  train.param(Param::integer("checkpoint_every", 200, "steps between checkpoints (and at the end)").min(1))
      .produces({"test_accuracy", "train_loss", "rpb_params_per_head", "parameters", "images_per_second"})
      .scores_predictions()
      .accepts({"fashion_mnist", "mnist"})
      .supports_resume();

  r.method("ddr.eval", "evaluate a model saved by ddr.train on any patch grid", ddr::run_eval)
      .param(Param::string("model", "", "the model.pt a ddr.train run wrote (<run folder>/artifacts/model.pt); "
                                        "model.json must sit beside it")
                 .required())
      .param(Param::integer("grid", 0, "patch grid side to evaluate on (inputs resized to grid * patch pixels); "
                                       "0 = the training grid")
                 .min(0))
      .param(Param::string("bias_transfer", "closed_form",
                           "how a frequency bias reaches another grid: closed_form (evaluate the series) or "
                           "interpolate (tabulate on the training grid, resize bicubically like Swin's table)")
                 .choices({"closed_form", "interpolate"}))
      .param(Param::integer("eval_batch", 250, "batch size of evaluation").min(1))
      .produces({"test_accuracy", "rpb_params_per_head", "parameters", "grid"})
      .scores_predictions()
      .accepts({"fashion_mnist", "mnist"});

  auto& transfer = r.method("ddr.transfer",
                            "train (or load) models on the native grid and evaluate them on other patch grids: "
                            "closed-form frequency bias vs Swin's resized table",
                            ddr::run_transfer);
  ddr::add_model_params(transfer);
  ddr::add_training_params(transfer);
  transfer
      .param(Param::strings("variants", {"ddr", "ddr_swin"}, "variants to train and compare").choices(ddr::variant_names()))
      .param(Param::integer("replicas", 1, "models per variant; replica r trains with seed + r").range(1, 10))
      .param(Param::ints("grids", {7, 14}, "patch grid sides to evaluate on (the first should be the training grid)")
                 .min(2))
      .param(Param::strings("models", {}, "model.pt files of ddr.train runs to evaluate instead of training").optional())
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
