// nexp: run, sweep, compare and extend machine-learning experiments. Subcommands live in cmd_*.cpp.
#include <link.h>
#include <malloc.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "app.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/version.hpp"

namespace nexp::cli {

namespace {
// Whether libgomp is mapped into this process already.
bool gomp_loaded() {
  auto found = [](dl_phdr_info* info, size_t, void*) {
    return info->dlpi_name && std::strstr(info->dlpi_name, "libgomp") ? 1 : 0;
  };
  return ::dl_iterate_phdr(found, nullptr) != 0;
}
}  // namespace

std::vector<std::filesystem::path> App::search_path() const {
  return plugin_search_path(std::vector<std::filesystem::path>(plugin_dirs.begin(), plugin_dirs.end()));
}

void App::warn(const std::vector<LoadFailure>& failures) const {
  for (const auto& f : failures) logger().warn("plugin not loaded: {}", f.message);
}

Registry& App::with_all_plugins() {
  warn(load_plugins(registry_, search_path()));
  return registry_;
}

Registry& App::with_plugins_for(const YAML::Node& config, const std::vector<std::string>& overrides) {
  warn(load_plugins_for(registry_, search_path(), names_in_config(config, overrides)));
  return registry_;
}

Registry& App::with_plugins_for(const std::filesystem::path& config, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config, ec)) return registry_;  // the caller says what is wrong
  return with_plugins_for(read_yaml_file(config), overrides);
}

}  // namespace nexp::cli

int main(int argc, char** argv) {
  // OpenMP reads OMP_WAIT_POLICY when libgomp loads. Spinning waits make two threads on a shared 2-core
  // machine up to 30x slower. libgomp comes with LibTorch, which a plugin loads later: setting it now
  // is enough. Should libgomp already be here (a preloaded library), start again with it set.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    if (nexp::cli::gomp_loaded()) ::execv("/proc/self/exe", argv);  // returns only on failure: carry on
  }

  // LibTorch frees and allocates blocks of megabytes at every step of a model (activations, attention
  // scores). By default glibc serves blocks over 32 MiB with mmap and trims freed heap memory back to the
  // kernel, so each step pays page faults to get the memory again: on a 2-core VM an agent_sft Household
  // run spent three quarters of its CPU time there. Keep blocks up to 1 GiB in the heap, and up to 1 GiB
  // of freed memory. GLIBC_TUNABLES naming malloc settings overrides this.
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (!tunables || !std::strstr(tunables, "malloc")) {
    ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
    ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }

  using namespace nexp;
  cli::App app;
  for (int i = 0; i < argc; ++i) app.argv_text += (i ? " " : "") + std::string(argv[i]);

  CLI::App cli{"nexp: run, sweep and compare machine-learning experiments; each research method is a plugin."};
  cli.set_version_flag("--version", fmt::format("nexp {} ({})", NEXP_VERSION, build_fingerprint()));
  cli.add_flag("-q,--quiet", app.quiet, "only warnings and errors on stderr");
  cli.add_flag("-v,--verbose", app.verbose, "debug messages on stderr");
  cli.add_option("--plugin-dir", app.plugin_dirs, "also load plugins from this folder (repeatable)");
  cli.require_subcommand(1);
  cli.fallthrough();
  cli::add_run_commands(cli, app);
  cli::add_sweep_commands(cli, app);
  cli::add_catalog_commands(cli, app);
  cli::add_runs_commands(cli, app);
  cli::add_new_plugin_command(cli, app);
  cli::add_report_command(cli, app);
  cli::add_llm_commands(cli, app);
  cli::add_reproduce_command(cli, app);
  cli.parse_complete_callback([&] {
    configure_logging(app.quiet ? Verbosity::Quiet : app.verbose ? Verbosity::Verbose : Verbosity::Normal);
  });

  try {
    cli.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {  // a run that failed: its own exit code, already reported
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  } catch (const ConfigError& e) {
    logger().error("{}", e.what());
    return 2;
  } catch (const PluginError& e) {
    logger().error("{}", e.what());
    return 2;
  } catch (const std::exception& e) {
    logger().error("{}", e.what());
    return 1;
  }
  return 0;
}
