#pragma once
// CSV tables (RFC 4180): a writer with typed columns, written row by row, and a reader for the same
// format. Part of the SDK, free of torch.
//
//   using C = nexp::CsvColumn;
//   nexp::CsvWriter out(ctx.artifacts_dir() / "slopes.csv",
//                       {C::text("family"), C::real("slope").fixed(3), C::integer("points"), C::real("seconds")});
//   out.row(family, slope, x.size(), seconds);
//
// The format written:
//  - a header row of the column names, then one line per row, fields separated by commas, lines ended
//    by "\n" (RFC 4180 says CRLF; every CSV reader, this one included, accepts both);
//  - a field holding a comma, a double quote, CR or LF is quoted, its quotes doubled: `say "hi", x` is
//    written "say ""hi"", x";
//  - real numbers by default in the shortest text that reads back to the same double (0.1, 1e-05,
//    2.5e+20), or with a precision stated per column; NaN as an empty field, infinities as inf / -inf;
//    integers in decimal; booleans as true / false; a missing value (std::nullopt) as an empty field.
//  - numbers ignore the locale: a comma is never a decimal mark.
// A value whose type does not fit its column (text in a real column, a double in an integer column),
// or a row with the wrong number of values, throws nexp::Error naming the file and the column.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

// The name of one column and how its values are written.
struct NEXP_API CsvColumn {
  enum class Type { Text, Integer, Real, Boolean };
  enum class Notation { Shortest, Fixed, Significant, Scientific };
  std::string name;
  Type type = Type::Text;
  Notation notation = Notation::Shortest;
  int precision = 0;

  static CsvColumn text(std::string name);
  static CsvColumn integer(std::string name);
  static CsvColumn boolean(std::string name);
  static CsvColumn real(std::string name);  // shortest round-trip text; also takes integers
  // A stated precision for a real column: fixed(3) writes 0.125 as 0.125 and 2 as 2.000 ({:.3f});
  // significant(4) writes 4 significant digits ({:.4g}); scientific(3) writes 1.235e+04 ({:.3e}).
  CsvColumn fixed(int decimals) const;
  CsvColumn significant(int digits) const;
  CsvColumn scientific(int digits) const;
};

// One value of a row: missing, text, integer, real or boolean.
using CsvCell = std::variant<std::monostate, std::string, std::int64_t, double, bool>;

// A field quoted as RFC 4180 asks when it must be (comma, quote, CR or LF), else as is.
NEXP_API std::string csv_field(std::string_view text);

namespace detail {
template <class T>
CsvCell to_csv_cell(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
    return v.string();
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return std::string(std::string_view(v));
  } else if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<T, std::nullopt_t>) {
    return std::monostate{};
  } else if constexpr (std::is_same_v<T, CsvCell>) {
    return v;
  } else {
    static_assert(sizeof(T) == 0, "CsvWriter::row takes text, integers, reals, booleans, paths and optionals of them");
  }
}
template <class T>
CsvCell to_csv_cell(const std::optional<T>& v) {
  return v ? to_csv_cell(*v) : CsvCell{};
}
}  // namespace detail

class NEXP_API CsvWriter {
 public:
  // Creates (or truncates) `file` and writes the header. The rows go straight to that file, so a run
  // that stops keeps the rows written so far; write into a string and rename it where a half-written
  // table must never be seen. Throws nexp::Error when the file cannot be created.
  CsvWriter(const std::filesystem::path& file, std::vector<CsvColumn> columns);
  // Writes to a stream the caller owns (an std::ostringstream, std::cout).
  CsvWriter(std::ostream& out, std::vector<CsvColumn> columns);
  CsvWriter(CsvWriter&&) noexcept;
  ~CsvWriter();

  // One value per column, in the columns' order: text (std::string, const char*, string_view, path),
  // any integer, float or double, bool, std::nullopt, or a std::optional of those.
  template <class... T>
  CsvWriter& row(const T&... values) {
    return row(std::vector<CsvCell>{detail::to_csv_cell(values)...});
  }
  // The same for rows built at run time (tables whose columns depend on the data).
  CsvWriter& row(const std::vector<CsvCell>& cells);

  // Each row reaches the file (the operating system) when it is written, unless this is turned off for
  // a very long table; then flush() (and the destructor) write what is buffered.
  void flush_every_row(bool on) { flush_every_row_ = on; }
  void flush();

  const std::vector<CsvColumn>& columns() const { return columns_; }
  std::size_t rows() const { return rows_; }

 private:
  void write_header();
  std::string format(const CsvCell& cell, std::size_t column) const;

  std::unique_ptr<std::ofstream> file_;
  std::ostream* out_;
  std::string where_;  // the file, for errors
  std::vector<CsvColumn> columns_;
  std::size_t rows_ = 0;
  bool flush_every_row_ = true;
};

// A CSV table read whole: a header row, then rows of text fields (RFC 4180 quoting, LF or CRLF line
// ends, blank lines skipped). Every row must have as many fields as the header.
class NEXP_API CsvTable {
 public:
  // Errors (a missing file, an unterminated quote, a row of the wrong width) throw nexp::DataError
  // naming the file and line.
  static CsvTable read(const std::filesystem::path& file);
  static CsvTable parse(std::string_view text, const std::string& origin = "CSV text");

  const std::vector<std::string>& header() const { return header_; }
  std::size_t size() const { return rows_.size(); }
  bool has_column(std::string_view name) const;
  std::size_t column(std::string_view name) const;  // its index; DataError listing the columns if absent
  const std::vector<std::string>& row(std::size_t r) const { return rows_.at(r); }

  // Typed reads of the field at (row, column); DataError naming the file, line and column when the
  // field does not parse. real(): an empty field is NaN; inf, -inf and nan are read too.
  const std::string& text(std::size_t r, std::string_view column) const;
  double real(std::size_t r, std::string_view column) const;
  std::int64_t integer(std::size_t r, std::string_view column) const;
  bool boolean(std::size_t r, std::string_view column) const;  // true/false or 1/0
  std::vector<double> reals(std::string_view column) const;    // the whole column

 private:
  std::string origin_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;  // the line each row starts on, for errors
};

}  // namespace nexp
