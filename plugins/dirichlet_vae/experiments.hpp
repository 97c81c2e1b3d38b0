#pragma once
// The plugin's methods (threshold, train, scan, collapse_sweep) and the pieces they share: the
// threshold of a data set, the beta / beta_c scan, and the empirical onset of collapse.
#include <nexp/nexp.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "data.hpp"
#include "model.hpp"

namespace dirichlet_vae {

// ---------------------------------------------------------------------------------------------------
// Options of the methods, in groups that several methods share

// K and alpha0 of the model; unset: the data set's (alpha0: else 1).
struct SimplexOptions {
  std::optional<std::int64_t> K;
  std::optional<double> alpha0;

  static void declare(nexp::Options<SimplexOptions>& o) {
    o.add("K", &SimplexOptions::K, "simplex vertices (latent dimension + 1); default: the data set's K").min(2);
    o.add("alpha0", &SimplexOptions::alpha0,
          "prior concentration Dir(alpha0 1_K); default: the data set's generating alpha0, else 1")
        .min(1e-4);
  }
};

enum class Sigma2Mode { Fixed, Noise, Learned };

// The decoder variance.
struct VarianceOptions {
  Sigma2Mode sigma2_mode = Sigma2Mode::Fixed;
  double sigma2 = 1.0;

  static void declare(nexp::Options<VarianceOptions>& o) {
    o.add("sigma2_mode", &VarianceOptions::sigma2_mode,
          "decoder variance: fixed (params.sigma2), noise (the data set's true noise variance) or learned (beta_c "
          "then uses tr(C)/d, its collapsed value)",
          {{"fixed", Sigma2Mode::Fixed}, {"noise", Sigma2Mode::Noise}, {"learned", Sigma2Mode::Learned}});
    o.add("sigma2", &VarianceOptions::sigma2, "decoder variance sigma^2 when sigma2_mode is fixed").min(1e-12);
  }
};

// The KL weight: exactly one of the two (threshold: either or none).
struct BetaOptions {
  std::optional<double> beta, beta_ratio;

  static void declare(nexp::Options<BetaOptions>& o) {
    o.add("beta", &BetaOptions::beta, "KL weight beta (give this or beta_ratio)").min(0);
    o.add("beta_ratio", &BetaOptions::beta_ratio, "KL weight as a multiple of beta_c (give this or beta)").min(0);
  }
};

// What train, scan and collapse_sweep train and how.
struct TrainingOptions : ArchitectureOptions, FitOptions {
  double active_tol = 1e-2;

  static void declare(nexp::Options<TrainingOptions>& o) {
    o.inherit<ArchitectureOptions>();
    o.inherit<FitOptions>();
    o.add("active_tol", &TrainingOptions::active_tol,
          "a simplex direction is active when Var_x of the posterior mean along it exceeds this fraction of the "
          "prior's variance per direction")
        .min(0);
  }
};

// The beta / beta_c grid of scan and collapse_sweep, and how its onset of collapse is found.
struct GridOptions {
  std::vector<double> ratios = {0.5, 0.75, 0.9, 1.1, 1.5, 2.0};
  std::int64_t seeds = 2;
  double kl_tol = 1e-3;
  std::int64_t refine_rounds = 1, refine_points = 4;

  static void declare(nexp::Options<GridOptions>& o) {
    o.add("ratios", &GridOptions::ratios, "beta / beta_c values to train at").min(0);
    o.add("seeds", &GridOptions::seeds, "models per ratio (seed s initialises every ratio alike)").min(1);
    o.add("kl_tol", &GridOptions::kl_tol, "mean KL (nats) below which a model counts as collapsed").min(0);
    o.add("refine_rounds", &GridOptions::refine_rounds, "rounds of extra ratios inside the onset's bracket").min(0);
    o.add("refine_points", &GridOptions::refine_points, "extra ratios per refinement round").min(1);
  }
};

struct ThresholdMethodOptions : SimplexOptions, VarianceOptions, BetaOptions {
  static void declare(nexp::Options<ThresholdMethodOptions>& o) {
    o.inherit<SimplexOptions>();
    o.inherit<VarianceOptions>();
    o.inherit<BetaOptions>();
  }
};

struct TrainMethodOptions : ThresholdMethodOptions, TrainingOptions {
  std::int64_t log_every = 100, checkpoint_every = 500;

  static void declare(nexp::Options<TrainMethodOptions>& o) {
    o.inherit<ThresholdMethodOptions>();
    o.inherit<TrainingOptions>();
    o.add("log_every", &TrainMethodOptions::log_every, "steps between logged metrics").min(1);
    o.add("checkpoint_every", &TrainMethodOptions::checkpoint_every, "steps between checkpoints").min(1);
  }
};

struct ScanMethodOptions : SimplexOptions, VarianceOptions, TrainingOptions, GridOptions {
  static void declare(nexp::Options<ScanMethodOptions>& o) {
    o.inherit<SimplexOptions>();
    o.inherit<VarianceOptions>();
    o.inherit<TrainingOptions>();
    o.inherit<GridOptions>();
  }
};

// One synthetic data set per (alpha0, K), the model's K and prior set to the data's.
struct SweepMethodOptions : VarianceOptions, TrainingOptions, GridOptions {
  std::vector<double> alpha0s = {0.3, 1.0, 5.0};
  std::vector<std::int64_t> Ks = {3, 5};
  std::int64_t n = 2000, d = 12;
  double noise = 0.1;
  std::int64_t data_seed = 0;
  std::vector<double> init_scales = {1.0};

  static void declare(nexp::Options<SweepMethodOptions>& o) {
    o.add("alpha0s", &SweepMethodOptions::alpha0s, "concentrations (data and prior alike)").min(1e-4);
    o.add("Ks", &SweepMethodOptions::Ks, "numbers of endmembers (data and model alike)").min(2);
    o.add("n", &SweepMethodOptions::n, "data points per setting").min(2);
    o.add("d", &SweepMethodOptions::d, "data dimension").min(1);
    o.add("noise", &SweepMethodOptions::noise, "noise standard deviation").min(0);
    o.add("data_seed", &SweepMethodOptions::data_seed, "seed of the first setting's data (then +1 per setting)")
        .min(0);
    o.add("init_scales", &SweepMethodOptions::init_scales,
          "initialisations to sweep (init_scale values; 1: usual, small: near collapse)")
        .min(0);
    o.inherit<VarianceOptions>();
    o.inherit<TrainingOptions>();
    o.inherit<GridOptions>();
  }
};

// ---------------------------------------------------------------------------------------------------
// The pieces the methods share

// beta_c of one data set for one model (README, eq. T3).
struct ThresholdReport {
  std::int64_t K = 0;
  double alpha0 = 0;
  double sigma2 = 0;       // the decoder variance the threshold is for (tr(C)/d when learned)
  double lambda_max = 0;   // top eigenvalue of the data covariance
  double trigamma = 0;     // psi1(alpha0)
  double kappa = 0;        // curvature factor (K alpha0 + 1) / (K alpha0^2 psi1(alpha0))
  double gaussian = 0;     // lambda_max / sigma^2, the Gaussian linear-VAE threshold
  double beta_c = 0;
  double collapsed_elbo = 0;     // ELBO per data point at the collapsed point
  std::vector<double> spectrum;  // data covariance eigenvalues, descending
};
// sigma2 < 0: the decoder variance is learned; the threshold then uses its value at the collapsed
// point, tr(C) / d.
ThresholdReport threshold_of(const at::Tensor& x, std::int64_t K, double alpha0, double sigma2);

// One trained model of a scan.
struct Trial {
  double ratio = 0;  // beta / beta_c
  double beta = 0;
  std::int64_t seed = 0;
  std::int64_t predicted_active = 0;
  Evaluation eval;
  std::optional<UnmixingScore> unmixing;
  double seconds = 0;
};

// What a scan reports to and when it stops (both optional).
struct ScanHooks {
  nexp::Progress* progress = nullptr;  // advanced once per trained model
  std::function<bool()> stop;          // checked every 100 steps; a stopped scan returns early
};

// Trains one model per (ratio, seed) on x, as replicas of batched models. Seed s initialises every
// ratio's model identically (common random numbers), so curves over beta / beta_c are smooth.
std::vector<Trial> scan(const MixtureData& data, const ModelOptions& model, const TrainOptions& train,
                        const ThresholdReport& threshold, const std::vector<double>& ratios, std::int64_t seeds,
                        std::uint64_t base_seed, double active_tol, const ScanHooks& hooks = {});

// The empirical onset of collapse on a beta / beta_c grid: the smallest ratio from which on the mean KL
// over seeds stays below kl_tol, bracketed by the grid, refined by the zero of a straight line through
// the KL of the (up to three) uncollapsed ratios below it (KL ~ beta_c - beta near a supercritical
// pitchfork, README "Onset"), kept inside the bracket.
struct Onset {
  bool found = false;   // false: not collapsed at the largest ratio (or already at the smallest)
  double lower = 0;     // largest uncollapsed ratio below the onset
  double upper = 0;     // first ratio of the collapsed tail
  double estimate = 0;  // refined onset, in [lower, upper]
};
Onset empirical_onset(const std::vector<double>& ratios, const std::vector<double>& mean_kl, double kl_tol);

// A grid scan, then `refine_rounds` rounds of `refine_points` further ratios evenly inside the onset's
// bracket, each round narrowing it (refine_points + 1)-fold.
struct OnsetPlan : GridOptions {
  std::uint64_t base_seed = 0;
  double active_tol = 1e-2;
  double gain_tol = 1e-4;  // ELBO gains over the collapsed point below this (nats per point) count as none
};
struct OnsetScan {
  std::vector<double> ratios;  // every ratio trained, ascending
  std::vector<Trial> trials;
  Onset onset;       // of the final KL (training ends collapsed)
  Onset elbo_onset;  // of the best ELBO gain over the collapsed point (collapse is the best solution found)
};
OnsetScan scan_to_onset(const MixtureData& data, const ModelOptions& model, const TrainOptions& train,
                        const ThresholdReport& threshold, const OnsetPlan& plan, const ScanHooks& hooks = {});

// Mean KL over seeds for each ratio of `ratios` (sorted ascending).
std::vector<double> mean_kl_by_ratio(const std::vector<Trial>& trials, const std::vector<double>& ratios);
// The best ELBO over seeds minus the collapsed point's, for each ratio: > 0 where training found a
// solution better than collapse.
std::vector<double> best_elbo_gain_by_ratio(const std::vector<Trial>& trials, const std::vector<double>& ratios,
                                            double collapsed_elbo);

void run_threshold(nexp::RunContext& ctx);
void run_train(nexp::RunContext& ctx);
void run_scan(nexp::RunContext& ctx);
void run_collapse_sweep(nexp::RunContext& ctx);

}  // namespace dirichlet_vae
