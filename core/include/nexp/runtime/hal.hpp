#pragma once
// Device resolution for the HAL (nexp/device.hpp holds the interfaces).
#include <memory>
#include <string>
#include <vector>

#include "nexp/device.hpp"
#include "nexp/runtime/registry.hpp"

namespace nexp {

// "cpu", "cuda:0", "<backend>:N" or "auto". Throws ConfigError naming the devices there are.
NEXP_API std::shared_ptr<Device> resolve_device(const Registry& registry, const std::string& id,
                                                const Params& options);

struct NEXP_API DeviceListing {
  std::string backend;
  std::vector<std::shared_ptr<Device>> devices;
  std::string error;  // why the backend has none, when it failed
};
NEXP_API std::vector<DeviceListing> list_devices(const Registry& registry);

// Splits "cuda:1" into ("cuda", 1); "cpu" into ("cpu", 0). Throws ConfigError on bad syntax.
NEXP_API std::pair<std::string, int> parse_device_id(const std::string& id);

}  // namespace nexp
