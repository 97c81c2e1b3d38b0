#pragma once
// Core's own components, registered as the plugin "core" before any plugin loads.
#include "nexp/plugin.hpp"

namespace nexp {
void register_core_backends(Registrar& r);  // hal.cpp
void register_core_datasets(Registrar& r);  // datasets.cpp
void register_core_metrics(Registrar& r);   // datasets.cpp
// All of them: the shared data sets, prediction metrics, and the cpu and cuda backends (datasets.cpp).
void register_core_components(Registrar& r);
}  // namespace nexp
