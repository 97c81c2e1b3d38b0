#pragma once
// nexp glue: the options of the data set and methods (declared once, as structs), and the methods.
//   fds.mixture       data set: a Gaussian mixture (mixture.hpp) with reference samples
//   fds.sample        one sampler x denoiser x NFE run, scored (metrics.hpp)
//   fds.driver_stats  Q (Green-Kubo, variance growth), C_chi, sup |xi| of one driver (drivers.hpp)
//   fds.frontier      mixtures x denoisers x samplers x NFE x seeds, strengths tuned per NFE on a held-out seed
//   fds.strength      strength sweep at fixed NFE for several drivers
//   fds.digits        real images (the 8x8 digits, or Fashion-MNIST at 14x14) with both trained denoiser
//                     families: samplers x NFE x seeds, scored by MMD, sliced W2 and the Frechet distance
//                     in a classifier's features
#include <nexp/nexp.hpp>

#include <string>
#include <vector>

#include "drivers.hpp"
#include "mixture.hpp"
#include "mlp_denoiser.hpp"
#include "sampler.hpp"

namespace fds {

struct MixtureOptions {
  std::string kind = "ring8";
  int dim = 2;
  int components = 8;
  double scale = 2.0;
  double sd = 0.08;
  double anisotropy = 3.0;
  std::int64_t reference = 20000;
  static void declare(nexp::Options<MixtureOptions>& o);
  MixtureSpec spec() const;
};

// A mixture and reference samples drawn from it (stream "reference").
struct MixtureData : nexp::Dataset {
  Mixture mixture;
  Mat reference;
  std::string kind;
  std::string describe() const override;
};
std::shared_ptr<nexp::Dataset> make_mixture_data(const MixtureOptions& o, nexp::RunContext& ctx);

// What every sampling method shares: the schedule, the denoiser, the driver and the evaluation.
struct SamplingOptions {
  double sigma_min = 0.002, sigma_max = 80.0, rho = 7.0;
  std::string denoiser = "exact";  // exact | exact_biased | mlp_edm | mlp_vp
  double denoiser_error = 0.1;
  // mlp_edm, mlp_vp: the MLP and its training in the run (mlp_denoiser.hpp); few train_steps give the
  // under-trained checkpoint. Mixtures: trained on train_samples fresh samples of the mixture.
  int width = 256, depth = 3, train_steps = 4000, batch = 128;
  double lr = 1e-3;
  std::int64_t train_samples = 20000;
  bool save_denoisers = false;  // write artifacts/denoisers/<data>_<denoiser>.bin
  std::string load_denoisers;   // a folder of such files: loaded instead of trained
  MlpTraining training() const;
  std::string driver = "lorenz";   // gaussian | ou | telegraph | lorenz
  int driver_steps = 200;
  double driver_dt = 0.01;
  double rate = 10.0;
  double amplitude = 1.0;
  bool lorenz_z = false;
  std::int64_t samples = 20000;
  std::int64_t eval_samples = 2000;
  int sw_directions = 64;
  static void declare(nexp::Options<SamplingOptions>& o);
};

struct SampleOptions : SamplingOptions {
  std::string sampler = "fds";
  int nfe = 6;
  double strength = 0.3;
  bool write_samples = false;  // artifacts z.csv, samples.csv, mixture.csv (for bench/fds_reference.py)
  static void declare(nexp::Options<SampleOptions>& o);
};

struct DriverStatsOptions {
  std::string driver = "lorenz";
  double rate = 10.0, amplitude = 1.0, dt = 0.01;
  bool lorenz_z = false;
  int slots = 3000;        // variance growth: independent coordinates
  int samples = 4000;      // steps of the trajectory (T = samples dt)
  int max_lag = 500;       // Green-Kubo truncation, in steps
  int trace_slots = 256;   // Green-Kubo: coordinates whose trajectories are kept
  int states = 16;         // C_chi: sampled states
  int copies = 4000;       // C_chi: ensemble per state
  double horizon = 5.0;    // C_chi: truncation time
  double jitter = 1e-3;    // C_chi: lorenz perturbation, in standard deviations
  int driver_steps = 200;  // the increments a sampler would see: their variance and lag-1 correlation
  static void declare(nexp::Options<DriverStatsOptions>& o);
};

struct StudyOptions : SamplingOptions {
  std::vector<std::string> kinds = {"ring8", "grid25", "gmm"};
  MixtureOptions mixture;
  std::vector<std::string> denoisers = {"exact", "exact_biased"};
  std::vector<std::int64_t> nfes = {4, 6, 8, 10, 14, 20};
  int seeds = 5;
  std::vector<double> strengths = {0.1, 0.2, 0.3, 0.5, 0.7, 1.0};
  static void declare(nexp::Options<StudyOptions>& o);
};

struct FrontierOptions : StudyOptions {
  std::vector<std::string> samplers = {"euler", "heun", "dpmpp_2m", "edm", "sde", "sde_endpoint", "fds", "fds_churn"};
  static void declare(nexp::Options<FrontierOptions>& o);
};

struct StrengthOptions : StudyOptions {
  std::vector<std::string> drivers = {"gaussian", "telegraph", "lorenz"};
  static void declare(nexp::Options<StrengthOptions>& o);
};

// Real images: the 8x8 digits (scikit-learn's 1797 images, read from the data cache, pixels 0..16 scaled to
// [-1, 1]) or Fashion-MNIST's training images block-averaged to image_size x image_size (raw IDX files).
struct DigitsOptions : SamplingOptions {
  DigitsOptions() {
    denoiser = "mlp_edm", samples = 800, eval_samples = 800, train_steps = 4000;
  }
  std::string data = "digits";  // digits | fashion_mnist
  int images = 10000;           // fashion_mnist: the first this many training images
  int image_size = 14;          // fashion_mnist: 28 x 28 block-averaged to image_size x image_size
  std::string file;             // digits: empty: <data dir>/sklearn/digits.csv
  std::vector<std::string> denoisers = {"mlp_edm", "mlp_vp"};
  std::vector<std::string> samplers = {"euler", "heun", "dpmpp_2m", "edm", "sde_endpoint", "fds"};
  std::vector<std::string> drivers = {"telegraph", "lorenz"};  // each fds / fds_churn entry runs once per driver
  std::vector<std::int64_t> nfes = {4, 6, 8, 10};
  int seeds = 3;
  std::vector<double> strengths = {0.1, 0.2, 0.3, 0.5, 0.7, 1.0};
  int classifier_width = 128, classifier_depth = 2, classifier_steps = 2000;
  double test_share = 0.2;
  static void declare(nexp::Options<DigitsOptions>& o);
};

void run_sample(nexp::RunContext& ctx);
void run_digits(nexp::RunContext& ctx);
void run_driver_stats(nexp::RunContext& ctx);
void run_frontier(nexp::RunContext& ctx);
void run_strength(nexp::RunContext& ctx);

}  // namespace fds
