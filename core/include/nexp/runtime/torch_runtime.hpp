#pragma once
// LibTorch as core sees it. Core does not link LibTorch: loading libtorch_cpu costs ~0.8 s of static
// initialisation, which `nexp --version`, a sweep's every trial and every plugin that does not use it
// would pay. libnexp_torch.so implements this interface. It enters the process with the first plugin
// that links it (or when a core tensor data set is built) and is attached here then; core applies the
// process's settings (threads, seed) to LibTorch at that moment and whenever they change.
//
// All of it runs on the main thread (plugins load there, before any worker thread exists).
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nexp/export.hpp"
#include "nexp/options.hpp"

namespace at {
class Tensor;
}

namespace nexp {

class Dataset;
class Comm;

// How a rank finds the others (core/src/run_ranks.cpp fills it from the rank's environment).
struct CommSetup {
  int rank = 0;
  int size = 1;
  std::string rendezvous;          // "file:<path>" (a c10d FileStore) or "tcp:<host>:<port>" (rank 0 serves)
  std::string host = "127.0.0.1";  // the address Gloo binds to on this rank
  double timeout_seconds = 60;     // of the rendezvous and of every collective
};

// How a labelled table is split and scaled (the options of core's csv, npy and scikit-learn data sets).
struct SplitOptions {
  double test_fraction = 0.2;
  std::int64_t split_seed = 0;
  bool standardize = true;
  static void declare(Options<SplitOptions>& o) {
    o.add("test_fraction", &SplitOptions::test_fraction, "fraction of the rows held out as the test split").range(0, 0.9);
    o.add("split_seed", &SplitOptions::split_seed, "seed of the train/test permutation (fixed across run seeds)").min(0);
    o.add("standardize", &SplitOptions::standardize, "scale each feature to zero mean and unit variance (train statistics)");
  }
};

// Which images of an IDX set (MNIST, Fashion-MNIST) to keep, and how to scale them.
struct ImageOptions {
  std::int64_t train_size = 0;
  std::int64_t test_size = 0;
  std::int64_t subset_seed = 0;
  bool normalize = false;
  static void declare(Options<ImageOptions>& o) {
    o.add("train_size", &ImageOptions::train_size, "number of training images (a fixed random subset); 0 = all 60000").min(0);
    o.add("test_size", &ImageOptions::test_size, "number of test images (a fixed random subset); 0 = all 10000").min(0);
    o.add("subset_seed", &ImageOptions::subset_seed, "seed of the subset permutation (fixed across run seeds)").min(0);
    o.add("normalize", &ImageOptions::normalize, "standardise pixels with the training mean and std (else [0, 1])");
  }
};

class NEXP_API TorchRuntime {
 public:
  virtual ~TorchRuntime();

  // ---- Process settings
  virtual void set_threads(int n) = 0;  // intra-op threads; inter-op too, the first time
  virtual void manual_seed(std::uint64_t seed) = 0;
  virtual std::string generator_state() = 0;  // the default CPU generator's state, as bytes
  virtual void set_generator_state(const std::string& bytes) = 0;
  // GPUs this LibTorch can compute on (0 when it was built without CUDA or finds no driver).
  virtual int cuda_devices() = 0;
  // A LibTorch error without the C++ backtrace it carries; other exceptions' what().
  virtual std::string error_message(const std::exception& e) = 0;

  // ---- Core's tensor data sets (nexp::TensorDataset) and prediction metrics
  virtual std::shared_ptr<Dataset> idx_images(const std::string& name, const std::filesystem::path& folder,
                                              const ImageOptions& subset, std::vector<std::string> class_names) = 0;
  // A CSV of numbers; target_column < 0 counts from the end.
  virtual std::shared_ptr<Dataset> csv_table(const std::string& name, const std::filesystem::path& file,
                                             bool header, int target_column, bool classification,
                                             const SplitOptions& split) = 0;
  virtual std::shared_ptr<Dataset> npy_arrays(const std::filesystem::path& x, const std::filesystem::path& y,
                                              bool classification, const SplitOptions& split) = 0;
  // accuracy, nll, ece or brier of probs [N, C] (double) against labels [N] (int64).
  virtual double prediction_metric(const std::string& name, const at::Tensor& probs, const at::Tensor& labels) = 0;

  // ---- The run's communicator (nexp/comm.hpp): Gloo over c10d when setup.size > 1 (c10d's objects are
  // made only then), else the one-process world.
  virtual std::unique_ptr<Comm> make_comm(const CommSetup& setup) = 0;
};

// The attached runtime, or null while no LibTorch code is loaded in this process. Never loads it.
NEXP_API TorchRuntime* torch_runtime();
// Attaches libnexp_torch.so if the dynamic loader already has it (the loader calls this after each
// plugin). Returns torch_runtime().
NEXP_API TorchRuntime* attach_loaded_torch_runtime();
// Loads libnexp_torch.so from libnexp_core.so's folder when it is not loaded yet, and attaches it.
// Throws PluginError naming the file when it cannot.
NEXP_API TorchRuntime& require_torch_runtime();

// Runs `body` on `ranks` ranks of one Gloo world inside this process, one thread each (they meet
// through a FileStore in the temporary folder): for tests of code that talks over a Comm. Returns each
// rank's error message, "" for a rank whose body returned.
NEXP_API std::vector<std::string> run_local_ranks(int ranks, const std::function<void(Comm&)>& body,
                                                  double timeout_seconds = 60);

// Settings core owns. Each applies now when LibTorch is attached, and when it attaches otherwise.
NEXP_API void set_torch_threads(int n);
NEXP_API void seed_torch(std::uint64_t seed);

}  // namespace nexp
