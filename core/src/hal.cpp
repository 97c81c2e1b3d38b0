// The HAL's core backends (cpu, cuda) and device resolution (nexp/runtime/hal.hpp).
//
// cuda: NVML (libnvidia-ml.so.1, loaded with dlopen when the driver is installed) says what the GPUs
// are and how they are doing; LibTorch says whether it can compute on them. Core does not link
// LibTorch, so it is asked when it is loaded already (a plugin that uses it is), or loaded to be asked
// when it was built with CUDA and NVML sees a GPU. A machine with GPUs but a LibTorch without CUDA
// lists them, marked as not usable for computing; `nexp --version` loads nothing.
#include "nexp/runtime/hal.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core_components.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/torch_runtime.hpp"
#include "nexp/version.hpp"

namespace nexp {

namespace fs = std::filesystem;

std::pair<std::string, int> parse_device_id(const std::string& id) {
  auto colon = id.find(':');
  if (colon == std::string::npos) return {id, 0};
  const std::string index = id.substr(colon + 1);
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 6)
    throw ConfigError(fmt::format("device '{}': expected <backend>:<index> with a non-negative integer index, e.g. "
                                  "cuda:0",
                                  id));
  return {id.substr(0, colon), std::stoi(index)};
}

// ---------------------------------------------------------------- cpu

namespace {

std::string read_first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::map<std::string, double> meminfo() {
  std::map<std::string, double> out;
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (!key.empty() && key.back() == ':') key.pop_back();
    out[key] = kb * 1024.0;
  }
  return out;
}

struct CpuTimes {
  unsigned long long busy = 0, total = 0;
};
CpuTimes cpu_times() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[10] = {0};
  in >> cpu;
  for (auto& x : v) in >> x;
  CpuTimes t;
  for (auto x : v) t.total += x;
  t.busy = t.total - v[3] - v[4];  // less idle and iowait
  return t;
}

// The hottest CPU-related sensor that /sys exposes, or NaN.
double cpu_temperature() {
  double best = NAN;
  std::error_code ec;
  auto consider = [&](const fs::path& file) {
    std::string s = read_first_line(file);
    if (s.empty()) return;
    try {
      double c = std::stod(s) / 1000.0;
      if (c > 0 && c < 150 && !(c <= best)) best = c;
    } catch (...) {
    }
  };
  for (const auto& zone : fs::directory_iterator("/sys/class/thermal", ec))
    if (zone.path().filename().string().rfind("thermal_zone", 0) == 0) consider(zone.path() / "temp");
  for (const auto& hw : fs::directory_iterator("/sys/class/hwmon", ec)) {
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(hw.path(), ec2)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("temp", 0) == 0 && name.size() > 6 && name.substr(name.size() - 6) == "_input") consider(f.path());
    }
  }
  return best;
}

class CpuDevice final : public Device {
 public:
  DeviceInfo info() const override {
    DeviceInfo i;
    i.id = "cpu";
    i.backend = "cpu";
    i.index = 0;
    i.name = "CPU";
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("model name", 0) == 0) {
        i.name = line.substr(line.find(':') + 2);
        break;
      }
    i.cores = static_cast<int>(std::thread::hardware_concurrency());
    auto mem = meminfo();
    if (mem.count("MemTotal")) i.memory_bytes = static_cast<std::int64_t>(mem["MemTotal"]);
    i.details["arch"] = [] {
#if defined(__x86_64__)
      return "x86_64";
#elif defined(__aarch64__)
      return "aarch64";
#else
      return "unknown";
#endif
    }();
    return i;
  }

  Telemetry telemetry() const override {
    Telemetry t;
    // Utilisation over the time since the last call (at least 100 ms).
    std::lock_guard<std::mutex> lock(mutex_);
    CpuTimes now = cpu_times();
    if (last_.total == 0 || now.total - last_.total < 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      last_ = now;
      now = cpu_times();
    }
    if (now.total > last_.total)
      t.values["utilization_pct"] = 100.0 * static_cast<double>(now.busy - last_.busy) / static_cast<double>(now.total - last_.total);
    last_ = now;
    auto mem = meminfo();
    if (mem.count("MemTotal") && mem.count("MemAvailable"))
      t.values["memory_used_bytes"] = mem["MemTotal"] - mem["MemAvailable"];
    if (double c = cpu_temperature(); !std::isnan(c)) t.values["temperature_c"] = c;
    std::ifstream load("/proc/loadavg");
    double l1;
    if (load >> l1) t.values["load_1m"] = l1;
    return t;
  }

  Health health() const override {
    Health h;
    auto mem = meminfo();
    if (mem.count("MemTotal") && mem.count("MemAvailable") && mem["MemAvailable"] < 0.03 * mem["MemTotal"])
      h.ok = false, h.problems.push_back(fmt::format("memory nearly exhausted: {:.0f} MiB available",
                                                     mem["MemAvailable"] / (1 << 20)));
    if (double c = cpu_temperature(); !std::isnan(c) && c > 95)
      h.ok = false, h.problems.push_back(fmt::format("temperature {:.0f} C", c));
    return h;
  }

  std::string tensor_device() const override { return "cpu"; }

 private:
  mutable std::mutex mutex_;
  mutable CpuTimes last_;
};

class CpuBackend final : public DeviceBackend {
 public:
  std::vector<std::shared_ptr<Device>> devices() override {
    static auto cpu = std::make_shared<CpuDevice>();
    return {cpu};
  }
};

// ---------------------------------------------------------------- cuda + NVML

// The handful of NVML entry points nexp uses, with the driver's C ABI (nvml.h is not needed to build).
struct Nvml {
  using Dev = void*;
  struct Memory { unsigned long long total, free, used; };
  struct Utilization { unsigned int gpu, memory; };
  int (*init)() = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*handle)(unsigned int, Dev*) = nullptr;
  int (*name)(Dev, char*, unsigned int) = nullptr;
  int (*uuid)(Dev, char*, unsigned int) = nullptr;
  int (*memory)(Dev, Memory*) = nullptr;
  int (*utilization)(Dev, Utilization*) = nullptr;
  int (*temperature)(Dev, int, unsigned int*) = nullptr;
  int (*power)(Dev, unsigned int*) = nullptr;
  int (*ecc)(Dev, int, int, unsigned long long*) = nullptr;
  int (*clock)(Dev, int, unsigned int*) = nullptr;
  int (*driver)(char*, unsigned int) = nullptr;
  std::string error;

  static Nvml& get() {
    static Nvml* nvml = [] {
      auto* n = new Nvml();  // like the library itself, never unloaded
      void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        n->error = "no NVIDIA driver here (libnvidia-ml.so.1 not found)";
        return n;
      }
      auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(::dlsym(lib, name)); };
      sym(n->init, "nvmlInit_v2");
      sym(n->count, "nvmlDeviceGetCount_v2");
      sym(n->handle, "nvmlDeviceGetHandleByIndex_v2");
      sym(n->name, "nvmlDeviceGetName");
      sym(n->uuid, "nvmlDeviceGetUUID");
      sym(n->memory, "nvmlDeviceGetMemoryInfo");
      sym(n->utilization, "nvmlDeviceGetUtilizationRates");
      sym(n->temperature, "nvmlDeviceGetTemperature");
      sym(n->power, "nvmlDeviceGetPowerUsage");
      sym(n->ecc, "nvmlDeviceGetTotalEccErrors");
      sym(n->clock, "nvmlDeviceGetClockInfo");
      sym(n->driver, "nvmlSystemGetDriverVersion");
      if (!n->init || !n->count || !n->handle) n->error = "libnvidia-ml.so.1 lacks the NVML v2 entry points";
      else if (int rc = n->init(); rc != 0) n->error = fmt::format("nvmlInit failed (NVML error {})", rc);
      return n;
    }();
    return *nvml;
  }
  bool ok() const { return error.empty(); }
};

class CudaDevice final : public Device {
 public:
  CudaDevice(int index, Nvml::Dev handle, bool torch_cuda) : index_(index), handle_(handle), torch_cuda_(torch_cuda) {}

  DeviceInfo info() const override {
    DeviceInfo i;
    i.id = fmt::format("cuda:{}", index_);
    i.backend = "cuda";
    i.index = index_;
    i.name = "NVIDIA GPU";
    Nvml& n = Nvml::get();
    if (handle_) {
      char buf[128] = {0};
      if (n.name && n.name(handle_, buf, sizeof buf) == 0) i.name = buf;
      if (n.uuid && n.uuid(handle_, buf, sizeof buf) == 0) i.details["uuid"] = buf;
      Nvml::Memory m{};
      if (n.memory && n.memory(handle_, &m) == 0) i.memory_bytes = static_cast<std::int64_t>(m.total);
      if (n.driver && n.driver(buf, sizeof buf) == 0) i.details["driver"] = buf;
    }
    i.details["torch"] = torch_cuda_        ? "usable"
                         : NEXP_WITH_CUDA ? "not usable: LibTorch's CUDA does not see it (driver too old?)"
                                          : "not usable: this LibTorch was built without CUDA";
    return i;
  }

  Telemetry telemetry() const override {
    Telemetry t;
    Nvml& n = Nvml::get();
    if (!handle_) return t;
    Nvml::Utilization u{};
    if (n.utilization && n.utilization(handle_, &u) == 0) t.values["utilization_pct"] = u.gpu;
    unsigned int v = 0;
    if (n.temperature && n.temperature(handle_, 0, &v) == 0) t.values["temperature_c"] = v;
    if (n.power && n.power(handle_, &v) == 0) t.values["power_w"] = v / 1000.0;
    if (n.clock && n.clock(handle_, 1, &v) == 0) t.values["clock_mhz"] = v;
    Nvml::Memory m{};
    if (n.memory && n.memory(handle_, &m) == 0) t.values["memory_used_bytes"] = static_cast<double>(m.used);
    unsigned long long c = 0;
    // error type 0 corrected (single-bit), 1 uncorrected (double-bit); counter 1 = aggregate (lifetime)
    if (n.ecc && n.ecc(handle_, 0, 1, &c) == 0) t.values["ecc_sbe_total"] = static_cast<double>(c);
    if (n.ecc && n.ecc(handle_, 1, 1, &c) == 0) t.values["ecc_dbe_total"] = static_cast<double>(c);
    return t;
  }

  Health health() const override {
    Health h;
    Telemetry t = telemetry();
    if (t.values.count("ecc_dbe_total") && t.values["ecc_dbe_total"] > 0)
      h.ok = false, h.problems.push_back(fmt::format("double-bit ECC errors: {:.0f}", t.values["ecc_dbe_total"]));
    if (t.values.count("temperature_c") && t.values["temperature_c"] > 90)
      h.ok = false, h.problems.push_back(fmt::format("temperature {:.0f} C", t.values["temperature_c"]));
    if (!torch_cuda_) h.problems.push_back("LibTorch has no CUDA: nexp cannot compute on this GPU");
    return h;
  }

  std::string tensor_device() const override { return fmt::format("cuda:{}", index_); }

 private:
  int index_;
  Nvml::Dev handle_;
  bool torch_cuda_;
};

// GPUs LibTorch can compute on. Loading LibTorch to ask costs ~1 s, so without it loaded the answer is
// 0 unless this LibTorch has CUDA and there is a GPU to find.
int torch_cuda_devices(unsigned int nvml_count) {
  if (TorchRuntime* torch = torch_runtime()) return torch->cuda_devices();
  std::error_code ec;
  if (!NEXP_WITH_CUDA || (nvml_count == 0 && !fs::exists("/dev/nvidiactl", ec))) return 0;
  return require_torch_runtime().cuda_devices();
}

class CudaBackend final : public DeviceBackend {
 public:
  std::vector<std::shared_ptr<Device>> devices() override {
    Nvml& n = Nvml::get();
    unsigned int nvml_count = 0;
    if (n.ok() && n.count(&nvml_count) != 0) nvml_count = 0;
    const int torch_count = torch_cuda_devices(nvml_count);
    const bool torch_cuda = torch_count > 0;
    const int count = std::max(torch_count, static_cast<int>(nvml_count));
    std::vector<std::shared_ptr<Device>> out;
    for (int i = 0; i < count; ++i) {
      Nvml::Dev h = nullptr;
      if (n.ok() && static_cast<unsigned>(i) < nvml_count && n.handle(static_cast<unsigned>(i), &h) != 0) h = nullptr;
      out.push_back(std::make_shared<CudaDevice>(i, h, torch_cuda && i < torch_count));
    }
    return out;
  }
};

}  // namespace

void register_core_backends(Registrar& r) {
  r.device_backend("cpu", "the host CPU (always present)", [](const Params&) { return std::make_shared<CpuBackend>(); })
      .auto_priority(0);
  r.device_backend("cuda", "NVIDIA GPUs through LibTorch's CUDA, telemetry through NVML",
                   [](const Params&) { return std::make_shared<CudaBackend>(); })
      .auto_priority(100);
}

// ---------------------------------------------------------------- resolution

std::vector<DeviceListing> list_devices(const Registry& registry) {
  std::vector<DeviceListing> out;
  for (const DeviceBackendSpec* b : registry.backends()) {
    DeviceListing l;
    l.backend = b->name;
    try {
      std::map<std::string, Value> defaults;
      for (const auto& p : b->schema.params())
        if (!p.is_required() && !p.is_optional()) defaults[p.name()] = p.fallback();
      l.devices = b->make(Params(defaults))->devices();
      if (l.devices.empty() && b->name == "cuda") l.error = Nvml::get().ok() ? "no GPU found" : Nvml::get().error;
    } catch (const std::exception& e) {
      l.error = e.what();
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::shared_ptr<Device> resolve_device(const Registry& registry, const std::string& id, const Params& options) {
  if (id == "auto") {
    std::vector<const DeviceBackendSpec*> backends = registry.backends();
    std::stable_sort(backends.begin(), backends.end(),
                     [](const auto* a, const auto* b) { return a->priority > b->priority; });
    for (const auto* b : backends) {
      if (b->priority < 0) continue;
      for (auto& d : b->make(Params{})->devices())
        if (d->info().details.count("torch") == 0 || d->info().details.at("torch") == "usable") return d;
    }
    throw ConfigError("device 'auto' found no usable device (not even the CPU backend); this is a bug in nexp");
  }
  auto [backend, index] = parse_device_id(id);
  const DeviceBackendSpec* spec = registry.find_backend(backend);
  if (!spec) throw ConfigError(fmt::format("device '{}': no backend '{}' is registered; `nexp devices` lists them", id, backend));
  auto devices = spec->make(options)->devices();
  if (index >= static_cast<int>(devices.size()))
    throw ConfigError(fmt::format("device '{}' does not exist here: backend '{}' has {} device{}{}. Use `device: "
                                  "auto`, or `nexp devices` to see what there is",
                                  id, backend, devices.size(), devices.size() == 1 ? "" : "s",
                                  devices.empty() && backend == "cuda" ? fmt::format(" ({})", Nvml::get().ok() ? "no GPU" : Nvml::get().error) : ""));
  auto device = devices[static_cast<size_t>(index)];
  auto info = device->info();
  if (info.details.count("torch") && info.details.at("torch") != "usable")
    throw ConfigError(fmt::format("device '{}' ({}) is present, but {}; install a LibTorch with CUDA or use "
                                  "`device: cpu`",
                                  id, info.name, info.details.at("torch")));
  return device;
}

}  // namespace nexp
