#pragma once
// Core-internal pieces of the sweep grammar shared with the planner. Not part of the SDK.
#include <string>

namespace nexp::detail {

// A drawn or ranged value as sweep.yaml and the trial's override write it.
std::string format_value(double v, bool integer);

}  // namespace nexp::detail
