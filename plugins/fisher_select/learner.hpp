#pragma once
// The model a selector trains, behind one interface so that fisher_select.train runs the same loop,
// budget and selectors on both data sets (learners.cpp):
//
//   images  the 784-256-128 MLP, pretrained on MNIST with Adam, new 10-class head; one supervised
//           token per candidate (its label)
//   sft     a causal transformer (2 layers, d 64, 4 heads, pre-norm), pretrained with Adam on copy and
//           reverse; its supervised tokens are a candidate's response tokens under teacher forcing
//
// A candidate is a set of supervised tokens; `Tokens` is what one forward pass without gradients
// gives for a set of candidates: per token the features h under the last (linear) layer, the softmax
// probabilities and the observed label, and the candidate it belongs to (owner, ascending).
#include <torch/torch.h>

#include <nexp/nexp.hpp>

#include <cstdint>
#include <memory>
#include <utility>

#include "train.hpp"

namespace fisher_select {

struct Tokens {
  at::Tensor h;       // [T, H] float32
  at::Tensor probs;   // [T, C] float32
  at::Tensor labels;  // [T] int64
  at::Tensor owner;   // [T] int64 in [0, n)
  std::int64_t candidates = 0;  // n
};

enum class Split { Train, Holdout };

class Learner {
 public:
  // The training split's corruption flags [N] (metrics only).
  Learner(at::Tensor noisy, at::Tensor duplicate) : noisy_(std::move(noisy)), duplicate_(std::move(duplicate)) {}
  virtual ~Learner() = default;
  virtual std::int64_t classes() const = 0;   // C, the width of the last layer
  virtual std::int64_t features() const = 0;  // H, its input
  virtual std::int64_t size(Split split) const = 0;
  const at::Tensor& noisy() const { return noisy_; }
  const at::Tensor& duplicate() const { return duplicate_; }
  // Per training candidate, the summed loss under the irreducible-loss model (after prepare asked for it).
  const at::Tensor& irreducible_losses() const { return irreducible_; }
  // Pretrains (and builds the irreducible-loss model when asked); the seed's streams decide everything.
  virtual void prepare(const TrainOptions& o, bool irreducible, nexp::RunContext& ctx) = 0;
  virtual Tokens forward(Split split, const at::Tensor& idx) = 0;
  // The fine-tuning loss on training candidates idx (mean over their supervised tokens), with gradients.
  virtual at::Tensor loss(const at::Tensor& idx) = 0;
  // Scores the model on the clean test split, logs test_accuracy at `step`, and returns it.
  virtual double evaluate(nexp::RunContext& ctx, std::int64_t step) = 0;
  virtual std::shared_ptr<torch::nn::Module> module() = 0;

 protected:
  at::Tensor irreducible_;

 private:
  at::Tensor noisy_, duplicate_;
};

// The learner for the run's data set (fisher_select.images or fisher_select.sft).
std::unique_ptr<Learner> make_learner(nexp::RunContext& ctx);

}  // namespace fisher_select
