// Param, Schema, Params: typed parameter schemas (nexp/config.hpp).
#include "nexp/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "nexp/error.hpp"

namespace nexp {

const char* type_name(Type type) {
  switch (type) {
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::String: return "string";
    case Type::IntList: return "list of int";
    case Type::FloatList: return "list of float";
    case Type::StringList: return "list of string";
    case Type::Map: return "map";
    case Type::MapList: return "list of maps";
  }
  return "?";
}

Type type_of(const Value& value) { return static_cast<Type>(value.index()); }

namespace {

std::string format_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

template <class T>
std::string join_list(const std::vector<T>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    if constexpr (std::is_same_v<T, double>) out += format_number(items[i]);
    else out += fmt::format("{}", items[i]);
  }
  return out + "]";
}

std::string map_text(const Params& p) {
  std::string out = "{";
  for (const auto& [k, v] : p.values()) out += (out.size() > 1 ? ", " : "") + k + ": " + to_string(v);
  return out + "}";
}

std::string list_text(const std::vector<Params>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + map_text(items[i]);
  return out + "]";
}

}  // namespace

std::string to_string(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return format_number(v);
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, std::shared_ptr<const Params>>) return v ? map_text(*v) : "{}";
        else if constexpr (std::is_same_v<T, std::vector<Params>>) return list_text(v);
        else return join_list(v);
      },
      value);
}

// ---------------------------------------------------------------- Param

Param::Param(std::string name, Type type, Value fallback, std::string help)
    : name_(std::move(name)), type_(type), fallback_(std::move(fallback)), help_(std::move(help)) {}

Param Param::boolean(std::string name, bool fallback, std::string help) {
  return Param(std::move(name), Type::Bool, fallback, std::move(help));
}
Param Param::integer(std::string name, std::int64_t fallback, std::string help) {
  return Param(std::move(name), Type::Int, fallback, std::move(help));
}
Param Param::real(std::string name, double fallback, std::string help) {
  return Param(std::move(name), Type::Float, fallback, std::move(help));
}
Param Param::string(std::string name, std::string fallback, std::string help) {
  return Param(std::move(name), Type::String, std::move(fallback), std::move(help));
}
Param Param::ints(std::string name, std::vector<std::int64_t> fallback, std::string help) {
  return Param(std::move(name), Type::IntList, std::move(fallback), std::move(help));
}
Param Param::reals(std::string name, std::vector<double> fallback, std::string help) {
  return Param(std::move(name), Type::FloatList, std::move(fallback), std::move(help));
}
Param Param::strings(std::string name, std::vector<std::string> fallback, std::string help) {
  return Param(std::move(name), Type::StringList, std::move(fallback), std::move(help));
}

Param Param::map(std::string name, Schema schema, Params fallback, std::string help) {
  Param p(std::move(name), Type::Map, std::make_shared<const Params>(std::move(fallback)), std::move(help));
  p.nested_ = std::make_shared<const Schema>(std::move(schema));
  return p;
}
Param Param::maps(std::string name, Schema schema, std::vector<Params> fallback, std::string help) {
  Param p(std::move(name), Type::MapList, std::move(fallback), std::move(help));
  p.nested_ = std::make_shared<const Schema>(std::move(schema));
  return p;
}

Param& Param::min(double lo) { lo_ = lo; return *this; }
Param& Param::max(double hi) { hi_ = hi; return *this; }
Param& Param::choices(std::vector<std::string> allowed) { choices_ = std::move(allowed); return *this; }
Param& Param::required() { required_ = true; optional_ = false; return *this; }
Param& Param::optional() { optional_ = true; required_ = false; return *this; }
Param& Param::int32() { int32_ = true; return *this; }

std::string Param::check(const Value& value) const {
  auto check_number = [&](double v) -> std::string {
    if (std::isnan(v)) return "NaN is not allowed";
    if (int32_ && (v < INT32_MIN || v > INT32_MAX)) return fmt::format("{:g} does not fit a 32-bit int", v);
    if (lo_ && v < *lo_) return fmt::format("{:g} is below the minimum {:g}", v, *lo_);
    if (hi_ && v > *hi_) return fmt::format("{:g} is above the maximum {:g}", v, *hi_);
    return {};
  };
  auto check_choice = [&](const std::string& s) -> std::string {
    if (choices_.empty() || std::find(choices_.begin(), choices_.end(), s) != choices_.end()) return {};
    return fmt::format("'{}' is not one of {{{}}}", s, fmt::join(choices_, ", "));
  };
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
          return check_number(static_cast<double>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return check_choice(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const auto& s : v)
            if (auto e = check_choice(s); !e.empty()) return e;
          return {};
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::shared_ptr<const Params>> ||
                             std::is_same_v<T, std::vector<Params>>) {
          return {};  // a nested map's values are checked against its own schema
        } else {
          for (const auto& x : v)
            if (auto e = check_number(static_cast<double>(x)); !e.empty()) return e;
          return {};
        }
      },
      value);
}

std::string Param::constraint() const {
  std::string out = type_name(type_);
  if (lo_ && hi_) out += fmt::format(" in [{:g}, {:g}]", *lo_, *hi_);
  else if (lo_) out += fmt::format(" >= {:g}", *lo_);
  else if (hi_) out += fmt::format(" <= {:g}", *hi_);
  if (!choices_.empty()) out += fmt::format(", one of {{{}}}", fmt::join(choices_, ", "));
  return out;
}

// ---------------------------------------------------------------- Schema

Schema::Schema(std::initializer_list<Param> params) {
  for (const auto& p : params) add(p);
}

Schema& Schema::add(Param param) {
  if (find(param.name()))
    throw Error(fmt::format("schema: parameter '{}' is declared twice; each name must be unique", param.name()));
  if (!param.is_required() && !param.is_optional()) {
    if (auto e = param.check(param.fallback()); !e.empty())
      throw Error(fmt::format("schema: the default of '{}' violates its own constraint: {}", param.name(), e));
  }
  params_.push_back(std::move(param));
  return *this;
}

const Param* Schema::find(std::string_view name) const {
  for (const auto& p : params_)
    if (p.name() == name) return &p;
  return nullptr;
}

Params Schema::defaults() const {
  std::map<std::string, Value> values;
  for (const auto& p : params_)
    if (!p.is_required() && !p.is_optional()) values[p.name()] = p.fallback();
  return Params(std::move(values));
}

std::vector<std::string> Schema::names() const {
  std::vector<std::string> out;
  for (const auto& p : params_) out.push_back(p.name());
  return out;
}

// ---------------------------------------------------------------- Params

bool Params::has(std::string_view name) const { return values_.count(std::string(name)) > 0; }

const Value& Params::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) {
    std::vector<std::string> names;
    for (const auto& [k, _] : values_) names.push_back(k);
    throw Error(fmt::format("parameter '{}' was asked for but is not set (known: {}); declare it in the "
                            "component's schema, or check has() for an optional one",
                            name, fmt::join(names, ", ")));
  }
  return it->second;
}

namespace {
template <class T>
const T& get_as(const Params& p, std::string_view name, Type wanted) {
  const Value& v = p.get(name);
  if (const T* x = std::get_if<T>(&v)) return *x;
  throw Error(fmt::format("parameter '{}' was read as {} but holds a {} ({}); read it with the getter of "
                          "its declared type",
                          name, type_name(wanted), type_name(type_of(v)), to_string(v)));
}
}  // namespace

bool Params::get_boolean(std::string_view name) const { return get_as<bool>(*this, name, Type::Bool); }
std::int64_t Params::get_integer(std::string_view name) const {
  return get_as<std::int64_t>(*this, name, Type::Int);
}
double Params::get_real(std::string_view name) const {
  const Value& v = get(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return get_as<double>(*this, name, Type::Float);
}
const std::string& Params::get_string(std::string_view name) const {
  return get_as<std::string>(*this, name, Type::String);
}
const std::vector<std::int64_t>& Params::get_ints(std::string_view name) const {
  return get_as<std::vector<std::int64_t>>(*this, name, Type::IntList);
}
std::vector<double> Params::get_reals(std::string_view name) const {
  const Value& v = get(name);
  if (const auto* i = std::get_if<std::vector<std::int64_t>>(&v)) return {i->begin(), i->end()};
  return get_as<std::vector<double>>(*this, name, Type::FloatList);
}
const std::vector<std::string>& Params::get_strings(std::string_view name) const {
  return get_as<std::vector<std::string>>(*this, name, Type::StringList);
}
const Params& Params::get_map(std::string_view name) const {
  return *get_as<std::shared_ptr<const Params>>(*this, name, Type::Map);
}
const std::vector<Params>& Params::get_maps(std::string_view name) const {
  return get_as<std::vector<Params>>(*this, name, Type::MapList);
}

}  // namespace nexp
