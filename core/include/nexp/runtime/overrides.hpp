#pragma once
// Command-line overrides, as typed after the config file:
//   a.b=v    set a key the config has      +a.b=v   add a key it lacks      ~a.b   delete a key
// Values are YAML (`params.sizes=[64,128]`). With -m, a value that is a sweep expression (a=1,2,
// range(...), uniform(...)) becomes a sweep axis instead (see sweep.hpp for the grammar).
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

class Registry;

// One command-line override: `a.b=v` (set an existing key), `+a.b=v` (add a new one), `~a.b` (delete).
struct NEXP_API Override {
  enum class Kind { Set, Add, Remove };
  Kind kind = Kind::Set;
  std::string key;    // dotted path
  std::string value;  // raw text after '=', parsed as YAML (so `[1, 2]` is a list)
  std::string text;   // as typed
  // Where it came from when not typed on the shell, for messages: e.g. "config 'x.yaml', line 12
  // (sweep axis)". Empty: the command line.
  std::string origin;
};

NEXP_API Override parse_override(const std::string& text);  // throws ConfigError

// Applies overrides to a raw tree (no validation). Used by config resolution and the sweep planner.
NEXP_API void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides,
                              const std::filesystem::path& source, const Registry& registry);

// Splits command-line overrides into plain ones and sweep axes. Without `multirun`, a value that
// looks like a sweep (a=1,2) is an error that says to add -m.
struct NEXP_API SplitOverrides {
  std::vector<Override> overrides;
  std::vector<std::string> axes;
};
NEXP_API SplitOverrides split_overrides(const std::vector<std::string>& texts, bool multirun);
}  // namespace nexp
