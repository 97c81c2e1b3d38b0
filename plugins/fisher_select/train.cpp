#include "train.hpp"

#include <torch/torch.h>

#include <nexp/torch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <unordered_set>
#include <vector>

#include "gfv.hpp"
#include "images.hpp"

namespace fisher_select {

void TrainOptions::declare(nexp::Options<TrainOptions>& o) {
  std::vector<std::pair<std::string, Selector>> names = selector_names();
  o.add("selector", &TrainOptions::selector, "which k of the n candidates to train on (selectors.hpp)", names);
  o.add("pool", &TrainOptions::pool, "candidates n drawn per step").range(2, 100000);
  o.add("keep", &TrainOptions::keep, "candidates k kept per step (k <= n)").range(1, 100000);
  o.add("steps", &TrainOptions::steps, "optimizer steps").min(1);
  o.add("lr", &TrainOptions::lr, "SGD learning rate of the fine-tuning").range(1e-6, 10);
  o.add("momentum", &TrainOptions::momentum, "SGD momentum").range(0, 0.999);
  o.add("projection", &TrainOptions::projection,
        "D: Gaussian projection of the last-layer gradients (0 = none, the full C(H+1) = 1290)")
      .range(0, 4096);
  o.add("tau", &TrainOptions::tau, "gate sharpness: w = sigmoid(tau a), a the F^-1 cosine with the reference (G4)")
      .range(0, 1000);
  o.add("lambda", &TrainOptions::lambda, "ridge of the Fisher, as a multiple of its mean eigenvalue: F + lambda tr(F)/D I")
      .range(1e-8, 1e4);
  o.add("fisher_decay", &TrainOptions::fisher_decay, "rho of the running Fisher F_t = (1 - rho) F_{t-1} + rho F_batch")
      .range(1e-4, 1);
  o.add("fisher_samples", &TrainOptions::fisher_samples,
        "candidates of each pool whose closed-form Fisher enters the running estimate").min(1);
  o.add("reference", &TrainOptions::reference, "the gate's descent direction: the pool's mean gradient, or a clean "
        "held-out batch's", {{"pool", Reference::Pool}, {"holdout", Reference::Holdout}});
  o.add("reference_size", &TrainOptions::reference_size, "held-out images per step for the reference (and greats)").min(1);
  o.add("eval_every", &TrainOptions::eval_every, "steps between test evaluations").min(1);
  o.add("pretrain_epochs", &TrainOptions::pretrain_epochs, "epochs of MNIST pretraining (Adam)").min(0);
  o.add("pretrain_batch", &TrainOptions::pretrain_batch, "pretraining batch size").min(1);
  o.add("pretrain_lr", &TrainOptions::pretrain_lr, "pretraining Adam learning rate").range(1e-6, 1);
  o.add("il_epochs", &TrainOptions::il_epochs, "rholoss: epochs of the irreducible-loss model on the held-out split")
      .min(1);
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- the network: 784-256-128, new head

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

void copy_weights(Mlp& to, const Mlp& from) {
  torch::NoGradGuard no_grad;
  auto dst = to->parameters();
  auto src = from->parameters();
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
}

// Adam on (x, y) for `epochs`, minibatches shuffled by `rng`.
void fit(Mlp& model, const at::Tensor& x, const at::Tensor& y, std::int64_t epochs, std::int64_t batch, double lr,
         nexp::Random& rng) {
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(lr));
  const std::int64_t n = x.size(0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < epochs; ++e) {
    for (std::int64_t i = 0; i < n; ++i) order[i] = i;
    for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    for (std::int64_t s = 0; s < n; s += batch) {
      const auto m = std::min(batch, n - s);
      const at::Tensor idx = torch::tensor(std::vector<std::int64_t>(order.begin() + s, order.begin() + s + m));
      opt.zero_grad();
      torch::nn::functional::cross_entropy(model->forward(x.index_select(0, idx)), y.index_select(0, idx)).backward();
      opt.step();
    }
  }
}

at::Tensor probabilities(Mlp& model, const at::Tensor& x) {
  torch::NoGradGuard no_grad;
  return torch::softmax(model->forward(x), 1).to(at::kDouble);
}

// n distinct indices of [0, size), uniformly.
at::Tensor draw(std::int64_t n, std::int64_t size, nexp::Random& rng) {
  std::unordered_set<std::int64_t> seen;
  std::vector<std::int64_t> out;
  while (static_cast<std::int64_t>(out.size()) < n) {
    const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(size)));
    if (seen.insert(j).second) out.push_back(j);
  }
  return torch::tensor(out);
}

void validate(const TrainOptions& o, const ImagesData& data) {
  auto fail = [](const std::string& what) { throw nexp::ConfigError("fisher_select.train: " + what); };
  if (o.keep > o.pool)
    fail(fmt::format("params.keep = {} exceeds params.pool = {}: a step keeps k of its n candidates, so k <= n; "
                     "lower keep or raise pool", o.keep, o.pool));
  if (o.pool > data.train_x.size(0))
    fail(fmt::format("params.pool = {} exceeds the {} training images of the data set; lower pool or raise "
                     "dataset.train_size", o.pool, data.train_x.size(0)));
  const std::int64_t width = data.classes * 129;
  if (o.projection > width)
    fail(fmt::format("params.projection = {} is wider than the last-layer gradient ({} = C (H + 1)); use 1..{}, or 0 "
                     "for no projection", o.projection, width, width));
  const bool holdout = o.reference == Reference::Holdout || o.selector == Selector::Greats ||
                       needs_irreducible_loss(o.selector);
  if (holdout && data.holdout_x.size(0) == 0)
    fail(fmt::format("params.selector = {} with reference = {} needs held-out images, but dataset.holdout_size = 0; "
                     "set dataset.holdout_size (e.g. 1000)",
                     selector_name(o.selector), o.reference == Reference::Holdout ? "holdout" : "pool"));
  if (o.tau == 0 && (o.selector == Selector::Gfv || o.selector == Selector::GatedTopk))
    fail("params.tau = 0 makes the gate a constant 1/2 (use selector gfv_nogate for an ungated volume); "
         "choose tau > 0");
}

// ---------------------------------------------------------------- one run

struct Geometry {
  at::Tensor projection, projection_f32;  // [C(H+1), D]
  FisherEma fisher;
};

at::Tensor mean_gradient(Mlp& model, const at::Tensor& x, const at::Tensor& y, const at::Tensor& projection) {
  torch::NoGradGuard no_grad;
  const at::Tensor h = model->features(x);
  const at::Tensor p = torch::softmax(model->head(h), 1);
  return projected_gradients(class_embeddings(h, projection, p.size(1)), p, y).mean(0).to(at::kDouble);
}

at::Tensor irreducible_losses(const Mlp& pretrained, const ImagesData& data, const TrainOptions& o,
                              nexp::RunContext& ctx) {
  Mlp il;
  copy_weights(il, pretrained);
  il->new_head(data.classes);
  auto rng = ctx.stream("irreducible");
  fit(il, data.holdout_x, data.holdout_y, o.il_epochs, 64, o.pretrain_lr, rng);
  return cross_entropy(probabilities(il, data.train_x), data.train_y);
}

double accuracy_auc(const std::vector<double>& accuracies) { return nexp::stats::mean(accuracies); }

}  // namespace

void run_train(nexp::RunContext& ctx) {
  const auto o = ctx.options<TrainOptions>();
  const auto& data = ctx.dataset_as<ImagesData>();
  validate(o, data);

  Mlp model;
  auto pretrain_rng = ctx.stream("pretrain");
  fit(model, data.pretrain_x, data.pretrain_y, o.pretrain_epochs, o.pretrain_batch, o.pretrain_lr, pretrain_rng);
  ctx.log().info("pretrained on {} MNIST images: test accuracy on Fashion-MNIST is meaningless until the new head "
                 "is tuned", data.pretrain_x.size(0));
  const at::Tensor irreducible = needs_irreducible_loss(o.selector) ? irreducible_losses(model, data, o, ctx) : at::Tensor();
  model->new_head(data.classes);

  Geometry geo{gaussian_projection(data.classes, 128, o.projection, ctx.stream("projection")()),
               {}, FisherEma(o.fisher_decay, 0)};
  geo.projection_f32 = geo.projection.to(at::kFloat);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(o.lr).momentum(o.momentum));
  auto pool_rng = ctx.stream("pool"), select_rng = ctx.stream("select"), ref_rng = ctx.stream("reference");
  const SelectorSettings settings{o.tau, o.lr / static_cast<double>(o.keep)};

  std::vector<double> forward_ms, select_ms, step_ms, noisy, dup, rank, accuracies;
  auto bar = ctx.progress(o.steps, "fine-tune");
  for (std::int64_t step = 1; step <= o.steps; ++step) {
    const at::Tensor idx = draw(o.pool, data.train_x.size(0), pool_rng);
    // ---- the candidates' forward pass
    auto t0 = Clock::now();
    Pool pool;
    at::Tensor h, probs;  // float32: the wide products below run in single precision (8x faster here)
    {
      torch::NoGradGuard no_grad;
      h = model->features(data.train_x.index_select(0, idx));
      probs = torch::softmax(model->head(h), 1);
    }
    pool.labels = data.train_y.index_select(0, idx);
    forward_ms.push_back(ms_since(t0));
    // ---- the selection (the Fisher upkeep counts for the selectors that whiten)
    t0 = Clock::now();
    const at::Tensor q = class_embeddings(h, geo.projection_f32, data.classes);
    const std::int64_t m = std::min(o.fisher_samples, o.pool);  // the pool is a uniform draw: its first m are too
    geo.fisher.update(model_fisher(q.narrow(0, 0, m), probs.narrow(0, 0, m)).to(at::kDouble));
    pool.q = q.to(at::kDouble);
    pool.probs = probs.to(at::kDouble);
    pool.h = h.to(at::kDouble);
    const at::Tensor f = geo.fisher.fisher();
    const at::Tensor fisher = f + o.lambda * (f.trace() / f.size(0) + 1e-12) * at::eye(f.size(0), f.options());
    const double fisher_ms = ms_since(t0);
    t0 = Clock::now();
    if (o.selector == Selector::Greats || (uses_reference(o.selector) && o.reference == Reference::Holdout)) {
      const at::Tensor r = draw(std::min(o.reference_size, data.holdout_x.size(0)), data.holdout_x.size(0), ref_rng);
      pool.reference = mean_gradient(model, data.holdout_x.index_select(0, r), data.holdout_y.index_select(0, r),
                                     geo.projection_f32);
    } else if (uses_reference(o.selector)) {
      pool.reference = projected_gradients(pool.q, pool.probs, pool.labels).mean(0);
    }
    if (irreducible.defined()) pool.irreducible_loss = irreducible.index_select(0, idx);
    const Selection sel = select(o.selector, pool, fisher, o.keep, settings, select_rng);
    select_ms.push_back(ms_since(t0) + (uses_fisher(o.selector) ? fisher_ms : 0.0));
    // ---- what was kept (metrics, outside the timings)
    const at::Tensor kept = torch::tensor(sel.picked);
    const at::Tensor chosen = idx.index_select(0, kept);
    noisy.push_back(data.noisy.index_select(0, chosen).to(at::kDouble).mean().item<double>());
    dup.push_back(data.duplicate.index_select(0, chosen).to(at::kDouble).mean().item<double>());
    const at::Tensor g = projected_gradients(pool.q.index_select(0, kept), pool.probs.index_select(0, kept),
                                             pool.labels.index_select(0, kept));
    rank.push_back(effective_rank(whiten(g, fisher)));
    // ---- one optimizer step on the kept k
    t0 = Clock::now();
    opt.zero_grad();
    torch::nn::functional::cross_entropy(model->forward(data.train_x.index_select(0, chosen)),
                                         data.train_y.index_select(0, chosen))
        .backward();
    opt.step();
    step_ms.push_back(ms_since(t0));
    bar.advance();
    if (step % o.eval_every == 0 || step == o.steps) {
      const auto scores = nexp::score_predictions(ctx, step, "test", probabilities(model, data.test_x), data.test_y);
      accuracies.push_back(scores.at("test_accuracy"));
      ctx.log_metrics(step, {{"noisy_selected", nexp::stats::mean(noisy)},
                             {"duplicate_selected", nexp::stats::mean(dup)}});
      bar.note(fmt::format("accuracy {:.4f}", accuracies.back()));
    }
    if (ctx.stop_requested()) break;
  }
  ctx.summary("test_accuracy_auc", accuracy_auc(accuracies));
  ctx.summary("noisy_selected", nexp::stats::mean(noisy));
  ctx.summary("duplicate_selected", nexp::stats::mean(dup));
  ctx.summary("noisy_base", data.noisy.to(at::kDouble).mean().item<double>());
  ctx.summary("duplicate_base", data.duplicate.to(at::kDouble).mean().item<double>());
  ctx.summary("selected_rank", nexp::stats::mean(rank));
  ctx.summary("forward_ms", nexp::stats::median(forward_ms));
  ctx.summary("select_ms", nexp::stats::median(select_ms));
  ctx.summary("step_ms", nexp::stats::median(step_ms));
}

}  // namespace fisher_select
