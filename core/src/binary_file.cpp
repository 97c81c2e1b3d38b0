// Binary state files (nexp/binary_file.hpp).
#include "nexp/binary_file.hpp"

#include <fmt/format.h>

#include "nexp/error.hpp"

namespace nexp {

namespace {
constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 28;  // 2 GiB of doubles
}

BinaryWriter::BinaryWriter(const std::filesystem::path& file, std::uint64_t tag)
    : out_(file, std::ios::binary | std::ios::trunc), file_(file) {
  if (!out_) throw Error(fmt::format("cannot open {} for writing; check that its folder exists and is writable", file.string()));
  u64(tag);
}

void BinaryWriter::bytes(const void* p, std::size_t n) { out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); }

void BinaryWriter::text(const std::string& s) {
  u64(s.size());
  bytes(s.data(), s.size());
}

void BinaryWriter::doubles(const std::vector<double>& v) {
  u64(v.size());
  bytes(v.data(), sizeof(double) * v.size());
}

void BinaryWriter::close() {
  out_.close();
  if (!out_) throw Error(fmt::format("writing {} failed (is the disk full?); the file is incomplete", file_.string()));
}

BinaryReader::BinaryReader(const std::filesystem::path& file, std::uint64_t tag, std::string what)
    : in_(file, std::ios::binary), file_(file), what_(std::move(what)) {
  if (!in_)
    throw DataError(fmt::format("{}: cannot open the file; expected {} there (check the path)", file.string(), what_));
  std::uint64_t found = 0;
  in_.read(reinterpret_cast<char*>(&found), sizeof found);
  if (!in_ || found != tag)
    throw DataError(fmt::format("{}: not {} (its first 8 bytes are not the format's tag); point to a file that a "
                                "run of this version wrote",
                                file.string(), what_));
}

void BinaryReader::bytes(void* p, std::size_t n) {
  in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
  if (!in_)
    throw DataError(fmt::format("{}: truncated {}; expected {} more bytes, found the end of the file", file_.string(),
                                what_, n));
}

std::uint64_t BinaryReader::u64() {
  std::uint64_t v = 0;
  bytes(&v, sizeof v);
  return v;
}

double BinaryReader::f64() {
  double v = 0;
  bytes(&v, sizeof v);
  return v;
}

std::string BinaryReader::text() {
  const auto n = u64();
  if (n > kMaxValues) throw DataError(fmt::format("{}: corrupt {} (a string of {} bytes)", file_.string(), what_, n));
  std::string s(static_cast<std::size_t>(n), '\0');
  bytes(s.data(), s.size());
  return s;
}

std::vector<double> BinaryReader::doubles() {
  const auto n = u64();
  check_size(n, 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  bytes(v.data(), sizeof(double) * v.size());
  return v;
}

void BinaryReader::check_size(std::uint64_t rows, std::uint64_t cols, bool column) const {
  if (rows > kMaxValues || cols > kMaxValues || (cols != 0 && rows > kMaxValues / cols) || (column && cols != 1))
    throw DataError(fmt::format("{}: corrupt {} (an array of {} x {} values{})", file_.string(), what_, rows, cols,
                                column ? " where a vector belongs" : ""));
}

void BinaryReader::expect_end() {
  if (in_.peek() != std::char_traits<char>::eof())
    throw DataError(fmt::format("{}: {} has bytes after its end; it was written by another version or is damaged",
                                file_.string(), what_));
}

}  // namespace nexp
