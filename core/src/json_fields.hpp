#pragma once
// Core-internal: fields of the JSON files nexp reads back from run folders (status.json, meta.json,
// metrics.jsonl, checkpoints), which a crash, a full disk, another version or a person may have left
// in any state. A field that is absent, of another type, or a number outside the target type's range
// reads as the fallback: never an exception from nlohmann (json::value() throws on a type mismatch),
// never an overflowing conversion.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace nexp::detail {

inline const nlohmann::json* json_field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

inline std::string text_field(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  const nlohmann::json* v = json_field(j, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

inline double real_field(const nlohmann::json& j, const char* key, double fallback = 0.0) {
  const nlohmann::json* v = json_field(j, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

// An integral field: an integer, or a float with an integral value, that fits T.
template <class T>
T integer_field(const nlohmann::json& j, const char* key, T fallback) {
  static_assert(std::is_integral_v<T>);
  const nlohmann::json* v = json_field(j, key);
  if (!v || !v->is_number()) return fallback;
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()) ? static_cast<T>(u) : fallback;
  }
  if (v->is_number_integer()) {
    const auto i = v->get<std::int64_t>();
    if constexpr (std::is_signed_v<T>) {
      return i >= std::numeric_limits<T>::min() && i <= std::numeric_limits<T>::max() ? static_cast<T>(i) : fallback;
    } else {
      return i >= 0 && static_cast<std::uint64_t>(i) <= std::numeric_limits<T>::max() ? static_cast<T>(i) : fallback;
    }
  }
  // A float: exact integers only, and strictly inside T's range (2^63 itself does not fit an int64).
  const double d = v->get<double>();
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
  return std::isfinite(d) && d == std::floor(d) && d >= lo && d < hi ? static_cast<T>(d) : fallback;
}

}  // namespace nexp::detail
