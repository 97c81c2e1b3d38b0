#pragma once
// Text from outside nexp (data files, error messages, names chosen by plugins) made safe to store.
//
// JSON and SQLite hold UTF-8 only. Every string core writes to status.json, meta.json, metrics.jsonl,
// checkpoints or the run index passes through valid_utf8() (json_dump() does it for a whole JSON
// value), so a message that quotes a latin-1 or binary file stays readable: each byte that is not part
// of a well-formed UTF-8 sequence is shown as \xNN.
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "nexp/export.hpp"

namespace nexp {

// The offset of the first byte of `text` that does not start a well-formed UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF are not well formed); npos when there is none.
NEXP_API std::size_t invalid_utf8_offset(std::string_view text);
// `text` with each byte of an ill-formed sequence replaced by the four characters \xNN (hex, upper case).
NEXP_API std::string valid_utf8(std::string_view text);
// j.dump(indent), with every string in `j` (object keys too) made valid UTF-8 first.
NEXP_API std::string json_dump(const nlohmann::json& j, int indent = -1);

// Reads a text file that a user gave (a data set, a log to analyse). Throws DataError, naming the file,
// `what` it was meant to be and what to do, when the path is missing, a folder, unreadable, empty, or
// not UTF-8 text (a NUL byte, or a byte that is not UTF-8: the message gives its line and column as \xNN).
NEXP_API std::string read_text_file(const std::filesystem::path& file, const std::string& what);

}  // namespace nexp
