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
struct OnsetPlan {
  std::vector<double> ratios;
  std::int64_t seeds = 2;
  std::uint64_t base_seed = 0;
  double active_tol = 1e-2, kl_tol = 1e-3;
  double gain_tol = 1e-4;  // ELBO gains over the collapsed point below this (nats per point) count as none
  std::int64_t refine_rounds = 1, refine_points = 4;
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
