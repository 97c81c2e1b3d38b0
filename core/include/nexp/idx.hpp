#pragma once
// IDX files (MNIST's format: 00 00 08 n, n big-endian 32-bit sizes, then unsigned bytes in row-major
// order), read without LibTorch, for plugins that keep their runs free of it. Core's `mnist` and
// `fashion_mnist` data sets read the same files into tensors.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

struct IdxArray {
  std::vector<std::int64_t> shape;  // shape[0]: the items read
  std::vector<std::uint8_t> bytes;  // product(shape) bytes, row-major
};

// Reads `file`, its first `first` items along dimension 0 only when `first` > 0. A missing, malformed or
// truncated file is a DataError that names `what` and the file and ends with `hint` (what to do).
NEXP_API IdxArray read_idx(const std::filesystem::path& file, const std::string& what, std::int64_t first = 0,
                           const std::string& hint = "");

}  // namespace nexp
