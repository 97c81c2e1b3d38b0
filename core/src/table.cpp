// CSV tables (nexp/table.hpp).
#include "nexp/table.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "nexp/error.hpp"

namespace nexp {

namespace {

const char* type_name(CsvColumn::Type t) {
  switch (t) {
    case CsvColumn::Type::Text: return "text";
    case CsvColumn::Type::Integer: return "an integer";
    case CsvColumn::Type::Real: return "a real number";
    case CsvColumn::Type::Boolean: return "a boolean";
  }
  return "?";
}

const char* cell_name(const CsvCell& cell) {
  static const char* const names[] = {"a missing value", "text", "an integer", "a real number", "a boolean"};
  return names[cell.index()];
}

CsvColumn make(std::string name, CsvColumn::Type type) {
  CsvColumn c;
  c.name = std::move(name);
  c.type = type;
  return c;
}

CsvColumn with_precision(CsvColumn c, CsvColumn::Notation notation, int precision) {
  if (c.type != CsvColumn::Type::Real)
    throw Error(fmt::format("CSV column '{}': only a real column has a precision; it is {}", c.name, type_name(c.type)));
  if (precision < 0 || precision > 40)
    throw Error(fmt::format("CSV column '{}': a precision is 0 to 40 digits; found {}", c.name, precision));
  c.notation = notation, c.precision = precision;
  return c;
}

std::string format_real(double v, const CsvColumn& c) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  switch (c.notation) {
    case CsvColumn::Notation::Shortest: return fmt::format("{}", v);
    case CsvColumn::Notation::Fixed: return fmt::format("{:.{}f}", v, c.precision);
    case CsvColumn::Notation::Significant: return fmt::format("{:.{}g}", v, std::max(1, c.precision));
    case CsvColumn::Notation::Scientific: return fmt::format("{:.{}e}", v, c.precision);
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------- columns

CsvColumn CsvColumn::text(std::string name) { return make(std::move(name), Type::Text); }
CsvColumn CsvColumn::integer(std::string name) { return make(std::move(name), Type::Integer); }
CsvColumn CsvColumn::boolean(std::string name) { return make(std::move(name), Type::Boolean); }
CsvColumn CsvColumn::real(std::string name) { return make(std::move(name), Type::Real); }
CsvColumn CsvColumn::fixed(int decimals) const { return with_precision(*this, Notation::Fixed, decimals); }
CsvColumn CsvColumn::significant(int digits) const { return with_precision(*this, Notation::Significant, digits); }
CsvColumn CsvColumn::scientific(int digits) const { return with_precision(*this, Notation::Scientific, digits); }

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// ---------------------------------------------------------------- writer

CsvWriter::CsvWriter(const std::filesystem::path& file, std::vector<CsvColumn> columns)
    : file_(std::make_unique<std::ofstream>(file, std::ios::binary | std::ios::trunc)),
      out_(file_.get()),
      where_(file.string()),
      columns_(std::move(columns)) {
  if (!*file_)
    throw Error(fmt::format("cannot create the CSV file '{}': {}; check that its folder exists and is writable",
                            where_, std::strerror(errno)));
  write_header();
}

CsvWriter::CsvWriter(std::ostream& out, std::vector<CsvColumn> columns)
    : out_(&out), where_("a CSV stream"), columns_(std::move(columns)) {
  write_header();
}

CsvWriter::CsvWriter(CsvWriter&& other) noexcept
    : file_(std::move(other.file_)),
      out_(std::exchange(other.out_, nullptr)),
      where_(std::move(other.where_)),
      columns_(std::move(other.columns_)),
      rows_(other.rows_),
      flush_every_row_(other.flush_every_row_) {}

CsvWriter::~CsvWriter() {
  if (out_) out_->flush();
}

void CsvWriter::write_header() {
  if (columns_.empty()) throw Error(fmt::format("CSV table '{}': a table needs at least one column", where_));
  std::string line;
  for (std::size_t c = 0; c < columns_.size(); ++c) line += (c ? "," : "") + csv_field(columns_[c].name);
  *out_ << line << '\n';
  out_->flush();
}

std::string CsvWriter::format(const CsvCell& cell, std::size_t column) const {
  const CsvColumn& c = columns_[column];
  using T = CsvColumn::Type;
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (c.type == T::Text && std::holds_alternative<std::string>(cell)) return csv_field(std::get<std::string>(cell));
  if (c.type == T::Integer && std::holds_alternative<std::int64_t>(cell)) return std::to_string(std::get<std::int64_t>(cell));
  if (c.type == T::Boolean && std::holds_alternative<bool>(cell)) return std::get<bool>(cell) ? "true" : "false";
  if (c.type == T::Real && std::holds_alternative<double>(cell)) return format_real(std::get<double>(cell), c);
  if (c.type == T::Real && std::holds_alternative<std::int64_t>(cell))
    return format_real(static_cast<double>(std::get<std::int64_t>(cell)), c);
  throw Error(fmt::format("CSV table '{}', row {}, column '{}': expected {}, found {}", where_, rows_ + 1, c.name,
                          type_name(c.type), cell_name(cell)));
}

CsvWriter& CsvWriter::row(const std::vector<CsvCell>& cells) {
  if (cells.size() != columns_.size())
    throw Error(fmt::format("CSV table '{}', row {}: expected {} values, one per column, found {}", where_, rows_ + 1,
                            columns_.size(), cells.size()));
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) line += (c ? "," : "") + format(cells[c], c);
  line += '\n';
  out_->write(line.data(), static_cast<std::streamsize>(line.size()));  // the whole line at once
  if (flush_every_row_) out_->flush();
  if (!*out_) throw Error(fmt::format("CSV table '{}': writing row {} failed (disk full?)", where_, rows_ + 1));
  ++rows_;
  return *this;
}

void CsvWriter::flush() { out_->flush(); }

// ---------------------------------------------------------------- reader

namespace {

// Splits RFC 4180 text into records of fields; `lines` gets the line each record starts on.
void split_records(std::string_view text, const std::string& origin, std::vector<std::vector<std::string>>& records,
                   std::vector<std::size_t>& lines) {
  std::size_t line = 1, i = 0;
  while (i < text.size()) {
    const std::size_t start_line = line;
    std::vector<std::string> fields(1);
    bool blank = true;
    for (; i < text.size(); ++i) {
      const char ch = text[i];
      if (ch == '\n' || ch == '\r') {
        if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        ++i, ++line;
        break;
      }
      blank = false;
      if (ch == ',') {
        fields.emplace_back();
      } else if (ch == '"' && fields.back().empty()) {
        const std::size_t quote_line = line;
        for (++i;; ++i) {
          if (i >= text.size())
            throw DataError(fmt::format("{}, line {}: a quoted field is never closed (a \" is missing)", origin,
                                        quote_line));
          if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
            fields.back() += '"', ++i;
          } else if (text[i] == '"') {
            break;
          } else {
            line += text[i] == '\n';
            fields.back() += text[i];
          }
        }
        if (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != '\n' && text[i + 1] != '\r')
          throw DataError(fmt::format("{}, line {}: text after a closing quote; a quote inside a quoted field is "
                                      "written twice (\"\")",
                                      origin, line));
      } else {
        fields.back() += ch;
      }
    }
    if (blank) continue;
    records.push_back(std::move(fields));
    lines.push_back(start_line);
  }
}

}  // namespace

CsvTable CsvTable::parse(std::string_view text, const std::string& origin) {
  CsvTable t;
  t.origin_ = origin;
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  std::vector<std::vector<std::string>> records;
  split_records(text, origin, records, t.lines_);
  if (records.empty()) throw DataError(fmt::format("{}: expected a header row, found an empty file", origin));
  t.header_ = std::move(records.front());
  t.lines_.erase(t.lines_.begin());
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header_.size())
      throw DataError(fmt::format("{}, line {}: expected {} fields (as many as the header), found {}", origin,
                                  t.lines_[r - 1], t.header_.size(), records[r].size()));
    t.rows_.push_back(std::move(records[r]));
  }
  return t;
}

CsvTable CsvTable::read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot read the CSV file '{}': {}", file.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), file.string());
}

bool CsvTable::has_column(std::string_view name) const {
  for (const auto& h : header_)
    if (h == name) return true;
  return false;
}

std::size_t CsvTable::column(std::string_view name) const {
  for (std::size_t c = 0; c < header_.size(); ++c)
    if (header_[c] == name) return c;
  std::string names;
  for (const auto& h : header_) names += (names.empty() ? "" : ", ") + h;
  throw DataError(fmt::format("{}: no column '{}'; the header has: {}", origin_, name, names));
}

const std::string& CsvTable::text(std::size_t r, std::string_view column_name) const {
  if (r >= rows_.size()) throw DataError(fmt::format("{}: no row {}; the table has {}", origin_, r, rows_.size()));
  return rows_[r][column(column_name)];
}

namespace {
[[noreturn]] void bad_field(const std::string& origin, std::size_t line, std::string_view column, const std::string& field,
                            const char* expected) {
  throw DataError(fmt::format("{}, line {}, column '{}': expected {}, found '{}'", origin, line, column, expected, field));
}
}  // namespace

double CsvTable::real(std::size_t r, std::string_view column_name) const {
  const std::string& f = text(r, column_name);
  if (f.empty()) return std::nan("");
  const char* begin = f.data() + (f[0] == '+' ? 1 : 0);
  double v = 0;
  const auto [end, ec] = std::from_chars(begin, f.data() + f.size(), v);
  if (ec != std::errc() || end != f.data() + f.size()) bad_field(origin_, lines_[r], column_name, f, "a number");
  return v;
}

std::int64_t CsvTable::integer(std::size_t r, std::string_view column_name) const {
  const std::string& f = text(r, column_name);
  const char* begin = f.data() + (!f.empty() && f[0] == '+' ? 1 : 0);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(begin, f.data() + f.size(), v);
  if (f.empty() || ec != std::errc() || end != f.data() + f.size())
    bad_field(origin_, lines_[r], column_name, f, "an integer");
  return v;
}

bool CsvTable::boolean(std::size_t r, std::string_view column_name) const {
  const std::string& f = text(r, column_name);
  if (f == "true" || f == "1") return true;
  if (f == "false" || f == "0") return false;
  bad_field(origin_, lines_[r], column_name, f, "true, false, 1 or 0");
}

std::vector<double> CsvTable::reals(std::string_view column_name) const {
  std::vector<double> out;
  out.reserve(rows_.size());
  for (std::size_t r = 0; r < rows_.size(); ++r) out.push_back(real(r, column_name));
  return out;
}

}  // namespace nexp
