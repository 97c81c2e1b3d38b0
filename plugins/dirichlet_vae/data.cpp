#include "data.hpp"

#include <fmt/format.h>

#include <ATen/CPUGeneratorImpl.h>
#include <nexp/table.hpp>
#include <nexp/tensor_dataset.hpp>

#include <cmath>

#include "dirichlet.hpp"

namespace dirichlet_vae {

namespace {

at::Generator generator_for(const MixingOptions& o, nexp::RunContext& ctx) {
  return at::make_generator<at::CPUGeneratorImpl>(o.data_seed >= 0 ? static_cast<std::uint64_t>(o.data_seed)
                                                                    : ctx.seed());
}

at::Tensor dirichlet_abundances(std::int64_t n, std::int64_t K, double alpha0, const at::Generator& gen) {
  return rsample(at::full({n, K}, alpha0, at::kDouble), 1, gen).squeeze(0);
}

}  // namespace

std::string MixtureData::describe() const {
  if (!has_truth()) return fmt::format("{}: {} rows of dimension {}", name, x.size(0), x.size(1));
  return fmt::format("{}: {} rows of dimension {}, K = {} endmembers, Dir({}) abundances, noise variance {:.3g}",
                     name, x.size(0), x.size(1), K, alpha0, noise_var);
}

MixtureData synthetic_mixture(std::int64_t n, std::int64_t d, std::int64_t K, double alpha0, double noise,
                              const at::Generator& gen) {
  MixtureData m;
  m.name = "dirichlet_vae.synthetic";
  m.K = K;
  m.alpha0 = alpha0;
  m.noise_var = noise * noise;
  m.endmembers = at::randn({K, d}, gen, at::kDouble);
  m.abundances = dirichlet_abundances(n, K, alpha0, gen);
  m.x = m.abundances.matmul(m.endmembers) + noise * at::randn({n, d}, gen, at::kDouble);
  return m;
}

MixtureData mix(const at::Tensor& endmembers, std::int64_t n, double alpha0, double snr_db, const at::Generator& gen) {
  MixtureData m;
  m.K = endmembers.size(0);
  m.alpha0 = alpha0;
  m.endmembers = endmembers.to(at::kDouble);
  m.abundances = dirichlet_abundances(n, m.K, alpha0, gen);
  const at::Tensor clean = m.abundances.matmul(m.endmembers);
  const double signal = (clean - clean.mean(0)).pow(2).mean().item<double>();
  m.noise_var = signal * std::pow(10.0, -snr_db / 10.0);
  m.x = clean + std::sqrt(m.noise_var) * at::randn(clean.sizes(), gen, at::kDouble);
  return m;
}

at::Tensor load_spectra(const std::string& source, const std::filesystem::path& data_dir) {
  const auto file = data_dir / "dirichlet_vae" / (source + ".csv");
  if (!std::filesystem::exists(file))
    throw nexp::DataError(fmt::format(
        "dirichlet_vae.unmixing: the {} NIR spectra are not installed (looked for {}). They are converted once "
        "from Debian's R data (gasoline: r-cran-pls; tecator: r-cran-caret) by plugins/dirichlet_vae/data.sh, "
        "which needs Rscript (r-base-core). Run scripts/setup, or `bash plugins/dirichlet_vae/data.sh {}`.",
        source, file.string(), data_dir.string()));
  const char* again = "delete the file and run plugins/dirichlet_vae/data.sh again";
  // One row per spectrum, one column per channel (the header names the channels).
  std::vector<std::vector<double>> channels;
  try {
    const nexp::CsvTable table = nexp::CsvTable::read(file);
    for (const auto& name : table.header()) channels.push_back(table.reals(name));
  } catch (const nexp::DataError& e) {
    throw nexp::DataError(fmt::format("{}; {}", e.what(), again));
  }
  const auto cols = static_cast<std::int64_t>(channels.size());
  const auto rows = cols ? static_cast<std::int64_t>(channels[0].size()) : std::int64_t{0};
  if (rows == 0) throw nexp::DataError(fmt::format("{}: no spectra in the file", file.string()));
  std::vector<double> values(static_cast<std::size_t>(rows * cols));
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r) {
      const double v = channels[c][r];
      if (std::isnan(v))
        throw nexp::DataError(fmt::format("{}: row {} column {} is empty, expected a number; {}", file.string(), r + 2,
                                          c + 1, again));
      values[static_cast<std::size_t>(r * cols + c)] = v;
    }
  return at::tensor(values, at::kDouble).reshape({rows, cols});
}

std::vector<std::int64_t> successive_projections(const at::Tensor& spectra, std::int64_t K) {
  at::Tensor residual = spectra - spectra.mean(0);
  std::vector<std::int64_t> picks;
  for (std::int64_t k = 0; k < K; ++k) {
    const std::int64_t i = residual.pow(2).sum(1).argmax().item<std::int64_t>();
    picks.push_back(i);
    at::Tensor u = residual[i] / residual[i].norm();
    residual = residual - at::outer(residual.matmul(u), u);
  }
  return picks;
}

std::shared_ptr<nexp::Dataset> make_synthetic(const SyntheticOptions& o, nexp::RunContext& ctx) {
  return std::make_shared<MixtureData>(synthetic_mixture(o.n, o.d, o.K, o.alpha0, o.noise, generator_for(o, ctx)));
}

std::shared_ptr<nexp::Dataset> make_unmixing(const UnmixingOptions& o, nexp::RunContext& ctx) {
  const at::Tensor library = load_spectra(o.source, nexp::data_dir());
  if (o.K > library.size(0))
    throw nexp::ConfigError(fmt::format("dirichlet_vae.unmixing: K = {} endmembers, but the {} library holds {} "
                                        "spectra; choose K <= {}", o.K, o.source, library.size(0), library.size(0)));
  const auto picks = successive_projections(library, o.K);
  const at::Tensor endmembers = library.index_select(0, at::tensor(picks, at::kLong));
  auto m = std::make_shared<MixtureData>(mix(endmembers, o.n, o.alpha0, o.snr_db, generator_for(o, ctx)));
  m->name = "dirichlet_vae.unmixing(" + o.source + ")";
  ctx.log().info("{} endmembers: library rows {}", o.source, fmt::join(picks, ", "));
  return m;
}

const MixtureData& mixture_view(nexp::RunContext& ctx, MixtureData& storage) {
  nexp::Dataset& data = ctx.dataset();
  if (auto* m = dynamic_cast<MixtureData*>(&data)) return *m;
  if (auto* t = dynamic_cast<nexp::TensorDataset*>(&data)) {
    storage.name = t->name;
    storage.x = t->train_x.reshape({t->train_x.size(0), -1}).to(at::kDouble).contiguous();
    return storage;
  }
  throw nexp::ConfigError(fmt::format("{} needs rows of numbers: a dirichlet_vae data set or one of core's tensor "
                                      "data sets (mnist, fashion_mnist, digits, csv, ...); got {}",
                                      ctx.method_name(), data.describe()));
}

std::vector<double> covariance_spectrum(const at::Tensor& x) {
  const at::Tensor centred = x - x.mean(0);
  const double n = static_cast<double>(x.size(0));
  at::Tensor eig = x.size(1) <= x.size(0) ? at::linalg_eigvalsh(centred.t().matmul(centred) / n).flip(0)
                                          : at::linalg_svdvals(centred).pow(2) / n;
  eig = eig.clamp_min(0).contiguous();
  return {eig.data_ptr<double>(), eig.data_ptr<double>() + eig.numel()};
}

}  // namespace dirichlet_vae
