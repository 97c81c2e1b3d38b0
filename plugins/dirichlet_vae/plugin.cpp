// dirichlet_vae: posterior collapse threshold in Dirichlet beta-VAEs. Registers the plugin's components.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Param;

// K, alpha0 and the decoder variance: what beta_c depends on besides the data.
void model_params(nexp::MethodSpec& m) {
  m.param(Param::integer("K", 3, "simplex vertices (latent dimension + 1); default: the data set's K").min(2).optional())
      .param(Param::real("alpha0", 1.0, "prior concentration Dir(alpha0 1_K); default: the data set's generating alpha0, else 1")
                 .min(1e-4).optional())
      .param(Param::string("sigma2_mode", "fixed", "decoder variance: fixed (params.sigma2), noise (the data set's true noise "
                                                   "variance) or learned (beta_c then uses tr(C)/d, its collapsed value)")
                 .choices({"fixed", "noise", "learned"}))
      .param(Param::real("sigma2", 1.0, "decoder variance sigma^2 when sigma2_mode is fixed").min(1e-12));
}

void beta_params(nexp::MethodSpec& m) {
  m.param(Param::real("beta", 1.0, "KL weight beta (give this or beta_ratio)").min(0).optional())
      .param(Param::real("beta_ratio", 1.0, "KL weight as a multiple of beta_c (give this or beta)").min(0).optional());
}

void training_params(nexp::MethodSpec& m) {
  m.param(Param::string("decoder", "linear", "linear (free endmembers), archetypal (convex combinations of the data) or mlp")
              .choices({"linear", "archetypal", "mlp"}))
      .param(Param::string("elbo", "exact", "exact (linear decoders) or mc (reparameterised Gamma-normalise samples)")
                 .choices({"exact", "mc"}))
      .param(Param::integer("mc_samples", 8, "samples per data point for the Monte-Carlo ELBO").min(1))
      .param(Param::integer("hidden", 32, "encoder hidden width (one ReLU layer)").min(1))
      .param(Param::integer("decoder_hidden", 32, "hidden width of the MLP decoder (tanh)").min(1))
      .param(Param::integer("encoder_pca", 0, "feed the encoder the top principal components only (0: all inputs)").min(0))
      .param(Param::real("init_scale", 1.0, "distance of the start from the collapsed point: endmembers at mean + init_scale "
                                            "(random data point - mean), encoder output weights scaled alike")
                 .min(0))
      .param(Param::string("precision", "float64", "float64, or float32 (about twice as fast; KL resolved to ~1e-6)")
                 .choices({"float64", "float32"}))
      .param(Param::integer("steps", 3000, "full-batch Adam steps").min(1))
      .param(Param::real("lr", 3e-2, "Adam learning rate (parameters are in standardised data units)").range(1e-6, 1))
      .param(Param::real("lr_final", 3e-3, "final learning rate as a fraction of lr (cosine decay)").range(0, 1))
      .param(Param::real("active_tol", 1e-2, "a simplex direction is active when Var_x of the posterior mean along it "
                                             "exceeds this fraction of the prior's variance per direction")
                 .min(0));
}

void scan_params(nexp::MethodSpec& m) {
  m.param(Param::reals("ratios", {0.5, 0.75, 0.9, 1.1, 1.5, 2.0}, "beta / beta_c values to train at").min(0))
      .param(Param::integer("seeds", 2, "models per ratio (seed s initialises every ratio alike)").min(1))
      .param(Param::real("kl_tol", 1e-3, "mean KL (nats) below which a model counts as collapsed").min(0))
      .param(Param::integer("refine_rounds", 1, "rounds of extra ratios inside the onset's bracket").min(0))
      .param(Param::integer("refine_points", 4, "extra ratios per refinement round").min(1));
}

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

  r.dataset("dirichlet_vae.synthetic", "linear Dirichlet mixtures x = E^T a + noise, E ~ N(0, 1), a ~ Dir(alpha0 1_K)",
            dirichlet_vae::make_synthetic)
      .param(Param::integer("n", 2000, "number of data points").min(2))
      .param(Param::integer("d", 12, "data dimension").min(1))
      .param(Param::integer("K", 3, "number of endmembers").min(2))
      .param(Param::real("alpha0", 1.0, "concentration of the abundances").min(1e-4))
      .param(Param::real("noise", 0.1, "standard deviation of the Gaussian noise").min(0))
      .param(Param::integer("data_seed", -1, "seed of the data (-1: the run's seed)").min(-1));

  r.dataset("dirichlet_vae.unmixing",
            "hyperspectral-style mixtures of real NIR endmember spectra (gasoline: 401 channels, tecator: 100)",
            dirichlet_vae::make_unmixing)
      .param(Param::string("source", "gasoline", "spectral library").choices({"gasoline", "tecator"}))
      .param(Param::integer("K", 3, "endmembers, picked from the library by successive projections").min(2).max(8))
      .param(Param::integer("n", 2000, "number of mixed pixels").min(2))
      .param(Param::real("alpha0", 1.0, "concentration of the abundances").min(1e-4))
      .param(Param::real("snr_db", 30.0, "signal-to-noise ratio of the centred signal, decibels"))
      .param(Param::integer("data_seed", -1, "seed of the data (-1: the run's seed)").min(-1));

  const std::vector<std::string> data = {"dirichlet_vae.*", "mnist", "fashion_mnist", "digits", "iris", "wine",
                                         "breast_cancer", "csv", "npy"};

  auto& threshold = r.method("dirichlet_vae.threshold",
                             "beta_c from the data covariance spectrum, K, alpha0 and sigma^2; active directions at a beta",
                             dirichlet_vae::run_threshold);
  model_params(threshold);
  beta_params(threshold);
  threshold.produces({"beta_c", "lambda_max", "sigma2", "trigamma", "kappa", "gaussian_beta_c", "beta", "beta_ratio",
                      "active_dims_predicted"})
      .accepts(data);

  auto& train = r.method("dirichlet_vae.train",
                         "trains a Dirichlet beta-VAE at beta (or beta / beta_c); KL, active directions, reconstruction, unmixing",
                         dirichlet_vae::run_train);
  model_params(train);
  beta_params(train);
  training_params(train);
  train.param(Param::integer("log_every", 100, "steps between logged metrics").min(1))
      .param(Param::integer("checkpoint_every", 500, "steps between checkpoints").min(1))
      .produces({"kl", "active_dims", "active_dims_predicted", "recon_mse", "elbo", "sigma2", "beta", "beta_c",
                 "beta_ratio", "sad", "abundance_rmse", "loss", "seconds"})
      .accepts(data)
      .supports_resume();

  auto& scan = r.method("dirichlet_vae.scan",
                        "trains over a grid of beta / beta_c and seeds; empirical collapse onset, KL/SAD/active curves (SVG)",
                        dirichlet_vae::run_scan);
  model_params(scan);
  training_params(scan);
  scan_params(scan);
  scan.produces({"beta_c", "lambda_max", "kappa", "onset_ratio", "onset_lower", "onset_upper", "onset_error", "best_sad",
                 "best_sad_ratio", "abundance_rmse", "beta_ratio", "kl", "active_dims", "active_dims_predicted",
                 "recon_mse", "sad"})
      .accepts(data);

  auto& sweep = r.method("dirichlet_vae.collapse_sweep",
                         "predicted beta_c against the empirical onset of collapse over alpha0, K and seeds (synthetic data)",
                         dirichlet_vae::run_collapse_sweep);
  sweep.param(Param::reals("alpha0s", {0.3, 1.0, 5.0}, "concentrations (data and prior alike)").min(1e-4))
      .param(Param::ints("Ks", {3, 5}, "numbers of endmembers (data and model alike)").min(2))
      .param(Param::integer("n", 2000, "data points per setting").min(2))
      .param(Param::integer("d", 12, "data dimension").min(1))
      .param(Param::real("noise", 0.1, "noise standard deviation").min(0))
      .param(Param::integer("data_seed", 0, "seed of the first setting's data (then +1 per setting)").min(0))
      .param(Param::reals("init_scales", {1.0}, "initialisations to sweep (init_scale values; 1: usual, small: near collapse)")
                 .min(0))
      .param(Param::string("sigma2_mode", "fixed", "decoder variance: fixed, noise or learned").choices({"fixed", "noise", "learned"}))
      .param(Param::real("sigma2", 1.0, "decoder variance when sigma2_mode is fixed").min(1e-12));
  training_params(sweep);
  scan_params(sweep);
  sweep.produces({"mean_onset_error", "max_onset_error", "onset_within_5pct", "settings_with_onset", "beta_c", "onset_ratio"});
}

}  // namespace

NEXP_PLUGIN(dirichlet_vae, "0.1.0",
            "closed-form collapse threshold beta_c for Dirichlet beta-VAEs with linear Gaussian decoders, and its use",
            "Posterior collapse threshold in Dirichlet beta-VAEs, NeurIPS 2026", register_components)
