#pragma once
// Command-line overrides, as typed after the config file, in Hydra's grammar:
//   a.b=v      set a key the config has         +a.b=v   add a key it lacks
//   ++a.b=v    add or set                       ~a.b     delete a key; ~a.b=v only if its value is v
// A value is a primitive (YAML-typed: 0.1, true, null, text), a quoted string ('...' or "..."), a list
// [a, b], a map {a: 1} (merged into an existing map), with backslash escapes (\, \  \, ...). `key=` is
// the empty string. With -m, a value with several elements (a,b) or a sweep function (range(...),
// choice(...), uniform(...), interval(...)) becomes a sweep axis (sweep.hpp). The grammar, its
// errors and where nexp differs from Hydra are in README.md ("Overrides").
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

class Registry;

// One command-line override: `a.b=v` (set an existing key), `+a.b=v` (add a new one), `~a.b` (delete).
struct NEXP_API Override {
  enum class Kind { Set, Add, ForceAdd, Remove };
  Kind kind = Kind::Set;
  std::string key;         // dotted path
  std::string value;       // the text after '=', in the override grammar
  bool has_value = false;  // false for `~key` (and `~key=`)
  std::string text;        // as typed
  // Where it came from when not typed on the shell, for messages: e.g. "config 'x.yaml', line 12
  // (sweep axis)". Empty: the command line.
  std::string origin;
};

// Throws ConfigError for a malformed override, pointing at the column that is wrong.
NEXP_API Override parse_override(const std::string& text);
// Whether the value is a sweep: several elements, or a function call.
NEXP_API bool is_sweep(const Override& o);

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
