#pragma once
// The headers of the binary array files that core's tensor data sets read (IDX, MNIST's format; NPY,
// numpy.save's), parsed without LibTorch so that they are tested and fuzzed on their own
// (tests/fuzz/fuzz_array_headers.cpp); core/src/torch/datasets.cpp reads the data that follows.
// A header is returned, or the file is refused with a DataError that names it: a bad magic, a header
// cut short, a shape whose size overflows, an unsupported element type, or data that the file is too
// short to hold (checked before anything is allocated).
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp::detail {

struct ArrayHeader {
  std::vector<std::int64_t> shape;
  std::string dtype;             // NPY's descr: <f4 <f8 <i4 <i8 |u1 |b1; IDX is |u1
  std::uint64_t data_bytes = 0;  // product(shape) x element size
};

// `in` is at the start of a file of `file_bytes` bytes; on return it is at the first byte of the data.
// `what` names the file in errors, e.g. "dataset 'mnist': 'train-images-idx3-ubyte'".
// IDX: 00 00 08 n, then n big-endian 32-bit sizes (only unsigned bytes, as MNIST's).
NEXP_API ArrayHeader read_idx_header(std::istream& in, std::uint64_t file_bytes, const std::string& what);
// NPY format 1.0 to 3.0: "\x93NUMPY", version, header length, then a Python dict literal with 'descr',
// 'fortran_order' and 'shape'; little-endian, C order.
NEXP_API ArrayHeader read_npy_header(std::istream& in, std::uint64_t file_bytes, const std::string& what);

}  // namespace nexp::detail
