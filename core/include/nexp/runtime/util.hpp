#pragma once
// Small helpers core and the CLI share.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nexp/export.hpp"

namespace nexp {

NEXP_API std::string sha256_hex(const std::string& bytes);
NEXP_API std::string sha256_file(const std::filesystem::path& file);
// Writes to a temporary file in the same folder, fsyncs, and renames over `file`.
NEXP_API void write_file_atomic(const std::filesystem::path& file, const std::string& content);
NEXP_API std::string read_file(const std::filesystem::path& file);  // throws DataError
NEXP_API std::string now_iso8601();  // UTC, second resolution
NEXP_API std::string hostname();
// The git commit of the folder's repository and whether the work tree is dirty; empty when none.
NEXP_API std::pair<std::string, bool> git_state(const std::filesystem::path& folder);
// A number as JSON allows it: NaN and infinities become null.
NEXP_API nlohmann::json json_number(double value);
// The folder of the running executable.
NEXP_API std::filesystem::path executable_dir();
// Runs a shell command, returns its stdout and stderr (trailing newlines dropped) and its exit code.
NEXP_API std::string run_capture(const std::string& command, int* exit_code = nullptr);
// A word for /bin/sh: 'it''s' quoting.
NEXP_API std::string shell_quote(const std::string& s);
// A CSV field, quoted when it must be: csv_field() of nexp/table.hpp.
NEXP_API std::string csv_cell(const std::string& s);
// An aligned text table: header, a rule, the rows (trailing spaces trimmed).
NEXP_API std::string format_table(const std::vector<std::string>& header,
                                  const std::vector<std::vector<std::string>>& rows);

}  // namespace nexp
