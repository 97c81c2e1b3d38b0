#pragma once
// Logging, progress and threads: owned by core, set once per process.
#include <spdlog/logger.h>

#include <filesystem>
#include <memory>
#include <string>

#include "nexp/export.hpp"
#include "nexp/run_context.hpp"

namespace nexp {

enum class Verbosity { Quiet, Normal, Verbose };

// Called once by the CLI. Colour on a terminal unless NO_COLOR is set.
NEXP_API void configure_logging(Verbosity verbosity);
NEXP_API Verbosity verbosity();
// The process logger ("nexp"), to stderr.
NEXP_API spdlog::logger& logger();
// A run's logger: stderr and <run>/log.txt.
NEXP_API std::shared_ptr<spdlog::logger> make_run_logger(const std::string& name,
                                                         const std::filesystem::path& log_file);
// A progress bar on stderr (live with ETA on a terminal, a plain line every few seconds elsewhere).
NEXP_API Progress make_progress(std::int64_t total, const std::string& label);
// Whether stderr is a terminal that gets live redraws.
NEXP_API bool stderr_is_live();

// Sets torch's intra- and inter-op pools and oneTBB's global limit to n (0: all cores), and
// OMP_WAIT_POLICY=PASSIVE unless the user set it. Only the first call has effect on inter-op.
NEXP_API int configure_threads(int n);

}  // namespace nexp
