// fisher_select: online batch selection by the Gated Fisher Volume of descent-aligned updates.
// Registers the plugin's metrics, data set and method with nexp.
#include <nexp/nexp.hpp>

#include "compare.hpp"
#include "images.hpp"
#include "sft.hpp"
#include "train.hpp"

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  r.metric("test_accuracy_auc", Direction::Maximize, "mean test accuracy over the evaluations (area under the curve)");
  r.metric("noisy_selected", Direction::Minimize, "share of the kept candidates whose label is corrupted");
  r.metric("duplicate_selected", Direction::Minimize, "share of the kept candidates that are near-duplicates");
  r.metric("noisy_base", Direction::None, "share of corrupted labels in the training split (the uniform rate)");
  r.metric("duplicate_base", Direction::None, "share of near-duplicates in the training split (the uniform rate)");
  r.metric("selected_rank", Direction::Maximize, "mean effective rank of the kept candidates' whitened updates");
  r.metric("forward_ms", Direction::Minimize, "median ms per step of the candidates' forward pass").measures_time();
  r.metric("select_ms", Direction::Minimize, "median ms per step of the selection beyond the forward pass")
      .measures_time();
  r.metric("step_ms", Direction::Minimize, "median ms per step of the optimizer step on the kept candidates")
      .measures_time();
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<fisher_select::ImagesOptions>(
      "fisher_select.images",
      "MNIST-pretrained MLP tuned on Fashion-MNIST with label noise and near-duplicates (flags kept for metrics)",
      fisher_select::make_images);
  r.dataset<fisher_select::sft::SftOptions>(
      "fisher_select.sft",
      "SFT simulator: a tiny transformer pretrained on copy/reverse, tuned on sort/add pairs with wrong, off-task "
      "and near-duplicate responses (flags kept for metrics)",
      fisher_select::sft::make_sft);
  r.method("fisher_select.train",
           "online batch selection: each step keeps k of n candidates (Gated Fisher Volume, ablations, baselines)",
           fisher_select::run_train)
      .options<fisher_select::TrainOptions>()
      .produces({"test_accuracy", "test_accuracy_auc", "noisy_selected", "duplicate_selected", "noisy_base",
                 "duplicate_base", "selected_rank", "forward_ms", "select_ms", "step_ms"})
      .scores_predictions()
      .supports_resume()
      .accepts({"fisher_select.images", "fisher_select.sft"});
  for (const char* m : {"test_accuracy", "test_accuracy_auc"})
    r.metric(std::string(m) + "_vs_best", Direction::Maximize,
             std::string("selector minus the best baseline in ") + m + ", paired over seeds");
  r.method("fisher_select.compare", "paired differences (t intervals over seeds) of a sweep's selectors",
           fisher_select::run_compare)
      .options<fisher_select::CompareOptions>()
      .produces({"test_accuracy_vs_best", "test_accuracy_auc_vs_best"});
}

}  // namespace

NEXP_PLUGIN(fisher_select, "0.1.0",
            "online batch selection by a Fisher-whitened, descent-gated log-det of the candidates' updates (the Gated "
            "Fisher Volume), greedy with a (1 - 1/e) guarantee",
            "Gated Fisher Volume online data selection (NeurIPS 2026; authors not named in the abstract nexp implements)",
            register_components)
