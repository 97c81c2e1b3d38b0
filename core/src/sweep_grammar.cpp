// The sweep grammar: axes such as a=1,2,3, range(...), choice(...), uniform(...), loguniform(...),
// int(...) (nexp/runtime/sweep.hpp).
#include "nexp/runtime/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "nexp/error.hpp"
#include "sweep_grammar.hpp"

namespace nexp {

namespace detail {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Splits at commas outside brackets, braces, parentheses and quotes.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(trim(cur));
  return out;
}


std::string format_value(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  return fmt::format("{:.6g}", v);
}

}  // namespace detail

using namespace detail;

namespace {

// "name(args)" -> args, when s is exactly a call of `name`.
std::optional<std::string> call_args(const std::string& s, const std::string& name) {
  if (s.size() < name.size() + 2 || s.compare(0, name.size() + 1, name + "(") != 0 || s.back() != ')') return std::nullopt;
  return s.substr(name.size() + 1, s.size() - name.size() - 2);
}

double number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw ConfigError(fmt::format("{}: expected a number, found '{}'", what, text));
  return v;
}

}  // namespace

bool is_sweep_expression(const std::string& value) {
  const std::string v = trim(value);
  for (const char* f : {"range", "choice", "uniform", "loguniform", "int"})
    if (call_args(v, f)) return true;
  return split_top(v).size() > 1;
}

SweepAxis parse_axis(const std::string& key, const std::string& expression, const std::string& origin) {
  SweepAxis axis;
  axis.key = key;
  axis.expression = trim(expression);
  axis.origin = origin;
  const std::string what = fmt::format("{}: sweep axis '{}={}'", origin, key, axis.expression);
  std::string e = axis.expression;
  if (auto inner = call_args(e, "int")) {
    axis.integer = true;
    e = trim(*inner);
  }
  auto bounds = [&](const std::string& args) {
    auto parts = split_top(args);
    if (parts.size() != 2) throw ConfigError(fmt::format("{}: expected two bounds (lo, hi), found {}", what, parts.size()));
    axis.lo = number(parts[0], what);
    axis.hi = number(parts[1], what);
    if (!(axis.lo < axis.hi)) throw ConfigError(fmt::format("{}: the lower bound must be below the upper bound", what));
  };
  if (auto args = call_args(e, "loguniform")) {
    axis.kind = SweepAxis::Kind::LogUniform;
    bounds(*args);
    if (axis.lo <= 0) throw ConfigError(fmt::format("{}: loguniform needs positive bounds", what));
    return axis;
  }
  if (auto args = call_args(e, "uniform")) {
    axis.kind = SweepAxis::Kind::Uniform;
    bounds(*args);
    return axis;
  }
  if (axis.integer)
    throw ConfigError(fmt::format("{}: int(...) wraps a distribution: int(uniform(lo,hi)) or int(loguniform(lo,hi))", what));
  if (auto args = call_args(e, "range")) {
    auto parts = split_top(*args);
    if (parts.size() < 2 || parts.size() > 3)
      throw ConfigError(fmt::format("{}: range takes (start, stop) or (start, stop, step)", what));
    double start = number(parts[0], what), stop = number(parts[1], what);
    double step = parts.size() == 3 ? number(parts[2], what) : 1.0;
    bool ints = std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return p.find_first_of(".eE") == std::string::npos; });
    if (step == 0) throw ConfigError(fmt::format("{}: the step of a range cannot be 0", what));
    for (int i = 0;; ++i) {
      double v = start + i * step;
      if ((step > 0 && v >= stop - 1e-12 * std::fabs(step)) || (step < 0 && v <= stop + 1e-12 * std::fabs(step))) break;
      axis.values.push_back(format_value(v, ints));
      if (axis.values.size() > 100000) throw ConfigError(fmt::format("{}: more than 100000 values", what));
    }
    if (axis.values.empty()) throw ConfigError(fmt::format("{}: the range is empty (stop excluded, as in Python)", what));
    return axis;
  }
  if (auto args = call_args(e, "choice")) e = *args;
  axis.values = split_top(e);
  for (const auto& v : axis.values)
    if (v.empty()) throw ConfigError(fmt::format("{}: an empty value (two commas in a row?)", what));
  return axis;
}
}  // namespace nexp
