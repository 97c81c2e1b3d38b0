#include "experiments.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <nexp/tensor_dataset.hpp>
#include <nexp/torch.hpp>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>

#include <memory>

#include "models.hpp"
#include "shapes.hpp"

namespace htaf {

// ---------------------------------------------------------------- options

void UnitOptions::declare(nexp::Options<UnitOptions>& o) {
  std::vector<std::pair<std::string, Kind>> kinds = kind_names();
  o.add("activation", &UnitOptions::activation,
        "the step approximation h (htaf, ste, sigmoid4, sigmoid10, sigmoid_matched = logistic with HTAF's h'(0), "
        "arctan, fast_sigmoid, triangle, approxsign = Bi-Real, BNN only) or relu (the standard model)",
        kinds);
  o.add("mode", &UnitOptions::mode, "smooth: h forward in training, H at test; surrogate: H forward, h' backward",
        {{"smooth", Mode::Smooth}, {"surrogate", Mode::Surrogate}});
  o.add("a", &UnitOptions::a, "HTAF core sharpness a (> 0)").range(1e-3, 1e3);
  o.add("b", &UnitOptions::b, "HTAF tail width b (> 0): h' ~ exp(-2 b |x|)").range(1e-3, 1e3);
  o.add("alpha", &UnitOptions::alpha, "arctan surrogate: h'(0) = alpha / 2").range(1e-3, 1e3);
  o.add("beta", &UnitOptions::beta, "fast sigmoid (SuperSpike): h'(0) = beta / 2").range(1e-3, 1e3);
  o.add("triangle_width", &UnitOptions::width, "triangle surrogate half-width: h'(0) = 1 / width").range(1e-3, 1e3);
}

Activation UnitOptions::activation_spec() const {
  Activation act;
  act.kind = activation, act.a = a, act.b = b, act.alpha = alpha, act.beta = beta, act.width = width;
  validate(act);
  return act;
}

void FitOptions::declare(nexp::Options<FitOptions>& o) {
  o.add("epochs", &FitOptions::epochs, "passes over the training set").range(1, 1000);
  o.add("batch_size", &FitOptions::batch_size, "training batch size").min(1);
  o.add("eval_batch", &FitOptions::eval_batch, "evaluation batch size").min(1);
  o.add("log_every", &FitOptions::log_every, "steps between train_loss lines in metrics.jsonl").min(1);
  o.add("lr", &FitOptions::lr, "Adam learning rate").range(1e-6, 1);
}

void DhnOptions::declare(nexp::Options<DhnOptions>& o) {
  o.inherit<UnitOptions>();
  o.inherit<FitOptions>();
  o.add("depth", &DhnOptions::depth, "hidden Heaviside layers").range(1, 64);
  o.add("width", &DhnOptions::width, "units per hidden layer").range(1, 8192);
}

void SnnOptions::declare(nexp::Options<SnnOptions>& o) {
  o.inherit<UnitOptions>();
  o.inherit<FitOptions>();
  o.add("hidden", &SnnOptions::hidden, "LIF neurons of the hidden layer").range(1, 8192);
  o.add("steps", &SnnOptions::steps, "time steps T (>= 1), direct coding").range(1, 100);
  o.add("leak", &SnnOptions::leak, "membrane leak beta in v_t = beta v_{t-1} + W x_t - theta s_{t-1}").range(0, 1);
  o.add("threshold", &SnnOptions::threshold, "firing threshold theta").range(1e-3, 100);
}

void BnnOptions::declare(nexp::Options<BnnOptions>& o) {
  o.inherit<UnitOptions>();
  o.inherit<FitOptions>();
  o.add("hidden", &BnnOptions::hidden, "widths of the binary hidden layers").range(1, 8192);
}

void IcbmOptions::declare(nexp::Options<IcbmOptions>& o) {
  o.inherit<UnitOptions>();
  o.inherit<FitOptions>();
  o.add("units", &IcbmOptions::units, "bottleneck units m").range(1, 4096);
  o.add("probe_size", &IcbmOptions::probe_size, "training images whose unit outputs give binary_share").min(1);
}

void ProfileOptions::declare(nexp::Options<ProfileOptions>& o) {
  o.add("a", &ProfileOptions::a, "HTAF core sharpness a (> 0)").range(1e-3, 1e3);
  o.add("b", &ProfileOptions::b, "HTAF tail width b (> 0)").range(1e-3, 1e3);
  o.add("alpha", &ProfileOptions::alpha, "arctan: h'(0) = alpha / 2").range(1e-3, 1e3);
  o.add("beta", &ProfileOptions::beta, "fast sigmoid: h'(0) = beta / 2").range(1e-3, 1e3);
  o.add("triangle_width", &ProfileOptions::width, "triangle half-width").range(1e-3, 1e3);
}

// ---------------------------------------------------------------- shared pieces

namespace {

namespace F = torch::nn::functional;

const nexp::TensorDataset& labelled_data(nexp::RunContext& ctx, bool images) {
  const auto& d = ctx.dataset_as<nexp::TensorDataset>();
  const bool ok = d.num_classes > 0 && d.test_x.defined() &&
                  (!images || (d.train_x.dim() == 4 && d.train_x.size(2) == d.train_x.size(3) && d.train_x.size(2) % 4 == 0));
  if (!ok)
    throw nexp::DataError(fmt::format(
        "{}: dataset '{}' is not a {}classification set with a test split (found {} dimensions, {} classes). "
        "Use mnist, fashion_mnist{}",
        ctx.method_name(), d.name, images ? "square-image (side a multiple of 4) " : "", d.train_x.dim(),
        d.num_classes, images ? " or htaf.shapes" : ", digits or htaf.shapes"));
  return d;
}

void reject_approxsign(const UnitOptions& o, nexp::RunContext& ctx) {
  if (o.activation == Kind::ApproxSign)
    throw nexp::ConfigError(fmt::format(
        "{}: params.activation = approxsign is Bi-Real's estimator for sign units and belongs to htaf.bnn; "
        "use triangle (its Heaviside counterpart) or another activation here",
        ctx.method_name()));
}

// Standardises with the training set's pixel mean and deviation.
struct Inputs {
  at::Tensor train_x, test_x;
};
Inputs standardise(const nexp::TensorDataset& d) {
  const double mean = d.train_x.mean().item<double>(), sd = d.train_x.std().item<double>();
  return {(d.train_x - mean) / sd, (d.test_x - mean) / sd};
}

struct FitResult {
  double train_loss = 0, grad_ratio = 0;
};

double norm_of(const at::Tensor& g) { return g.defined() ? g.norm().item<double>() : 0.0; }

// Adam over mini-batches in a seeded order; records ||dL/dW_first|| / ||dL/dW_last|| at every step.
FitResult fit(nexp::RunContext& ctx, Net& net, const at::Tensor& x, const at::Tensor& y, const FitOptions& o) {
  const std::int64_t n = x.size(0), per_epoch = std::max<std::int64_t>(1, n / o.batch_size);
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(o.lr));
  auto bar = ctx.progress(o.epochs * per_epoch, ctx.method_name());
  std::vector<double> ratios, losses;
  FitResult out;
  net.train();
  for (std::int64_t e = 0, step = 0; e < o.epochs; ++e) {
    at::Generator gen = at::detail::createCPUGenerator(ctx.stream("batches", static_cast<std::uint64_t>(e))());
    const at::Tensor order = at::randperm(n, gen, at::kLong);
    for (std::int64_t b = 0; b < per_epoch; ++b, ++step) {
      const at::Tensor idx = order.slice(0, b * o.batch_size, std::min(n, (b + 1) * o.batch_size));
      opt.zero_grad();
      const at::Tensor loss = F::cross_entropy(net.forward(x.index_select(0, idx)), y.index_select(0, idx));
      loss.backward();
      opt.step();
      net.after_step();
      const double last = norm_of(net.last_weight().grad());
      if (last > 0) ratios.push_back(norm_of(net.first_weight().grad()) / last);
      losses.push_back(loss.item<double>());
      if ((step + 1) % o.log_every == 0) {
        ctx.log_metrics(step + 1, {{"train_loss", nexp::stats::mean(losses)}});
        out.train_loss = nexp::stats::mean(losses);
        losses.clear();
      }
      bar.advance();
    }
  }
  if (!losses.empty()) out.train_loss = nexp::stats::mean(losses);
  out.grad_ratio = ratios.empty() ? 0.0 : nexp::stats::median(ratios);
  return out;
}

// Applies f to batches of x (no gradient) and concatenates the results.
template <class Fn>
at::Tensor batched(const at::Tensor& x, std::int64_t batch, Fn f) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for (std::int64_t i = 0; i < x.size(0); i += batch) parts.push_back(f(x.slice(0, i, std::min(x.size(0), i + batch))));
  return at::cat(parts);
}

double accuracy(const at::Tensor& logits, const at::Tensor& y) {
  return logits.argmax(1).eq(y).to(at::kDouble).mean().item<double>();
}

double evaluate(Net& net, const at::Tensor& x, const at::Tensor& y, std::int64_t batch) {
  net.eval();
  return accuracy(batched(x, batch, [&](const at::Tensor& b) { return net.forward(b); }), y);
}

std::vector<double> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kDouble).contiguous().flatten();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace

// ---------------------------------------------------------------- methods

void run_dhn(nexp::RunContext& ctx) {
  const auto o = ctx.options<DhnOptions>();
  reject_approxsign(o, ctx);
  const Unit unit{o.activation_spec(), o.mode};
  const auto& d = labelled_data(ctx, false);
  const Inputs in = standardise(d);
  Dhn net(in.train_x[0].numel(), o.width, o.depth, d.num_classes, unit);
  const FitResult r = fit(ctx, net, in.train_x, d.train_y, o);
  const double acc = evaluate(net, in.test_x, d.test_y, o.eval_batch);
  ctx.summary("test_accuracy", acc);
  ctx.summary("trained", acc > 0.5 ? 1.0 : 0.0);
  ctx.summary("grad_ratio", r.grad_ratio);
  ctx.summary("train_loss", r.train_loss);
}

void run_snn(nexp::RunContext& ctx) {
  const auto o = ctx.options<SnnOptions>();
  reject_approxsign(o, ctx);
  const Unit unit{o.activation_spec(), o.mode};
  const auto& d = labelled_data(ctx, false);
  const Inputs in = standardise(d);
  Snn net(in.train_x[0].numel(), o.hidden, d.num_classes, o.steps, o.leak, o.threshold, unit);
  const FitResult r = fit(ctx, net, in.train_x, d.train_y, o);
  net.eval();
  std::vector<double> rates;
  const at::Tensor logits = batched(in.test_x, o.eval_batch, [&](const at::Tensor& b) {
    at::Tensor out = net.forward(b);
    rates.push_back(net.last_rate);
    return out;
  });
  ctx.summary("test_accuracy", accuracy(logits, d.test_y));
  ctx.summary("firing_rate", nexp::stats::mean(rates));
  ctx.summary("grad_ratio", r.grad_ratio);
  ctx.summary("train_loss", r.train_loss);
}

void run_bnn(nexp::RunContext& ctx) {
  const auto o = ctx.options<BnnOptions>();
  const Unit unit{o.activation_spec(), o.mode};
  const auto& d = labelled_data(ctx, false);
  const Inputs in = standardise(d);
  Bnn net(in.train_x[0].numel(), o.hidden, d.num_classes, unit);
  const FitResult r = fit(ctx, net, in.train_x, d.train_y, o);
  ctx.summary("test_accuracy", evaluate(net, in.test_x, d.test_y, o.eval_batch));
  ctx.summary("grad_ratio", r.grad_ratio);
  ctx.summary("train_loss", r.train_loss);
}

double binary_share(const std::vector<double>& values, double tol) {
  if (values.empty()) return 0.0;
  std::size_t near = 0;
  for (double v : values) near += std::fabs(v) <= tol || std::fabs(v - 1.0) <= tol;
  return static_cast<double>(near) / static_cast<double>(values.size());
}

double concept_auc(const std::vector<std::vector<double>>& units, const std::vector<std::vector<int>>& concepts) {
  if (units.empty() || concepts.empty()) return 0.0;
  const std::size_t m = units[0].size(), k = concepts[0].size();
  std::vector<double> best(k, 0.5);
  for (std::size_t u = 0; u < m; ++u) {
    std::vector<double> score(units.size());
    for (std::size_t i = 0; i < units.size(); ++i) score[i] = units[i][u];
    for (std::size_t c = 0; c < k; ++c) {
      std::vector<int> label(units.size());
      for (std::size_t i = 0; i < units.size(); ++i) label[i] = concepts[i][c];
      const double auc = nexp::stats::roc_auc(score, label);
      best[c] = std::max(best[c], std::max(auc, 1.0 - auc));
    }
  }
  return nexp::stats::mean(best);
}

namespace {

std::vector<std::vector<double>> rows_of(const at::Tensor& t) {
  std::vector<std::vector<double>> out;
  const at::Tensor c = t.to(at::kDouble).contiguous();
  for (std::int64_t i = 0; i < c.size(0); ++i) out.push_back(to_vector(c[i]));
  return out;
}

// Mean over concepts of the best unit's AUC on the test split (soft unit outputs rank the images).
double shapes_concept_auc(const ShapesDataset& s, const at::Tensor& soft_units) {
  std::vector<std::vector<int>> concepts;
  for (const auto& row : rows_of(s.test_concepts)) concepts.emplace_back(row.begin(), row.end());
  return concept_auc(rows_of(soft_units), concepts);
}

}  // namespace

void run_icbm(nexp::RunContext& ctx) {
  const auto o = ctx.options<IcbmOptions>();
  reject_approxsign(o, ctx);
  const Unit unit{o.activation_spec(), o.mode};
  const auto& d = labelled_data(ctx, true);
  const Inputs in = standardise(d);
  Icbm net(d.train_x.size(1), d.train_x.size(2), o.units, d.num_classes, unit);
  const FitResult r = fit(ctx, net, in.train_x, d.train_y, o);
  const double hard = evaluate(net, in.test_x, d.test_y, o.eval_batch);
  const at::Tensor soft_units = batched(in.test_x, o.eval_batch, [&](const at::Tensor& b) { return net.bottleneck(b, false); });
  const double soft = accuracy(batched(soft_units, o.eval_batch, [&](const at::Tensor& u) { return net.head->forward(u); }), d.test_y);
  const at::Tensor probe = in.train_x.slice(0, 0, std::min(o.probe_size, in.train_x.size(0)));
  const at::Tensor probe_units = batched(probe, o.eval_batch, [&](const at::Tensor& b) { return net.bottleneck(b, false); });
  ctx.summary("test_accuracy", hard);
  ctx.summary("test_accuracy_soft", soft);
  ctx.summary("discretization_gap", soft - hard);
  ctx.summary("binary_share", binary_share(to_vector(probe_units)));
  ctx.summary("grad_ratio", r.grad_ratio);
  ctx.summary("train_loss", r.train_loss);
  if (const auto* s = dynamic_cast<const ShapesDataset*>(&d)) ctx.summary("concept_auc", shapes_concept_auc(*s, soft_units));
}

void run_profile(nexp::RunContext& ctx) {
  const auto o = ctx.options<ProfileOptions>();
  Activation base;
  base.a = o.a, base.b = o.b, base.alpha = o.alpha, base.beta = o.beta, base.width = o.width;
  validate(base);
  using C = nexp::CsvColumn;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "profile.csv",
                      {C::text("activation"), C::real("slope0"), C::real("mass_unit"), C::real("band_mass"),
                       C::real("tail3"), C::real("tail5"), C::real("ratio3"), C::real("ratio5"), C::real("total_mass")});
  for (Kind k : step_kinds()) {
    Activation act = base;
    act.kind = k;
    const Profile p = profile(act);
    const std::string name = kind_name(k);
    csv.row(name, p.slope0, p.mass_unit, p.band_mass, p.tail3, p.tail5, p.ratio3, p.ratio5, p.total_mass);
    ctx.log().info("{:>16}: h'(0) {:.4f}, mass |x|<1 {:.4f}, 90%-band mass {:.4f}, h'(5)/h'(0) {:.3g}, "
                   "h'(5)/s'(5) {:.3g}, total {:.6f}", name, p.slope0, p.mass_unit, p.band_mass, p.tail5, p.ratio5,
                   p.total_mass);
    ctx.summary(name + "_band_mass", p.band_mass);
    if (k == Kind::Htaf) ctx.summary("htaf_ratio5", p.ratio5), ctx.summary("htaf_total_mass", p.total_mass);
  }
  // HTAF's band mass over a range of core sharpness a (the slope-matched comparison holds for any a).
  std::vector<double> masses;
  for (double a : {0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0}) {
    Activation act = base;
    act.a = a;
    masses.push_back(profile(act).band_mass);
  }
  ctx.summary("htaf_band_mass_min", *std::min_element(masses.begin(), masses.end()));
  ctx.summary("htaf_band_mass_max", *std::max_element(masses.begin(), masses.end()));
}

}  // namespace htaf
