// Out-of-line members of the SDK's interface types: their vtables and typeinfo live here, once per
// process, so that exceptions and dynamic_cast work across plugins.
#include <cxxabi.h>

#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "nexp/plugin.hpp"
#include "nexp/version.hpp"

namespace nexp {

Error::Error(const std::string& message) : std::runtime_error(message) {}
Error::~Error() = default;
ConfigError::~ConfigError() = default;
DataError::~DataError() = default;
PluginError::~PluginError() = default;

Dataset::~Dataset() = default;
Device::~Device() = default;
void Device::on_step(std::int64_t) {}
DeviceBackend::~DeviceBackend() = default;
RunContext::~RunContext() = default;
Registrar::~Registrar() = default;

const char* direction_name(Direction direction) {
  switch (direction) {
    case Direction::Minimize: return "min";
    case Direction::Maximize: return "max";
    case Direction::None: return "none";
  }
  return "none";
}

const char* build_fingerprint() { return NEXP_BUILD_FINGERPRINT; }

std::filesystem::path data_dir() {
  if (const char* d = std::getenv("NEXP_DATA_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "nexp" / "data";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "nexp" / "data";
  return std::filesystem::path(".nexp-data");
}

namespace detail {
std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? out.get() : name;
}
}  // namespace detail

void RunContext::wrong_dataset_type(const std::type_info& wanted) {
  throw ConfigError(fmt::format(
      "method '{}' needs a dataset of type {}, but the config's dataset is a {} ({}); pick a dataset this "
      "method accepts (`nexp describe {}` lists them)",
      method_name(), detail::demangle(wanted.name()), detail::demangle(typeid(dataset()).name()),
      dataset().describe(), method_name()));
}

}  // namespace nexp
