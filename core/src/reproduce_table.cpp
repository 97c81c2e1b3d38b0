// results.yaml as numbers and as a README table: formatting recorded values, tolerances, the Markdown
// tables between the README's markers, and writing new recorded values in place
// (nexp/runtime/reproduce.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/runtime/reproduce.hpp"

namespace nexp {

namespace {

// The decimals of a number as written ("0.2176": 4, "60": 0) and its exponent ("5.3e-12": -12).
struct Written {
  int decimals = 0;
  int exponent = 0;
  bool scientific = false;
};

Written written(const std::string& text) {
  Written w;
  const auto e = text.find_first_of("eE");
  const std::string mantissa = text.substr(0, e);
  if (e != std::string::npos) {
    w.scientific = true;
    w.exponent = std::atoi(text.c_str() + e + 1);
  }
  if (const auto dot = mantissa.find('.'); dot != std::string::npos)
    w.decimals = static_cast<int>(mantissa.size() - dot - 1);
  return w;
}

std::string group_thousands(const std::string& number) {
  const auto start = number.find_first_of("0123456789");
  if (start == std::string::npos) return number;
  auto end = number.find_first_not_of("0123456789", start);
  if (end == std::string::npos) end = number.size();
  std::string out = number.substr(0, start);
  const std::string digits = number.substr(start, end - start);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + number.substr(end);
}

// m·10ⁿ with `decimals` digits after the mantissa's point.
std::string unicode_scientific(double v, int decimals) {
  if (v == 0) return "0";
  static const char* superscript[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  std::string mantissa = fmt::format("{:.{}f}", v / std::pow(10.0, exponent), decimals);
  if (std::fabs(std::stod(mantissa)) >= 10) {  // 9.96 rounds up to 10.0
    ++exponent;
    mantissa = fmt::format("{:.{}f}", v / std::pow(10.0, exponent), decimals);
  }
  std::string power = exponent < 0 ? "⁻" : "";
  for (char d : std::to_string(std::abs(exponent))) power += superscript[d - '0'];
  return mantissa + "·10" + power;
}

// One format field "{:spec}" applied to v; the spec may hold ',' (group thousands) or end in 'u'.
std::string format_field(const std::string& spec, double v) {
  std::string s = spec;
  const bool group = s.find(',') != std::string::npos;
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  if (!s.empty() && s.back() == 'u') {
    const auto dot = s.find('.');
    return unicode_scientific(v, dot == std::string::npos ? 1 : std::atoi(s.c_str() + dot + 1));
  }
  std::string out = fmt::format(fmt::runtime("{" + s + "}"), v);
  return group ? group_thousands(out) : out;
}

// Four significant digits; whole numbers of five digits or more as they are, not as 5.592e+04.
std::string four_significant(double value) {
  const double a = std::fabs(value);
  return a >= 1e4 && a < 1e15 ? fmt::format("{:.0f}", value) : fmt::format("{:.4g}", value);
}

}  // namespace

std::string format_like(const std::string& like, double value) {
  const Written w = written(like);
  // A zero placeholder (0, 0.0) says nothing about the precision the value deserves.
  if (value != 0 && std::strtod(like.c_str(), nullptr) == 0) return four_significant(value);
  if (!w.scientific) {
    std::string out = fmt::format("{:.{}f}", value, w.decimals);
    // Too few decimals to show the value at all: four significant digits instead.
    return value != 0 && std::stod(out) == 0 ? four_significant(value) : out;
  }
  std::string s = fmt::format("{:.{}e}", value, w.decimals);  // 5.3e-12, 1.0e+03
  const auto e = s.find('e');
  std::string exp = s.substr(e + 1);
  const bool negative = exp[0] == '-';
  exp = exp.substr(1);
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  return s.substr(0, e) + (like.find('E') != std::string::npos ? "E" : "e") + (negative ? "-" : "") + exp;
}

std::string format_value(const ResultCheck& check, double value) {
  if (check.show.empty()) {
    if (check.scale != 1) return fmt::format("{}", value * check.scale);
    return value == check.recorded ? check.recorded_text : format_like(check.recorded_text, value);
  }
  const double v = value * check.scale;
  std::string out;
  const std::string& t = check.show;
  int fields = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 2, "{{") == 0 || t.compare(i, 2, "}}") == 0) {
      out += t[i++];
      continue;
    }
    if (t[i] != '{') {
      out += t[i];
      continue;
    }
    const auto end = t.find('}', i);
    if (end == std::string::npos) throw Error("an unclosed '{'");
    out += format_field(t.substr(i + 1, end - i - 1), v);
    ++fields;
    i = end;
  }
  if (fields != 1) throw Error("expected exactly one {...} field");
  return out;
}

std::string format_recorded(const ResultCheck& check) { return format_value(check, check.recorded); }

bool within_tolerance(const ResultRow& row, const ResultCheck& check, double now) {
  if (!std::isfinite(now)) return false;
  const double diff = std::fabs(now - check.recorded);
  // Binary rounding of the inputs must not decide a value right at the edge of its tolerance.
  auto within = [&](double allowed) { return diff <= allowed * (1 + 1e-9) + 1e-15 * std::fabs(check.recorded); };
  const ResultCompare& c = check.compare;
  switch (c.kind) {
    case ResultCompare::Kind::Exact: {
      const Written w = written(check.recorded_text);
      return within(0.5 * std::pow(10.0, w.exponent - w.decimals));
    }
    case ResultCompare::Kind::Absolute: return within(c.amount);
    case ResultCompare::Kind::Relative: return within(c.amount * std::fabs(check.recorded));
    case ResultCompare::Kind::Interval: {
      const double a = c.low_ref.empty() ? c.low : row.check(c.low_ref)->recorded;
      const double b = c.high_ref.empty() ? c.high : row.check(c.high_ref)->recorded;
      const double lo = std::min(a, b), hi = std::max(a, b), slack = 1e-9 * (hi - lo) + 1e-15 * std::fabs(hi);
      return now >= lo - slack && now <= hi + slack;
    }
  }
  return false;
}

std::string ResultCompare::describe() const {
  switch (kind) {
    case Kind::Exact: return "exact";
    case Kind::Absolute: return fmt::format("±{:g}", amount);
    case Kind::Relative: return fmt::format("±{:g}%", amount * 100);
    case Kind::Interval:
      return fmt::format("in [{}, {}]", low_ref.empty() ? fmt::format("{:g}", low) : low_ref,
                         high_ref.empty() ? fmt::format("{:g}", high) : high_ref);
  }
  return "";
}

// ------------------------------------------------------------------ the README

namespace {

std::string cell_template(const ResultRow& row, const std::string& key) {
  if (auto it = row.text.find(key); it != row.text.end()) return it->second;
  return "{" + key + "}";
}

std::string fill(const ResultRow& row, const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
      out += text[i++];
      continue;
    }
    const auto end = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (end == std::string::npos) {
      out += text[i] == '\n' ? ' ' : text[i];
      continue;
    }
    const std::string name = text.substr(i + 1, end - i - 1);
    const auto dot = name.find('.');
    i = end;
    if (name == "claim") out += row.claim;
    else if (name == "paper") out += row.paper;
    else if (name == "command") out += "`" + (row.command.is_external() ? row.command.external : row.command.text()) + "`";
    else if (const ResultCheck* c = row.check(name)) out += format_recorded(*c);
    else if (const ResultCheck* b = row.check(name.substr(0, dot))) {
      const ResultCompare& k = b->compare;
      const bool lo = name.substr(dot + 1) == "lo";
      const std::string& ref = lo ? k.low_ref : k.high_ref;
      out += ref.empty() ? format_value(*b, lo ? k.low : k.high) : format_recorded(*row.check(ref));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string begin_marker(const std::string& plugin, const std::string& table) {
  return fmt::format("<!-- results:{} (generated from results.yaml: edit that file, then `nexp reproduce {} "
                     "--write-readme`) -->",
                     table, plugin);
}
std::string end_marker(const std::string& table) { return fmt::format("<!-- /results:{} -->", table); }

struct Block {
  std::size_t begin = 0, end = 0;  // the whole block, both marker lines included
};

// The block of `table` in `readme`: its begin marker's line through its end marker's line.
std::optional<Block> find_block(const std::string& readme, const std::string& table) {
  const std::string open = "<!-- results:" + table;
  for (std::size_t at = readme.find(open); at != std::string::npos; at = readme.find(open, at + 1)) {
    const char next = at + open.size() < readme.size() ? readme[at + open.size()] : '\n';
    if (next != ' ' && next != '-') continue;  // results:main must not match results:main2
    if (at > 0 && readme[at - 1] != '\n') continue;
    const auto close = readme.find(end_marker(table), at);
    if (close == std::string::npos) return std::nullopt;
    auto end = readme.find('\n', close);
    return Block{at, end == std::string::npos ? readme.size() : end + 1};
  }
  return std::nullopt;
}

std::string block_text(const ResultsFile& results, const ResultTable& table) {
  return begin_marker(results.plugin, table.id) + "\n\n" + render_results_table(results, table) + "\n" +
         end_marker(table.id) + "\n";
}

}  // namespace

std::string render_results_table(const ResultsFile& results, const ResultTable& table) {
  std::ostringstream out;
  out << "|";
  for (const auto& [_, title] : table.columns) out << " " << title << " |";
  out << "\n|";
  for (std::size_t i = 0; i < table.columns.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : results.rows) {
    if (row.table != table.id) continue;
    out << "|";
    for (const auto& [key, _] : table.columns) {
      const std::string cell = fill(row, cell_template(row, key));
      out << (cell.empty() ? " |" : " " + cell + " |");
    }
    out << "\n";
  }
  return out.str();
}

std::string regenerate_readme(const ResultsFile& results, const std::string& readme) {
  std::string out = readme;
  for (const auto& table : results.tables) {
    const auto block = find_block(out, table.id);
    if (!block)
      throw ConfigError(fmt::format(
          "{} has no block for the results table '{}' of {}: put the two lines\n  {}\n  {}\non lines of their own "
          "where the table belongs, then run `nexp reproduce {} --write-readme` again",
          results.readme.string(), table.id, results.file.string(), begin_marker(results.plugin, table.id),
          end_marker(table.id), results.plugin));
    out.replace(block->begin, block->end - block->begin, block_text(results, table));
  }
  return out;
}

std::vector<std::string> stale_tables(const ResultsFile& results, const std::string& readme) {
  std::vector<std::string> stale;
  for (const auto& table : results.tables) {
    const auto block = find_block(readme, table.id);
    if (!block || readme.substr(block->begin, block->end - block->begin) != block_text(results, table))
      stale.push_back(table.id);
  }
  return stale;
}

// ------------------------------------------------------------------ recording new values

namespace {

struct Edit {
  int line, column;
  std::string old_text, new_text;
};

std::string cost_text(double seconds) {
  return seconds < 10 ? fmt::format("{:.1f}", seconds) : fmt::format("{:.0f}", seconds);
}

}  // namespace

std::string record_values(const ResultsFile& results, const std::string& text,
                          const std::map<std::pair<std::string, std::string>, double>& values,
                          const std::map<std::string, double>& costs) {
  std::vector<Edit> edits;
  for (const auto& row : results.rows) {
    for (const auto& check : row.checks)
      if (auto it = values.find({row.id, check.id}); it != values.end())
        edits.push_back({check.recorded_line, check.recorded_column, check.recorded_text,
                         format_like(check.recorded_text, it->second)});
    if (auto it = costs.find(row.id); it != costs.end())
      edits.push_back({row.cost_line, row.cost_column, row.cost_text, cost_text(it->second)});
  }
  // Right to left, so that two edits on one line do not move each other.
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.line != b.line ? a.line > b.line : a.column > b.column;
  });
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (const auto& e : edits) {
    if (e.line < 0 || e.line >= static_cast<int>(lines.size()))
      throw Error(fmt::format("{}: line {} is gone; the file changed while nexp ran", results.file.string(), e.line + 1));
    std::string& line = lines[e.line];
    // yaml-cpp may count the column in characters, not bytes: the scalar starts there or further right.
    const std::size_t at = line.find(e.old_text, std::min<std::size_t>(e.column, line.size()));
    if (at == std::string::npos)
      throw Error(fmt::format("{}, line {}: '{}' is not there any more; the file changed while nexp ran",
                              results.file.string(), e.line + 1, e.old_text));
    line.replace(at, e.old_text.size(), e.new_text);
  }
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  if (!text.empty() && text.back() != '\n') out.pop_back();
  return out;
}

}  // namespace nexp
