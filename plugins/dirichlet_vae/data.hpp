#pragma once
// Linear-mixture data: synthetic Dirichlet mixtures, hyperspectral-style mixtures of real NIR spectra,
// and any of core's tensor data sets (MNIST for archetypal analysis) seen as rows x_i in R^d.
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dirichlet_vae {

// x_i = E^T a_i + noise, a_i ~ Dir(alpha0 1_K). The truth is absent (undefined tensors, zeros) when
// the rows come from a data set without one.
struct MixtureData : nexp::Dataset {
  std::string name;
  at::Tensor x;            // [N, d] double
  at::Tensor endmembers;   // E [K, d], or undefined
  at::Tensor abundances;   // a [N, K], or undefined
  std::int64_t K = 0;      // 0: unknown
  double alpha0 = 0;       // 0: unknown
  double noise_var = -1;   // per-coordinate noise variance; < 0: unknown
  std::string describe() const override;
  bool has_truth() const { return endmembers.defined(); }
};

// Synthetic: E with i.i.d. N(0, 1) entries, Gaussian noise of standard deviation `noise`.
MixtureData synthetic_mixture(std::int64_t n, std::int64_t d, std::int64_t K, double alpha0, double noise,
                              const at::Generator& gen);

// Mixes the given endmembers [K, d] with Dir(alpha0) abundances; the noise variance makes the
// signal-to-noise ratio of the centred signal snr_db decibels.
MixtureData mix(const at::Tensor& endmembers, std::int64_t n, double alpha0, double snr_db, const at::Generator& gen);

// Spectra of one library [M, channels], read from <data_dir>/dirichlet_vae/<source>.csv (written by
// plugins/dirichlet_vae/data.sh). Throws nexp::DataError when absent.
at::Tensor load_spectra(const std::string& source, const std::filesystem::path& data_dir);

// The successive projections algorithm on the library's centred spectra: K rows that span a simplex of
// large volume (each pick has the largest residual after projecting out the previous picks).
std::vector<std::int64_t> successive_projections(const at::Tensor& spectra, std::int64_t K);

// The options of the two data sets: what both draw abundances with, then each one's own.
struct MixingOptions {
  double alpha0 = 1.0;
  std::int64_t data_seed = -1;  // -1: the run's seed

  static void declare(nexp::Options<MixingOptions>& o) {
    o.add("alpha0", &MixingOptions::alpha0, "concentration of the abundances").min(1e-4);
    o.add("data_seed", &MixingOptions::data_seed, "seed of the data (-1: the run's seed)").min(-1);
  }
};

struct SyntheticOptions : MixingOptions {
  std::int64_t n = 2000, d = 12, K = 3;
  double noise = 0.1;

  static void declare(nexp::Options<SyntheticOptions>& o) {
    o.add("n", &SyntheticOptions::n, "number of data points").min(2);
    o.add("d", &SyntheticOptions::d, "data dimension").min(1);
    o.add("K", &SyntheticOptions::K, "number of endmembers").min(2);
    o.add("noise", &SyntheticOptions::noise, "standard deviation of the Gaussian noise").min(0);
    o.inherit<MixingOptions>();
  }
};

struct UnmixingOptions : MixingOptions {
  std::string source = "gasoline";  // a file name: <data_dir>/dirichlet_vae/<source>.csv
  std::int64_t K = 3, n = 2000;
  double snr_db = 30.0;

  static void declare(nexp::Options<UnmixingOptions>& o) {
    o.add("source", &UnmixingOptions::source, "spectral library").choices({"gasoline", "tecator"});
    o.add("K", &UnmixingOptions::K, "endmembers, picked from the library by successive projections").range(2, 8);
    o.add("n", &UnmixingOptions::n, "number of mixed pixels").min(2);
    o.add("snr_db", &UnmixingOptions::snr_db, "signal-to-noise ratio of the centred signal, decibels");
    o.inherit<MixingOptions>();
  }
};

// nexp dataset factories.
std::shared_ptr<nexp::Dataset> make_synthetic(const SyntheticOptions& o, nexp::RunContext& ctx);
std::shared_ptr<nexp::Dataset> make_unmixing(const UnmixingOptions& o, nexp::RunContext& ctx);

// The run's data as a MixtureData: a dirichlet_vae data set as is, a core TensorDataset (MNIST, ...) as
// its training rows flattened to [N, d].
const MixtureData& mixture_view(nexp::RunContext& ctx, MixtureData& storage);

// Eigenvalues of the data covariance C = (1/N) sum_i (x_i - mean)(x_i - mean)^T, descending.
std::vector<double> covariance_spectrum(const at::Tensor& x);

}  // namespace dirichlet_vae
