// The two learners of fisher_select.train (learner.hpp): the images MLP and the SFT transformer.
#include "learner.hpp"

#include <nexp/torch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "gfv.hpp"
#include "images.hpp"
#include "selectors.hpp"
#include "sft.hpp"

namespace fisher_select {

namespace {

void copy_parameters(torch::nn::Module& to, const torch::nn::Module& from) {
  torch::NoGradGuard no_grad;
  auto dst = to.parameters();
  auto src = from.parameters();
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
}

// Adam for `epochs` over n examples in minibatches shuffled by `rng`; loss(idx) is the minibatch's loss.
void fit(torch::nn::Module& model, std::int64_t n, std::int64_t epochs, std::int64_t batch, double lr,
         nexp::Random& rng, const std::function<at::Tensor(const at::Tensor&)>& loss) {
  torch::optim::Adam opt(model.parameters(), torch::optim::AdamOptions(lr));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < epochs; ++e) {
    for (std::int64_t i = 0; i < n; ++i) order[i] = i;
    for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    for (std::int64_t s = 0; s < n; s += batch) {
      const auto m = std::min(batch, n - s);
      opt.zero_grad();
      loss(torch::tensor(std::vector<std::int64_t>(order.begin() + s, order.begin() + s + m))).backward();
      opt.step();
    }
  }
}

// ---------------------------------------------------------------- images: 784-256-128 MLP, new head

struct MlpImpl : torch::nn::Module {
  torch::nn::Linear fc1{784, 256}, fc2{256, 128}, head{128, 10};
  MlpImpl() {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("head", head);
  }
  torch::Tensor features(const torch::Tensor& x) { return torch::relu(fc2(torch::relu(fc1(x)))); }
  torch::Tensor forward(const torch::Tensor& x) { return head(features(x)); }
  void new_head(std::int64_t classes) { head = replace_module("head", torch::nn::Linear(128, classes)); }
};
TORCH_MODULE(Mlp);

// The mean cross-entropy of the images idx of (x, y).
at::Tensor image_loss(Mlp& m, const at::Tensor& x, const at::Tensor& y, const at::Tensor& idx) {
  return torch::nn::functional::cross_entropy(m->forward(x.index_select(0, idx)), y.index_select(0, idx));
}

class ImagesLearner final : public Learner {
 public:
  explicit ImagesLearner(const ImagesData& d) : Learner(d.noisy, d.duplicate), d_(d) {}
  std::int64_t classes() const override { return d_.classes; }
  std::int64_t features() const override { return 128; }
  std::int64_t size(Split s) const override { return (s == Split::Train ? d_.train_x : d_.holdout_x).size(0); }
  std::shared_ptr<torch::nn::Module> module() override { return model_.ptr(); }

  void prepare(const TrainOptions& o, bool irreducible, nexp::RunContext& ctx) override {
    auto rng = ctx.stream("pretrain");
    fit_on(model_, d_.pretrain_x, d_.pretrain_y, o.pretrain_epochs, o.pretrain_batch, o.pretrain_lr, rng);
    ctx.log().info("pretrained on {} MNIST images; the new head is tuned on Fashion-MNIST", d_.pretrain_x.size(0));
    if (irreducible) {  // RHO-LOSS: the pretrained body with its own new head, tuned on the clean held-out split
      Mlp il;
      copy_parameters(*il, *model_);
      il->new_head(d_.classes);
      auto il_rng = ctx.stream("irreducible");
      fit_on(il, d_.holdout_x, d_.holdout_y, o.il_epochs, 64, o.pretrain_lr, il_rng);
      irreducible_ = cross_entropy(probabilities(il, d_.train_x), d_.train_y);
    }
    model_->new_head(d_.classes);
  }

  Tokens forward(Split s, const at::Tensor& idx) override {
    torch::NoGradGuard no_grad;
    Tokens t;
    t.h = model_->features((s == Split::Train ? d_.train_x : d_.holdout_x).index_select(0, idx));
    t.probs = torch::softmax(model_->head(t.h), 1);
    t.labels = (s == Split::Train ? d_.train_y : d_.holdout_y).index_select(0, idx);
    t.candidates = idx.size(0);
    t.owner = torch::arange(t.candidates);
    return t;
  }

  at::Tensor loss(const at::Tensor& idx) override { return image_loss(model_, d_.train_x, d_.train_y, idx); }

  double evaluate(nexp::RunContext& ctx, std::int64_t step) override {
    return nexp::score_predictions(ctx, step, "test", probabilities(model_, d_.test_x), d_.test_y).at("test_accuracy");
  }

 private:
  static void fit_on(Mlp& m, const at::Tensor& x, const at::Tensor& y, std::int64_t epochs, std::int64_t batch,
                     double lr, nexp::Random& rng) {
    fit(*m, x.size(0), epochs, batch, lr, rng, [&](const at::Tensor& idx) { return image_loss(m, x, y, idx); });
  }
  static at::Tensor probabilities(Mlp& m, const at::Tensor& x) {
    torch::NoGradGuard no_grad;
    return torch::softmax(m->forward(x), 1).to(at::kDouble);
  }

  const ImagesData& d_;
  Mlp model_;
};

// ---------------------------------------------------------------- sft: a causal transformer

constexpr std::int64_t kWidth = 64, kHeads = 4;

// Pre-norm block: x + attention(LN(x)), then x + MLP(LN(x)), the MLP 4d wide with GELU.
struct BlockImpl : torch::nn::Module {
  torch::nn::LayerNorm ln1{torch::nn::LayerNormOptions({kWidth})}, ln2{torch::nn::LayerNormOptions({kWidth})};
  torch::nn::Linear qkv{kWidth, 3 * kWidth}, proj{kWidth, kWidth}, up{kWidth, 4 * kWidth}, down{4 * kWidth, kWidth};
  BlockImpl() {
    register_module("ln1", ln1);
    register_module("qkv", qkv);
    register_module("proj", proj);
    register_module("ln2", ln2);
    register_module("up", up);
    register_module("down", down);
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& future) {
    const std::int64_t b = x.size(0), t = x.size(1), hd = kWidth / kHeads;
    const auto a = qkv(ln1(x)).view({b, t, 3, kHeads, hd}).permute({2, 0, 3, 1, 4});  // [3, B, heads, T, hd]
    const auto scores = a[0].matmul(a[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
    const auto attended = torch::softmax(scores.masked_fill(future, -std::numeric_limits<float>::infinity()), -1)
                              .matmul(a[2]).transpose(1, 2).reshape({b, t, kWidth});
    const auto y = x + proj(attended);
    return y + down(torch::gelu(up(ln2(y))));
  }
};
TORCH_MODULE(Block);

struct TransformerImpl : torch::nn::Module {
  torch::nn::Embedding token{sft::kVocabulary, kWidth}, position{sft::kLength, kWidth};
  Block block1, block2;
  torch::nn::LayerNorm ln{torch::nn::LayerNormOptions({kWidth})};
  torch::nn::Linear head{kWidth, sft::kVocabulary};
  TransformerImpl() {
    register_module("token", token);
    register_module("position", position);
    register_module("block1", block1);
    register_module("block2", block2);
    register_module("ln", ln);
    register_module("head", head);
  }
  // tokens [B, T] -> the features under the head [B, T, d]
  torch::Tensor features(const torch::Tensor& tokens) {
    const std::int64_t t = tokens.size(1);
    const auto future = torch::ones({t, t}, torch::kBool).triu(1);
    auto x = token(tokens) + position(torch::arange(t));
    return ln(block2(block1(x, future), future));
  }
};
TORCH_MODULE(Transformer);

// Teacher forcing on sequences idx: the features, logits and labels of their supervised tokens.
struct Forced {
  at::Tensor h, logits, labels, owner;
};
Forced teacher_forced(Transformer& m, const sft::Sequences& s, const at::Tensor& idx) {
  const std::int64_t n = idx.size(0), t = sft::kLength - 1;
  const at::Tensor tokens = s.tokens.index_select(0, idx);
  const at::Tensor mask = s.supervised.index_select(0, idx).narrow(1, 1, t);  // the targets that are supervised
  Forced f;
  f.h = m->features(tokens.narrow(1, 0, t)).index({mask});
  f.logits = m->head(f.h);
  f.labels = tokens.narrow(1, 1, t).index({mask});
  f.owner = torch::arange(n).unsqueeze(1).expand({n, t}).index({mask});
  return f;
}

// The mean cross-entropy over the supervised tokens of the sequences idx.
at::Tensor sequence_loss(Transformer& m, const sft::Sequences& s, const at::Tensor& idx) {
  const Forced f = teacher_forced(m, s, idx);
  return torch::nn::functional::cross_entropy(f.logits, f.labels);
}

class SftLearner final : public Learner {
 public:
  explicit SftLearner(const sft::SftData& d) : Learner(d.noisy, d.duplicate), d_(d) {}
  std::int64_t classes() const override { return sft::kVocabulary; }
  std::int64_t features() const override { return kWidth; }
  std::int64_t size(Split s) const override { return (s == Split::Train ? d_.train : d_.holdout).size(); }
  std::shared_ptr<torch::nn::Module> module() override { return model_.ptr(); }

  void prepare(const TrainOptions& o, bool irreducible, nexp::RunContext& ctx) override {
    auto rng = ctx.stream("pretrain");
    fit_on(model_, d_.pretrain, o.pretrain_epochs, o.pretrain_batch, o.pretrain_lr, rng);
    ctx.log().info("pretrained on {} copy/reverse pairs; sort and add are new", d_.pretrain.size());
    if (!irreducible) return;
    Transformer il;  // RHO-LOSS: the pretrained model tuned on the clean held-out pairs
    copy_parameters(*il, *model_);
    auto il_rng = ctx.stream("irreducible");
    fit_on(il, d_.holdout, o.il_epochs, 64, o.pretrain_lr, il_rng);
    torch::NoGradGuard no_grad;
    const Forced f = teacher_forced(il, d_.train, torch::arange(d_.train.size()));
    const at::Tensor nll = torch::nn::functional::cross_entropy(
        f.logits, f.labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    irreducible_ = per_candidate(nll.to(at::kDouble), f.owner, d_.train.size());
  }

  Tokens forward(Split s, const at::Tensor& idx) override {
    torch::NoGradGuard no_grad;
    Forced f = teacher_forced(model_, s == Split::Train ? d_.train : d_.holdout, idx);
    return {f.h, torch::softmax(f.logits, 1), f.labels, f.owner, idx.size(0)};
  }

  at::Tensor loss(const at::Tensor& idx) override { return sequence_loss(model_, d_.train, idx); }

  // Greedy decoding from the clean test prompts; a prompt counts when its whole response and EOS match.
  double evaluate(nexp::RunContext& ctx, std::int64_t step) override {
    torch::NoGradGuard no_grad;
    const std::int64_t r = sft::kDigits + 1;  // the longest response
    at::Tensor seq = d_.test.tokens.narrow(1, 0, sft::kPrompt);
    for (std::int64_t i = 0; i < r; ++i) {
      const at::Tensor last = model_->features(seq).select(1, seq.size(1) - 1);
      seq = torch::cat({seq, model_->head(last).argmax(1, true)}, 1);
    }
    const at::Tensor right = seq.narrow(1, sft::kPrompt, r).eq(d_.test.tokens.narrow(1, sft::kPrompt, r)) |
                             d_.test.supervised.narrow(1, sft::kPrompt, r).logical_not();
    const double accuracy = right.all(1).to(at::kDouble).mean().item<double>();
    ctx.log_metrics(step, {{"test_accuracy", accuracy}});
    ctx.summary("test_accuracy", accuracy);
    return accuracy;
  }

 private:
  static void fit_on(Transformer& m, const sft::Sequences& s, std::int64_t epochs, std::int64_t batch, double lr,
                     nexp::Random& rng) {
    fit(*m, s.size(), epochs, batch, lr, rng, [&](const at::Tensor& idx) { return sequence_loss(m, s, idx); });
  }

  const sft::SftData& d_;
  Transformer model_;
};

}  // namespace

std::unique_ptr<Learner> make_learner(nexp::RunContext& ctx) {
  nexp::Dataset& d = ctx.dataset();
  if (const auto* images = dynamic_cast<const ImagesData*>(&d)) return std::make_unique<ImagesLearner>(*images);
  if (const auto* s = dynamic_cast<const sft::SftData*>(&d)) return std::make_unique<SftLearner>(*s);
  throw nexp::ConfigError("fisher_select.train: the data set is neither fisher_select.images nor fisher_select.sft; "
                          "set dataset.name to one of them");
}

}  // namespace fisher_select
