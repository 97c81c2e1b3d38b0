#include "experiments.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <torch/nn/functional.h>
#include <torch/optim/adamw.h>
#include <torch/serialize.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace ddr {

namespace fs = std::filesystem;
namespace F = torch::nn::functional;
namespace {

// ---------------------------------------------------------------- data and configuration

const nexp::TensorDataset& image_data(nexp::RunContext& ctx) {
  const auto& d = ctx.dataset_as<nexp::TensorDataset>();
  if (d.train_x.dim() != 4 || d.num_classes <= 0 || d.train_x.size(2) != d.train_x.size(3) || !d.test_x.defined())
    throw nexp::DataError(fmt::format(
        "{}: dataset '{}' is not a square image classification set with a test split (expected train_x "
        "[N, C, H, H], class labels and test_x; found train_x of {} dimensions, {} classes). Use fashion_mnist "
        "or mnist.",
        ctx.method_name(), d.name, d.train_x.dim(), d.num_classes));
  return d;
}

ModelConfig model_config(const ModelOptions& o, const nexp::TensorDataset& d) {
  ModelConfig c;
  c.variant = o.variant;
  c.image = d.train_x.size(2), c.channels = d.train_x.size(1), c.classes = d.num_classes;
  c.patch = o.patch, c.dim = o.dim, c.depth = o.depth, c.heads = o.heads;
  c.mlp_ratio = o.mlp_ratio, c.gate_init = o.gate_init;
  c.frequencies = o.frequencies;
  if (c.dim % c.heads != 0)
    throw nexp::ConfigError(fmt::format("params.dim = {} is not a multiple of params.heads = {}; pick heads that "
                                        "divide dim (e.g. dim 64, heads 4)", c.dim, c.heads));
  if (c.image % c.patch != 0 || c.grid() < 2)
    throw nexp::ConfigError(fmt::format("params.patch = {} must divide the image size {} and leave a grid of at "
                                        "least 2x2 (28-pixel images: patch 4 gives the 7x7 grid)", c.patch, c.image));
  const std::int64_t m = c.grid(), most = 2 * m * (m - 1);
  if (c.frequencies > most)
    throw nexp::ConfigError(fmt::format("params.frequencies = {} exceeds the {} non-constant frequencies of a {}x{} "
                                        "grid's half-lattice; use at most {} (or 0 for the default {})",
                                        c.frequencies, most, m, m, most, default_frequency_count(m)));
  return c;
}

Normalizer normalizer(const at::Tensor& train_x) {
  return {train_x.mean().item<double>(), train_x.std().item<double>()};
}

// Independent, reproducible streams: the batch order of an epoch and the augmentation of a step are
// functions of (seed, epoch) and (seed, step), so a resumed run draws exactly what the original would.
at::Generator stream(std::uint64_t seed, std::uint64_t tag, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + tag * 0xBF58476D1CE4E5B9ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return at::detail::createCPUGenerator(z ^ (z >> 31));
}

double learning_rate(const FitOptions& o, std::int64_t step, std::int64_t total) {
  if (step < o.warmup_steps) return o.lr * static_cast<double>(step + 1) / static_cast<double>(o.warmup_steps);
  const double t = static_cast<double>(step - o.warmup_steps) / static_cast<double>(std::max<std::int64_t>(1, total - o.warmup_steps));
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(3.14159265358979323846 * std::min(1.0, t)));
}

// Decoupled weight decay on matrices and spectral filters; none on norms, biases, gates and the position
// bias (Swin keeps its table out of weight decay; the frequency coefficients are its counterpart).
torch::optim::AdamW make_optimizer(Vit& model, const FitOptions& o) {
  std::vector<at::Tensor> decay, no_decay;
  for (const auto& item : model->named_parameters()) {
    const bool position_bias = item.key().find("attention.bias.") != std::string::npos;
    (item.value().dim() >= 2 && !position_bias ? decay : no_decay).push_back(item.value());
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(
                                 torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(o.lr).weight_decay(0.0)));
  return torch::optim::AdamW(std::move(groups), torch::optim::AdamWOptions(o.lr));
}

std::int64_t count_parameters(Vit& model) {
  std::int64_t n = 0;
  for (const auto& p : model->parameters()) n += p.numel();
  return n;
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  if (!out) throw nexp::Error(fmt::format("cannot write '{}'", file.string()));
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in)
    throw nexp::DataError(fmt::format("cannot read '{}': the model files of a ddr.train run are "
                                      "<run folder>/artifacts/model.pt and model.json", file.string()));
  return nlohmann::json::parse(in);
}

// A trained model with what is needed to feed it: saved as model.pt (weights) + model.json.
void save_model(Vit& model, const Normalizer& norm, const fs::path& pt) {
  torch::save(model, pt.string());
  nlohmann::json j = {{"model", model->config().to_json()}, {"normalize", {{"mean", norm.mean}, {"std", norm.std}}}};
  write_text(fs::path(pt).replace_extension(".json"), j.dump(2) + "\n");
}

// A saved model can only be evaluated on images with its channels and classes.
void check_fits(const ModelConfig& cfg, const nexp::TensorDataset& data, const fs::path& pt) {
  if (data.test_x.size(1) != cfg.channels || data.num_classes != cfg.classes)
    throw nexp::ConfigError(fmt::format("model '{}' takes {} channel(s) and {} classes; dataset '{}' has {} and {}. "
                                        "Evaluate it on the data set it was trained on",
                                        pt.string(), cfg.channels, cfg.classes, data.name, data.test_x.size(1),
                                        data.num_classes));
}

std::pair<Vit, Normalizer> load_model(const fs::path& pt, c10::Device device) {
  const nlohmann::json j = read_json(fs::path(pt).replace_extension(".json"));
  Vit model(ModelConfig::from_json(j.at("model")));
  torch::load(model, pt.string(), device);
  model->to(device);
  return {model, Normalizer{j.at("normalize").at("mean").get<double>(), j.at("normalize").at("std").get<double>()}};
}

double accuracy(const at::Tensor& probs, const at::Tensor& labels) {
  return probs.argmax(1).eq(labels.to(at::kLong)).to(at::kDouble).mean().item<double>();
}

void write_gates_csv(const fs::path& file, const std::vector<Gates>& gates) {
  using C = nexp::CsvColumn;
  nexp::CsvWriter csv(file, {C::integer("layer"), C::real("attention"), C::real("spectral"), C::real("mlp")});
  for (std::size_t i = 0; i < gates.size(); ++i) csv.row(i, gates[i].attention, gates[i].spectral, gates[i].mlp);
}

// ---------------------------------------------------------------- the training loop

struct FitOutcome {
  bool stopped = false;
  double train_loss = 0.0;        // mean over the last logging interval
  double images_per_second = 0.0;  // training throughput of this process
  double val_accuracy = 0.0;       // the last one logged (with a validation set)
};

// Images held out of training, scored every `every` steps (0: at the end only) as val_accuracy.
struct Validation {
  at::Tensor x, y;
  std::int64_t every = 0;
};

// Trains `model` for o.epochs on (train_x, train_y). With checkpoint_every > 0, saves model + optimizer +
// step every checkpoint_every steps (and at the end, and when a stop is requested) and continues from
// ctx.checkpoint() when resumed; 0: no checkpoints. `step_offset` shifts the logged steps (several
// models in one run). With a validation set, logs val_accuracy on it as it goes (and at the end).
FitOutcome fit(nexp::RunContext& ctx, Vit& model, const at::Tensor& train_x, const at::Tensor& train_y,
               const Normalizer& norm, const FitOptions& o, std::uint64_t seed, std::int64_t checkpoint_every,
               std::int64_t step_offset, const std::string& label, const Validation* val = nullptr) {
  const bool checkpoints = checkpoint_every > 0;
  const c10::Device device = nexp::torch_device(ctx);
  const std::int64_t n_train = train_x.size(0);
  const std::int64_t per_epoch = n_train / o.batch_size;
  if (per_epoch < 1)
    throw nexp::ConfigError(fmt::format("params.batch_size = {} exceeds the {} training images; lower it or raise "
                                        "dataset.train_size", o.batch_size, n_train));
  const std::int64_t total = o.epochs * per_epoch, patch = model->config().patch, grid = model->config().grid();
  torch::optim::AdamW optimizer = make_optimizer(model, o);

  FitOutcome out;
  std::int64_t step = 0, loss_count = 0;
  double loss_sum = 0.0;
  if (checkpoints) {
    if (auto dir = ctx.checkpoint()) {
      torch::load(model, (*dir / "model.pt").string(), device);
      torch::load(optimizer, (*dir / "optimizer.pt").string(), device);
      const nlohmann::json state = read_json(*dir / "state.json");
      step = state.at("step").get<std::int64_t>();
      out.train_loss = state.at("train_loss").get<double>();
      loss_sum = state.at("loss_sum").get<double>();
      loss_count = state.at("loss_count").get<std::int64_t>();
      out.val_accuracy = state.value("val_accuracy", 0.0);
      ctx.restore_rng_state();
    }
  }

  auto bar = ctx.progress(total, label);
  bar.set(step);
  std::int64_t epoch_loaded = -1, images = 0;
  at::Tensor order;
  const auto start = std::chrono::steady_clock::now();
  while (step < total) {
    const std::int64_t epoch = step / per_epoch, position = step % per_epoch;
    if (epoch != epoch_loaded) {
      at::Generator g = stream(seed, 1, static_cast<std::uint64_t>(epoch));
      order = at::randperm(n_train, g, at::kLong);
      epoch_loaded = epoch;
    }
    at::Tensor idx = order.slice(0, position * o.batch_size, (position + 1) * o.batch_size);
    at::Generator g = stream(seed, 2, static_cast<std::uint64_t>(step));
    at::Tensor x = augment(train_x.index_select(0, idx), o.augment_shift, o.augment_flip, g);
    x = prepare(x, grid, patch, norm);
    at::Tensor y = train_y.index_select(0, idx).to(device);

    const double lr = learning_rate(o, step, total);
    for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    model->train();
    at::Tensor loss = F::cross_entropy(model->forward(x.to(device)), y,
                                       F::CrossEntropyFuncOptions().label_smoothing(o.label_smoothing));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_sum += loss.item<double>();
    ++loss_count, ++step, images += idx.size(0);
    bar.advance();

    const bool log_loss = step % o.log_every == 0 || step == total;
    const bool log_val = val && ((val->every > 0 && step % val->every == 0) || step == total);
    if (log_loss || log_val) {
      std::map<std::string, double> line;
      if (log_loss) {
        out.train_loss = loss_sum / static_cast<double>(loss_count);
        line = {{"train_loss", out.train_loss}, {"lr", lr}};
        bar.note(fmt::format("loss {:.3f}", out.train_loss));
        loss_sum = 0.0, loss_count = 0;
      }
      if (log_val) {
        line["val_accuracy"] = accuracy(predict(model, val->x, grid, norm, device, o.eval_batch), val->y);
        out.val_accuracy = line["val_accuracy"];
      }
      ctx.log_metrics(step_offset + step, line);
    }
    if (checkpoints && (step % checkpoint_every == 0 || step == total || ctx.stop_requested())) {
      // The running loss sum goes with the checkpoint, so a resumed run logs exactly what the original did.
      const nlohmann::json state = {{"step", step},          {"train_loss", out.train_loss},
                                    {"loss_sum", loss_sum},  {"loss_count", loss_count},
                                    {"val_accuracy", out.val_accuracy}};
      ctx.save_checkpoint([&](const fs::path& dir) {
        torch::save(model, (dir / "model.pt").string());
        torch::save(optimizer, (dir / "optimizer.pt").string());
        write_text(dir / "state.json", state.dump() + "\n");
      });
    }
    if (ctx.stop_requested()) {
      out.stopped = true;
      return out;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.images_per_second = seconds > 0 ? static_cast<double>(images) / seconds : 0.0;
  return out;
}

void report_model(nexp::RunContext& ctx, Vit& model) {
  const ModelConfig& c = model->config();
  ctx.summary("rpb_params_per_head", static_cast<double>(c.rpb_params_per_head()));
  ctx.summary("parameters", static_cast<double>(count_parameters(model)));
}

}  // namespace

// ---------------------------------------------------------------- data pieces

at::Tensor augment(const at::Tensor& images, std::int64_t shift, bool flip, at::Generator& gen) {
  at::Tensor out = images;
  const std::int64_t batch = images.size(0), h = images.size(2), w = images.size(3);
  if (shift > 0) {
    at::Tensor padded = at::constant_pad_nd(images, {shift, shift, shift, shift}, 0.0);
    at::Tensor offsets = at::randint(0, 2 * shift + 1, {batch, 2}, gen, at::kLong);
    auto off = offsets.accessor<std::int64_t, 2>();
    out = at::empty_like(images);
    for (std::int64_t i = 0; i < batch; ++i)
      out[i].copy_(padded[i].slice(1, off[i][0], off[i][0] + h).slice(2, off[i][1], off[i][1] + w));
  }
  if (flip) {
    at::Tensor mask = (at::rand({batch}, gen) < 0.5).view({batch, 1, 1, 1});
    out = at::where(mask, out.flip({3}), out);
  }
  return out;
}

at::Tensor prepare(const at::Tensor& images, std::int64_t grid, std::int64_t patch, const Normalizer& norm) {
  at::Tensor x = images;
  const std::int64_t size = grid * patch;
  if (x.size(2) != size || x.size(3) != size)
    x = F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<std::int64_t>{size, size})
                              .mode(torch::kBilinear)
                              .align_corners(false));
  return (x - norm.mean) / norm.std;
}

at::Tensor predict(Vit& model, const at::Tensor& images, std::int64_t grid, const Normalizer& norm,
                   c10::Device device, std::int64_t batch) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::vector<at::Tensor> parts;
  for (std::int64_t i = 0; i < images.size(0); i += batch) {
    at::Tensor x = prepare(images.slice(0, i, i + batch), grid, model->config().patch, norm).to(device);
    parts.push_back(model->forward(x).softmax(1).to(at::kCPU));
  }
  return at::cat(parts);
}

// ---------------------------------------------------------------- ddr.train

void run_train(nexp::RunContext& ctx) {
  const auto& data = image_data(ctx);
  const auto o = ctx.options<TrainOptions>();
  // A validation set: the last val_size training images, held out of training (the pixel statistics of
  // the normalisation are still those of every training image).
  const std::int64_t n = data.train_x.size(0), n_fit = n - o.val_size;
  if (o.val_every > 0 && o.val_size == 0)
    throw nexp::ConfigError(fmt::format("{}: params.val_every = {} needs a validation set; set params.val_size > 0",
                                        ctx.method_name(), o.val_every));
  if (n_fit < o.batch_size)
    throw nexp::ConfigError(fmt::format("{}: params.val_size = {} leaves {} of the {} training images, fewer than a "
                                        "batch ({}); lower val_size or raise dataset.train_size",
                                        ctx.method_name(), o.val_size, n_fit, n, o.batch_size));
  const at::Tensor fit_x = data.train_x.slice(0, 0, n_fit), fit_y = data.train_y.slice(0, 0, n_fit);
  const Validation val{data.train_x.slice(0, n_fit, n), data.train_y.slice(0, n_fit, n), o.val_every};
  const ModelConfig cfg = model_config(o, data);
  const Normalizer norm = normalizer(data.train_x);
  Vit model(cfg);
  model->to(nexp::torch_device(ctx));
  report_model(ctx, model);
  ctx.log().info("{}: {} parameters, {} position-bias parameters per head, grid {}x{}", cfg.variant,
                 count_parameters(model), cfg.rpb_params_per_head(), cfg.grid(), cfg.grid());

  const FitOutcome fitted = fit(ctx, model, fit_x, fit_y, norm, o, ctx.seed(), o.checkpoint_every, 0, cfg.variant,
                                o.val_size > 0 ? &val : nullptr);
  if (fitted.stopped) return;
  ctx.summary("train_loss", fitted.train_loss);
  if (o.val_size > 0) ctx.summary("val_accuracy", fitted.val_accuracy);
  if (fitted.images_per_second > 0) ctx.summary("images_per_second", fitted.images_per_second);

  const std::int64_t steps = o.epochs * (n_fit / o.batch_size);
  at::Tensor probs = predict(model, data.test_x, cfg.grid(), norm, nexp::torch_device(ctx), o.eval_batch);
  nexp::score_predictions(ctx, steps, "test", probs, data.test_y);
  ctx.summary("test_accuracy", accuracy(probs, data.test_y));  // reported even when `metrics:` omits it

  const fs::path art = ctx.artifacts_dir();
  save_model(model, norm, art / "model.pt");
  if (cfg.block() == BlockKind::Ddr) {
    const auto gates = model->gates();
    write_gates_csv(art / "gates.csv", gates);
    ctx.summary("attention_gate_first", gates.front().attention);
    ctx.summary("attention_gate_last", gates.back().attention);
    ctx.summary("spectral_gate_first", gates.front().spectral);
    ctx.summary("spectral_gate_last", gates.back().spectral);
    for (std::size_t i = 0; i < gates.size(); ++i)
      ctx.log().info("layer {}: g_attention {:+.4f}  g_spectral {:+.4f}  g_mlp {:+.4f}", i, gates[i].attention,
                     gates[i].spectral, gates[i].mlp);
  }
  ctx.log().info("test accuracy {:.4f}", accuracy(probs, data.test_y));
}

// ---------------------------------------------------------------- ddr.eval

void run_eval(nexp::RunContext& ctx) {
  const auto& data = image_data(ctx);
  const auto o = ctx.options<EvalOptions>();
  const fs::path pt = o.model;
  auto [model, norm] = load_model(pt, nexp::torch_device(ctx));
  const ModelConfig& cfg = model->config();
  check_fits(cfg, data, pt);
  const std::int64_t grid = o.grid > 0 ? o.grid : cfg.grid();
  model->set_bias_transfer(o.bias_transfer);
  report_model(ctx, model);
  at::Tensor probs = predict(model, data.test_x, grid, norm, nexp::torch_device(ctx), o.eval_batch);
  nexp::score_predictions(ctx, 0, "test", probs, data.test_y);
  ctx.summary("test_accuracy", accuracy(probs, data.test_y));
  ctx.summary("grid", static_cast<double>(grid));
  ctx.log().info("{} on a {}x{} grid ({}x{} pixels): test accuracy {:.4f}", cfg.variant, grid, grid,
                 grid * cfg.patch, grid * cfg.patch, accuracy(probs, data.test_y));
}

// ---------------------------------------------------------------- ddr.transfer

namespace {
struct TransferRow {
  std::string variant, rule;
  std::int64_t replica, grid, pixels;
  double accuracy;
};

// The ways a model's position bias can be moved to another grid.
std::vector<std::pair<std::string, BiasTransfer>> transfer_rules(const ModelConfig& c) {
  if (!c.attention() || c.bias() == BiasKind::None) return {{"none", BiasTransfer::ClosedForm}};
  if (c.bias() == BiasKind::Table) return {{"swin_bicubic", BiasTransfer::Interpolate}};
  return {{"closed_form", BiasTransfer::ClosedForm}, {"tabulated_bicubic", BiasTransfer::Interpolate}};
}
}  // namespace

void run_transfer(nexp::RunContext& ctx) {
  const auto& data = image_data(ctx);
  const auto o = ctx.options<TransferOptions>();
  const std::vector<std::int64_t>& grids = o.grids;
  const fs::path art = ctx.artifacts_dir();

  // The models: given files, or variants x replicas trained here (replica r uses seed + r).
  struct Entry {
    std::string variant;
    std::int64_t replica;
    fs::path file;
  };
  std::vector<Entry> entries;
  const std::vector<std::string> given = o.models.value_or(std::vector<std::string>{});
  if (!given.empty()) {
    for (std::size_t i = 0; i < given.size(); ++i) entries.push_back({"", static_cast<std::int64_t>(i), given[i]});
  } else {
    for (const auto& v : o.variants)
      for (std::int64_t r = 0; r < o.replicas; ++r)
        entries.push_back({v, r, art / fmt::format("{}-r{}.pt", v, r)});
  }

  // Resume at model granularity: a checkpoint records how many models are trained (their files are in
  // artifacts/, each a function of its own seed).
  std::size_t trained = 0;
  if (auto dir = ctx.checkpoint()) {
    trained = read_json(*dir / "state.json").at("trained").get<std::size_t>();
    ctx.restore_rng_state();
  }
  if (given.empty()) {
    const std::int64_t steps = o.epochs * (data.train_x.size(0) / o.batch_size);
    for (std::size_t i = trained; i < entries.size(); ++i) {
      ModelOptions mo = o;
      mo.variant = entries[i].variant;
      const ModelConfig cfg = model_config(mo, data);
      const std::uint64_t seed = ctx.seed() + static_cast<std::uint64_t>(entries[i].replica);
      at::manual_seed(seed);  // the initialisation of replica r is that of a ddr.train run with seed + r
      Vit model(cfg);
      model->to(nexp::torch_device(ctx));
      const std::string label = fmt::format("{} r{}", cfg.variant, entries[i].replica);
      const FitOutcome f = fit(ctx, model, data.train_x, data.train_y, normalizer(data.train_x), o, seed, /*checkpoint_every=*/0,
                               static_cast<std::int64_t>(i) * steps, label);
      if (f.stopped) return;
      save_model(model, normalizer(data.train_x), entries[i].file);
      ctx.save_checkpoint([&](const fs::path& dir) {
        write_text(dir / "state.json", nlohmann::json{{"trained", i + 1}}.dump() + "\n");
      });
      if (ctx.stop_requested()) return;
    }
  }

  std::vector<TransferRow> rows;
  std::map<std::string, std::int64_t> seen;  // given models: replicas are numbered per variant
  for (auto& e : entries) {
    auto [model, norm] = load_model(e.file, nexp::torch_device(ctx));
    check_fits(model->config(), data, e.file);
    if (e.variant.empty()) e.variant = model->config().variant, e.replica = seen[e.variant]++;
    for (std::int64_t g : grids)
      for (const auto& [rule, mode] : transfer_rules(model->config())) {
        if (g == model->config().grid() && mode == BiasTransfer::Interpolate && rule != "swin_bicubic") continue;
        model->set_bias_transfer(mode);
        at::Tensor probs = predict(model, data.test_x, g, norm, nexp::torch_device(ctx), o.eval_batch);
        rows.push_back({e.variant, g == model->config().grid() ? "native" : rule, e.replica, g,
                        g * model->config().patch, accuracy(probs, data.test_y)});
        ctx.log().info("{} r{} grid {:2}x{:<2} {:18} accuracy {:.4f}", e.variant, e.replica, g, g, rows.back().rule,
                       rows.back().accuracy);
      }
  }

  // Mean over replicas per (variant, grid, rule).
  using C = nexp::CsvColumn;
  std::map<std::tuple<std::string, std::int64_t, std::string>, std::vector<double>> accuracies;
  {
    nexp::CsvWriter csv(art / "transfer.csv", {C::text("variant"), C::integer("replica"), C::integer("grid"),
                                               C::integer("pixels"), C::text("rule"), C::real("accuracy")});
    for (const auto& r : rows) {
      csv.row(r.variant, r.replica, r.grid, r.pixels, r.rule, r.accuracy);
      accuracies[{r.variant, r.grid, r.rule}].push_back(r.accuracy);
    }
  }
  std::map<std::tuple<std::string, std::int64_t, std::string>, double> mean;
  std::ostringstream table;
  {
    nexp::CsvWriter csv(table, {C::text("variant"), C::integer("grid"), C::text("rule"), C::real("mean_accuracy"),
                                C::integer("replicas")});
    for (const auto& [k, v] : accuracies) {
      mean[k] = nexp::stats::mean(v);
      csv.row(std::get<0>(k), std::get<1>(k), std::get<2>(k), mean[k], v.size());
    }
  }
  write_text(art / "transfer_mean.csv", table.str());
  ctx.log().info("mean accuracy per variant, grid and rule:\n{}", table.str());

  // Summary: the native accuracy of the first model's variant, and the mean accuracies at the last grid.
  const ModelConfig first = load_model(entries.front().file, at::kCPU).first->config();
  ctx.summary("rpb_params_per_head", static_cast<double>(first.rpb_params_per_head()));
  ctx.summary("swin_rpb_params_per_head", static_cast<double>(table_params_per_head(first.grid())));
  const std::int64_t last = grids.back();
  for (const auto& [k, acc] : mean) {
    const auto& [variant, grid, rule] = k;
    if (variant == first.variant && grid == first.grid()) ctx.summary("test_accuracy", acc);
    if (grid != last || grid == first.grid()) continue;
    if (rule == "closed_form") ctx.summary("transfer_closed_form", acc);
    if (rule == "tabulated_bicubic") ctx.summary("transfer_tabulated_bicubic", acc);
    if (rule == "swin_bicubic") ctx.summary("transfer_swin_bicubic", acc);
  }
}

}  // namespace ddr
