// fds: the Fast-Driver Sampler for few-step diffusion. Registers the data set, the metrics and the
// methods; options are declared in experiments.hpp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;

void register_components(nexp::Registrar& r) {
  r.metric("mmd", Direction::Minimize, "multi-bandwidth RBF MMD to reference samples (sqrt of the V-statistic)");
  r.metric("sliced_w2", Direction::Minimize, "sliced Wasserstein-2 distance to reference samples");
  r.metric("mode_coverage", Direction::Maximize, "share of mixture components with >= 1/4 of their expected good samples");
  r.metric("mode_precision", Direction::Maximize, "share of samples within Mahalanobis distance 3 of a component");
  r.metric("precision", Direction::Maximize, "k-NN precision (k = 3)");
  r.metric("recall", Direction::Maximize, "k-NN recall (k = 3)");
  r.metric("frechet", Direction::Minimize, "Frechet distance of the fitted Gaussians (raw coordinates)");
  r.metric("nfe", Direction::None, "denoiser calls, counted");
  r.metric("seconds_per_nfe", Direction::Minimize, "sampling wall time per denoiser call (whole batch)").measures_time();
  r.metric("driver_share", Direction::None, "share of the sampling time spent drawing increments (excluding the one-off lorenz Q pilot)").measures_time();
  r.metric("mmd_floor", Direction::None, "mmd of fresh true samples (the estimator's floor)");
  r.metric("sliced_w2_floor", Direction::None, "sliced_w2 of fresh true samples");
  r.metric("q_green_kubo", Direction::None, "Q by Green-Kubo: 2 int_0^L C(s) ds");
  r.metric("q_variance", Direction::None, "Q by the variance growth of the integrated driver");
  r.metric("q_closed_form", Direction::None, "Q in closed form");
  r.metric("c_chi", Direction::None, "largest truncated Poisson solution |chi_T| over sampled states");
  r.metric("c_chi_closed_form", Direction::None, "C_chi in closed form (finite cases)");
  r.metric("sup_abs", Direction::None, "largest |xi| seen");
  r.metric("increment_var", Direction::None, "variance of the normalised increments at driver_steps");
  r.metric("increment_lag1_corr", Direction::None, "correlation of consecutive normalised increments");
  r.metric("fds_matches_ode_share", Direction::Maximize,
           "imperfect denoisers (all but exact), NFE 4-10: share of cells where fds (fds.digits: fds:lorenz) is not significantly worse than the best ODE (by MMD)");
  r.metric("fds_beats_sde_share", Direction::Maximize,
           "imperfect denoisers, NFE <= 8: share of cells where fds beats the SDE endpoint, strength 1 (95% CI excludes 0)");
  r.metric("fds_beats_edm_share", Direction::Maximize,
           "imperfect denoisers, NFE <= 8: share of cells where fds beats Gaussian churn (95% CI excludes 0)");
  r.metric("fds_beats_tuned_sde_share", Direction::Maximize,
           "imperfect denoisers, NFE <= 8: share of cells where fds beats the Gaussian sde at its own tuned strength");
  r.metric("fds_matches_ode_share_fd", Direction::Maximize,
           "fds.digits: as fds_matches_ode_share, by the Frechet distance in the classifier's features");
  r.metric("fds_beats_sde_share_fd", Direction::Maximize,
           "fds.digits: as fds_beats_sde_share, by the Frechet distance in the classifier's features");
  r.metric("fds_beats_edm_share_fd", Direction::Maximize,
           "fds.digits: as fds_beats_edm_share, by the Frechet distance in the classifier's features");
  r.metric("classifier_test_accuracy", Direction::Maximize, "fds.digits: the feature classifier's held-out accuracy");
  r.metric("frechet_features_floor", Direction::None,
           "fds.digits: Frechet distance in the classifier's features between two disjoint sets of real images");
  r.metric("mlp_edm_loss", Direction::Minimize, "mlp_edm: EDM-weighted training loss over the last 10% of steps");
  r.metric("mlp_vp_loss", Direction::Minimize, "mlp_vp: epsilon-prediction training loss over the last 10% of steps");
  r.metric("cells", Direction::None, "study cells run");
  r.metric("interior_best_share", Direction::None, "share of (driver, NFE) cells whose best strength is inside (0, 1)");

  r.dataset<fds::MixtureOptions>("fds.mixture", "Gaussian mixture (ring8, grid25, gmm), anisotropic components",
                                 fds::make_mixture_data);
  r.method("fds.sample", "one few-step sampler on a mixture with an exact or biased denoiser, scored", fds::run_sample)
      .options<fds::SampleOptions>()
      .produces({"mmd", "sliced_w2", "mode_coverage", "mode_precision", "precision", "recall", "frechet", "nfe",
                 "seconds_per_nfe", "driver_share", "mmd_floor", "sliced_w2_floor"})
      .accepts({"fds.mixture"});
  r.method("fds.driver_stats", "Q (Green-Kubo, variance growth) and C_chi of a driver", fds::run_driver_stats)
      .options<fds::DriverStatsOptions>()
      .produces({"q_green_kubo", "q_variance", "q_closed_form", "c_chi", "c_chi_closed_form", "sup_abs",
                 "increment_var", "increment_lag1_corr"});
  r.method("fds.frontier", "samplers x NFE x denoisers x mixtures over seeds, strengths tuned on a held-out seed",
           fds::run_frontier)
      .options<fds::FrontierOptions>()
      .produces({"fds_matches_ode_share", "fds_beats_sde_share", "fds_beats_edm_share", "fds_beats_tuned_sde_share",
                 "cells"});
  r.method("fds.digits",
           "real images (8x8 digits, or Fashion-MNIST at 14x14) with MLP denoisers trained in the run (EDM and VP "
           "families): samplers x NFE x seeds, MMD, "
           "sliced W2, Frechet distance in a classifier's features",
           fds::run_digits)
      .options<fds::DigitsOptions>()
      .produces({"mmd_floor", "sliced_w2_floor", "frechet_features_floor", "classifier_test_accuracy", "mlp_edm_loss",
                 "mlp_vp_loss", "fds_matches_ode_share", "fds_beats_sde_share", "fds_beats_edm_share",
                 "fds_matches_ode_share_fd", "fds_beats_sde_share_fd", "fds_beats_edm_share_fd", "cells"});
  r.method("fds.strength", "fds strength sweep per driver at fixed NFE", fds::run_strength)
      .options<fds::StrengthOptions>()
      .produces({"interior_best_share"});
}

}  // namespace

NEXP_PLUGIN(fds, "0.1.0",
            "a bounded chaotic driver (shuffled Lorenz) in the stochastic correction of few-step diffusion samplers "
            "improves on ODE samplers without the SDE endpoint's low-NFE decay",
            "Fast-Driver Sampler (FDS) for few-step diffusion: driver quantities Q and C_chi govern the ODE/SDE "
            "trade-off (NeurIPS 2026; authors not recorded with the abstract)",
            register_components)
