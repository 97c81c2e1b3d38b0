// dirichlet_vae: posterior collapse threshold in Dirichlet beta-VAEs. Registers the plugin's components;
// their options are declared in data.hpp, model.hpp and experiments.hpp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

void register_components(nexp::Registrar& r) {
  using nexp::Direction;
  r.metric("kl", Direction::None, "mean KL(q(z|x) || p(z)) in nats at the end of training");
  r.metric("active_dims", Direction::None, "simplex directions the encoder uses (eigenvalues of Cov_x of the posterior mean)");
  r.metric("active_dims_predicted", Direction::None, "simplex directions the local analysis predicts active at this beta");
  r.metric("recon_mse", Direction::Minimize, "mean squared error of the reconstruction from the posterior mean");
  r.metric("elbo", Direction::Maximize, "evidence lower bound per data point");
  r.metric("sigma2", Direction::None, "decoder variance");
  r.metric("beta", Direction::None, "KL weight");
  r.metric("beta_c", Direction::None, "closed-form collapse threshold (lambda_max / sigma^2) kappa(alpha0, K)");
  r.metric("beta_ratio", Direction::None, "beta / beta_c");
  r.metric("lambda_max", Direction::None, "top eigenvalue of the data covariance");
  r.metric("trigamma", Direction::None, "psi1(alpha0)");
  r.metric("kappa", Direction::None, "trigamma curvature factor (K alpha0 + 1) / (K alpha0^2 psi1(alpha0)), in (1/K, 1)");
  r.metric("gaussian_beta_c", Direction::None, "the Gaussian linear-VAE threshold lambda_max / sigma^2");
  r.metric("sad", Direction::Minimize, "mean spectral angle distance between matched and true endmembers (radians)");
  r.metric("abundance_rmse", Direction::Minimize, "root mean squared error of the posterior-mean abundances");
  r.metric("best_sad", Direction::Minimize, "smallest mean SAD over the scanned beta / beta_c");
  r.metric("best_sad_ratio", Direction::None, "beta / beta_c at which the mean SAD is smallest");
  r.metric("onset_ratio", Direction::None, "empirical onset of collapse, as beta / beta_c");
  r.metric("onset_lower", Direction::None, "largest scanned beta / beta_c below the onset (not collapsed)");
  r.metric("onset_upper", Direction::None, "smallest scanned beta / beta_c of the collapsed tail");
  r.metric("onset_error", Direction::Minimize, "|empirical onset / beta_c - 1|");
  r.metric("mean_onset_error", Direction::Minimize, "mean over settings of |empirical onset / beta_c - 1|");
  r.metric("max_onset_error", Direction::Minimize, "largest over settings of |empirical onset / beta_c - 1|");
  r.metric("onset_within_5pct", Direction::Maximize, "fraction of settings whose onset is within 5% of beta_c");
  r.metric("settings_with_onset", Direction::None, "settings whose scan collapsed inside the grid");

  r.dataset<dirichlet_vae::SyntheticOptions>(
      "dirichlet_vae.synthetic", "linear Dirichlet mixtures x = E^T a + noise, E ~ N(0, 1), a ~ Dir(alpha0 1_K)",
      dirichlet_vae::make_synthetic);
  r.dataset<dirichlet_vae::UnmixingOptions>(
      "dirichlet_vae.unmixing",
      "hyperspectral-style mixtures of real NIR endmember spectra (gasoline: 401 channels, tecator: 100)",
      dirichlet_vae::make_unmixing);

  const std::vector<std::string> data = {"dirichlet_vae.*", "mnist", "fashion_mnist", "digits", "iris", "wine",
                                         "breast_cancer", "csv", "npy"};

  r.method("dirichlet_vae.threshold",
           "beta_c from the data covariance spectrum, K, alpha0 and sigma^2; active directions at a beta",
           dirichlet_vae::run_threshold)
      .options<dirichlet_vae::ThresholdMethodOptions>()
      .produces({"beta_c", "lambda_max", "sigma2", "trigamma", "kappa", "gaussian_beta_c", "beta", "beta_ratio",
                 "active_dims_predicted"})
      .accepts(data);

  r.method("dirichlet_vae.train",
           "trains a Dirichlet beta-VAE at beta (or beta / beta_c); KL, active directions, reconstruction, unmixing",
           dirichlet_vae::run_train)
      .options<dirichlet_vae::TrainMethodOptions>()
      .produces({"kl", "active_dims", "active_dims_predicted", "recon_mse", "elbo", "sigma2", "beta", "beta_c",
                 "beta_ratio", "sad", "abundance_rmse", "loss", "seconds"})
      .accepts(data)
      .supports_resume();

  r.method("dirichlet_vae.scan",
           "trains over a grid of beta / beta_c and seeds; empirical collapse onset, KL/SAD/active curves (SVG)",
           dirichlet_vae::run_scan)
      .options<dirichlet_vae::ScanMethodOptions>()
      .produces({"beta_c", "lambda_max", "kappa", "onset_ratio", "onset_lower", "onset_upper", "onset_error",
                 "best_sad", "best_sad_ratio", "abundance_rmse", "beta_ratio", "kl", "active_dims",
                 "active_dims_predicted", "recon_mse", "sad"})
      .accepts(data);

  r.method("dirichlet_vae.collapse_sweep",
           "predicted beta_c against the empirical onset of collapse over alpha0, K and seeds (synthetic data)",
           dirichlet_vae::run_collapse_sweep)
      .options<dirichlet_vae::SweepMethodOptions>()
      .produces({"mean_onset_error", "max_onset_error", "onset_within_5pct", "settings_with_onset", "beta_c",
                 "onset_ratio"});
}

}  // namespace

NEXP_PLUGIN(dirichlet_vae, "0.1.0",
            "closed-form collapse threshold beta_c for Dirichlet beta-VAEs with linear Gaussian decoders, and its use",
            "Posterior collapse threshold in Dirichlet beta-VAEs, NeurIPS 2026", register_components)
