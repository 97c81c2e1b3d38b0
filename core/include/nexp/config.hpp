#pragma once
// Typed parameter schemas. Every component (method, dataset, device backend) declares one; the
// config is validated against it before anything runs, and `nexp describe` prints it. Components
// declare their options as a struct (nexp/options.hpp), which builds the Schema below; core's own
// config sections (slurm:, sweep:, ...) use the same machinery.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

// Map: a nested map with its own schema; MapList: a list of such maps.
enum class Type { Bool, Int, Float, String, IntList, FloatList, StringList, Map, MapList };

NEXP_API const char* type_name(Type type);  // "bool", "int", "float", "string", "list of int", ...

class Params;
class Schema;

// One value of a parameter. A nested map is held through a shared pointer (Params is not complete
// here, and validated values are immutable); a list of maps directly.
using Value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                           std::vector<double>, std::vector<std::string>, std::shared_ptr<const Params>,
                           std::vector<Params>>;

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
  // A nested map validated against `schema`, with the values it has when the config omits it.
  static Param map(std::string name, Schema schema, Params fallback, std::string help);
  // A list of maps, each validated against `schema`.
  static Param maps(std::string name, Schema schema, std::vector<Params> fallback, std::string help);

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
  // Values (or list elements) must fit a 32-bit int; set for `int` members, not shown in messages.
  Param& int32();

  const std::string& name() const { return name_; }
  Type type() const { return type_; }
  const std::string& help() const { return help_; }
  const Value& fallback() const { return fallback_; }
  bool is_required() const { return required_; }
  bool is_optional() const { return optional_; }
  std::optional<double> lower() const { return lo_; }
  std::optional<double> upper() const { return hi_; }
  const std::vector<std::string>& allowed() const { return choices_; }
  const Schema* nested() const { return nested_.get(); }  // Map and MapList; else null

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
  std::shared_ptr<const Schema> nested_;
  bool required_ = false;
  bool optional_ = false;
  bool int32_ = false;
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
  // Every parameter's default (required and optional ones left out).
  Params defaults() const;

 private:
  std::vector<Param> params_;
};

// Validated values of one schema. Components read them through their options struct
// (nexp/options.hpp); the getters, named after the Param factories, serve core and that binding.
// They throw nexp::Error naming the parameter and both types when asked for the wrong type.
class NEXP_API Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, Value> values) : values_(std::move(values)) {}

  bool has(std::string_view name) const;
  const Value& get(std::string_view name) const;
  bool get_boolean(std::string_view name) const;
  std::int64_t get_integer(std::string_view name) const;
  double get_real(std::string_view name) const;  // an int value converts
  const std::string& get_string(std::string_view name) const;
  const std::vector<std::int64_t>& get_ints(std::string_view name) const;
  std::vector<double> get_reals(std::string_view name) const;  // a list of ints converts
  const std::vector<std::string>& get_strings(std::string_view name) const;
  const Params& get_map(std::string_view name) const;
  const std::vector<Params>& get_maps(std::string_view name) const;

  void set(const std::string& name, Value value) { values_[name] = std::move(value); }
  const std::map<std::string, Value>& values() const { return values_; }

 private:
  std::map<std::string, Value> values_;
};

}  // namespace nexp
