#pragma once
// What every subcommand shares: the global flags, plugin loading, and table printing.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/registry.hpp"

namespace nexp::cli {

struct App {
  std::vector<std::string> plugin_dirs;
  bool quiet = false;
  bool verbose = false;
  std::string argv_text;  // the command line as typed, for meta.json

  // The nexp executable and the global flags a child process (a sweep's trial) needs.
  std::vector<std::string> child_command() const;

  // The registry with the plugins loaded so far (core's components at least).
  Registry& registry() { return registry_; }
  // Loads every plugin (list, describe, devices), from the main thread; returns registry().
  // Refused plugins are reported as warnings; a config that needs one says why it is missing.
  Registry& with_all_plugins();
  // Loads only the plugins a config names (run, validate, run-trial): its method's, dataset's and
  // device's, over every override and sweep axis (load_plugins_for). Returns registry().
  Registry& with_plugins_for(const YAML::Node& config, const std::vector<std::string>& overrides);
  Registry& with_plugins_for(const std::filesystem::path& config, const std::vector<std::string>& overrides);

 private:
  std::vector<std::filesystem::path> search_path() const;
  void warn(const std::vector<LoadFailure>& failures) const;

  Registry registry_;
};

// An aligned text table; numbers go through format_number.
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);
std::string format_number(double v);

// `nexp run` of a sweep (-m, or a config with a sweep: block).
struct SweepArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string runs_dir;
  bool dry_run = false, force = false, retry_failed = false, requeue = false, no_wait = false;
  int jobs = 1, samples = -1, trials = -1;
  std::string sampler;
  double trial_timeout = 0;
  std::string launcher = "local";
  std::string signal = "USR1@90";
};
int run_sweep(App& app, const SweepArgs& args);  // returns the exit code (cmd_sweep.cpp)

void add_run_commands(CLI::App& cli, App& app);      // run, validate (cmd_run.cpp)
void add_sweep_commands(CLI::App& cli, App& app);    // run-trial, sweep status (cmd_sweep.cpp)
void add_catalog_commands(CLI::App& cli, App& app);  // list, describe, devices (cmd_catalog.cpp)
void add_runs_commands(CLI::App& cli, App& app);     // runs, show, compare, export (cmd_runs.cpp)
void add_new_plugin_command(CLI::App& cli, App& app);  // new-plugin (cmd_new_plugin.cpp)
void add_report_command(CLI::App& cli, App& app);      // report (cmd_report.cpp)
void add_llm_commands(CLI::App& cli, App& app);        // llm ping (cmd_llm.cpp)
void add_reproduce_command(CLI::App& cli, App& app);   // reproduce (cmd_reproduce.cpp)

}  // namespace nexp::cli
