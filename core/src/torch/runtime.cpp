// libnexp_torch.so's side of nexp/runtime/torch_runtime.hpp: what core asks of LibTorch.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <cstring>

#include "nexp/export.hpp"
#include "nexp/runtime/torch_runtime.hpp"
#include "torch_components.hpp"

namespace nexp {

namespace {

class LibTorchRuntime final : public TorchRuntime {
 public:
  void set_threads(int n) override {
    at::set_num_threads(n);
    if (!interop_set_) {
      // Inter-op threads can be set once, before any inter-op work; later calls keep the first value.
      try {
        at::set_num_interop_threads(n);
      } catch (const std::exception&) {
      }
      interop_set_ = true;
    }
  }

  void manual_seed(std::uint64_t seed) override { at::manual_seed(seed); }

  std::string generator_state() override {
    at::Tensor state = at::detail::getDefaultCPUGenerator().get_state();
    return std::string(static_cast<const char*>(state.data_ptr()), static_cast<size_t>(state.numel()));
  }

  void set_generator_state(const std::string& bytes) override {
    at::Tensor state = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kByte);
    std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle to the one generator
    generator.set_state(state);
  }

  int cuda_devices() override { return at::hasCUDA() ? static_cast<int>(at::getNumGPUs()) : 0; }

  std::string error_message(const std::exception& e) override {
    if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
    return e.what();
  }

  std::shared_ptr<Dataset> idx_images(const std::string& name, const std::filesystem::path& folder,
                                      const ImageOptions& subset, std::vector<std::string> class_names) override {
    return load_idx_set(name, folder, subset, std::move(class_names));
  }
  std::shared_ptr<Dataset> csv_table(const std::string& name, const std::filesystem::path& file, bool header,
                                     int target_column, bool classification, const SplitOptions& split) override {
    return load_table(name, file, header, target_column, classification, split);
  }
  std::shared_ptr<Dataset> npy_arrays(const std::filesystem::path& x, const std::filesystem::path& y,
                                      bool classification, const SplitOptions& split) override {
    return load_npy_set(x, y, classification, split);
  }
  double prediction_metric(const std::string& name, const at::Tensor& probs, const at::Tensor& labels) override {
    return core_prediction_metric(name, probs, labels);
  }
  std::unique_ptr<Comm> make_comm(const CommSetup& setup) override { return make_torch_comm(setup); }

 private:
  bool interop_set_ = false;
};

}  // namespace

}  // namespace nexp

// The one entry point core looks up (dlsym) when it attaches this library.
extern "C" NEXP_API nexp::TorchRuntime* nexp_torch_runtime() {
  static nexp::TorchRuntime* runtime = new nexp::LibTorchRuntime();  // never destroyed, like LibTorch
  return runtime;
}
