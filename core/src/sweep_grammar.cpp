// Sweep axes: a,b,c, choice(...), range(...), uniform(...), loguniform(...), interval(...), int(...)
// (nexp/runtime/sweep.hpp), read with the override grammar (override_grammar.hpp).
#include "nexp/runtime/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "nexp/error.hpp"
#include "override_grammar.hpp"
#include "sweep_grammar.hpp"
#include "yaml_values.hpp"

namespace nexp {

namespace detail {

std::string format_value(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  return fmt::format("{:.6g}", v);
}

}  // namespace detail

using namespace detail;

namespace {

const char* kFunctions = "choice, range, uniform, loguniform, interval and int";

// A function's arguments by name: positional ones take `names` in order, `name=` ones their name.
std::map<std::string, Element> arguments(const Element& f, const std::vector<std::string>& names,
                                         const std::vector<std::string>& required, const std::string& what) {
  const std::string usage = fmt::format("{}({})", f.text, fmt::join(names, ", "));
  std::map<std::string, Element> out;
  for (std::size_t i = 0; i < f.items.size(); ++i) {
    const std::string name = f.keys[i].empty() ? (i < names.size() ? names[i] : "") : f.keys[i];
    if (name.empty() || std::find(names.begin(), names.end(), name) == names.end())
      throw ConfigError(fmt::format("{}: {} takes {}; '{}' is not one of its arguments", what, f.text, usage,
                                    f.keys[i].empty() ? canonical_text(f.items[i]) : f.keys[i]));
    if (!out.emplace(name, f.items[i]).second)
      throw ConfigError(fmt::format("{}: {}'s argument '{}' is given twice", what, f.text, name));
  }
  for (const auto& name : required)
    if (!out.count(name)) throw ConfigError(fmt::format("{}: {} needs '{}': {}", what, f.text, name, usage));
  return out;
}

double number(const Element& e, const std::string& what) {
  double v = 0;
  if (e.kind != Element::Kind::Primitive || !parse_float(e.text, v) || !std::isfinite(v))
    throw ConfigError(fmt::format("{}: expected a number, found {}", what, canonical_text(e)));
  return v;
}

bool is_integer_text(const Element& e) {
  std::int64_t i;
  return e.kind == Element::Kind::Primitive && e.text.find_first_of(".eE") == std::string::npos && parse_int(e.text, i);
}

void range_values(const Element& f, SweepAxis& axis, const std::string& what) {
  // range(stop), range(start, stop[, step]), or by name.
  const bool one = f.items.size() == 1 && f.keys[0].empty();
  const auto args = one ? std::map<std::string, Element>{{"stop", f.items[0]}}
                        : arguments(f, {"start", "stop", "step"}, {"stop"}, what);
  const double start = args.count("start") ? number(args.at("start"), what) : 0.0;
  const double stop = number(args.at("stop"), what);
  const double step = args.count("step") ? number(args.at("step"), what) : 1.0;
  const bool ints = std::all_of(args.begin(), args.end(), [](const auto& a) { return is_integer_text(a.second); });
  if (step == 0) throw ConfigError(fmt::format("{}: the step of a range cannot be 0", what));
  for (int i = 0;; ++i) {
    const double v = start + i * step;
    if ((step > 0 && v >= stop - 1e-12 * std::fabs(step)) || (step < 0 && v <= stop + 1e-12 * std::fabs(step))) break;
    axis.values.push_back(format_value(v, ints));
    if (axis.values.size() > 100000) throw ConfigError(fmt::format("{}: more than 100000 values", what));
  }
  if (axis.values.empty()) throw ConfigError(fmt::format("{}: the range is empty (stop excluded, as in Python)", what));
}

// uniform(low, high), loguniform(low, high), interval(start, end): a sampled axis.
void distribution(const Element& f, SweepAxis& axis, const std::string& what) {
  const bool interval = f.text == "interval";
  const std::vector<std::string> names = interval ? std::vector<std::string>{"start", "end"}
                                                  : std::vector<std::string>{"low", "high"};
  const auto args = arguments(f, names, names, what);
  axis.kind = f.text == "loguniform" ? SweepAxis::Kind::LogUniform : SweepAxis::Kind::Uniform;
  axis.lo = number(args.at(names[0]), what);
  axis.hi = number(args.at(names[1]), what);
  if (!(axis.lo < axis.hi)) throw ConfigError(fmt::format("{}: the lower bound must be below the upper bound", what));
  if (!std::isfinite(axis.hi - axis.lo))
    throw ConfigError(fmt::format("{}: the interval is wider than a double can hold; narrow it", what));
  if (axis.kind == SweepAxis::Kind::LogUniform && axis.lo <= 0)
    throw ConfigError(fmt::format("{}: loguniform needs positive bounds", what));
}

bool is_distribution(const Element& e) {
  return e.kind == Element::Kind::Function && (e.text == "uniform" || e.text == "loguniform" || e.text == "interval");
}

void function_axis(const Element& f, SweepAxis& axis, const std::string& what) {
  if (f.text == "int") {
    if (f.items.size() != 1 || !f.keys[0].empty() || !is_distribution(f.items[0]))
      throw ConfigError(fmt::format("{}: int(...) wraps a distribution: int(uniform(lo,hi)) or int(loguniform(lo,hi))", what));
    axis.integer = true;
    distribution(f.items[0], axis, what);
    constexpr double kExact = 9007199254740992.0;  // 2^53: beyond it, doubles skip integers
    if (std::fabs(axis.lo) > kExact || std::fabs(axis.hi) > kExact)
      throw ConfigError(fmt::format("{}: int(...) draws integers between -2^53 and 2^53 ({:.0f})", what, kExact));
    return;
  }
  if (is_distribution(f)) return distribution(f, axis, what);
  if (f.text == "range") return range_values(f, axis, what);
  if (f.text == "choice") {
    for (std::size_t i = 0; i < f.items.size(); ++i) {
      if (!f.keys[i].empty()) throw ConfigError(fmt::format("{}: choice(...) takes values, not '{}='", what, f.keys[i]));
      axis.values.push_back(canonical_text(f.items[i]));
    }
    if (axis.values.empty()) throw ConfigError(fmt::format("{}: choice() needs at least one value", what));
    return;
  }
  throw ConfigError(fmt::format("{}: unknown sweep function '{}'; sweeps use {}", what, f.text, kFunctions));
}

}  // namespace

bool is_sweep_expression(const std::string& value) {
  const auto elements = parse_value(value, value, 0);
  return elements.size() > 1 || elements.front().kind == Element::Kind::Function;
}

SweepAxis parse_axis(const std::string& key, const std::string& expression, const std::string& origin) {
  SweepAxis axis;
  axis.key = key;
  axis.expression = expression;
  axis.origin = origin;
  const std::string typed = key + "=" + expression;
  const std::string what = fmt::format("{}: sweep axis '{}'", origin, typed);
  std::vector<Element> elements;
  try {
    elements = parse_value(expression, typed, key.size() + 1);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", origin, e.what()));
  }
  if (elements.size() == 1 && elements.front().kind == Element::Kind::Function) {
    function_axis(elements.front(), axis, what);
    return axis;
  }
  for (const auto& e : elements) axis.values.push_back(canonical_text(e));
  return axis;
}

}  // namespace nexp
