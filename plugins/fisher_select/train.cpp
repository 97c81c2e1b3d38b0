#include "train.hpp"

#include <torch/torch.h>

#include <nexp/binary_file.hpp>

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <unordered_set>
#include <vector>

#include "gfv.hpp"
#include "learner.hpp"

namespace fisher_select {

void TrainOptions::declare(nexp::Options<TrainOptions>& o) {
  std::vector<std::pair<std::string, Selector>> names = selector_names();
  o.add("selector", &TrainOptions::selector, "which k of the n candidates to train on (selectors.hpp)", names);
  o.add("pool", &TrainOptions::pool, "candidates n drawn per step").range(2, 100000);
  o.add("keep", &TrainOptions::keep, "candidates k kept per step (k <= n)").range(1, 100000);
  o.add("steps", &TrainOptions::steps, "optimizer steps").min(1);
  o.add("optimizer", &TrainOptions::optimizer, "the fine-tuning optimizer, the same for every selector",
        {{"sgd", OptimizerKind::Sgd}, {"adam", OptimizerKind::Adam}});
  o.add("lr", &TrainOptions::lr, "learning rate of the fine-tuning").range(1e-6, 10);
  o.add("momentum", &TrainOptions::momentum, "SGD momentum (sgd only)").range(0, 0.999);
  o.add("projection", &TrainOptions::projection,
        "D: Gaussian projection of the last-layer gradients (0 = none, the full C(H+1): 1290 images, 1170 sft)")
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
  o.add("reference_size", &TrainOptions::reference_size, "held-out candidates per step for the reference (and greats)").min(1);
  o.add("eval_every", &TrainOptions::eval_every, "steps between test evaluations").min(1);
  o.add("pretrain_epochs", &TrainOptions::pretrain_epochs, "epochs of pretraining (Adam): MNIST, or copy and reverse").min(0);
  o.add("pretrain_batch", &TrainOptions::pretrain_batch, "pretraining batch size").min(1);
  o.add("pretrain_lr", &TrainOptions::pretrain_lr, "pretraining Adam learning rate").range(1e-6, 1);
  o.add("il_epochs", &TrainOptions::il_epochs, "rholoss: epochs of the irreducible-loss model on the held-out split")
      .min(1);
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

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

void validate(const TrainOptions& o, const Learner& learner) {
  auto fail = [](const std::string& what) { throw nexp::ConfigError("fisher_select.train: " + what); };
  if (o.keep > o.pool)
    fail(fmt::format("params.keep = {} exceeds params.pool = {}: a step keeps k of its n candidates, so k <= n; "
                     "lower keep or raise pool", o.keep, o.pool));
  if (o.pool > learner.size(Split::Train))
    fail(fmt::format("params.pool = {} exceeds the {} training candidates of the data set; lower pool or raise "
                     "dataset.train_size", o.pool, learner.size(Split::Train)));
  const std::int64_t width = learner.classes() * (learner.features() + 1);
  if (o.projection > width)
    fail(fmt::format("params.projection = {} is wider than the last-layer gradient ({} = C (H + 1)); use 1..{}, or 0 "
                     "for no projection", o.projection, width, width));
  const bool holdout = o.reference == Reference::Holdout || o.selector == Selector::Greats ||
                       needs_irreducible_loss(o.selector);
  if (holdout && learner.size(Split::Holdout) == 0)
    fail(fmt::format("params.selector = {} with reference = {} needs held-out data, but dataset.holdout_size = 0; "
                     "set dataset.holdout_size (e.g. 500)",
                     selector_name(o.selector), o.reference == Reference::Holdout ? "holdout" : "pool"));
  if (o.tau == 0 && (o.selector == Selector::Gfv || o.selector == Selector::GatedTopk))
    fail("params.tau = 0 makes the gate a constant 1/2 (use selector gfv_nogate for an ungated volume); "
         "choose tau > 0");
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, torch::nn::Module& model) {
  if (o.optimizer == OptimizerKind::Adam)
    return std::make_unique<torch::optim::Adam>(model.parameters(), torch::optim::AdamOptions(o.lr));
  return std::make_unique<torch::optim::SGD>(model.parameters(), torch::optim::SGDOptions(o.lr).momentum(o.momentum));
}

// ---------------------------------------------------------------- one run

struct Geometry {
  at::Tensor projection;  // [C(H+1), D] float32: the wide products run in single precision (8x faster here)
  FisherEma fisher;
};

// The pool of one step, in float64, from the candidates' forward pass.
Pool make_pool(const Tokens& t, const at::Tensor& q) {
  Pool pool;
  pool.q = q.to(at::kDouble);
  pool.probs = t.probs.to(at::kDouble);
  pool.h = t.h.to(at::kDouble);
  pool.labels = t.labels;
  pool.owner = t.owner;
  pool.n = t.candidates;
  return pool;
}

// (G2) the mean over the first m candidates of their closed-form Fishers (each the sum over its tokens).
at::Tensor candidate_fisher(const Tokens& t, const at::Tensor& q, std::int64_t m) {
  const std::int64_t tokens = t.owner.lt(m).sum().item<std::int64_t>();  // owners ascend: the first `tokens`
  return model_fisher(q.narrow(0, 0, tokens), t.probs.narrow(0, 0, tokens)).to(at::kDouble) *
         (static_cast<double>(tokens) / static_cast<double>(m));
}

at::Tensor mean_gradient(Learner& learner, const at::Tensor& idx, const at::Tensor& projection) {
  const Tokens t = learner.forward(Split::Holdout, idx);
  const at::Tensor g = projected_gradients(class_embeddings(t.h, projection, learner.classes()), t.probs, t.labels);
  return per_candidate(g, t.owner, t.candidates).mean(0).to(at::kDouble);
}

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

void save_state(nexp::RunContext& ctx, Learner& learner, torch::optim::Optimizer& opt, const FisherEma& fisher,
                LoopState& s) {
  ctx.save_checkpoint([&](const std::filesystem::path& dir) {
    torch::save(learner.module(), (dir / "model.pt").string());
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

void load_state(const std::filesystem::path& dir, Learner& learner, torch::optim::Optimizer& opt, FisherEma& fisher,
                LoopState& s) {
  auto model = learner.module();
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

double share(const at::Tensor& flags, const at::Tensor& chosen) {
  return flags.index_select(0, chosen).to(at::kDouble).mean().item<double>();
}

}  // namespace

void run_train(nexp::RunContext& ctx) {
  const auto o = ctx.options<TrainOptions>();
  const std::unique_ptr<Learner> learner = make_learner(ctx);
  validate(o, *learner);
  learner->prepare(o, needs_irreducible_loss(o.selector), ctx);
  const std::int64_t classes = learner->classes(), train_size = learner->size(Split::Train);

  Geometry geo{gaussian_projection(classes, learner->features(), o.projection, ctx.stream("projection")())
                   .to(at::kFloat),
               FisherEma(o.fisher_decay, 0)};
  const auto opt = make_optimizer(o, *learner->module());
  LoopState st(ctx);
  if (auto dir = ctx.checkpoint()) {
    load_state(*dir, *learner, *opt, geo.fisher, st);
    ctx.restore_rng_state();
    ctx.log().info("resumed after step {} of {}", st.step, o.steps);
  }
  const SelectorSettings settings{o.tau, o.lr / static_cast<double>(o.keep)};

  auto bar = ctx.progress(o.steps, "fine-tune");
  bar.set(st.step);
  while (st.step < o.steps) {
    const std::int64_t step = ++st.step;
    const at::Tensor idx = draw(o.pool, train_size, st.pool_rng);
    // ---- the candidates' forward pass
    auto t0 = Clock::now();
    const Tokens tokens = learner->forward(Split::Train, idx);
    st.forward_ms.push_back(ms_since(t0));
    // ---- the selection (the Fisher upkeep counts for the selectors that whiten)
    t0 = Clock::now();
    const at::Tensor q = class_embeddings(tokens.h, geo.projection, classes);
    // the pool is a uniform draw: its first m candidates are too
    geo.fisher.update(candidate_fisher(tokens, q, std::min(o.fisher_samples, o.pool)));
    Pool pool = make_pool(tokens, q);
    const at::Tensor f = geo.fisher.fisher();
    const at::Tensor fisher = f + o.lambda * (f.trace() / f.size(0) + 1e-12) * at::eye(f.size(0), f.options());
    const double fisher_ms = ms_since(t0);
    t0 = Clock::now();
    if (o.selector == Selector::Greats || (uses_reference(o.selector) && o.reference == Reference::Holdout)) {
      const std::int64_t holdout = learner->size(Split::Holdout);
      pool.reference = mean_gradient(*learner, draw(std::min(o.reference_size, holdout), holdout, st.ref_rng),
                                     geo.projection);
    } else if (uses_reference(o.selector)) {
      pool.reference = candidate_gradients(pool, pool.labels).mean(0);
    }
    if (needs_irreducible_loss(o.selector)) pool.irreducible_loss = learner->irreducible_losses().index_select(0, idx);
    const Selection sel = select(o.selector, pool, fisher, o.keep, settings, st.select_rng);
    st.select_ms.push_back(ms_since(t0) + (uses_fisher(o.selector) ? fisher_ms : 0.0));
    // ---- what was kept (metrics, outside the timings)
    const at::Tensor kept = torch::tensor(sel.picked);
    const at::Tensor chosen = idx.index_select(0, kept);
    st.noisy.push_back(share(learner->noisy(), chosen));
    st.dup.push_back(share(learner->duplicate(), chosen));
    st.rank.push_back(effective_rank(whiten(candidate_gradients(pool, pool.labels).index_select(0, kept), fisher)));
    // ---- one optimizer step on the kept k
    t0 = Clock::now();
    opt->zero_grad();
    learner->loss(chosen).backward();
    opt->step();
    st.step_ms.push_back(ms_since(t0));
    bar.advance();
    if (step % o.eval_every == 0 || step == o.steps) {
      st.accuracies.push_back(learner->evaluate(ctx, step));
      ctx.log_metrics(step, {{"noisy_selected", nexp::stats::mean(st.noisy)},
                             {"duplicate_selected", nexp::stats::mean(st.dup)}});
      bar.note(fmt::format("accuracy {:.4f}", st.accuracies.back()));
    }
    // A checkpoint at every evaluation and on a stop request; none after the last step.
    const bool stop = ctx.stop_requested() && step < o.steps;
    if (step < o.steps && (step % o.eval_every == 0 || stop)) save_state(ctx, *learner, *opt, geo.fisher, st);
    if (stop) return;  // core marks the run interrupted; `nexp run --resume` continues after this step
  }
  ctx.summary("test_accuracy_auc", nexp::stats::mean(st.accuracies));
  ctx.summary("noisy_selected", nexp::stats::mean(st.noisy));
  ctx.summary("duplicate_selected", nexp::stats::mean(st.dup));
  ctx.summary("noisy_base", learner->noisy().to(at::kDouble).mean().item<double>());
  ctx.summary("duplicate_base", learner->duplicate().to(at::kDouble).mean().item<double>());
  ctx.summary("selected_rank", nexp::stats::mean(st.rank));
  ctx.summary("forward_ms", nexp::stats::median(st.forward_ms));
  ctx.summary("select_ms", nexp::stats::median(st.select_ms));
  ctx.summary("step_ms", nexp::stats::median(st.step_ms));
}

}  // namespace fisher_select
