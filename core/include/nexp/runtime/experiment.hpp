#pragma once
// An experiment config: YAML plus command-line overrides, interpolated, validated against the
// registry's schemas, and resolved to typed values before anything runs.
//
// Top-level keys: experiment, method, params, dataset, device, seed, metrics, objective, sweep,
// slurm, distributed, llm, threads, runs_dir. See docs in README.md ("Config").
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nexp/config.hpp"
#include "nexp/metric.hpp"
#include "nexp/runtime/llm_config.hpp"
#include "nexp/runtime/overrides.hpp"
#include "nexp/runtime/registry.hpp"

namespace nexp {

struct NEXP_API Objective {
  std::string metric;
  Direction mode = Direction::Maximize;
};

struct NEXP_API Experiment {
  std::string experiment;  // names runs/<experiment>/; defaults to the config file's stem
  std::string method;
  Params params;
  std::string dataset;  // empty when the config names none
  Params dataset_params;
  std::string device = "auto";
  Params device_options;
  std::vector<std::string> devices;  // `device: [a, b, ...]`: every device the run may use (device is a)
  std::uint64_t seed = 0;
  std::vector<std::string> metrics;
  std::optional<Objective> objective;  // the first of `objectives`
  std::vector<Objective> objectives;   // `objective: [a, b]`: several (multi-objective sweeps)
  int threads = 0;  // 0: every core
  std::string runs_dir = "runs";
  YAML::Node sweep;  // the raw `sweep:` block (null when absent); expanded by the sweep module
  YAML::Node slurm;  // the raw `slurm:` block
  // `distributed:` (null when absent): `processes` ranks talking through `timeout_seconds`-bounded collectives.
  YAML::Node distributed;
  int processes = 1;
  double timeout_seconds = 60;
  LlmConfig llm;     // the `llm:` section: language-model endpoints (none by default)
  std::filesystem::path source;  // the config file
  // The schemas it was resolved against, which order its sections when written back.
  struct {
    Schema params, dataset, device;
  } schemas;

  // The resolved config, every default filled in, keys in a fixed order (what config.yaml holds).
  YAML::Node to_yaml() const;
  std::string to_yaml_text() const;
  // SHA-256 of what determines the result: the resolved config less experiment, runs_dir, threads,
  // sweep and slurm. Two runs with the same hash compute the same thing.
  std::string config_hash() const;
};

// Reads `file`, applies the overrides in order, resolves ${a.b} and ${env:NAME[,default]}, validates
// every section against the registry. Throws ConfigError with file, line, key, expected, found and
// the closest valid key.
NEXP_API Experiment load_experiment(const std::filesystem::path& file,
                                    const std::vector<Override>& overrides, const Registry& registry);

// The same from an already parsed tree (the sweep module builds trial configs this way).
NEXP_API Experiment resolve_experiment(YAML::Node root, const std::filesystem::path& source,
                                       const std::vector<Override>& overrides,
                                       const Registry& registry);

// Parses YAML text from a file with a one-paragraph error on failure (file, line, column, what).
NEXP_API YAML::Node read_yaml_file(const std::filesystem::path& file);

// Values <-> YAML for a schema: `node` (a map) is validated against `schema`; unknown keys, wrong
// types and out-of-range values are ConfigErrors that name `section` (e.g. "params"), the file and
// the line. Missing keys take the schema's default.
NEXP_API Params params_from_yaml(const YAML::Node& node, const Schema& schema, const std::string& section,
                                 const std::string& owner, const std::filesystem::path& source);
NEXP_API YAML::Node params_to_yaml(const Params& params, const Schema& schema);

// The closest string by edit distance, or "" when nothing is close.
NEXP_API std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace nexp
