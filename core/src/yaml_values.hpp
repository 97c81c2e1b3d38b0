#pragma once
// Core-internal helpers of config handling: YAML scalars <-> typed values, dotted key paths, and
// where a value came from (for messages). Not part of the SDK.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "nexp/config.hpp"
#include "nexp/error.hpp"

namespace nexp::detail {

// The keys a config may have at its top level.
const std::vector<std::string>& top_level_keys();

// Where a value came from, for messages: "config 'x.yaml', line 4" or "override 'params.lr=abc'".
class Origins {
 public:
  Origins(std::filesystem::path source, std::map<std::string, std::string> overridden)
      : source_(std::move(source)), overridden_(std::move(overridden)) {}
  std::string at(const std::string& key, const YAML::Node& node) const;
  const std::filesystem::path& source() const { return source_; }

 private:
  std::filesystem::path source_;
  std::map<std::string, std::string> overridden_;
};

std::string describe_node(const YAML::Node& node);  // "a list", "'abc'", "nothing (null)"
std::string join_path(const std::string& a, const std::string& b);
std::vector<std::string> split_path(const std::string& key);
// " Did you mean 'x'?" or " Valid keys: a, b." (empty when there are no candidates).
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);

bool parse_int(const std::string& s, std::int64_t& out);
bool parse_float(const std::string& s, double& out);
bool parse_bool(const std::string& s, bool& out);
// Converts `node` to `type`; returns an empty message on success, else what is wrong.
std::string convert(const YAML::Node& node, Type type, Value& out);
YAML::Node value_to_yaml(const Value& value);

// Every error of one validation pass, so that a single `nexp validate` reports them all.
class Problems {
 public:
  void add(std::string message) { messages_.push_back(std::move(message)); }
  bool empty() const { return messages_.empty(); }
  // Runs fn; a ConfigError it throws is recorded instead. Returns whether fn succeeded.
  template <class F>
  bool attempt(F&& fn) {
    try {
      fn();
      return true;
    } catch (const ConfigError& e) {
      add(e.what());
      return false;
    }
  }
  // Throws one ConfigError holding every problem (just the message when there is one).
  void raise() const;

 private:
  std::vector<std::string> messages_;
};

// Validates `node` (a map, or null) against `schema`, nested maps included (params_yaml.cpp);
// `section` prefixes key paths. Problems are recorded; what is wrong takes its default.
Params params_from_node(const YAML::Node& node, const Schema& schema, const std::string& section,
                        const std::string& owner, const Origins& origins, Problems& problems);

// Resolves ${a.b} and ${env:NAME[,default]} in place (interpolation.cpp).
void interpolate(YAML::Node root, const Origins& origins);

}  // namespace nexp::detail
