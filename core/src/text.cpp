// Text made safe to store: UTF-8 validation, \xNN escapes, checked text files (nexp/text.hpp).
#include "nexp/text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nexp/error.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool in(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

// The length of the well-formed UTF-8 sequence at p (Unicode, table 3-7), or 0 when there is none.
std::size_t sequence_length(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  if (in(c, 0xC2, 0xDF)) return n >= 2 && in(p[1], 0x80, 0xBF) ? 2 : 0;
  if (in(c, 0xE0, 0xEF)) {
    if (n < 3 || !in(p[2], 0x80, 0xBF)) return 0;
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return in(p[1], lo, hi) ? 3 : 0;
  }
  if (in(c, 0xF0, 0xF4)) {
    if (n < 4 || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF)) return 0;
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return in(p[1], lo, hi) ? 4 : 0;
  }
  return 0;
}

json sanitized(const json& j) {
  if (j.is_string()) return valid_utf8(j.get_ref<const std::string&>());
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(sanitized(v));
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) out[valid_utf8(k)] = sanitized(v);
    return out;
  }
  return j;
}

// 1-based line and column (in bytes) of `offset` in `text`.
std::pair<std::size_t, std::size_t> line_and_column(const std::string& text, std::size_t offset) {
  std::size_t line = 1, start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') ++line, start = i + 1;
  return {line, offset - start + 1};
}

std::string excerpt_of_line(const std::string& text, std::size_t offset) {
  const std::size_t begin = text.rfind('\n', offset) == std::string::npos ? 0 : text.rfind('\n', offset) + 1;
  const std::size_t end = std::min(text.find('\n', offset), begin + 60);
  std::string shown = valid_utf8(std::string_view(text).substr(begin, end - begin));
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return shown;
}

}  // namespace

std::size_t invalid_utf8_offset(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(p + i, text.size() - i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string valid_utf8(std::string_view text) {
  std::size_t bad = invalid_utf8_offset(text);
  if (bad == std::string_view::npos) return std::string(text);
  std::string out(text.substr(0, bad));
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = bad; i < text.size();) {
    const std::size_t n = sequence_length(p + i, text.size() - i);
    if (n == 0) {
      out += fmt::format("\\x{:02X}", p[i]);
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string json_dump(const json& j, int indent) {
  try {
    return j.dump(indent);
  } catch (const json::type_error&) {  // 316: a string that is not UTF-8
    return sanitized(j).dump(indent);
  }
}

std::string read_text_file(const fs::path& file, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw DataError(fmt::format("{}: '{}' does not exist (a relative path is read from the working directory, '{}'); "
                                "check the path",
                                what, file.string(), fs::current_path(ec).string()));
  if (fs::is_directory(file, ec))
    throw DataError(fmt::format("{}: '{}' is a folder, not a file; give the file itself", what, file.string()));
  std::ifstream stream(file, std::ios::binary);
  std::ostringstream ss;
  if (stream) ss << stream.rdbuf();
  if (!stream || stream.bad())
    throw DataError(fmt::format("{}: '{}' cannot be read ({}); check its permissions", what, file.string(),
                                std::strerror(errno)));
  std::string text = ss.str();
  if (text.empty()) throw DataError(fmt::format("{}: '{}' is empty; give a file with content", what, file.string()));
  const std::size_t nul = text.find('\0');
  const std::size_t bad = std::min(nul, invalid_utf8_offset(text));
  if (bad != std::string::npos) {
    const auto [line, column] = line_and_column(text, bad);
    const bool binary = bad == nul;
    throw DataError(fmt::format(
        "{}: '{}' is not {}: line {}, column {} holds the byte \\x{:02X} (the line reads '{}'). {}", what, file.string(),
        binary ? "a text file" : "UTF-8 text", line, column, static_cast<unsigned char>(text[bad]),
        excerpt_of_line(text, bad),
        binary ? "Check that it is the right file"
               : "Save it as UTF-8 (from latin-1: iconv -f latin1 -t utf-8 OLD > NEW), or check that it is the right file"));
  }
  return text;
}

}  // namespace nexp
