#pragma once
// Core-internal pieces of the sweep grammar shared with the planner. Not part of the SDK.
#include <string>
#include <vector>

namespace nexp::detail {

std::string trim(const std::string& s);
// Splits at commas outside brackets, braces, parentheses and quotes.
std::vector<std::string> split_top(const std::string& s);
// A drawn or ranged value as sweep.yaml and the trial's override write it.
std::string format_value(double v, bool integer);

}  // namespace nexp::detail
