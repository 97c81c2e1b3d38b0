#pragma once
// `nexp report`: one self-contained HTML file (inline CSS and SVG, no script, no network) for runs or
// a sweep: the resolved config, the summary table, each metric over steps (several runs overlaid), and
// for a sweep the objective against each swept parameter and a parallel-coordinates view.
#include <filesystem>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

// Each target is a run folder or a sweep folder (one sweep, or any number of runs).
NEXP_API std::string render_report(const std::vector<std::filesystem::path>& targets);

}  // namespace nexp
