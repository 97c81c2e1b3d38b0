#pragma once
// What every subcommand shares: the global flags, plugin loading, and table printing.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "nexp/runtime/registry.hpp"

namespace nexp::cli {

struct App {
  std::vector<std::string> plugin_dirs;
  bool quiet = false;
  bool verbose = false;
  std::string argv_text;  // the command line as typed, for meta.json

  // The registry with every plugin loaded (on first use, from the main thread). Refused plugins are
  // reported as warnings; a config that needs one says why it is missing.
  Registry& registry();

 private:
  bool loaded_ = false;
};

// An aligned text table; numbers go through format_number.
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);
std::string format_number(double v);
// The default runs folder: $NEXP_RUNS_DIR, else ./runs.
std::string default_runs_dir();

void add_run_commands(CLI::App& cli, App& app);      // run, validate (cmd_run.cpp)
void add_catalog_commands(CLI::App& cli, App& app);  // list, describe, devices (cmd_catalog.cpp)
void add_runs_commands(CLI::App& cli, App& app);     // runs, show, compare, export (cmd_runs.cpp)
void add_new_plugin_command(CLI::App& cli, App& app);  // new-plugin (cmd_new_plugin.cpp)

}  // namespace nexp::cli
