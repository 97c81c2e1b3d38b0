#include "@SLUG@.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace @SLUG@ {

std::string LinearData::describe() const {
  return fmt::format("@SLUG@.linear: {} samples, {} features", x.size(0), x.size(1));
}

std::shared_ptr<nexp::Dataset> make_linear(const LinearOptions& o, nexp::RunContext&) {
  // Core seeded torch's generator from the run's seed before building the dataset.
  auto d = std::make_shared<LinearData>();
  d->x = at::randn({o.n, o.d}, at::kDouble);
  d->w_true = at::randn({o.d}, at::kDouble);
  d->y = d->x.matmul(d->w_true) + o.noise * at::randn({o.n}, at::kDouble);
  return d;
}

at::Tensor gradient_step(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w, double lr) {
  const double n = static_cast<double>(x.size(0));
  at::Tensor grad = (2.0 / n) * x.t().matmul(x.matmul(w) - y);
  return w - lr * grad;
}

double mse(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w) {
  return (x.matmul(w) - y).pow(2).mean().item<double>();
}

namespace {

// A hold, to test stopping and resuming at an exact point: writes artifacts/held ("<where> <step>")
// and waits until artifacts/release appears (ten minutes at most, and no longer than the run folder
// exists), then removes both.
void hold(nexp::RunContext& ctx, const char* where, std::int64_t step) {
  namespace fs = std::filesystem;
  const fs::path dir = ctx.artifacts_dir();
  std::ofstream(dir / "held.tmp") << where << " " << step << "\n";
  fs::rename(dir / "held.tmp", dir / "held");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (!fs::exists(dir / "release")) {
    if (std::chrono::steady_clock::now() > deadline || !fs::exists(dir))
      throw nexp::Error(fmt::format("held at {} {}, and artifacts/release never came", where, step));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fs::remove(dir / "release");
  fs::remove(dir / "held");
}

}  // namespace

void run_fit(nexp::RunContext& ctx) {
  const auto& data = ctx.dataset_as<LinearData>();
  const auto o = ctx.options<FitOptions>();
  const auto steps = o.steps, every = o.checkpoint_every;
  const double lr = o.lr;
  const auto hold_at = o.hold_at;
  const bool hold_in_checkpoint = o.hold_in == "checkpoint";
  if (hold_in_checkpoint && hold_at > 0 && hold_at % every != 0 && hold_at != steps)
    throw nexp::ConfigError(fmt::format("params.hold_at = {} is not a checkpoint step (a multiple of checkpoint_every "
                                        "= {}, or the last step), so hold_in: checkpoint would never hold",
                                        hold_at, every));

  at::Tensor w = at::zeros({data.x.size(1)}, at::kDouble);
  std::int64_t step = 0;
  if (auto dir = ctx.checkpoint()) {  // resuming: continue from the saved weights
    w = at::empty_like(w);
    std::ifstream in(*dir / "w.bin", std::ios::binary);
    in.read(static_cast<char*>(w.data_ptr()), static_cast<std::streamsize>(w.numel() * sizeof(double)));
    std::ifstream(*dir / "step.txt") >> step;
    ctx.restore_rng_state();
  }
  auto bar = ctx.progress(steps, "fit");
  bar.set(step);
  while (step < steps) {
    w = gradient_step(data.x, data.y, w, lr);
    ++step;
    bar.advance();
    const bool checkpoint = step % every == 0 || step == steps;
    if (checkpoint) {
      ctx.log_metrics(step, {{"mse", mse(data.x, data.y, w)}});
      ctx.save_checkpoint([&](const std::filesystem::path& dir) {
        std::ofstream out(dir / "w.bin", std::ios::binary);
        out.write(static_cast<const char*>(w.data_ptr()), static_cast<std::streamsize>(w.numel() * sizeof(double)));
        std::ofstream(dir / "step.txt") << step;
        if (step == hold_at && hold_in_checkpoint) hold(ctx, "checkpoint", step);  // before core commits it
      });
    }
    if (step == hold_at && !hold_in_checkpoint) hold(ctx, "step", step);
    if (checkpoint && ctx.stop_requested()) {  // core marks the run interrupted; --resume continues here
      if (o.hold_on_stop) hold(ctx, "stop", step);
      return;
    }
  }
  ctx.summary("mse", mse(data.x, data.y, w));
  ctx.summary("weight_error", (w - data.w_true).norm().item<double>());
}

}  // namespace @SLUG@
