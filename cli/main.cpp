// nexp: run, sweep, compare and extend machine-learning experiments. Subcommands live in cmd_*.cpp.
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "app.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/version.hpp"

namespace nexp::cli {

Registry& App::registry() {
  Registry& registry = Registry::global();
  if (!loaded_) {
    loaded_ = true;
    std::vector<std::filesystem::path> dirs(plugin_dirs.begin(), plugin_dirs.end());
    for (const auto& f : load_plugins(registry, plugin_search_path(dirs)))
      logger().warn("plugin not loaded: {}", f.message);
  }
  return registry;
}

}  // namespace nexp::cli

int main(int argc, char** argv) {
  // OpenMP reads OMP_WAIT_POLICY when libgomp loads, before main: set it and start again. Spinning
  // waits make two threads on a shared 2-core machine up to 30x slower.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    ::execv("/proc/self/exe", argv);  // returns only on failure; carry on without it then
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
