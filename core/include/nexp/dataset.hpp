#pragma once
// Datasets: named generators or loaders with their own schema, built once per run.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "nexp/config.hpp"
#include "nexp/options.hpp"
#include "nexp/export.hpp"

namespace nexp {

class RunContext;

// Base of every dataset. A method gets its concrete type with RunContext::dataset_as<T>().
class NEXP_API Dataset {
 public:
  virtual ~Dataset();
  // One line for the run log, e.g. "fashion_mnist: 60000 train / 10000 test, 1x28x28, 10 classes".
  virtual std::string describe() const = 0;
};

// Builds the dataset from its validated parameters. May use ctx.seed(), ctx.rng() and ctx.log().
using DatasetFactory = std::function<std::shared_ptr<Dataset>(const Params& params, RunContext& ctx)>;

struct NEXP_API DatasetSpec {
  std::string name;  // "<slug>.<dataset>", or a plain name for core's shared data sets
  std::string summary;
  Schema schema;  // from the options struct: options<T>()
  std::function<void(const Params&)> bind_check;  // as MethodSpec::bind_check
  DatasetFactory make;

  // The dataset's options, declared once as a struct (nexp/options.hpp); the factory reads them with
  // nexp::bind<T>(params), or is registered typed: Registrar::dataset<T>(name, summary, make).
  template <class T>
  DatasetSpec& options() {
    schema = options_schema<T>();
    bind_check = [](const Params& p) { (void)bind<T>(p); };
    return *this;
  }
};

// Where installed data sets live: $NEXP_DATA_DIR, else $XDG_CACHE_HOME/nexp/data, else
// ~/.cache/nexp/data. `scripts/setup` fills it.
NEXP_API std::filesystem::path data_dir();

}  // namespace nexp
