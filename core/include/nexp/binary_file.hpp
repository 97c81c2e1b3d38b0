#pragma once
// A method's own state in a binary file: what a method without LibTorch writes as its checkpoint or
// as a trained model another run loads. The file starts with the writer's 8-byte tag (the format and
// its version); numbers are in the machine's byte order (little-endian on every platform nexp builds
// on). Reading checks the tag, bounds every size it reads and reports a short file, all as DataErrors
// that name the file.
//
//   nexp::BinaryWriter w(file, kTag);            nexp::BinaryReader r(file, kTag, "an fds denoiser");
//   w.u64(steps); w.matrix(weights);             steps = r.u64(); r.matrix(weights);
//   w.close();                                   r.expect_end();
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

class NEXP_API BinaryWriter {
 public:
  // Opens `file` for writing (an Error when it cannot) and writes `tag`.
  BinaryWriter(const std::filesystem::path& file, std::uint64_t tag);
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  void f64(double v) { bytes(&v, sizeof v); }
  void text(const std::string& s);
  void doubles(const std::vector<double>& v);
  // A dense column-major matrix or vector (Eigen's, say): rows, columns, then the values.
  template <class M>
  void matrix(const M& a) {
    u64(static_cast<std::uint64_t>(a.rows())), u64(static_cast<std::uint64_t>(a.cols()));
    bytes(a.data(), sizeof(double) * static_cast<std::size_t>(a.size()));
  }
  // Flushes and closes; an Error when anything failed to write (a full disk).
  void close();

 private:
  void bytes(const void* p, std::size_t n);
  std::ofstream out_;
  std::filesystem::path file_;
};

class NEXP_API BinaryReader {
 public:
  // Opens `file` and checks its tag; `what` names the format in errors ("an fds denoiser checkpoint").
  BinaryReader(const std::filesystem::path& file, std::uint64_t tag, std::string what);
  std::uint64_t u64();
  double f64();
  std::string text();
  std::vector<double> doubles();
  // Reads what matrix() wrote into `a` (an Eigen matrix or vector, resized); at most 2^28 values.
  template <class M>
  void matrix(M& a) {
    const auto r = u64(), c = u64();
    check_size(r, c, M::ColsAtCompileTime == 1);
    a.resize(static_cast<decltype(a.rows())>(r), static_cast<decltype(a.cols())>(c));
    bytes(a.data(), sizeof(double) * static_cast<std::size_t>(a.size()));
  }
  // A DataError unless the file ends here.
  void expect_end();
  const std::filesystem::path& file() const { return file_; }

 private:
  void bytes(void* p, std::size_t n);
  void check_size(std::uint64_t rows, std::uint64_t cols, bool column = false) const;
  std::ifstream in_;
  std::filesystem::path file_;
  std::string what_;
};

}  // namespace nexp
