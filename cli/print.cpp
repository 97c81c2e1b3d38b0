// Table printing for the CLI.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "app.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp::cli {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e12) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  out << format_table(header, rows);
}

}  // namespace nexp::cli
