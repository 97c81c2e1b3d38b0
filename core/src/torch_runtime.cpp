// Attaching libnexp_torch.so, and the LibTorch settings core owns (nexp/runtime/torch_runtime.hpp).
//
// LibTorch is process-wide state (one thread pool, one default generator), so what core keeps about
// it is process-wide too: the attached runtime and the settings to give it when it attaches.
#include "nexp/runtime/torch_runtime.hpp"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "nexp/error.hpp"

namespace nexp {

namespace fs = std::filesystem;

TorchRuntime::~TorchRuntime() = default;

namespace {

// libnexp_torch.so's soname and its one entry point (see core/src/torch/runtime.cpp).
constexpr const char* kTorchLibrary = "libnexp_torch.so.0";
constexpr const char* kTorchEntry = "nexp_torch_runtime";

struct TorchState {
  std::mutex mutex;
  TorchRuntime* runtime = nullptr;
  std::optional<int> threads;
  std::optional<std::uint64_t> seed;
};

TorchState& state() {
  static TorchState* s = new TorchState();  // never destroyed: LibTorch outlives static destructors
  return *s;
}

// Takes the runtime from a handle of libnexp_torch.so and gives it the settings made so far.
TorchRuntime* attach(TorchState& s, void* handle, const std::string& where) {
  using Entry = TorchRuntime* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kTorchEntry));
  if (!entry)
    throw PluginError(fmt::format("'{}' has no entry point '{}'; it is not the libnexp_torch of this nexp. "
                                  "Rebuild and reinstall nexp",
                                  where, kTorchEntry));
  TorchRuntime* runtime = entry();
  if (s.threads) runtime->set_threads(*s.threads);
  if (s.seed) runtime->manual_seed(*s.seed);
  s.runtime = runtime;
  return runtime;
}

// Whether the dynamic loader has libnexp_torch mapped (asked without dlopen, which would show up as an
// attempt to open it in LD_DEBUG's account of what a process loads).
bool torch_library_mapped() {
  auto found = [](dl_phdr_info* info, size_t, void*) {
    return info->dlpi_name && std::strstr(info->dlpi_name, "/libnexp_torch.so") ? 1 : 0;
  };
  return ::dl_iterate_phdr(found, nullptr) != 0;
}

// The folder of libnexp_core.so, where libnexp_torch.so is built and installed next to it.
fs::path core_library_folder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&require_torch_runtime), &info) == 0 || !info.dli_fname) return {};
  return fs::path(info.dli_fname).parent_path();
}

}  // namespace

TorchRuntime* torch_runtime() {
  TorchState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.runtime;
}

TorchRuntime* attach_loaded_torch_runtime() {
  TorchState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.runtime || !torch_library_mapped()) return s.runtime;
  void* handle = ::dlopen(kTorchLibrary, RTLD_NOW | RTLD_NOLOAD);
  return handle ? attach(s, handle, kTorchLibrary) : nullptr;
}

TorchRuntime& require_torch_runtime() {
  if (TorchRuntime* r = attach_loaded_torch_runtime()) return *r;
  TorchState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const fs::path next_to_core = core_library_folder() / kTorchLibrary;
  void* handle = ::dlopen(next_to_core.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) handle = ::dlopen(kTorchLibrary, RTLD_NOW | RTLD_LOCAL);  // LD_LIBRARY_PATH, ld.so.cache
  if (!handle) {
    const char* err = ::dlerror();
    throw PluginError(fmt::format("LibTorch is needed here, but '{}' could not be loaded: {}. It is built and "
                                  "installed with nexp, next to libnexp_core.so",
                                  next_to_core.string(), err ? err : "unknown error"));
  }
  return *attach(s, handle, next_to_core.string());
}

std::vector<std::string> run_local_ranks(int ranks, const std::function<void(Comm&)>& body, double timeout_seconds) {
  TorchRuntime& runtime = require_torch_runtime();
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  const fs::path store = fs::temp_directory_path() / fmt::format("nexp-ranks-{}-{}-{}", ::getpid(), ranks, stamp);
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int k = 0; k < ranks; ++k)
    threads.emplace_back([&, k] {
      try {
        CommSetup setup;
        setup.rank = k, setup.size = ranks, setup.rendezvous = "file:" + store.string();
        setup.timeout_seconds = timeout_seconds;
        body(*runtime.make_comm(setup));
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(k)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  std::error_code ignored;
  fs::remove(store, ignored);
  return errors;
}

void set_torch_threads(int n) {
  TorchState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.threads = n;
  if (s.runtime) s.runtime->set_threads(n);
}

void seed_torch(std::uint64_t seed) {
  TorchState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.seed = seed;
  if (s.runtime) s.runtime->manual_seed(seed);
}

}  // namespace nexp
