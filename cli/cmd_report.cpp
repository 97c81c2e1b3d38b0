// nexp report.
#include <iostream>

#include "app.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/report.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp::cli {

void add_report_command(CLI::App& cli, App&) {
  auto targets = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto reproduction = std::make_shared<std::string>();
  auto* c = cli.add_subcommand("report", "Write one self-contained HTML report of runs or a sweep");
  c->add_option("targets", *targets, "run ids or folders (several are overlaid), or one sweep folder");
  c->add_option("--reproduction", *reproduction, "a plugin: its rows of `nexp reproduce`, verdicts and runs");
  c->add_option("-o,--output", *output, "the HTML file (default: report.html in the run or sweep folder)");
  c->add_option("--runs-dir", *runs_dir, "the runs folder (default: $NEXP_RUNS_DIR or ./runs)");
  c->callback([=] {
    const std::string dir = runs_dir->empty() ? default_runs_dir() : *runs_dir;
    if (!reproduction->empty()) {
      const auto record = std::filesystem::path(dir) / "reproduce" / (*reproduction + ".json");
      const std::filesystem::path out = output->empty() ? record.parent_path() / (*reproduction + ".html") : std::filesystem::path(*output);
      write_file_atomic(out, render_reproduction_report(record, out));
      std::cout << "report: " << out.string() << std::endl;
      return;
    }
    if (targets->empty()) throw ConfigError("nexp report needs run ids, run folders, a sweep folder, or --reproduction PLUGIN");
    std::vector<std::filesystem::path> folders;
    for (const auto& t : *targets)
      folders.push_back(std::filesystem::exists(std::filesystem::path(t) / "sweep.yaml") ? std::filesystem::path(t) : locate_run(t, dir));
    const std::filesystem::path out = output->empty() ? folders.front() / "report.html" : std::filesystem::path(*output);
    write_file_atomic(out, render_report(folders));
    std::cout << "report: " << out.string() << std::endl;
  });
}

}  // namespace nexp::cli
