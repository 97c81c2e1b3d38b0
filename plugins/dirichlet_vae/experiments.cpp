#include "experiments.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ATen/CPUGeneratorImpl.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>

#include "dirichlet.hpp"
#include "plot.hpp"

namespace dirichlet_vae {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------------
// Resolving a config against the data

// The model of a method's options on the data: K and alpha0 from the options or the data set, the
// decoder variance by its mode, and the architecture (defaults for threshold, which trains nothing).
ModelOptions model_options(const SimplexOptions& simplex, const VarianceOptions& variance,
                           const ArchitectureOptions& architecture, const MixtureData& data,
                           const std::string& method) {
  ModelOptions o;
  static_cast<ArchitectureOptions&>(o) = architecture;
  if (simplex.K) {
    o.K = *simplex.K;
  } else if (data.K > 0) {
    o.K = data.K;
  } else {
    throw nexp::ConfigError(fmt::format("{}: params.K is not set and the data set {} does not know its number of "
                                        "endmembers; give the number of simplex vertices, e.g. params.K=8",
                                        method, data.name));
  }
  o.alpha0 = simplex.alpha0.value_or(data.alpha0 > 0 ? data.alpha0 : 1.0);
  switch (variance.sigma2_mode) {
    case Sigma2Mode::Fixed:
      o.sigma2 = variance.sigma2;
      break;
    case Sigma2Mode::Noise:
      if (data.noise_var <= 0)
        throw nexp::ConfigError(fmt::format("{}: sigma2_mode 'noise' takes the decoder variance from the data set's "
                                            "noise, but {} does not know it; use sigma2_mode fixed or learned",
                                            method, data.name));
      o.sigma2 = data.noise_var;
      break;
    case Sigma2Mode::Learned:
      // Start at the collapsed point's optimum tr(C) / d.
      o.learn_sigma2 = true;
      o.sigma2 = (data.x - data.x.mean(0)).pow(2).sum(1).mean().item<double>() / static_cast<double>(data.x.size(1));
      break;
  }
  return o;
}

TrainOptions train_options(const TrainingOptions& training, const std::string& method) {
  if (training.elbo == ElboKind::Exact && training.decoder == DecoderKind::Mlp)
    throw nexp::ConfigError(fmt::format("{}: the exact ELBO needs a linear decoder (linear or archetypal); with "
                                        "decoder: mlp set elbo: mc", method));
  TrainOptions t;
  static_cast<FitOptions&>(t) = training;
  return t;
}

double threshold_sigma2(const ModelOptions& o) { return o.learn_sigma2 ? -1.0 : o.sigma2; }

// beta from params.beta or params.beta_ratio (exactly one).
double resolve_beta(const BetaOptions& b, double beta_c, const std::string& method) {
  if (b.beta.has_value() == b.beta_ratio.has_value())
    throw nexp::ConfigError(fmt::format("{}: give exactly one of params.beta (absolute) and params.beta_ratio "
                                        "(beta / beta_c); found {}", method, b.beta ? "both" : "neither"));
  return b.beta ? *b.beta : *b.beta_ratio * beta_c;
}

at::Generator seeded(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

std::optional<UnmixingScore> unmixing_score(const MixtureData& data, const Evaluation& ev) {
  if (!data.has_truth() || !ev.endmembers.defined() || ev.endmembers.size(0) != data.K || data.K > 8) return std::nullopt;
  return score_unmixing(ev.endmembers, ev.means, data.endmembers, data.abundances);
}

json threshold_json(const ThresholdReport& t) {
  return {{"K", t.K},           {"alpha0", t.alpha0},       {"sigma2", t.sigma2},     {"lambda_max", t.lambda_max},
          {"trigamma", t.trigamma}, {"kappa", t.kappa}, {"gaussian_beta_c", t.gaussian}, {"beta_c", t.beta_c},
          {"collapsed_elbo", t.collapsed_elbo}, {"spectrum", t.spectrum}};
}

void write_json(const std::filesystem::path& file, const json& j) { std::ofstream(file) << j.dump(2) << "\n"; }

// Rows of a square image each (MNIST archetypes) as one binary PGM strip, clipped to [0, 1].
void write_image_strip(const std::filesystem::path& file, const at::Tensor& rows) {
  const std::int64_t d = rows.size(1), side = static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(d))));
  if (side * side != d) return;
  const std::int64_t K = rows.size(0), gap = 2, width = K * (side + gap) - gap;
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width * side), 255);
  const at::Tensor img = rows.clamp(0, 1).contiguous();
  const auto a = img.accessor<double, 2>();
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t r = 0; r < side; ++r)
      for (std::int64_t c = 0; c < side; ++c)
        pixels[static_cast<std::size_t>(r * width + k * (side + gap) + c)] =
            static_cast<unsigned char>(std::lround(255.0 * (1.0 - a[k][r * side + c])));
  std::ofstream out(file, std::ios::binary);
  out << "P5\n" << width << " " << side << "\n255\n";
  out.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
}

// Per-ratio means over seeds.
struct RatioRow {
  double ratio = 0, beta = 0, kl = 0, kl_sd = 0, active = 0, recon_mse = 0, sad = NAN, abundance_rmse = NAN;
  std::int64_t predicted_active = 0;
};

std::vector<RatioRow> by_ratio(const std::vector<Trial>& trials, const std::vector<double>& ratios) {
  std::vector<RatioRow> rows;
  for (double r : ratios) {
    RatioRow row;
    row.ratio = r;
    std::vector<const Trial*> mine;
    for (const auto& t : trials)
      if (t.ratio == r) mine.push_back(&t);
    std::vector<double> kl, active, recon, sad, abundance;
    for (const Trial* t : mine) {
      row.beta = t->beta;
      row.predicted_active = t->predicted_active;
      kl.push_back(t->eval.kl);
      active.push_back(static_cast<double>(t->eval.active_dims));
      recon.push_back(t->eval.recon_mse);
      if (t->unmixing) sad.push_back(t->unmixing->sad), abundance.push_back(t->unmixing->abundance_rmse);
    }
    using nexp::stats::mean;
    row.kl = mean(kl), row.kl_sd = nexp::stats::stddev(kl);  // sample sd (divisor n - 1)
    row.active = mean(active), row.recon_mse = mean(recon);
    if (!sad.empty()) row.sad = mean(sad), row.abundance_rmse = mean(abundance);
    rows.push_back(row);
  }
  return rows;
}

// elbo_gain: ELBO minus the collapsed point's; > 0 means collapse is not the better of the two. sad and
// abundance_rmse are empty without ground-truth endmembers.
std::vector<nexp::CsvColumn> trial_columns(std::vector<nexp::CsvColumn> prefix) {
  using C = nexp::CsvColumn;
  for (auto c : {C::real("ratio"), C::real("beta"), C::integer("seed"), C::real("kl"), C::real("elbo_gain"),
                 C::integer("active_dims"), C::integer("predicted_active"), C::real("recon_mse"), C::real("sigma2"),
                 C::real("sad"), C::real("abundance_rmse"), C::real("seconds")})
    prefix.push_back(c);
  return prefix;
}

void write_trials_csv(nexp::CsvWriter& out, const std::vector<nexp::CsvCell>& prefix, const std::vector<Trial>& trials,
                      const ThresholdReport& threshold) {
  for (const auto& t : trials) {
    std::vector<nexp::CsvCell> row = prefix;
    for (nexp::CsvCell c : {nexp::CsvCell(t.ratio), nexp::CsvCell(t.beta), nexp::CsvCell(t.seed),
                            nexp::CsvCell(t.eval.kl), nexp::CsvCell(t.eval.elbo - threshold.collapsed_elbo),
                            nexp::CsvCell(t.eval.active_dims), nexp::CsvCell(t.predicted_active),
                            nexp::CsvCell(t.eval.recon_mse), nexp::CsvCell(t.eval.sigma2),
                            t.unmixing ? nexp::CsvCell(t.unmixing->sad) : nexp::CsvCell(),
                            t.unmixing ? nexp::CsvCell(t.unmixing->abundance_rmse) : nexp::CsvCell(),
                            nexp::CsvCell(t.seconds)})
      row.push_back(c);
    out.row(row);
  }
}

std::vector<double> sorted_unique(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

OnsetPlan onset_plan(const GridOptions& grid, double active_tol, std::uint64_t seed) {
  OnsetPlan plan;
  static_cast<GridOptions&>(plan) = grid;
  plan.base_seed = seed;
  plan.active_tol = active_tol;
  return plan;
}

std::int64_t planned_models(const OnsetPlan& plan) {
  const auto ratios = static_cast<std::int64_t>(sorted_unique(plan.ratios).size());
  return (ratios + plan.refine_rounds * plan.refine_points) * plan.seeds;
}

json onset_json(const Onset& o) {
  return {{"found", o.found}, {"lower", o.lower}, {"upper", o.upper}, {"estimate", o.estimate}};
}

std::string describe_onset(const Onset& o) {
  if (!o.found) return "no onset inside the grid";
  return fmt::format("onset at beta/beta_c = {:.3f} (collapsed from {:.3f}, not at {:.3f})", o.estimate, o.upper, o.lower);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Shared pieces

ThresholdReport threshold_of(const at::Tensor& x, std::int64_t K, double alpha0, double sigma2) {
  ThresholdReport t;
  t.K = K;
  t.alpha0 = alpha0;
  t.spectrum = covariance_spectrum(x);
  t.lambda_max = t.spectrum.front();
  const double trace = std::accumulate(t.spectrum.begin(), t.spectrum.end(), 0.0);
  t.sigma2 = sigma2 > 0 ? sigma2 : trace / static_cast<double>(x.size(1));
  t.trigamma = trigamma(alpha0);
  t.kappa = curvature_factor(alpha0, K);
  t.gaussian = t.lambda_max / t.sigma2;
  t.beta_c = critical_beta(t.lambda_max, t.sigma2, alpha0, K);
  // At the collapsed point KL = 0 and E_q ||x - mu||^2 = ||x - mean||^2, whose average is tr(C).
  const double d = static_cast<double>(x.size(1));
  t.collapsed_elbo = -(0.5 * trace / t.sigma2 + 0.5 * d * std::log(2 * 3.14159265358979323846 * t.sigma2));
  return t;
}

std::vector<Trial> scan(const MixtureData& data, const ModelOptions& model, const TrainOptions& train,
                        const ThresholdReport& threshold, const std::vector<double>& ratios, std::int64_t seeds,
                        std::uint64_t base_seed, double active_tol, const ScanHooks& hooks) {
  std::vector<Trial> trials;
  for (std::int64_t s = 0; s < seeds; ++s)
    for (double r : ratios) {
      Trial t;
      t.ratio = r;
      t.beta = r * threshold.beta_c;
      t.seed = static_cast<std::int64_t>(base_seed * 1000 + static_cast<std::uint64_t>(s));
      t.predicted_active = predicted_active(threshold.spectrum, r, model.K);
      trials.push_back(t);
    }
  // Trials train together as replicas of one model, in chunks that keep the largest activation
  // ([R, N, max(hidden, d, samples * d)] doubles) near 10^7 elements.
  const std::int64_t n = data.x.size(0), d = data.x.size(1);
  const std::int64_t width = std::max({model.hidden, model.decoder_hidden, d * (train.elbo == ElboKind::MonteCarlo ? train.mc_samples : 1)});
  const std::size_t chunk = static_cast<std::size_t>(std::max<std::int64_t>(1, 10'000'000 / (n * width)));
  for (std::size_t begin = 0; begin < trials.size(); begin += chunk) {
    const std::size_t end = std::min(trials.size(), begin + chunk);
    const auto start = std::chrono::steady_clock::now();
    std::vector<at::Generator> inits;
    TrainOptions options = train;
    options.betas.clear();
    for (std::size_t i = begin; i < end; ++i) {
      inits.push_back(seeded(static_cast<std::uint64_t>(trials[i].seed)));
      options.betas.push_back(trials[i].beta);
    }
    DirichletVAE vae(model, data.x, inits);
    at::Generator gen = seeded(base_seed * 7919 + begin);
    Trainer trainer(vae, data.x, options, gen);
    while (!trainer.finished()) {
      trainer.step();
      if (hooks.stop && trainer.steps_done() % 100 == 0 && hooks.stop()) return {};
    }
    const auto evals = evaluate(vae, data.x, options.betas, active_tol, options.elbo, options.mc_samples, gen);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (std::size_t i = begin; i < end; ++i) {
      trials[i].eval = evals[i - begin];
      trials[i].unmixing = unmixing_score(data, trials[i].eval);
      trials[i].seconds = seconds / static_cast<double>(end - begin);
    }
    if (hooks.progress) hooks.progress->advance(static_cast<std::int64_t>(end - begin));
  }
  return trials;
}

std::vector<double> mean_kl_by_ratio(const std::vector<Trial>& trials, const std::vector<double>& ratios) {
  std::vector<double> out;
  for (const auto& row : by_ratio(trials, ratios)) out.push_back(row.kl);
  return out;
}

Onset empirical_onset(const std::vector<double>& ratios, const std::vector<double>& mean_kl, double kl_tol) {
  Onset o;
  const std::size_t n = ratios.size();
  std::size_t first = n;  // start of the collapsed tail
  while (first > 0 && mean_kl[first - 1] < kl_tol) --first;
  if (first == n || first == 0) return o;
  o.found = true;
  o.lower = ratios[first - 1];
  o.upper = ratios[first];
  o.estimate = 0.5 * (o.lower + o.upper);
  // Least-squares line through the last (up to three) uncollapsed points; its zero is the onset.
  const std::size_t begin = first >= 3 ? first - 3 : 0;
  if (first - begin >= 2) {
    const auto line = nexp::stats::fit_line({ratios.begin() + begin, ratios.begin() + first},
                                            {mean_kl.begin() + begin, mean_kl.begin() + first});
    if (line.slope < 0) o.estimate = std::clamp(-line.intercept / line.slope, o.lower, o.upper);
  }
  return o;
}

std::vector<double> best_elbo_gain_by_ratio(const std::vector<Trial>& trials, const std::vector<double>& ratios,
                                            double collapsed_elbo) {
  std::vector<double> out;
  for (double r : ratios) {
    double best = -INFINITY;
    for (const auto& t : trials)
      if (t.ratio == r) best = std::max(best, t.eval.elbo - collapsed_elbo);
    out.push_back(best);
  }
  return out;
}

OnsetScan scan_to_onset(const MixtureData& data, const ModelOptions& model, const TrainOptions& train,
                        const ThresholdReport& threshold, const OnsetPlan& plan, const ScanHooks& hooks) {
  OnsetScan out;
  out.ratios = sorted_unique(plan.ratios);
  out.trials = scan(data, model, train, threshold, out.ratios, plan.seeds, plan.base_seed, plan.active_tol, hooks);
  if (out.trials.empty()) return out;  // stopped
  out.onset = empirical_onset(out.ratios, mean_kl_by_ratio(out.trials, out.ratios), plan.kl_tol);
  for (std::int64_t round = 0; round < plan.refine_rounds; ++round) {
    if (!out.onset.found) {
      if (hooks.progress) hooks.progress->advance(plan.refine_points * plan.seeds);
      continue;
    }
    std::vector<double> ratios = out.ratios;
    std::vector<double> inside;
    for (std::int64_t i = 1; i <= plan.refine_points; ++i)
      inside.push_back(out.onset.lower + (out.onset.upper - out.onset.lower) * static_cast<double>(i) /
                                             static_cast<double>(plan.refine_points + 1));
    const auto more = scan(data, model, train, threshold, inside, plan.seeds, plan.base_seed, plan.active_tol, hooks);
    if (more.empty()) return {};  // stopped
    out.trials.insert(out.trials.end(), more.begin(), more.end());
    ratios.insert(ratios.end(), inside.begin(), inside.end());
    out.ratios = sorted_unique(ratios);
    out.onset = empirical_onset(out.ratios, mean_kl_by_ratio(out.trials, out.ratios), plan.kl_tol);
  }
  std::stable_sort(out.trials.begin(), out.trials.end(), [](const Trial& a, const Trial& b) {
    return a.seed != b.seed ? a.seed < b.seed : a.ratio < b.ratio;
  });
  out.elbo_onset = empirical_onset(out.ratios, best_elbo_gain_by_ratio(out.trials, out.ratios, threshold.collapsed_elbo),
                                   plan.gain_tol);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// dirichlet_vae.threshold

void run_threshold(nexp::RunContext& ctx) {
  const auto p = ctx.options<ThresholdMethodOptions>();
  MixtureData storage;
  const MixtureData& data = mixture_view(ctx, storage);
  const ModelOptions o = model_options(p, p, {}, data, ctx.method_name());
  const ThresholdReport t = threshold_of(data.x, o.K, o.alpha0, threshold_sigma2(o));
  ctx.log().info("{}: lambda_max = {:.6g}, sigma^2 = {:.6g}, psi1(alpha0 = {}) = {:.6g}, kappa(K = {}) = {:.6g}",
                 data.name, t.lambda_max, t.sigma2, t.alpha0, t.trigamma, t.K, t.kappa);
  ctx.log().info("beta_c = {:.6g} (Gaussian linear-VAE threshold lambda_max / sigma^2 = {:.6g})", t.beta_c, t.gaussian);
  ctx.summary("beta_c", t.beta_c);
  ctx.summary("lambda_max", t.lambda_max);
  ctx.summary("sigma2", t.sigma2);
  ctx.summary("trigamma", t.trigamma);
  ctx.summary("kappa", t.kappa);
  ctx.summary("gaussian_beta_c", t.gaussian);

  json j = threshold_json(t);
  if (p.beta || p.beta_ratio) {
    const double beta = resolve_beta(p, t.beta_c, ctx.method_name());
    const std::int64_t active = predicted_active(t.spectrum, beta / t.beta_c, o.K);
    ctx.log().info("at beta = {:.6g} (beta / beta_c = {:.4g}) the local analysis predicts {} active simplex "
                   "direction(s) of {}", beta, beta / t.beta_c, active, o.K - 1);
    ctx.summary("beta", beta);
    ctx.summary("beta_ratio", beta / t.beta_c);
    ctx.summary("active_dims_predicted", static_cast<double>(active));
    j["beta"] = beta;
    j["active_dims_predicted"] = active;
  }
  // Where each further simplex direction switches on: beta / beta_c = lambda_i / lambda_max.
  json steps = json::array();
  for (std::int64_t i = 0; i < std::min<std::int64_t>(o.K - 1, static_cast<std::int64_t>(t.spectrum.size())); ++i)
    steps.push_back({{"active_dims", i + 1}, {"below_beta_ratio", t.spectrum[static_cast<std::size_t>(i)] / t.lambda_max}});
  j["active_dims_below"] = steps;
  write_json(ctx.artifacts_dir() / "threshold.json", j);
}

// ---------------------------------------------------------------------------------------------------
// dirichlet_vae.train

void run_train(nexp::RunContext& ctx) {
  const auto p = ctx.options<TrainMethodOptions>();
  MixtureData storage;
  const MixtureData& data = mixture_view(ctx, storage);
  const ModelOptions o = model_options(p, p, p, data, ctx.method_name());
  TrainOptions options = train_options(p, ctx.method_name());
  const ThresholdReport t = threshold_of(data.x, o.K, o.alpha0, threshold_sigma2(o));
  const double beta = resolve_beta(p, t.beta_c, ctx.method_name()), ratio = beta / t.beta_c;
  options.betas = {beta};
  ctx.log().info("{}; beta_c = {:.6g}; training at beta = {:.6g} (beta / beta_c = {:.4g})", data.describe(), t.beta_c,
                 beta, ratio);

  // Core seeded torch's default generator and checkpoints it: the model and the Monte-Carlo ELBO draw
  // from it, so a resumed run continues the same random stream.
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  DirichletVAE vae(o, data.x, {gen});
  Trainer trainer(vae, data.x, options, gen);
  if (auto dir = ctx.checkpoint()) {
    trainer.load(*dir);
    ctx.restore_rng_state();
  }
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t log_every = p.log_every, checkpoint_every = p.checkpoint_every;
  auto bar = ctx.progress(options.steps, "train");
  bar.set(trainer.steps_done());
  while (!trainer.finished()) {
    const double loss = trainer.step();
    bar.advance();
    const std::int64_t step = trainer.steps_done();
    if (step % log_every == 0 || trainer.finished()) {
      const Evaluation ev = evaluate(vae, data.x, options.betas, p.active_tol, options.elbo,
                                     options.mc_samples, seeded(ctx.seed() + static_cast<std::uint64_t>(step)))[0];
      ctx.log_metrics(step, {{"loss", loss}, {"kl", ev.kl}, {"active_dims", static_cast<double>(ev.active_dims)}});
      bar.note(fmt::format("kl {:.3g}", ev.kl));
    }
    if (step % checkpoint_every == 0 && !trainer.finished()) {
      ctx.save_checkpoint([&](const std::filesystem::path& dir) { trainer.save(dir); });
      if (ctx.stop_requested()) return;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // A fixed generator for the evaluation, so that a resumed run evaluates exactly like a fresh one.
  const Evaluation ev = evaluate(vae, data.x, options.betas, p.active_tol, options.elbo,
                                 options.mc_samples, seeded(ctx.seed()))[0];
  const std::int64_t predicted = predicted_active(t.spectrum, ratio, o.K);
  ctx.log().info("KL = {:.4g}, active simplex directions {} (predicted {}), reconstruction MSE {:.4g}", ev.kl,
                 ev.active_dims, predicted, ev.recon_mse);
  ctx.summary("kl", ev.kl);
  ctx.summary("active_dims", static_cast<double>(ev.active_dims));
  ctx.summary("active_dims_predicted", static_cast<double>(predicted));
  ctx.summary("recon_mse", ev.recon_mse);
  ctx.summary("elbo", ev.elbo);
  ctx.summary("sigma2", ev.sigma2);
  ctx.summary("beta", beta);
  ctx.summary("beta_c", t.beta_c);
  ctx.summary("beta_ratio", ratio);
  ctx.summary("seconds", seconds);

  json j = {{"threshold", threshold_json(t)}, {"beta", beta}, {"beta_ratio", ratio}, {"kl", ev.kl},
            {"active_dims", ev.active_dims}, {"active_dims_predicted", predicted}, {"recon_mse", ev.recon_mse},
            {"elbo", ev.elbo}, {"sigma2", ev.sigma2}, {"latent_spectrum", ev.latent_spectrum}};
  if (const auto score = unmixing_score(data, ev)) {
    ctx.log().info("spectral angle distance {:.4g} rad, abundance RMSE {:.4g}", score->sad, score->abundance_rmse);
    ctx.summary("sad", score->sad);
    ctx.summary("abundance_rmse", score->abundance_rmse);
    j["sad"] = score->sad;
    j["abundance_rmse"] = score->abundance_rmse;
    j["match"] = score->match;
  }
  write_json(ctx.artifacts_dir() / "result.json", j);
  if (ev.endmembers.defined()) write_image_strip(ctx.artifacts_dir() / "endmembers.pgm", ev.endmembers);
}

// ---------------------------------------------------------------------------------------------------
// dirichlet_vae.scan

void run_scan(nexp::RunContext& ctx) {
  const auto p = ctx.options<ScanMethodOptions>();
  MixtureData storage;
  const MixtureData& data = mixture_view(ctx, storage);
  const ModelOptions o = model_options(p, p, p, data, ctx.method_name());
  const TrainOptions options = train_options(p, ctx.method_name());
  const ThresholdReport t = threshold_of(data.x, o.K, o.alpha0, threshold_sigma2(o));
  const OnsetPlan plan = onset_plan(p, p.active_tol, ctx.seed());
  ctx.log().info("{}; beta_c = {:.6g} (lambda_max {:.4g}, sigma^2 {:.4g}, kappa {:.4g}); {} ratios x {} seeds",
                 data.describe(), t.beta_c, t.lambda_max, t.sigma2, t.kappa, plan.ratios.size(), plan.seeds);

  auto bar = ctx.progress(planned_models(plan), "scan");
  const OnsetScan result = scan_to_onset(data, o, options, t, plan, {&bar, [&] { return ctx.stop_requested(); }});
  if (result.trials.empty()) return;  // interrupted
  const auto& trials = result.trials;
  const auto& ratios = result.ratios;
  const Onset onset = result.onset;
  const auto rows = by_ratio(trials, ratios);
  std::vector<double> kl;
  for (const auto& r : rows) kl.push_back(r.kl);
  ctx.log().info("training ends collapsed: {}", describe_onset(onset));
  ctx.log().info("collapse is the best solution found: {}", describe_onset(result.elbo_onset));

  using C = nexp::CsvColumn;
  nexp::CsvWriter trials_csv(ctx.artifacts_dir() / "trials.csv", trial_columns({}));
  write_trials_csv(trials_csv, {}, trials, t);
  nexp::CsvWriter table(ctx.artifacts_dir() / "by_ratio.csv",
                        {C::real("ratio"), C::real("beta"), C::real("kl_mean"), C::real("kl_sd"),
                         C::real("active_dims_mean"), C::integer("active_dims_predicted"), C::real("recon_mse"),
                         C::real("sad"), C::real("abundance_rmse")});
  Series kl_series{"KL (mean over seeds)", {}, {}}, active{"active, measured", {}, {}}, predicted{"active, predicted", {}, {}};
  Series sad{"SAD (rad)", {}, {}}, recon{"reconstruction MSE", {}, {}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    table.row(r.ratio, r.beta, r.kl, r.kl_sd, r.active, r.predicted_active, r.recon_mse, r.sad, r.abundance_rmse);
    std::map<std::string, double> line = {{"beta_ratio", r.ratio}, {"kl", r.kl}, {"active_dims", r.active},
                                          {"active_dims_predicted", static_cast<double>(r.predicted_active)},
                                          {"recon_mse", r.recon_mse}};
    if (std::isfinite(r.sad)) line["sad"] = r.sad, line["abundance_rmse"] = r.abundance_rmse;
    ctx.log_metrics(static_cast<std::int64_t>(i), line);
    kl_series.x.push_back(r.ratio), kl_series.y.push_back(r.kl);
    active.x.push_back(r.ratio), active.y.push_back(r.active);
    predicted.x.push_back(r.ratio), predicted.y.push_back(static_cast<double>(r.predicted_active));
    sad.x.push_back(r.ratio), sad.y.push_back(r.sad);
    recon.x.push_back(r.ratio), recon.y.push_back(r.recon_mse);
    ctx.log().info("beta/beta_c {:5.3f}: KL {:.3e}, active {:.2f} (predicted {}), recon MSE {:.4g}{}", r.ratio, r.kl,
                   r.active, r.predicted_active, r.recon_mse,
                   std::isfinite(r.sad) ? fmt::format(", SAD {:.4f} rad, abundance RMSE {:.4f}", r.sad, r.abundance_rmse) : "");
  }
  const std::string where = data.name;
  write_svg_plot(ctx.artifacts_dir() / "kl_vs_ratio.svg",
                 {fmt::format("final KL against beta / beta_c ({})", where), "beta / beta_c", "KL(q || p), nats",
                  true, 1e-8, {1.0}, "beta_c"},
                 {kl_series});
  write_svg_plot(ctx.artifacts_dir() / "active_vs_ratio.svg",
                 {fmt::format("active simplex directions ({})", where), "beta / beta_c", "directions", false, 0, {1.0}, "beta_c"},
                 {active, predicted});
  write_svg_plot(ctx.artifacts_dir() / "recon_vs_ratio.svg",
                 {fmt::format("reconstruction error ({})", where), "beta / beta_c", "MSE", false, 0, {1.0}, "beta_c"}, {recon});
  if (data.has_truth() && std::isfinite(rows.front().sad))
    write_svg_plot(ctx.artifacts_dir() / "sad_vs_ratio.svg",
                   {fmt::format("endmember spectral angle distance ({})", where), "beta / beta_c", "mean SAD, radians",
                    false, 0, {1.0}, "beta_c"},
                   {sad});
  // The decoder's endmembers (archetypes) of the first seed at each ratio, as image strips when square.
  for (const auto& tr : trials)
    if (tr.seed == trials.front().seed && tr.eval.endmembers.defined())
      write_image_strip(ctx.artifacts_dir() / fmt::format("endmembers_ratio_{:.3f}.pgm", tr.ratio), tr.eval.endmembers);

  json j = {{"threshold", threshold_json(t)}, {"ratios", ratios}, {"mean_kl", kl},
            {"best_elbo_gain", best_elbo_gain_by_ratio(trials, ratios, t.collapsed_elbo)},
            {"onset", onset_json(onset)}, {"elbo_onset", onset_json(result.elbo_onset)}};
  write_json(ctx.artifacts_dir() / "scan.json", j);

  ctx.summary("beta_c", t.beta_c);
  ctx.summary("lambda_max", t.lambda_max);
  ctx.summary("kappa", t.kappa);
  if (onset.found) {
    ctx.summary("onset_ratio", onset.estimate);
    ctx.summary("onset_lower", onset.lower);
    ctx.summary("onset_upper", onset.upper);
    ctx.summary("onset_error", std::abs(onset.estimate - 1.0));
  }
  auto best = std::min_element(rows.begin(), rows.end(), [](const RatioRow& a, const RatioRow& b) {
    return std::isfinite(a.sad) && (!std::isfinite(b.sad) || a.sad < b.sad);
  });
  if (best != rows.end() && std::isfinite(best->sad)) {
    ctx.summary("best_sad", best->sad);
    ctx.summary("best_sad_ratio", best->ratio);
    ctx.summary("abundance_rmse", best->abundance_rmse);
  }
}

// ---------------------------------------------------------------------------------------------------
// dirichlet_vae.collapse_sweep

void run_collapse_sweep(nexp::RunContext& ctx) {
  const auto p = ctx.options<SweepMethodOptions>();
  const TrainOptions options = train_options(p, ctx.method_name());
  OnsetPlan plan = onset_plan(p, p.active_tol, ctx.seed());

  using C = nexp::CsvColumn;
  const std::vector<C> setting = {C::real("alpha0"), C::integer("K"), C::real("init_scale")};
  nexp::CsvWriter trials_csv(ctx.artifacts_dir() / "trials.csv", trial_columns(setting));
  // onset: training ends collapsed from here on; elbo_onset: from here on collapse is the best solution
  // training found (they differ where a non-collapsed branch outlives its advantage). Empty: not found.
  std::vector<C> onset_columns = setting;
  for (const char* name : {"lambda_max", "sigma2", "trigamma", "kappa", "gaussian_beta_c", "beta_c", "onset_lower",
                           "onset_upper", "onset", "onset_error", "elbo_onset_lower", "elbo_onset_upper"})
    onset_columns.push_back(C::real(name));
  nexp::CsvWriter onsets_csv(ctx.artifacts_dir() / "onsets.csv", onset_columns);
  std::vector<Series> curves;
  std::vector<double> errors;
  json settings = json::array();
  const auto settings_count = static_cast<std::int64_t>(p.alpha0s.size() * p.Ks.size() * p.init_scales.size());
  auto bar = ctx.progress(settings_count * planned_models(plan), "sweep");
  std::int64_t index = 0;
  for (double alpha0 : p.alpha0s)
    for (std::int64_t K : p.Ks) {
      // One data set per (alpha0, K); the model's prior and K are the data's.
      const auto data_seed = static_cast<std::uint64_t>(p.data_seed + index);
      MixtureData data = synthetic_mixture(p.n, p.d, K, alpha0, p.noise, seeded(data_seed));
      data.name = fmt::format("synthetic d={} K={} alpha0={} noise={}", p.d, K, alpha0, p.noise);
      ModelOptions o = model_options({}, p, p, data, ctx.method_name());
      const ThresholdReport t = threshold_of(data.x, o.K, o.alpha0, threshold_sigma2(o));
      for (double init : p.init_scales) {
        o.init_scale = init;
        plan.base_seed = ctx.seed() + static_cast<std::uint64_t>(index);
        const OnsetScan result = scan_to_onset(data, o, options, t, plan, {&bar, [&] { return ctx.stop_requested(); }});
        if (result.trials.empty()) return;  // interrupted
        const auto& trials = result.trials;
        const auto& ratios = result.ratios;
        const auto kl = mean_kl_by_ratio(trials, ratios);
        const Onset& onset = result.onset;
        ctx.log().info("alpha0 {} K {} init {}: beta_c = {:.5g} (kappa {:.4f}); training ends collapsed: {}; collapse "
                       "is the best solution found: {}", alpha0, K, init, t.beta_c, t.kappa, describe_onset(onset),
                       describe_onset(result.elbo_onset));
        write_trials_csv(trials_csv, {alpha0, K, init}, trials, t);
        const double error = onset.found ? std::abs(onset.estimate - 1.0) : NAN;
        if (onset.found) errors.push_back(error);
        const Onset& by_elbo = result.elbo_onset;
        auto found = [](const Onset& o, double v) { return o.found ? std::optional<double>(v) : std::nullopt; };
        onsets_csv.row(alpha0, K, init, t.lambda_max, t.sigma2, t.trigamma, t.kappa, t.gaussian, t.beta_c,
                       found(onset, onset.lower), found(onset, onset.upper), found(onset, onset.estimate),
                       found(onset, error), found(by_elbo, by_elbo.lower), found(by_elbo, by_elbo.upper));
        settings.push_back({{"alpha0", alpha0}, {"K", K}, {"init_scale", init}, {"threshold", threshold_json(t)},
                            {"ratios", ratios}, {"mean_kl", kl},
                            {"best_elbo_gain", best_elbo_gain_by_ratio(trials, ratios, t.collapsed_elbo)},
                            {"onset", onset_json(onset)}, {"elbo_onset", onset_json(by_elbo)}});
        // One colour per (alpha0, K); dashed: the start next to the collapsed point.
        curves.push_back({fmt::format("a0={} K={} init={}", alpha0, K, init), ratios, kl, init < 0.5,
                          static_cast<int>(index)});
        ctx.log_metrics(static_cast<std::int64_t>(curves.size()) - 1,
                        {{"beta_c", t.beta_c}, {"onset_ratio", onset.found ? onset.estimate : NAN}});
        if (ctx.stop_requested()) return;
      }
      ++index;
    }
  write_json(ctx.artifacts_dir() / "sweep.json", {{"settings", settings}});
  write_svg_plot(ctx.artifacts_dir() / "kl_vs_ratio.svg",
                 {fmt::format("final KL against beta / beta_c (synthetic, d={}, N={})", p.d, p.n), "beta / beta_c",
                  "KL(q || p), nats (mean over seeds)", true, 1e-8, {1.0}, "beta_c"},
                 curves);
  const double found = static_cast<double>(errors.size());
  ctx.summary("settings_with_onset", found);
  if (!errors.empty()) {
    ctx.summary("mean_onset_error", nexp::stats::mean(errors));
    ctx.summary("max_onset_error", *std::max_element(errors.begin(), errors.end()));
    ctx.summary("onset_within_5pct",
                static_cast<double>(std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 0.05; })) / found);
  }
}

}  // namespace dirichlet_vae
