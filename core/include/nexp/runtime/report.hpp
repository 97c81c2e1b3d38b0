#pragma once
// `nexp report`: one self-contained HTML file (inline CSS and SVG, no script, no network) for runs or
// a sweep: the resolved config, the summary table, each metric over steps (at most five runs a panel,
// pruned trials grey), and for a sweep the best objective so far against trial number, each
// parameter's importance (eta^2), the objective against each swept parameter, a parallel-coordinates
// view, and for two objectives the Pareto front.
#include <filesystem>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

// Each target is a run folder or a sweep folder (one sweep, or any number of runs).
NEXP_API std::string render_report(const std::vector<std::filesystem::path>& targets);

}  // namespace nexp
