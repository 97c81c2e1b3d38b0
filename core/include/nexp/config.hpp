#pragma once
// Typed parameter schemas. Every component (method, dataset, device backend) declares one; the
// config is validated against it before anything runs, and `nexp describe` prints it.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

enum class Type { Bool, Int, Float, String, IntList, FloatList, StringList };

NEXP_API const char* type_name(Type type);  // "bool", "int", "float", "string", "list of int", ...

using Value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                           std::vector<double>, std::vector<std::string>>;

NEXP_API Type type_of(const Value& value);
NEXP_API std::string to_string(const Value& value);  // as it would be written in YAML

// One typed parameter: name, type, default, optional range or choices, one line of help.
class NEXP_API Param {
 public:
  static Param boolean(std::string name, bool fallback, std::string help);
  static Param integer(std::string name, std::int64_t fallback, std::string help);
  static Param real(std::string name, double fallback, std::string help);
  static Param string(std::string name, std::string fallback, std::string help);
  static Param ints(std::string name, std::vector<std::int64_t> fallback, std::string help);
  static Param reals(std::string name, std::vector<double> fallback, std::string help);
  static Param strings(std::string name, std::vector<std::string> fallback, std::string help);

  // Inclusive bounds; for lists they bound every element.
  Param& min(double lo);
  Param& max(double hi);
  Param& range(double lo, double hi) { return min(lo).max(hi); }
  // Allowed values of a string (or of every element of a list of strings).
  Param& choices(std::vector<std::string> allowed);
  // No default: the config must give it.
  Param& required();
  // No default, not required: Params::has() tells whether it was given.
  Param& optional();

  const std::string& name() const { return name_; }
  Type type() const { return type_; }
  const std::string& help() const { return help_; }
  const Value& fallback() const { return fallback_; }
  bool is_required() const { return required_; }
  bool is_optional() const { return optional_; }
  std::optional<double> lower() const { return lo_; }
  std::optional<double> upper() const { return hi_; }
  const std::vector<std::string>& allowed() const { return choices_; }

  // Empty when `value` (already of this parameter's type) satisfies range and choices; else what is
  // wrong, e.g. "0.0 is below the minimum 1e-06".
  std::string check(const Value& value) const;
  // "float in [1e-06, 1]", "one of {classic, randomized}", for messages and `nexp describe`.
  std::string constraint() const;

 private:
  Param(std::string name, Type type, Value fallback, std::string help);
  std::string name_;
  Type type_;
  Value fallback_;
  std::string help_;
  std::optional<double> lo_, hi_;
  std::vector<std::string> choices_;
  bool required_ = false;
  bool optional_ = false;
};

class NEXP_API Schema {
 public:
  Schema() = default;
  Schema(std::initializer_list<Param> params);
  Schema& add(Param param);  // throws nexp::Error on a duplicate name
  const Param* find(std::string_view name) const;
  const std::vector<Param>& params() const { return params_; }
  std::vector<std::string> names() const;
  bool empty() const { return params_.empty(); }

 private:
  std::vector<Param> params_;
};

// Validated values of one schema. Getters throw nexp::Error naming the parameter and both types
// when asked for the wrong type (a bug in the plugin, not the user's config).
class NEXP_API Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, Value> values) : values_(std::move(values)) {}

  bool has(std::string_view name) const;
  const Value& get(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;  // an int value converts
  const std::string& get_string(std::string_view name) const;
  const std::vector<std::int64_t>& get_ints(std::string_view name) const;
  std::vector<double> get_floats(std::string_view name) const;  // a list of ints converts
  const std::vector<std::string>& get_strings(std::string_view name) const;

  void set(const std::string& name, Value value) { values_[name] = std::move(value); }
  const std::map<std::string, Value>& values() const { return values_; }

 private:
  std::map<std::string, Value> values_;
};

}  // namespace nexp
