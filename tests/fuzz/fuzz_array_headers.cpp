// Fuzz target for the headers of IDX and NPY files (core/src/array_files.cpp), which core's tensor data
// sets read before they allocate a tensor of the header's shape (core/src/torch/datasets.cpp). The
// input is a whole file, given to both readers. For any input:
//   1. each reader returns a header or refuses the file with a DataError, nothing else;
//   2. a returned header's data_bytes is the product of its sizes times the element size (computed
//      here in long double, so an overflow in the reader shows), every size is >= 0, and the data fits
//      in what the file holds after the header: a tensor of that shape can be filled from the file.
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include "array_files.hpp"
#include "fuzz_support.hpp"

namespace {

void check(const char* format, const nexp::detail::ArrayHeader& h, std::istringstream& in, std::string_view input) {
  static const std::map<std::string, int> sizes = {{"<f4", 4}, {"<f8", 8}, {"<i4", 4}, {"<i8", 8}, {"|u1", 1}, {"|b1", 1}};
  const auto element = sizes.find(h.dtype);
  if (element == sizes.end()) nexp::fuzz::fail(format, "a header of an unsupported dtype '" + h.dtype + "'", input);
  long double bytes = element->second;
  for (std::int64_t d : h.shape) {
    if (d < 0) nexp::fuzz::fail(format, "a negative size", input);
    bytes *= static_cast<long double>(d);
  }
  if (bytes != static_cast<long double>(h.data_bytes))
    nexp::fuzz::fail(format, "data_bytes is not the product of the shape", input);
  const auto at = in.tellg();
  if (at < 0) nexp::fuzz::fail(format, "the stream is not at the data", input);
  if (h.data_bytes > input.size() - static_cast<std::size_t>(at))
    nexp::fuzz::fail(format, "a header whose data the file does not hold", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nexp;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  {
    std::istringstream in{std::string(input)};
    detail::ArrayHeader h;
    if (fuzz::accepted("idx", input, [&] { h = detail::read_idx_header(in, size, "fuzz.idx"); })) check("idx", h, in, input);
  }
  {
    std::istringstream in{std::string(input)};
    detail::ArrayHeader h;
    if (fuzz::accepted("npy", input, [&] { h = detail::read_npy_header(in, size, "fuzz.npy"); })) check("npy", h, in, input);
  }
  return 0;
}
