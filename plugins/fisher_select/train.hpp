#pragma once
// fisher_select.train: online batch selection during fine-tuning, every selector under one budget.
//
// Each step draws n = `pool` candidates uniformly from the training split (images of
// fisher_select.images, prompt -> response pairs of fisher_select.sft; learner.hpp), runs one forward
// pass over them (no gradients), lets the selector keep k = `keep`, and takes one optimizer step on those k.
// Every selector starts from the same pretrained weights and new head (seeded by the run's seed alone),
// sees the same candidate pools (stream "pool") and takes the same number of steps with the same
// optimizer; only which k are kept differs.
//
// Reported (summary): test_accuracy (final; greedy exact match for sft), test_accuracy_auc (mean over the evaluations after step
// 0), noisy_selected and duplicate_selected (shares of the kept candidates), selected_rank (mean
// effective rank of the kept candidates' whitened updates, gfv.hpp), forward_ms, select_ms and
// step_ms (medians per step: the candidate forward pass; the selection beyond it, the Fisher upkeep
// included for the selectors that whiten; the optimizer step on the kept k).
#include <nexp/nexp.hpp>

#include <cstdint>

#include "selectors.hpp"

namespace fisher_select {

enum class Reference { Pool, Holdout };
enum class OptimizerKind { Sgd, Adam };

struct TrainOptions {
  Selector selector = Selector::Gfv;
  std::int64_t pool = 256, keep = 32, steps = 2000;
  OptimizerKind optimizer = OptimizerKind::Sgd;
  double lr = 0.01, momentum = 0.9;
  std::int64_t projection = 128;
  double tau = 10, lambda = 0.1, fisher_decay = 0.1;
  std::int64_t fisher_samples = 64;
  Reference reference = Reference::Pool;
  std::int64_t reference_size = 256;
  std::int64_t eval_every = 100;
  std::int64_t pretrain_epochs = 1, pretrain_batch = 128;
  double pretrain_lr = 1e-3;
  std::int64_t il_epochs = 10;
  static void declare(nexp::Options<TrainOptions>& o);
};

void run_train(nexp::RunContext& ctx);

}  // namespace fisher_select
