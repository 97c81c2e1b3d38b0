#include "train.hpp"

#include <torch/torch.h>

#include <nexp/binary_file.hpp>
#include <nexp/torch.hpp>

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <filesystem>
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

// ---------------------------------------------------------------- checkpoints

// What the loop carries from step to step besides the model, the optimizer and the running Fisher. The
// pretrained weights, the projection and the irreducible losses are functions of the seed: a resumed run
// rebuilds them and then loads the rest.
struct LoopState {
  explicit LoopState(nexp::RunContext& ctx)
      : pool_rng(ctx.stream("pool")), select_rng(ctx.stream("select")), ref_rng(ctx.stream("reference")) {}
  std::int64_t step = 0;  // steps done
  std::vector<double> forward_ms, select_ms, step_ms, noisy, dup, rank, accuracies;
  nexp::Random pool_rng, select_rng, ref_rng;
  std::vector<std::vector<double>*> series() {
    return {&forward_ms, &select_ms, &step_ms, &noisy, &dup, &rank, &accuracies};
  }
  std::vector<nexp::Random*> streams() { return {&pool_rng, &select_rng, &ref_rng}; }
};

constexpr std::uint64_t kStateTag = 0x01'74636c'657366ull;  // "fselct", version 1

void save_state(nexp::RunContext& ctx, Mlp& model, torch::optim::SGD& opt, const FisherEma& fisher, LoopState& s) {
  ctx.save_checkpoint([&](const std::filesystem::path& dir) {
    torch::save(model, (dir / "model.pt").string());
    torch::save(opt, (dir / "optimizer.pt").string());
    torch::save(fisher.fisher(), (dir / "fisher.pt").string());
    nexp::BinaryWriter w(dir / "state.bin", kStateTag);
    w.u64(static_cast<std::uint64_t>(s.step));
    for (auto* v : s.series()) w.doubles(*v);
    for (auto* r : s.streams())
      for (std::uint64_t word : r->state()) w.u64(word);
    w.close();
  });
}

void load_state(const std::filesystem::path& dir, Mlp& model, torch::optim::SGD& opt, FisherEma& fisher, LoopState& s) {
  torch::load(model, (dir / "model.pt").string());
  torch::load(opt, (dir / "optimizer.pt").string());
  at::Tensor f;
  torch::load(f, (dir / "fisher.pt").string());
  fisher.set(f);
  nexp::BinaryReader r(dir / "state.bin", kStateTag, "a fisher_select.train checkpoint");
  s.step = static_cast<std::int64_t>(r.u64());
  for (auto* v : s.series()) *v = r.doubles();
  for (auto* rng : s.streams()) {
    std::array<std::uint64_t, 4> words{};
    for (auto& word : words) word = r.u64();
    *rng = nexp::Random::from_state(words);
  }
  r.expect_end();
}

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
  LoopState st(ctx);
  if (auto dir = ctx.checkpoint()) {
    load_state(*dir, model, opt, geo.fisher, st);
    ctx.restore_rng_state();
    ctx.log().info("resumed after step {} of {}", st.step, o.steps);
  }
  const SelectorSettings settings{o.tau, o.lr / static_cast<double>(o.keep)};

  auto bar = ctx.progress(o.steps, "fine-tune");
  bar.set(st.step);
  while (st.step < o.steps) {
    const std::int64_t step = ++st.step;
    const at::Tensor idx = draw(o.pool, data.train_x.size(0), st.pool_rng);
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
    st.forward_ms.push_back(ms_since(t0));
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
      const at::Tensor r = draw(std::min(o.reference_size, data.holdout_x.size(0)), data.holdout_x.size(0), st.ref_rng);
      pool.reference = mean_gradient(model, data.holdout_x.index_select(0, r), data.holdout_y.index_select(0, r),
                                     geo.projection_f32);
    } else if (uses_reference(o.selector)) {
      pool.reference = projected_gradients(pool.q, pool.probs, pool.labels).mean(0);
    }
    if (irreducible.defined()) pool.irreducible_loss = irreducible.index_select(0, idx);
    const Selection sel = select(o.selector, pool, fisher, o.keep, settings, st.select_rng);
    st.select_ms.push_back(ms_since(t0) + (uses_fisher(o.selector) ? fisher_ms : 0.0));
    // ---- what was kept (metrics, outside the timings)
    const at::Tensor kept = torch::tensor(sel.picked);
    const at::Tensor chosen = idx.index_select(0, kept);
    st.noisy.push_back(data.noisy.index_select(0, chosen).to(at::kDouble).mean().item<double>());
    st.dup.push_back(data.duplicate.index_select(0, chosen).to(at::kDouble).mean().item<double>());
    const at::Tensor g = projected_gradients(pool.q.index_select(0, kept), pool.probs.index_select(0, kept),
                                             pool.labels.index_select(0, kept));
    st.rank.push_back(effective_rank(whiten(g, fisher)));
    // ---- one optimizer step on the kept k
    t0 = Clock::now();
    opt.zero_grad();
    torch::nn::functional::cross_entropy(model->forward(data.train_x.index_select(0, chosen)),
                                         data.train_y.index_select(0, chosen))
        .backward();
    opt.step();
    st.step_ms.push_back(ms_since(t0));
    bar.advance();
    if (step % o.eval_every == 0 || step == o.steps) {
      const auto scores = nexp::score_predictions(ctx, step, "test", probabilities(model, data.test_x), data.test_y);
      st.accuracies.push_back(scores.at("test_accuracy"));
      ctx.log_metrics(step, {{"noisy_selected", nexp::stats::mean(st.noisy)},
                             {"duplicate_selected", nexp::stats::mean(st.dup)}});
      bar.note(fmt::format("accuracy {:.4f}", st.accuracies.back()));
    }
    // A checkpoint at every evaluation and on a stop request; none after the last step.
    const bool stop = ctx.stop_requested() && step < o.steps;
    if (step < o.steps && (step % o.eval_every == 0 || stop)) save_state(ctx, model, opt, geo.fisher, st);
    if (stop) return;  // core marks the run interrupted; `nexp run --resume` continues after this step
  }
  ctx.summary("test_accuracy_auc", accuracy_auc(st.accuracies));
  ctx.summary("noisy_selected", nexp::stats::mean(st.noisy));
  ctx.summary("duplicate_selected", nexp::stats::mean(st.dup));
  ctx.summary("noisy_base", data.noisy.to(at::kDouble).mean().item<double>());
  ctx.summary("duplicate_base", data.duplicate.to(at::kDouble).mean().item<double>());
  ctx.summary("selected_rank", nexp::stats::mean(st.rank));
  ctx.summary("forward_ms", nexp::stats::median(st.forward_ms));
  ctx.summary("select_ms", nexp::stats::median(st.select_ms));
  ctx.summary("step_ms", nexp::stats::median(st.step_ms));
}

}  // namespace fisher_select
