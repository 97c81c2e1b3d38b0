#pragma once
// The registry the config and sweep fuzz targets resolve configs against: core's components and one
// plugin, `fz`, whose method and dataset declare an option of every kind the SDK has (numbers with
// ranges, choices, lists, a nested map, a list of maps, optional values), so that a fuzzed config
// reaches every branch of validation. Nothing here runs: the method is never called.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nexp/options.hpp"
#include "nexp/plugin.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/registry.hpp"

namespace nexp::fuzz {

struct Layer {
  std::int64_t width = 8;
  std::string act = "relu";
  static void declare(Options<Layer>& o) {
    o.add("width", &Layer::width, "units").range(1, 4096);
    o.add("act", &Layer::act, "activation").choices({"relu", "tanh"});
  }
};

enum class Mode { Fast, Exact };

struct FitOptions {
  double lr = 0.1;
  std::int64_t steps = 10;
  int batch = 4;
  bool flag = false;
  std::string name = "x";
  Mode mode = Mode::Fast;
  std::vector<std::int64_t> sizes{8, 8};
  std::vector<double> weights;
  std::vector<std::string> tags;
  Layer head;
  std::vector<Layer> layers;
  std::optional<double> clip;
  static void declare(Options<FitOptions>& o) {
    o.add("lr", &FitOptions::lr, "step size").range(1e-6, 1);
    o.add("steps", &FitOptions::steps, "steps").min(0);
    o.add("batch", &FitOptions::batch, "batch size").min(1);
    o.add("flag", &FitOptions::flag, "a switch");
    o.add("name", &FitOptions::name, "a label");
    o.add("mode", &FitOptions::mode, "how", {{"fast", Mode::Fast}, {"exact", Mode::Exact}});
    o.add("sizes", &FitOptions::sizes, "widths").min(1);
    o.add("weights", &FitOptions::weights, "weights");
    o.add("tags", &FitOptions::tags, "tags");
    o.add("head", &FitOptions::head, "the output layer");
    o.add("layers", &FitOptions::layers, "hidden layers");
    o.add("clip", &FitOptions::clip, "gradient clip");
  }
};

struct DataOptions {
  std::int64_t n = 100;
  double noise = 0.1;
  std::string path;
  static void declare(Options<DataOptions>& o) {
    o.add("n", &DataOptions::n, "samples").range(1, 1000000);
    o.add("noise", &DataOptions::noise, "noise").min(0);
    o.add("path", &DataOptions::path, "a file");
  }
};

struct NoData : Dataset {
  std::string describe() const override { return "none"; }
};

inline void register_fz(Registrar& r) {
  r.metric("loss", Direction::Minimize, "a loss");
  r.metric("score", Direction::Maximize, "a score");
  r.method("fz.fit", "never runs", [](RunContext&) {}).options<FitOptions>().produces({"loss", "score"});
  r.dataset<DataOptions>("fz.data", "never built",
                         [](const DataOptions&, RunContext&) { return std::make_shared<NoData>(); });
}

// Created once per process, never destroyed (as the CLI's); also silences nexp's logger.
inline Registry& registry() {
  static Registry* r = [] {
    configure_logging(Verbosity::Quiet);
    logger().set_level(spdlog::level::off);  // the warnings of damaged inputs would only slow the search
    auto* reg = new Registry();
    reg->register_plugin({"fz", "0", "fuzzing", "none", "", "", ""}, register_fz);
    return reg;
  }();
  return *r;
}

// A scratch folder of this process, removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    char tmpl[] = "/tmp/nexp-fuzz-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (!made) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch(), ec);
    });
    return std::filesystem::path(made);
  }();
  return dir;
}

}  // namespace nexp::fuzz
