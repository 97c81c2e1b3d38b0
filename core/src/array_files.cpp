// Headers of IDX and NPY files (array_files.hpp), and whole IDX files without LibTorch (nexp/idx.hpp).
#include "array_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>

#include "nexp/error.hpp"
#include "nexp/idx.hpp"

namespace nexp::detail {

namespace {

// The product of the sizes times the element size, or a DataError when it does not fit in 63 bits.
std::uint64_t data_bytes(const std::vector<std::int64_t>& shape, std::uint64_t element, const std::string& what) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t bytes = element;
  for (std::int64_t d : shape) {
    const auto size = static_cast<std::uint64_t>(d);
    if (size != 0 && bytes > kMax / size)
      throw DataError(fmt::format("{}: its shape ({}) holds more than 2^63 bytes; the header is damaged", what,
                                  fmt::join(shape, ", ")));
    bytes *= size;
  }
  return bytes;
}

void check_fits(const ArrayHeader& h, std::uint64_t header_bytes, std::uint64_t file_bytes, const std::string& what) {
  if (header_bytes > file_bytes || h.data_bytes > file_bytes - header_bytes)
    throw DataError(fmt::format("{} is truncated: its header promises {} bytes of data, the file holds {}", what,
                                h.data_bytes, file_bytes > header_bytes ? file_bytes - header_bytes : 0));
}

// The text after `'key':` in an NPY header dict, up to the end of the header.
std::string npy_field(const std::string& header, const std::string& key, const std::string& what) {
  const auto pos = header.find("'" + key + "'");
  const auto colon = pos == std::string::npos ? pos : header.find(':', pos);
  if (colon == std::string::npos)
    throw DataError(fmt::format("{}: its NPY header lacks '{}' (header: {})", what, key, header));
  return header.substr(colon + 1);
}

// The sizes of 'shape': (), (n,), (n, m, ...); each a decimal count (numpy under Python 2 wrote 3L).
std::vector<std::int64_t> npy_shape(const std::string& header, const std::string& what) {
  const std::string text = npy_field(header, "shape", what);
  const auto open = text.find('('), close = text.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw DataError(fmt::format("{}: its NPY shape is not a tuple (header: {})", what, header));
  std::vector<std::string> items{""};
  for (std::size_t i = open + 1; i < close; ++i)
    if (text[i] == ',') items.emplace_back();
    else items.back() += text[i];
  for (std::string& item : items) {  // "3, 2": no space around a size counts, one inside does
    item.erase(0, std::min(item.size(), item.find_first_not_of(' ')));
    item.erase(item.find_last_not_of(' ') + 1);
  }
  const bool trailing = items.size() > 1 && items.back().empty();  // (3,): the comma of a 1-tuple
  if (trailing) items.pop_back();
  if (!trailing && items.size() == 1 && items[0].empty()) return {};  // (): a scalar
  std::vector<std::int64_t> shape;
  for (std::string item : items) {
    if (!item.empty() && item.back() == 'L') item.pop_back();
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw DataError(fmt::format("{}: NPY shape holds '{}'; expected sizes >= 0 (header: {})", what, item, header));
    if (item.size() > 18) throw DataError(fmt::format("{}: NPY shape size {} is out of range", what, item));
    shape.push_back(std::stoll(item));
  }
  return shape;
}

}  // namespace

ArrayHeader read_idx_header(std::istream& in, std::uint64_t file_bytes, const std::string& what) {
  unsigned char head[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(head), 4);
  if (!in || head[0] != 0 || head[1] != 0 || head[2] != 0x08)
    throw DataError(fmt::format("{} is not an uncompressed IDX file of bytes (magic {:02x}{:02x}{:02x}{:02x})", what,
                                head[0], head[1], head[2], head[3]));
  if (head[3] == 0) throw DataError(fmt::format("{}: its IDX header names no sizes", what));
  ArrayHeader h;
  h.dtype = "|u1";
  for (int i = 0; i < head[3]; ++i) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4))
      throw DataError(fmt::format("{} is truncated: its IDX header names {} sizes, the file ends after {}", what,
                                  int{head[3]}, i));
    h.shape.push_back((std::int64_t{b[0]} << 24) | (std::int64_t{b[1]} << 16) | (std::int64_t{b[2]} << 8) | b[3]);
  }
  h.data_bytes = data_bytes(h.shape, 1, what);
  check_fits(h, 4 + 4 * std::uint64_t{head[3]}, file_bytes, what);
  return h;
}

ArrayHeader read_npy_header(std::istream& in, std::uint64_t file_bytes, const std::string& what) {
  char magic[8] = {};
  in.read(magic, 8);
  if (!in || std::string(magic, 6) != "\x93NUMPY")
    throw DataError(fmt::format("{} is not an NPY file (it must start with \\x93NUMPY)", what));
  const int version = static_cast<unsigned char>(magic[6]);
  if (version < 1 || version > 3)
    throw DataError(fmt::format("{}: NPY format version {} (supported: 1 to 3)", what, version));
  unsigned char b[4] = {0, 0, 0, 0};
  const int length_bytes = version == 1 ? 2 : 4;
  in.read(reinterpret_cast<char*>(b), length_bytes);
  const std::uint64_t header_len = b[0] | (b[1] << 8) | (std::uint64_t{b[2]} << 16) | (std::uint64_t{b[3]} << 24);
  const std::uint64_t header_end = 8 + length_bytes + header_len;
  if (!in || header_end > file_bytes)
    throw DataError(fmt::format("{} is truncated: its NPY header has {} bytes, the whole file {}", what, header_len,
                                file_bytes));
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!in) throw DataError(fmt::format("{} is truncated inside its NPY header", what));

  ArrayHeader h;
  std::string descr = npy_field(header, "descr", what);
  const auto q = descr.find('\'');
  const auto q2 = q == std::string::npos ? q : descr.find('\'', q + 1);
  if (q2 == std::string::npos) throw DataError(fmt::format("{}: NPY 'descr' is not a quoted string (header: {})", what, header));
  h.dtype = descr.substr(q + 1, q2 - q - 1);
  const std::string fortran = npy_field(header, "fortran_order", what);
  if (fortran.find("True") < fortran.find(','))
    throw DataError(fmt::format("{} is in Fortran order; save it with numpy.ascontiguousarray", what));
  static const std::map<std::string, std::uint64_t> sizes = {{"<f4", 4}, {"<f8", 8}, {"<i4", 4},
                                                             {"<i8", 8}, {"|u1", 1}, {"|b1", 1}};
  const auto size = sizes.find(h.dtype);
  if (size == sizes.end())
    throw DataError(fmt::format("{} has dtype '{}'; supported: <f4, <f8, <i4, <i8, |u1, |b1", what, h.dtype));
  h.shape = npy_shape(header, what);
  h.data_bytes = data_bytes(h.shape, size->second, what);
  check_fits(h, header_end, file_bytes, what);
  return h;
}

}  // namespace nexp::detail

namespace nexp {

IdxArray read_idx(const std::filesystem::path& file, const std::string& what, std::int64_t first,
                  const std::string& hint) {
  const std::string tail = hint.empty() ? "" : " " + hint;
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(file, ec);
  std::ifstream in(file, std::ios::binary);
  if (ec || !in)
    throw DataError(fmt::format("{}: cannot read '{}' (expected an IDX file).{}", what, file.string(), tail));
  const std::string name = fmt::format("{}: '{}'", what, file.string());
  detail::ArrayHeader h;
  try {
    h = detail::read_idx_header(in, size, name);
  } catch (const DataError& e) {
    throw DataError(fmt::format("{}.{}", e.what(), tail));
  }
  IdxArray out{h.shape, {}};
  std::uint64_t bytes = h.data_bytes;
  if (first > 0 && first < h.shape[0]) {
    bytes = bytes / static_cast<std::uint64_t>(h.shape[0]) * static_cast<std::uint64_t>(first);
    out.shape[0] = first;
  }
  out.bytes.resize(bytes);
  in.read(reinterpret_cast<char*>(out.bytes.data()), static_cast<std::streamsize>(bytes));
  if (static_cast<std::uint64_t>(in.gcount()) != bytes)
    throw DataError(fmt::format("{} is truncated ({} of {} bytes).{}", name, in.gcount(), bytes, tail));
  return out;
}

}  // namespace nexp
