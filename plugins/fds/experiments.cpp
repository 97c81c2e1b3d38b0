#include "experiments.hpp"

#include <fmt/format.h>
#include <nexp/idx.hpp>
#include <nexp/table.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "metrics.hpp"

namespace fds {

namespace {

const std::vector<std::string> kSamplers = {"euler", "heun", "dpmpp_2m", "edm", "sde", "fds", "fds_churn"};
// The frontier also knows sde_endpoint: the sde sampler at strength 1 (the reverse SDE), never tuned.
const std::vector<std::string> kFrontierSamplers = {"euler", "heun",      "dpmpp_2m",    "edm",
                                                    "sde",   "sde_endpoint", "fds", "fds_churn"};
const std::vector<std::string> kDrivers = {"gaussian", "ou", "telegraph", "lorenz"};
const std::vector<std::string> kKinds = {"ring8", "grid25", "gmm"};
const std::vector<std::string> kDenoisers = {"exact", "exact_biased", "mlp_edm", "mlp_vp"};
constexpr std::uint64_t kTuneIndex = 1000;  // the held-out seed on which strengths are tuned

SamplerKind sampler_kind(const std::string& s) {
  static const std::map<std::string, SamplerKind> names = {
      {"euler", SamplerKind::Euler}, {"heun", SamplerKind::Heun},         {"dpmpp_2m", SamplerKind::DpmSolver2M},
      {"edm", SamplerKind::EdmChurn}, {"sde", SamplerKind::Sde},           {"fds", SamplerKind::Fds},
      {"sde_endpoint", SamplerKind::Sde},
      {"fds_churn", SamplerKind::FdsChurn}};
  return names.at(s);
}

DriverKind driver_kind(const std::string& s) {
  static const std::map<std::string, DriverKind> names = {{"gaussian", DriverKind::Gaussian},
                                                          {"ou", DriverKind::Ou},
                                                          {"telegraph", DriverKind::Telegraph},
                                                          {"lorenz", DriverKind::Lorenz}};
  return names.at(s);
}

// A list option whose every entry must be one of `allowed`: refused before any work, naming the key.
void check_list(const std::vector<std::string>& values, const std::vector<std::string>& allowed, const std::string& key) {
  if (values.empty()) throw nexp::ConfigError(fmt::format("params.{}: the list is empty; give at least one of: {}", key, fmt::join(allowed, ", ")));
  for (const auto& v : values)
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      throw nexp::ConfigError(fmt::format("params.{}: '{}' is not known; expected one of: {}. Fix the config or the "
                                          "override.", key, v, fmt::join(allowed, ", ")));
}

void check_mixture(const MixtureOptions& o, const std::string& where) {
  if (o.kind != "gmm" && o.dim != 2)
    throw nexp::ConfigError(fmt::format("{}.dim = {}: the {} mixture is 2-D; expected dim: 2 (or kind: gmm for {} "
                                        "dimensions)", where, o.dim, o.kind, o.dim));
}

DriverParams driver_params(const std::string& driver, double rate, double amplitude, double dt, bool lorenz_z) {
  DriverParams p;
  p.kind = driver_kind(driver), p.rate = rate, p.amplitude = amplitude, p.dt = dt, p.lorenz_z = lorenz_z;
  return p;
}

// A trained denoiser (mlp_edm, mlp_vp) for `data`, the training data of the data set `label` (a mixture's
// kind, digits, fashion_mnist). Read from <params.load_denoisers>/<label>_<name>.bin when that folder is
// given, else trained (streams (seed, "train_<name>", index)); written to artifacts/denoisers/ under the
// same name when params.save_denoisers.
std::unique_ptr<MlpDenoiser> trained_denoiser(const std::string& name, const std::string& label, const Mat& data,
                                              const SamplingOptions& o, std::uint64_t index, nexp::RunContext& ctx) {
  const auto family = name == "mlp_vp" ? MlpDenoiser::Family::Vp : MlpDenoiser::Family::Edm;
  const std::string file = label + "_" + name + ".bin";
  std::unique_ptr<MlpDenoiser> d;
  if (!o.load_denoisers.empty()) {
    const auto path = std::filesystem::path(o.load_denoisers) / file;
    d = MlpDenoiser::load(path, family, data);
    ctx.log().info("fds: {} loaded from {} ({} x {}, trained {} steps: loss {:.4f})", name, path.string(), d->training().width,
                   d->training().depth, d->training().steps, d->final_loss());
  } else {
    auto rng = ctx.stream("train_" + name, index);
    d = std::make_unique<MlpDenoiser>(family, data, o.training(), rng);
    ctx.log().info("fds: {} trained on {} samples ({} x {}, {} steps): loss {:.4f} over the last 10% of steps, {:.1f} s",
                   name, data.rows(), o.width, o.depth, o.train_steps, d->final_loss(), d->seconds());
  }
  if (o.save_denoisers) {
    const auto dir = ctx.artifacts_dir() / "denoisers";
    std::filesystem::create_directories(dir);
    d->save(dir / file);
  }
  return d;
}

std::unique_ptr<Denoiser> make_denoiser(const std::string& name, const Mixture& m, const std::string& kind,
                                        const SamplingOptions& o, std::uint64_t index, nexp::RunContext& ctx) {
  if (name == "exact") return std::make_unique<MixtureDenoiser>(m);
  if (name == "exact_biased") {
    auto rng = ctx.stream("denoiser_error");
    return std::make_unique<BiasedMixtureDenoiser>(m, o.denoiser_error, rng);
  }
  auto data_rng = ctx.stream("train_data", index);
  return trained_denoiser(name, kind, m.sample(static_cast<std::size_t>(o.train_samples), data_rng), o, index, ctx);
}

// Counts the time spent drawing increments (the driver's cost).
class TimedNoise : public NoiseSource {
 public:
  explicit TimedNoise(std::unique_ptr<NoiseSource> inner) : inner_(std::move(inner)) {}
  void next(Mat& eta) override {
    const auto t0 = std::chrono::steady_clock::now();
    inner_->next(eta);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double seconds = 0;

 private:
  std::unique_ptr<NoiseSource> inner_;
};

// The increments of a run: Gaussian ("noise" stream) unless an fds sampler names a driver ("driver"
// stream; the Lorenz driver's Q from a pilot bank, stream "driver_q", estimated once).
class NoiseFactory {
 public:
  NoiseFactory(const SamplingOptions& o, std::uint64_t seed) : o_(o), seed_(seed) {}
  std::unique_ptr<NoiseSource> make(SamplerKind kind, const std::string& driver, std::size_t slots, std::uint64_t index) {
    const bool driven = kind == SamplerKind::Fds || kind == SamplerKind::FdsChurn;
    if (!driven || driver == "gaussian") return std::make_unique<GaussianNoise>(nexp::Random::stream(seed_, "noise", index));
    const auto p = driver_params(driver, o_.rate, o_.amplitude, o_.driver_dt, o_.lorenz_z);
    if (p.kind == DriverKind::Lorenz && !lorenz_q_) {
      auto pilot = nexp::Random::stream(seed_, "driver_q");
      lorenz_q_ = lorenz_q(p, pilot);
    }
    auto init = nexp::Random::stream(seed_, "driver", index);
    auto d = make_driver(p, slots, init);
    auto q = slot_q(p, *d, lorenz_q_.value_or(std::array<double, 3>{}));
    return std::make_unique<DriverNoise>(std::move(d), std::move(q), o_.driver_steps, o_.driver_dt, init);
  }

 private:
  const SamplingOptions& o_;
  std::uint64_t seed_;
  std::optional<std::array<double, 3>> lorenz_q_;
};

struct Scores {
  double mmd = 0, sliced_w2 = 0, mode_coverage = 0, mode_precision = 0, precision = 0, recall = 0, frechet = 0;
  int nfe = 0;
  double seconds = 0, driver_seconds = 0, sampling_seconds = 0;
};

// One sampling run and its scores. Streams (seed, purpose, index): "z" the starting noise, "noise" the
// Gaussian increments, "driver" the driver's initial state and its own randomness; the same index
// gives every sampler the same starting points (paired comparisons).
class Bench {
 public:
  Bench(const Mixture& m, const Mat& reference, const SamplingOptions& o, std::uint64_t seed)
      : m_(m), o_(o), seed_(seed), ref_(reference.topRows(std::min<Eigen::Index>(reference.rows(), o.eval_samples))),
        bandwidths_(mmd_bandwidths(m.data_sd())), noise_(o, seed) {}

  Scores run(const Denoiser& d, const SamplerConfig& c, const std::string& driver, std::uint64_t index) {
    const auto n = static_cast<Eigen::Index>(o_.samples);
    const int dim = m_.dim();
    auto zr = nexp::Random::stream(seed_, "z", index);
    Mat z(n, dim);
    for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = zr.normal();
    TimedNoise noise(noise_.make(c.kind, driver, static_cast<std::size_t>(z.size()), index));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = sample(c, d, z, &noise);
    const double sampling = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (keep_) last_z_ = z, last_x_ = r.x;
    Scores s = score(r.x, index);
    s.sampling_seconds = sampling;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.nfe = r.nfe, s.driver_seconds = noise.seconds;
    return s;
  }

  Scores score(const Mat& x, std::uint64_t index) const {
    Scores s;
    const Mat head = x.topRows(ref_.rows());
    s.mmd = mmd(head, ref_, bandwidths_);
    auto dirs = nexp::Random::stream(seed_, "sliced_w2", index);
    s.sliced_w2 = sliced_w2(head, ref_, o_.sw_directions, dirs);
    const auto modes = mode_stats(x, m_);
    s.mode_coverage = modes.coverage, s.mode_precision = modes.precision;
    const auto pr = knn_precision_recall(head, ref_);
    s.precision = pr.precision, s.recall = pr.recall;
    s.frechet = frechet(x, ref_);
    return s;
  }

  const Mat& reference() const { return ref_; }
  void keep_samples() { keep_ = true; }
  const Mat& last_z() const { return last_z_; }
  const Mat& last_x() const { return last_x_; }

 private:
  const Mixture& m_;
  const SamplingOptions& o_;
  std::uint64_t seed_;
  Mat ref_;
  std::vector<double> bandwidths_;
  NoiseFactory noise_;
  bool keep_ = false;
  Mat last_z_, last_x_;
};

void write_matrix(const std::filesystem::path& file, const Mat& m) {
  std::vector<nexp::CsvColumn> cols;
  for (Eigen::Index j = 0; j < m.cols(); ++j) cols.push_back(nexp::CsvColumn::real(fmt::format("x{}", j)));
  nexp::CsvWriter out(file, cols);
  out.flush_every_row(false);
  std::vector<nexp::CsvCell> row(static_cast<std::size_t>(m.cols()));
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) row[static_cast<std::size_t>(j)] = m(i, j);
    out.row(row);
  }
}

// One row per component: weight, mean (d), eigenvalues (d), eigenvectors (d x d, column after column).
void write_mixture(const std::filesystem::path& file, const Mixture& m) {
  const int d = m.dim();
  Mat rows(static_cast<Eigen::Index>(m.components.size()), 1 + 2 * d + d * d);
  for (std::size_t k = 0; k < m.components.size(); ++k) {
    const auto& c = m.components[k];
    auto r = rows.row(static_cast<Eigen::Index>(k));
    r(0) = c.weight;
    for (int j = 0; j < d; ++j) r(1 + j) = c.mean(j), r(1 + d + j) = c.lambda(j);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) r(1 + 2 * d + a * d + b) = c.basis(b, a);
  }
  write_matrix(file, rows);
}

SamplerConfig sampler_config(const SamplingOptions& o, const std::string& sampler, int nfe, double strength) {
  SamplerConfig c;
  c.kind = sampler_kind(sampler), c.nfe = nfe, c.strength = strength;
  c.sigma_min = o.sigma_min, c.sigma_max = o.sigma_max, c.rho = o.rho;
  return c;
}

void check_checkpoints(const SamplingOptions& o) {
  if (!o.load_denoisers.empty() && !std::filesystem::is_directory(o.load_denoisers))
    throw nexp::ConfigError(fmt::format("params.load_denoisers = '{}': no such folder; expected the artifacts/denoisers "
                                        "folder of a run made with params.save_denoisers=true",
                                        o.load_denoisers));
}

void check_sampling(const SamplingOptions& o) {
  check_checkpoints(o);
  if (o.sigma_min >= o.sigma_max)
    throw nexp::ConfigError(fmt::format("params.sigma_min = {} must be below params.sigma_max = {}", o.sigma_min, o.sigma_max));
  if (o.eval_samples > o.samples)
    throw nexp::ConfigError(fmt::format("params.eval_samples = {} exceeds params.samples = {}; expected eval_samples <= "
                                        "samples", o.eval_samples, o.samples));
}

}  // namespace

// ------------------------------------------------------------------ options

void MixtureOptions::declare(nexp::Options<MixtureOptions>& o) {
  o.add("kind", &MixtureOptions::kind, "ring8 (8 modes on a circle), grid25 (5 x 5 grid), gmm (random, `dim`-D)")
      .choices(kKinds);
  o.add("dim", &MixtureOptions::dim, "dimension (gmm; ring8 and grid25 are 2-D)").range(1, 256);
  o.add("components", &MixtureOptions::components, "components (gmm)").range(1, 1000);
  o.add("scale", &MixtureOptions::scale, "ring radius, grid half-width, or sd of the gmm means").min(1e-6);
  o.add("sd", &MixtureOptions::sd, "geometric mean of a component's standard deviations").min(1e-6);
  o.add("anisotropy", &MixtureOptions::anisotropy, "largest / smallest standard deviation of a component").min(1);
  o.add("reference", &MixtureOptions::reference, "reference samples drawn from the mixture").range(10, 10000000);
}

MixtureSpec MixtureOptions::spec() const {
  MixtureSpec s;
  s.kind = kind, s.dim = dim, s.components = components, s.scale = scale, s.sd = sd, s.anisotropy = anisotropy;
  return s;
}

std::string MixtureData::describe() const {
  return fmt::format("fds.mixture {}: {} components in {} dims, {} reference samples", kind, mixture.components.size(),
                     mixture.dim(), reference.rows());
}

std::shared_ptr<nexp::Dataset> make_mixture_data(const MixtureOptions& o, nexp::RunContext& ctx) {
  check_mixture(o, "dataset");
  auto d = std::make_shared<MixtureData>();
  auto rng = ctx.stream("mixture");
  d->mixture = make_mixture(o.spec(), rng);
  auto ref = ctx.stream("reference");
  d->reference = d->mixture.sample(static_cast<std::size_t>(o.reference), ref);
  d->kind = o.kind;
  return d;
}

void SamplingOptions::declare(nexp::Options<SamplingOptions>& o) {
  o.add("sigma_min", &SamplingOptions::sigma_min, "smallest positive noise level (EDM: 0.002)").min(1e-6);
  o.add("sigma_max", &SamplingOptions::sigma_max, "largest noise level (EDM: 80)").min(1e-3);
  o.add("rho", &SamplingOptions::rho, "schedule exponent (EDM eq. 5: 7)").range(1, 20);
  o.add("denoiser", &SamplingOptions::denoiser,
        "exact posterior mean, exact_biased (controlled error), mlp_edm (EDM-preconditioned MLP), mlp_vp "
        "(VP eps-prediction MLP, DDPM linear betas); the MLPs are trained in the run")
      .choices(kDenoisers);
  o.add("width", &SamplingOptions::width, "mlp_*: hidden units per layer").range(1, 4096);
  o.add("depth", &SamplingOptions::depth, "mlp_*: hidden layers").range(1, 16);
  o.add("train_steps", &SamplingOptions::train_steps, "mlp_*: Adam steps (a few hundred: the under-trained checkpoint)")
      .range(1, 10000000);
  o.add("batch", &SamplingOptions::batch, "mlp_*: training batch").range(1, 100000);
  o.add("lr", &SamplingOptions::lr, "mlp_*: Adam learning rate (cosine decay to lr / 10)").range(1e-7, 1);
  o.add("train_samples", &SamplingOptions::train_samples, "mlp_* on a mixture: training samples drawn from it")
      .range(2, 100000000);
  o.add("save_denoisers", &SamplingOptions::save_denoisers,
        "mlp_*: write each trained denoiser to artifacts/denoisers/<data>_<denoiser>.bin");
  o.add("load_denoisers", &SamplingOptions::load_denoisers,
        "mlp_*: a folder of saved denoisers (a run's artifacts/denoisers) to load instead of training; they must have "
        "been trained on this run's data (same data options, seed, train_samples)");
  o.add("denoiser_error", &SamplingOptions::denoiser_error, "exact_biased: size e of the weight and field errors").min(0);
  o.add("driver", &SamplingOptions::driver, "fds / fds_churn: the driver of the increments").choices(kDrivers);
  o.add("driver_steps", &SamplingOptions::driver_steps, "driver integration steps per sampler step (time-scale ratio)")
      .range(1, 100000);
  o.add("driver_dt", &SamplingOptions::driver_dt, "driver integration step (lorenz RK4 h)").range(1e-5, 0.05);
  o.add("rate", &SamplingOptions::rate, "ou: theta; telegraph: flip rate r").min(1e-6);
  o.add("amplitude", &SamplingOptions::amplitude, "telegraph: a").min(1e-6);
  o.add("lorenz_z", &SamplingOptions::lorenz_z, "lorenz: also put z coordinates on the slots (Q_z ~ 0.01)");
  o.add("samples", &SamplingOptions::samples, "samples generated per run").range(10, 10000000);
  o.add("eval_samples", &SamplingOptions::eval_samples, "samples (and reference samples) for MMD, sliced W2, k-NN")
      .range(10, 100000);
  o.add("sw_directions", &SamplingOptions::sw_directions, "sliced W2: random directions").range(1, 100000);
}

MlpTraining SamplingOptions::training() const {
  MlpTraining t;
  t.width = width, t.depth = depth, t.steps = train_steps, t.batch = batch, t.lr = lr;
  return t;
}

void SampleOptions::declare(nexp::Options<SampleOptions>& o) {
  o.inherit<SamplingOptions>();
  o.add("sampler", &SampleOptions::sampler, "euler, heun, dpmpp_2m, edm (Gaussian churn), sde (EDM eq. 6), fds, fds_churn")
      .choices(kSamplers);
  o.add("nfe", &SampleOptions::nfe, "budget of denoiser calls (heun-type samplers use 2N - 1 <= nfe)").range(1, 10000);
  o.add("strength", &SampleOptions::strength, "sde / fds: Langevin weight strength^2 / t; edm / fds_churn: gamma / (sqrt 2 - 1)")
      .range(0, 1);
  o.add("write_samples", &SampleOptions::write_samples, "write z.csv, samples.csv and mixture.csv to artifacts/");
}

void DriverStatsOptions::declare(nexp::Options<DriverStatsOptions>& o) {
  o.add("driver", &DriverStatsOptions::driver, "gaussian, ou, telegraph or lorenz").choices(kDrivers);
  o.add("rate", &DriverStatsOptions::rate, "ou: theta; telegraph: flip rate r").min(1e-6);
  o.add("amplitude", &DriverStatsOptions::amplitude, "telegraph: a").min(1e-6);
  o.add("lorenz_z", &DriverStatsOptions::lorenz_z, "lorenz: also use z coordinates");
  o.add("dt", &DriverStatsOptions::dt, "integration step").range(1e-5, 0.05);
  o.add("slots", &DriverStatsOptions::slots, "independent coordinates (variance growth)").range(64, 10000000);
  o.add("samples", &DriverStatsOptions::samples, "trajectory steps (T = samples dt)").range(100, 100000000);
  o.add("max_lag", &DriverStatsOptions::max_lag, "Green-Kubo: largest lag, in steps").range(1, 1000000);
  o.add("trace_slots", &DriverStatsOptions::trace_slots, "Green-Kubo: coordinates whose trajectories are kept")
      .range(1, 100000);
  o.add("states", &DriverStatsOptions::states, "C_chi: stationary states sampled").range(1, 100000);
  o.add("copies", &DriverStatsOptions::copies, "C_chi: ensemble size per state").range(1, 10000000);
  o.add("horizon", &DriverStatsOptions::horizon, "C_chi: truncation time T of int_0^T E_x xi").min(1e-3);
  o.add("jitter", &DriverStatsOptions::jitter, "C_chi (lorenz): start perturbation, in standard deviations").min(0);
  o.add("driver_steps", &DriverStatsOptions::driver_steps, "steps per sampler step, for the increments' statistics")
      .range(1, 100000);
}

void StudyOptions::declare(nexp::Options<StudyOptions>& o) {
  o.inherit<SamplingOptions>();
  o.add("kinds", &StudyOptions::kinds, "mixtures: ring8, grid25, gmm");
  o.add("mixture", &StudyOptions::mixture, "mixture shape (its kind is replaced by each of `kinds`; dim applies to gmm)");
  o.add("denoisers", &StudyOptions::denoisers, "exact, exact_biased, mlp_edm, mlp_vp (the MLPs trained per mixture)");
  o.add("nfes", &StudyOptions::nfes, "NFE budgets").range(1, 10000);
  o.add("seeds", &StudyOptions::seeds, "evaluation seeds (indices 0..seeds-1)").range(2, 1000);
  o.add("strengths", &StudyOptions::strengths, "strength grid (tuned on the held-out seed index 1000)").range(0, 1);
}

void FrontierOptions::declare(nexp::Options<FrontierOptions>& o) {
  o.inherit<StudyOptions>();
  o.add("samplers", &FrontierOptions::samplers,
        "euler, heun, dpmpp_2m, edm, sde (strength tuned), sde_endpoint (strength 1), fds, fds_churn");
}

void StrengthOptions::declare(nexp::Options<StrengthOptions>& o) {
  o.inherit<StudyOptions>();
  o.add("drivers", &StrengthOptions::drivers, "drivers of the fds sampler: gaussian, ou, telegraph, lorenz");
}

// ------------------------------------------------------------------ fds.sample

void run_sample(nexp::RunContext& ctx) {
  const auto o = ctx.options<SampleOptions>();
  check_sampling(o);
  auto& data = ctx.dataset_as<MixtureData>();
  if (data.reference.rows() < o.eval_samples)
    throw nexp::ConfigError(fmt::format("params.eval_samples = {} exceeds dataset.reference = {}", o.eval_samples,
                                        data.reference.rows()));
  const auto den = make_denoiser(o.denoiser, data.mixture, data.kind, o, 0, ctx);
  Bench bench(data.mixture, data.reference, o, ctx.seed());
  if (o.write_samples) bench.keep_samples();
  const auto s = bench.run(*den, sampler_config(o, o.sampler, o.nfe, o.strength), o.driver, 0);
  if (o.write_samples) {
    write_matrix(ctx.artifacts_dir() / "z.csv", bench.last_z());
    write_matrix(ctx.artifacts_dir() / "samples.csv", bench.last_x());
    write_mixture(ctx.artifacts_dir() / "mixture.csv", data.mixture);
  }
  ctx.summary("seconds_per_nfe", s.sampling_seconds / s.nfe);
  ctx.summary("mmd", s.mmd);
  ctx.summary("sliced_w2", s.sliced_w2);
  ctx.summary("mode_coverage", s.mode_coverage);
  ctx.summary("mode_precision", s.mode_precision);
  ctx.summary("precision", s.precision);
  ctx.summary("recall", s.recall);
  ctx.summary("frechet", s.frechet);
  ctx.summary("nfe", s.nfe);
  ctx.summary("driver_share", s.sampling_seconds > 0 ? s.driver_seconds / s.sampling_seconds : 0.0);
  // The floor: the same scores for fresh samples of the true mixture.
  auto fresh = nexp::Random::stream(ctx.seed(), "floor");
  const Scores floor = bench.score(data.mixture.sample(static_cast<std::size_t>(o.samples), fresh), 0);
  ctx.summary("mmd_floor", floor.mmd);
  ctx.summary("sliced_w2_floor", floor.sliced_w2);
}

// ------------------------------------------------------------------ fds.driver_stats

void run_driver_stats(nexp::RunContext& ctx) {
  const auto o = ctx.options<DriverStatsOptions>();
  const auto p = driver_params(o.driver, o.rate, o.amplitude, o.dt, o.lorenz_z);
  auto init = ctx.stream("driver");
  auto rng = ctx.stream("dynamics");
  auto d = make_driver(p, static_cast<std::size_t>(o.slots), init);
  const auto q = estimate_q(*d, o.dt, o.samples, o.max_lag, o.trace_slots, rng);
  ctx.summary("q_green_kubo", q.green_kubo);
  ctx.summary("q_variance", q.variance);
  if (std::isfinite(q_closed_form(p))) ctx.summary("q_closed_form", q_closed_form(p));
  const auto sup = sup_abs(*d, o.dt, 200, rng);
  ctx.summary("sup_abs", sup);
  if (p.kind != DriverKind::Gaussian) {
    const auto chi = estimate_poisson(*d, p, o.states, o.copies, o.horizon, o.jitter, rng);
    ctx.summary("c_chi", chi.c_chi);
    nexp::CsvWriter out(ctx.artifacts_dir() / "poisson.csv", {nexp::CsvColumn::real("state"), nexp::CsvColumn::real("chi")});
    for (std::size_t i = 0; i < chi.chi.size(); ++i) out.row(chi.state[i], chi.chi[i]);
  }
  if (std::isfinite(c_chi_closed_form(p))) ctx.summary("c_chi_closed_form", c_chi_closed_form(p));
  // The increments a sampler sees: normalised integrals over driver_steps steps.
  std::array<double, 3> lq{};
  if (p.kind == DriverKind::Lorenz) lq = lorenz_q(p, rng);
  const auto qs = slot_q(p, *d, lq);
  std::vector<double> a, b;
  if (p.kind == DriverKind::Gaussian) {
    GaussianNoise g(rng);
    Mat e1(o.slots, 1), e2(o.slots, 1);
    g.next(e1), g.next(e2);
    a.assign(e1.data(), e1.data() + e1.size()), b.assign(e2.data(), e2.data() + e2.size());
  } else {
    DriverNoise dn(std::move(d), qs, o.driver_steps, o.dt, rng);
    Mat e1(o.slots, 1), e2(o.slots, 1);
    dn.next(e1), dn.next(e2);
    a.assign(e1.data(), e1.data() + e1.size()), b.assign(e2.data(), e2.data() + e2.size());
  }
  ctx.summary("increment_var", nexp::stats::variance(a));
  ctx.summary("increment_lag1_corr", nexp::stats::pearson(a, b));
}

// ------------------------------------------------------------------ studies

namespace {

struct Cell {  // one (mixture, denoiser, sampler or driver, nfe) with its per-seed scores
  std::string kind, denoiser, sampler;
  int nfe = 0;
  double strength = 0;
  std::vector<Scores> seeds;
  std::vector<double> mmds() const {
    std::vector<double> v;
    for (const auto& s : seeds) v.push_back(s.mmd);
    return v;
  }
};

std::vector<nexp::CsvColumn> score_columns() {
  using C = nexp::CsvColumn;
  return {C::text("kind"), C::text("denoiser"), C::text("sampler"), C::integer("nfe_budget"), C::integer("nfe"),
          C::real("strength"), C::integer("seed"), C::real("mmd"), C::real("sliced_w2"), C::real("mode_coverage"),
          C::real("mode_precision"), C::real("precision"), C::real("recall"), C::real("frechet"), C::real("seconds")};
}

void write_cell(nexp::CsvWriter& out, const Cell& c) {
  for (std::size_t i = 0; i < c.seeds.size(); ++i) {
    const auto& s = c.seeds[i];
    out.row(c.kind, c.denoiser, c.sampler, c.nfe, s.nfe, c.strength, static_cast<std::int64_t>(i), s.mmd, s.sliced_w2,
            s.mode_coverage, s.mode_precision, s.precision, s.recall, s.frechet, s.seconds);
  }
}

Mixture study_mixture(const StudyOptions& o, const std::string& kind, std::uint64_t seed, std::size_t index) {
  MixtureOptions m = o.mixture;
  m.kind = kind;
  if (kind != "gmm") m.dim = 2;
  auto rng = nexp::Random::stream(seed, "mixture", index);
  return make_mixture(m.spec(), rng);
}

// The strength with the lowest MMD on the held-out seed (ties: the smaller strength).
double tune_strength(Bench& bench, const Denoiser& d, const SamplingOptions& o, const std::string& sampler,
                     const std::string& driver, int nfe, const std::vector<double>& grid) {
  double best = grid.front(), best_mmd = std::numeric_limits<double>::infinity();
  for (double s : grid) {
    const double m = bench.run(d, sampler_config(o, sampler, nfe, s), driver, kTuneIndex).mmd;
    if (m < best_mmd) best_mmd = m, best = s;
  }
  return best;
}

void check_study(const StudyOptions& o) {
  check_sampling(o);
  check_list(o.kinds, kKinds, "kinds");
  check_list(o.denoisers, kDenoisers, "denoisers");
  if (o.strengths.empty()) throw nexp::ConfigError("params.strengths: the list is empty; give at least one strength in [0, 1]");
}

using C = nexp::CsvColumn;

// fds (and fds_churn) against the best ODE sampler at that NFE, the SDE endpoint (strength 1), the
// Gaussian sde at its own tuned strength and Gaussian churn: the mean paired difference of MMD over seeds
// (negative: fds better) with its 95% t interval.
struct Comparison {
  std::string kind, denoiser, sampler, against, against_sampler;
  int nfe;
  nexp::stats::Interval diff;
};

std::vector<Comparison> compare(const std::vector<Cell>& cells) {
  std::map<std::tuple<std::string, std::string, int>, std::map<std::string, const Cell*>> groups;
  for (const auto& c : cells) groups[{c.kind, c.denoiser, c.nfe}][c.sampler] = &c;
  std::vector<Comparison> out;
  for (const auto& [key, by] : groups) {
    const Cell* best_ode = nullptr;
    for (const char* s : {"euler", "heun", "dpmpp_2m"})
      if (by.count(s) && (!best_ode || nexp::stats::mean(by.at(s)->mmds()) < nexp::stats::mean(best_ode->mmds())))
        best_ode = by.at(s);
    for (const char* f : {"fds", "fds_churn"}) {
      if (!by.count(f)) continue;
      const auto& fm = by.at(f)->mmds();
      auto add = [&, &key = key](const char* against, const Cell* other) {  // C++17 cannot capture a binding implicitly
        if (other)
          out.push_back({std::get<0>(key), std::get<1>(key), f, against, other->sampler, std::get<2>(key),
                         nexp::stats::paired_t_interval(fm, other->mmds())});
      };
      add("best_ode", best_ode);
      add("sde_endpoint", by.count("sde_endpoint") ? by.at("sde_endpoint") : nullptr);
      add("sde_tuned", by.count("sde") ? by.at("sde") : nullptr);
      add("edm", by.count("edm") ? by.at("edm") : nullptr);
    }
  }
  return out;
}

}  // namespace

void run_frontier(nexp::RunContext& ctx) {
  const auto o = ctx.options<FrontierOptions>();
  check_study(o);
  check_list(o.samplers, kFrontierSamplers, "samplers");
  const std::int64_t total = static_cast<std::int64_t>(o.kinds.size() * o.denoisers.size() * o.samplers.size() * o.nfes.size());
  auto bar = ctx.progress(total, "frontier");
  nexp::CsvWriter csv(ctx.artifacts_dir() / "frontier.csv", score_columns());
  std::vector<Cell> cells;
  bool stopped = false;  // a stop request ends the study early; the comparisons cover the cells run
  for (std::size_t ki = 0; ki < o.kinds.size() && !stopped; ++ki) {
    const Mixture mix = study_mixture(o, o.kinds[ki], ctx.seed(), ki);
    auto rr = nexp::Random::stream(ctx.seed(), "reference", ki);
    const Mat reference = mix.sample(static_cast<std::size_t>(o.eval_samples), rr);
    Bench bench(mix, reference, o, ctx.seed());
    for (std::size_t di = 0; di < o.denoisers.size() && !stopped; ++di) {
      const auto& dn = o.denoisers[di];
      const auto den = make_denoiser(dn, mix, o.kinds[ki], o, ki, ctx);
      for (std::size_t si = 0; si < o.samplers.size() && !stopped; ++si) {
        const auto& sampler = o.samplers[si];
        for (std::size_t ni = 0; ni < o.nfes.size() && !stopped; ++ni) {
          const auto nfe64 = o.nfes[ni];
          const int nfe = static_cast<int>(nfe64);
          Cell c{o.kinds[ki], dn, sampler, nfe, 0.0, {}};
          if (sampler == "sde_endpoint") c.strength = 1.0;
          else if (uses_noise(sampler_kind(sampler))) c.strength = tune_strength(bench, *den, o, sampler, o.driver, nfe, o.strengths);
          for (int s = 0; s < o.seeds; ++s)
            c.seeds.push_back(bench.run(*den, sampler_config(o, sampler, nfe, c.strength), o.driver, static_cast<std::uint64_t>(s)));
          write_cell(csv, c);
          cells.push_back(std::move(c));
          bar.advance();
          stopped = ctx.stop_requested();
        }
      }
    }
  }
  nexp::CsvWriter cmp(ctx.artifacts_dir() / "comparisons.csv",
                      {C::text("kind"), C::text("denoiser"), C::text("sampler"), C::integer("nfe"), C::text("against"),
                       C::text("against_sampler"), C::real("mmd_diff"), C::real("ci_low"), C::real("ci_high")});
  // Headline shares over the imperfect denoiser's cells: fds not significantly worse than the best ODE
  // (NFE 4-10), and significantly better than the SDE endpoint and Gaussian churn (NFE <= 8).
  double ode_n = 0, ode_ok = 0, sde_n = 0, sde_win = 0, edm_n = 0, edm_win = 0, tuned_n = 0, tuned_win = 0;
  for (const auto& c : compare(cells)) {
    cmp.row(c.kind, c.denoiser, c.sampler, c.nfe, c.against, c.against_sampler, c.diff.estimate, c.diff.low, c.diff.high);
    if (c.denoiser == "exact" || c.sampler != "fds") continue;
    if (c.against == "best_ode" && c.nfe >= 4 && c.nfe <= 10) ode_n += 1, ode_ok += c.diff.low <= 0 ? 1 : 0;
    if (c.against == "sde_endpoint" && c.nfe <= 8) sde_n += 1, sde_win += c.diff.high < 0 ? 1 : 0;
    if (c.against == "sde_tuned" && c.nfe <= 8) tuned_n += 1, tuned_win += c.diff.high < 0 ? 1 : 0;
    if (c.against == "edm" && c.nfe <= 8) edm_n += 1, edm_win += c.diff.high < 0 ? 1 : 0;
  }
  if (ode_n > 0) ctx.summary("fds_matches_ode_share", ode_ok / ode_n);
  if (sde_n > 0) ctx.summary("fds_beats_sde_share", sde_win / sde_n);
  if (edm_n > 0) ctx.summary("fds_beats_edm_share", edm_win / edm_n);
  if (tuned_n > 0) ctx.summary("fds_beats_tuned_sde_share", tuned_win / tuned_n);
  ctx.summary("cells", static_cast<double>(cells.size()));
  if (stopped) ctx.log().warn("fds.frontier: stopped after {} of {} cells; the comparisons cover those", cells.size(), total);
}

void run_strength(nexp::RunContext& ctx) {
  const auto o = ctx.options<StrengthOptions>();
  check_study(o);
  check_list(o.drivers, kDrivers, "drivers");
  std::vector<double> grid = o.strengths;
  const std::int64_t total = static_cast<std::int64_t>(o.kinds.size() * o.denoisers.size() * o.drivers.size() * o.nfes.size() * grid.size());
  auto bar = ctx.progress(total, "strength");
  nexp::CsvWriter csv(ctx.artifacts_dir() / "strength.csv", score_columns());
  nexp::CsvWriter best(ctx.artifacts_dir() / "best_strength.csv",
                       {C::text("kind"), C::text("denoiser"), C::text("driver"), C::integer("nfe"), C::real("best_strength"),
                        C::real("mmd"), C::boolean("interior")});
  double interior = 0, count = 0;
  std::map<std::tuple<std::string, std::string, int, double>, std::map<std::string, std::vector<double>>> by_strength;
  for (std::size_t ki = 0; ki < o.kinds.size(); ++ki) {
    const Mixture mix = study_mixture(o, o.kinds[ki], ctx.seed(), ki);
    auto rr = nexp::Random::stream(ctx.seed(), "reference", ki);
    const Mat reference = mix.sample(static_cast<std::size_t>(o.eval_samples), rr);
    Bench bench(mix, reference, o, ctx.seed());
    for (const auto& dn : o.denoisers) {
      const auto den = make_denoiser(dn, mix, o.kinds[ki], o, ki, ctx);
      for (const auto& driver : o.drivers) {
        for (auto nfe64 : o.nfes) {
          const int nfe = static_cast<int>(nfe64);
          double best_s = 0, best_m = std::numeric_limits<double>::infinity();
          for (double st : grid) {
            Cell c{o.kinds[ki], dn, driver, nfe, st, {}};
            for (int s = 0; s < o.seeds; ++s)
              c.seeds.push_back(bench.run(*den, sampler_config(o, "fds", nfe, st), driver, static_cast<std::uint64_t>(s)));
            write_cell(csv, c);
            const double m = nexp::stats::mean(c.mmds());
            by_strength[{c.kind, dn, nfe, st}][driver] = c.mmds();
            if (m < best_m) best_m = m, best_s = st;
            bar.advance();
            if (ctx.stop_requested()) return;
          }
          const bool inside = best_s > 0 && best_s < 1;
          best.row(o.kinds[ki], dn, driver, nfe, best_s, best_m, inside);
          interior += inside ? 1 : 0, count += 1;
        }
      }
    }
  }
  // Bounded drivers against the Gaussian at equal strength: paired MMD differences over seeds.
  nexp::CsvWriter gaps(ctx.artifacts_dir() / "driver_gaps.csv",
                       {C::text("kind"), C::text("denoiser"), C::integer("nfe"), C::real("strength"), C::text("driver"),
                        C::real("mmd_diff_vs_gaussian"), C::real("ci_low"), C::real("ci_high")});
  for (const auto& [key, drivers] : by_strength) {
    if (!drivers.count("gaussian") || std::get<3>(key) == 0) continue;
    for (const auto& [name, m] : drivers) {
      if (name == "gaussian") continue;
      const auto iv = nexp::stats::paired_t_interval(m, drivers.at("gaussian"));
      gaps.row(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), name, iv.estimate, iv.low, iv.high);
    }
  }
  ctx.summary("interior_best_share", count > 0 ? interior / count : 0.0);
}

}  // namespace fds

// ------------------------------------------------------------------ fds.digits

namespace fds {

namespace {

const std::vector<std::string> kMlpDenoisers = {"mlp_edm", "mlp_vp"};
const std::vector<std::string> kOdeSamplers = {"euler", "heun", "dpmpp_2m"};

struct Digits {
  Mat x;  // images x pixels, scaled to [-1, 1]
  std::vector<int> labels;
};

Digits read_digits(const std::string& name) {
  const std::filesystem::path file = name.empty() ? nexp::data_dir() / "sklearn" / "digits.csv" : std::filesystem::path(name);
  if (!std::filesystem::exists(file))
    throw nexp::DataError(fmt::format("params.file: {} does not exist; expected scikit-learn's digits as CSV (64 pixel "
                                      "columns and `target`). Run scripts/setup, or name the file with params.file.",
                                      file.string()));
  const nexp::CsvTable t = nexp::CsvTable::read(file);
  std::vector<std::size_t> cols;
  for (const auto& c : t.header())
    if (c != "target") cols.push_back(t.column(c));
  if (cols.size() != 64 || t.size() < 100)
    throw nexp::DataError(fmt::format("params.file: {} has {} rows and {} pixel columns; expected the 8x8 digits: 64 "
                                      "pixel columns, a `target` column and at least 100 rows", file.string(), t.size(), cols.size()));
  const std::size_t target = t.column("target");
  Digits d;
  d.x.resize(static_cast<Eigen::Index>(t.size()), 64);
  for (std::size_t r = 0; r < t.size(); ++r) {
    for (std::size_t c = 0; c < cols.size(); ++c)
      d.x(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = std::stod(t.row(r)[cols[c]]) / 8.0 - 1.0;
    d.labels.push_back(std::stoi(t.row(r)[target]));
  }
  return d;
}

// Fashion-MNIST's training images (raw IDX files in <data dir>/fashion-mnist), the first `count`,
// averaged over factor x factor blocks down to size x size, scaled to [-1, 1].
Digits read_fashion(int count, int size) {
  const auto dir = nexp::data_dir() / "fashion-mnist";
  const std::string hint = "Run scripts/setup (Debian dataset-fashion-mnist).";
  const nexp::IdxArray images = nexp::read_idx(dir / "train-images-idx3-ubyte", "data: fashion_mnist", count, hint);
  const nexp::IdxArray labels = nexp::read_idx(dir / "train-labels-idx1-ubyte", "data: fashion_mnist", count, hint);
  if (images.shape.size() != 3 || labels.shape.size() != 1 || images.shape[2] != images.shape[1])
    throw nexp::DataError("data: fashion_mnist: expected square images (3 sizes) and labels (1 size) in the IDX files");
  const int side = static_cast<int>(images.shape[1]);
  if (side % size != 0)
    throw nexp::ConfigError(fmt::format("params.image_size = {}: must divide the images' side {}", size, side));
  const int n = static_cast<int>(std::min(images.shape[0], labels.shape[0])), f = side / size;
  Digits d;
  d.x.resize(n, size * size);
  for (int i = 0; i < n; ++i) {
    const std::uint8_t* px = images.bytes.data() + static_cast<std::size_t>(i) * side * side;
    for (int r = 0; r < size; ++r)
      for (int c = 0; c < size; ++c) {
        double sum = 0;
        for (int a = 0; a < f; ++a)
          for (int b = 0; b < f; ++b) sum += px[(r * f + a) * side + c * f + b];
        d.x(i, r * size + c) = 2 * sum / (255.0 * f * f) - 1;
      }
    d.labels.push_back(labels.bytes[static_cast<std::size_t>(i)]);
  }
  return d;
}

// The median heuristic: the median distance between reference samples (the MMD's middle bandwidth).
double median_distance(const Mat& x) {
  std::vector<double> d;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = i + 1; j < x.rows(); ++j) d.push_back((x.row(i) - x.row(j)).norm());
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}

struct DigitScores {
  double mmd = 0, sliced_w2 = 0, frechet_features = 0, frechet_pixels = 0, precision = 0, recall = 0, seconds = 0;
  int nfe = 0;
};

struct DigitCell {  // one (denoiser, sampler [: driver], nfe) over seeds
  std::string denoiser, label, sampler, driver;
  int nfe = 0;
  double strength = 0;
  std::vector<DigitScores> seeds;
  std::vector<double> values(double DigitScores::*m) const {
    std::vector<double> v;
    for (const auto& s : seeds) v.push_back(s.*m);
    return v;
  }
};

}  // namespace

void DigitsOptions::declare(nexp::Options<DigitsOptions>& o) {
  o.inherit<SamplingOptions>();
  o.add("data", &DigitsOptions::data, "digits (8x8, 1797 images) or fashion_mnist (training images, block-averaged)")
      .choices({"digits", "fashion_mnist"});
  o.add("images", &DigitsOptions::images, "fashion_mnist: the first this many training images").range(100, 60000);
  o.add("image_size", &DigitsOptions::image_size, "fashion_mnist: side after block averaging (divides 28)").range(1, 28);
  o.add("file", &DigitsOptions::file, "digits: the CSV (empty: scikit-learn's digits from the data cache)");
  o.add("denoisers", &DigitsOptions::denoisers, "mlp_edm, mlp_vp (each trained in the run on all 1797 images)");
  o.add("samplers", &DigitsOptions::samplers,
        "euler, heun, dpmpp_2m, edm, sde (strength tuned), sde_endpoint (strength 1), fds, fds_churn (one run per driver)");
  o.add("drivers", &DigitsOptions::drivers, "drivers of the fds / fds_churn entries: gaussian, ou, telegraph, lorenz");
  o.add("nfes", &DigitsOptions::nfes, "NFE budgets").range(1, 10000);
  o.add("seeds", &DigitsOptions::seeds, "evaluation seeds (indices 0..seeds-1)").range(2, 1000);
  o.add("strengths", &DigitsOptions::strengths, "strength grid (tuned by MMD on the held-out seed index 1000)").range(0, 1);
  o.add("classifier_width", &DigitsOptions::classifier_width, "feature classifier: hidden units").range(1, 4096);
  o.add("classifier_depth", &DigitsOptions::classifier_depth, "feature classifier: hidden layers").range(1, 16);
  o.add("classifier_steps", &DigitsOptions::classifier_steps, "feature classifier: Adam steps").range(1, 10000000);
  o.add("test_share", &DigitsOptions::test_share, "feature classifier: share of images held out for its accuracy").range(0, 0.9);
}

void run_digits(nexp::RunContext& ctx) {
  const auto o = ctx.options<DigitsOptions>();
  check_list(o.denoisers, kMlpDenoisers, "denoisers");
  check_list(o.samplers, kFrontierSamplers, "samplers");
  check_list(o.drivers, kDrivers, "drivers");
  check_checkpoints(o);
  if (o.strengths.empty()) throw nexp::ConfigError("params.strengths: the list is empty; give at least one strength in [0, 1]");
  const Digits data = o.data == "digits" ? read_digits(o.file) : read_fashion(o.images, o.image_size);
  const Eigen::Index dim = data.x.cols();
  const auto n = static_cast<Eigen::Index>(o.samples);
  if (2 * o.eval_samples > data.x.rows() || o.samples < o.eval_samples)
    throw nexp::ConfigError(fmt::format("params.eval_samples = {}: the reference and the floor take 2 x eval_samples of "
                                        "the {} images, and samples = {} must be >= eval_samples; expected eval_samples <= "
                                        "{}", o.eval_samples, data.x.rows(), o.samples, data.x.rows() / 2));
  // Reference (first eval_samples of a permutation) and an equally large disjoint set of real images (the floor).
  std::vector<Eigen::Index> order(static_cast<std::size_t>(data.x.rows()));
  std::iota(order.begin(), order.end(), 0);
  auto split = ctx.stream("split");
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[split.below(i)]);
  const auto m = static_cast<Eigen::Index>(o.eval_samples);
  Mat reference(m, dim), held(m, dim);
  for (Eigen::Index i = 0; i < m; ++i)
    reference.row(i) = data.x.row(order[static_cast<std::size_t>(i)]), held.row(i) = data.x.row(order[static_cast<std::size_t>(m + i)]);
  const auto bandwidths = mmd_bandwidths(median_distance(reference));

  // The feature classifier: trained on (1 - test_share) of the images; its last hidden layer is the feature map.
  MlpTraining ct;
  ct.width = o.classifier_width, ct.depth = o.classifier_depth, ct.steps = o.classifier_steps, ct.batch = 128, ct.lr = 1e-3;
  auto crng = ctx.stream("classifier");
  const Classifier clf = train_classifier(data.x, data.labels, 10, o.test_share, ct, crng);
  ctx.log().info("fds.digits: {} images of {} pixels", data.x.rows(), dim);
  ctx.log().info("fds.digits: feature classifier accuracy {:.3f} (train), {:.3f} (held out)", clf.train_accuracy, clf.test_accuracy);
  const Mat ref_features = clf.net.features(reference);

  auto score = [&](const Mat& x, std::uint64_t index) {
    DigitScores s;
    const Mat head = x.topRows(m);
    s.mmd = mmd(head, reference, bandwidths);
    auto dirs = nexp::Random::stream(ctx.seed(), "sliced_w2", index);
    s.sliced_w2 = sliced_w2(head, reference, o.sw_directions, dirs);
    s.frechet_pixels = frechet(x, reference);
    s.frechet_features = frechet(clf.net.features(x), ref_features);
    const auto pr = knn_precision_recall(head, reference);
    s.precision = pr.precision, s.recall = pr.recall;
    return s;
  };
  const DigitScores floor = score(held, 0);
  ctx.summary("classifier_test_accuracy", clf.test_accuracy);
  ctx.summary("mmd_floor", floor.mmd);
  ctx.summary("sliced_w2_floor", floor.sliced_w2);
  ctx.summary("frechet_features_floor", floor.frechet_features);

  struct Entry {
    std::string label, sampler, driver;
  };
  std::vector<Entry> entries;
  for (const auto& s : o.samplers) {
    if (s == "fds" || s == "fds_churn")
      for (const auto& d : o.drivers) entries.push_back({s + ":" + d, s, d});
    else
      entries.push_back({s, s, "gaussian"});
  }
  NoiseFactory noises(o, ctx.seed());
  auto run_one = [&](const Denoiser& d, const Entry& e, int nfe, double strength, std::uint64_t index) {
    auto zr = nexp::Random::stream(ctx.seed(), "z", index);
    Mat z(n, dim);
    for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = zr.normal();
    const auto c = sampler_config(o, e.sampler, nfe, strength);
    const auto t0 = std::chrono::steady_clock::now();
    auto noise = noises.make(c.kind, e.driver, static_cast<std::size_t>(z.size()), index);
    const auto r = sample(c, d, z, noise.get());
    DigitScores s = score(r.x, index);
    s.nfe = r.nfe;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
  };

  const std::int64_t total = static_cast<std::int64_t>(o.denoisers.size() * entries.size() * o.nfes.size());
  auto bar = ctx.progress(total, "digits");
  nexp::CsvWriter runs(ctx.artifacts_dir() / "digits.csv",
                       {C::text("denoiser"), C::text("sampler"), C::integer("nfe_budget"), C::integer("nfe"),
                        C::real("strength"), C::integer("seed"), C::real("mmd"), C::real("sliced_w2"),
                        C::real("frechet_features"), C::real("frechet_pixels"), C::real("precision"), C::real("recall"),
                        C::real("seconds")});
  nexp::CsvWriter means(ctx.artifacts_dir() / "digits_means.csv",
                        {C::text("denoiser"), C::text("sampler"), C::integer("nfe"), C::real("strength"), C::real("mmd"),
                         C::real("sliced_w2"), C::real("frechet_features"), C::real("frechet_pixels")});
  nexp::CsvWriter training(ctx.artifacts_dir() / "training.csv",
                           {C::text("denoiser"), C::integer("steps"), C::real("final_loss"), C::real("seconds")});
  std::vector<DigitCell> cells;
  bool stopped = false;
  for (std::size_t di = 0; di < o.denoisers.size() && !stopped; ++di) {
    const auto& dn = o.denoisers[di];
    const auto den = trained_denoiser(dn, o.data, data.x, o, di, ctx);
    training.row(dn, static_cast<std::int64_t>(den->training().steps), den->final_loss(), den->seconds());
    ctx.summary(dn + "_loss", den->final_loss());
    for (const auto& e : entries) {
      for (auto nfe64 : o.nfes) {
        if ((stopped = ctx.stop_requested())) break;
        const int nfe = static_cast<int>(nfe64);
        DigitCell cell{dn, e.label, e.sampler, e.driver, nfe, 0.0, {}};
        if (e.sampler == "sde_endpoint") {
          cell.strength = 1;
        } else if (uses_noise(sampler_kind(e.sampler))) {
          double best = std::numeric_limits<double>::infinity();
          for (double st : o.strengths) {
            const double v = run_one(*den, e, nfe, st, kTuneIndex).mmd;
            if (v < best) best = v, cell.strength = st;
          }
        }
        for (int s = 0; s < o.seeds; ++s) {
          cell.seeds.push_back(run_one(*den, e, nfe, cell.strength, static_cast<std::uint64_t>(s)));
          const auto& r = cell.seeds.back();
          runs.row(dn, e.label, nfe, r.nfe, cell.strength, static_cast<std::int64_t>(s), r.mmd, r.sliced_w2,
                   r.frechet_features, r.frechet_pixels, r.precision, r.recall, r.seconds);
        }
        means.row(dn, e.label, nfe, cell.strength, nexp::stats::mean(cell.values(&DigitScores::mmd)),
                  nexp::stats::mean(cell.values(&DigitScores::sliced_w2)),
                  nexp::stats::mean(cell.values(&DigitScores::frechet_features)),
                  nexp::stats::mean(cell.values(&DigitScores::frechet_pixels)));
        cells.push_back(std::move(cell));
        bar.advance();
      }
    }
  }

  // fds entries against the best ODE sampler (lowest mean of that metric), the SDE endpoint and Gaussian
  // churn at the same denoiser and NFE: paired differences over seeds (negative: fds better).
  nexp::CsvWriter cmp(ctx.artifacts_dir() / "digits_comparisons.csv",
                      {C::text("denoiser"), C::integer("nfe"), C::text("sampler"), C::text("against"),
                       C::text("against_sampler"), C::text("metric"), C::real("diff"), C::real("ci_low"), C::real("ci_high")});
  struct Share {
    double n = 0, k = 0;
    void add(bool ok) { n += 1, k += ok ? 1 : 0; }
  };
  std::map<std::string, Share> shares;
  const std::vector<std::pair<std::string, double DigitScores::*>> metrics = {{"mmd", &DigitScores::mmd},
                                                                            {"frechet_features", &DigitScores::frechet_features}};
  for (const auto& dn : o.denoisers) {
    for (auto nfe64 : o.nfes) {
      const int nfe = static_cast<int>(nfe64);
      std::map<std::string, const DigitCell*> by;
      for (const auto& c : cells)
        if (c.denoiser == dn && c.nfe == nfe) by[c.label] = &c;
      for (const auto& [name, metric] : metrics) {
        const DigitCell* best_ode = nullptr;
        for (const auto& s : kOdeSamplers)
          if (by.count(s) && (!best_ode || nexp::stats::mean(by.at(s)->values(metric)) < nexp::stats::mean(best_ode->values(metric))))
            best_ode = by.at(s);
        for (const auto& [label, cell] : by) {
          if (cell->sampler != "fds" && cell->sampler != "fds_churn") continue;
          const std::string suffix = name == "mmd" ? "" : "_fd";
          auto add = [&, &cell = cell, &name = name, &metric = metric](const char* against, const DigitCell* other) {
            if (!other) return nexp::stats::Interval{};
            const auto iv = nexp::stats::paired_t_interval(cell->values(metric), other->values(metric));
            cmp.row(dn, nfe, label, against, other->label, name, iv.estimate, iv.low, iv.high);
            return iv;
          };
          const auto ode = add("best_ode", best_ode);
          const auto sde = add("sde_endpoint", by.count("sde_endpoint") ? by.at("sde_endpoint") : nullptr);
          const auto edm = add("edm", by.count("edm") ? by.at("edm") : nullptr);
          if (label != "fds:lorenz") continue;
          if (best_ode && nfe >= 4 && nfe <= 10) shares["fds_matches_ode_share" + suffix].add(ode.low <= 0);
          if (by.count("sde_endpoint") && nfe <= 8) shares["fds_beats_sde_share" + suffix].add(sde.high < 0);
          if (by.count("edm") && nfe <= 8) shares["fds_beats_edm_share" + suffix].add(edm.high < 0);
        }
      }
    }
  }
  for (const auto& [key, s] : shares)
    if (s.n > 0) ctx.summary(key, s.k / s.n);
  ctx.summary("cells", static_cast<double>(cells.size()));
  if (stopped) ctx.log().warn("fds.digits: stopped after {} of {} cells; the comparisons cover those", cells.size(), total);
}

}  // namespace fds
