// core/src/array_files.cpp: IDX and NPY headers, each a file a data set could meet, with the shape, type
// and size it holds, or the DataError that refuses it. core/src/binary_file.cpp: a method's state file
// read back as written, and refused when it is another format, short, or longer than what was read.
#include <Eigen/Core>
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

#include "array_files.hpp"
#include "nexp/binary_file.hpp"
#include "nexp/error.hpp"
#include "nexp/idx.hpp"
#include "support.hpp"

using namespace nexp;
using detail::ArrayHeader;

namespace {

ArrayHeader idx(const std::string& bytes) {
  std::istringstream in(bytes);
  return detail::read_idx_header(in, bytes.size(), "x.idx");
}

ArrayHeader npy(const std::string& bytes) {
  std::istringstream in(bytes);
  return detail::read_npy_header(in, bytes.size(), "x.npy");
}

// An NPY 1.0 file: magic, version, little-endian header length, the dict, then `data` bytes.
std::string npy_file(const std::string& dict, std::size_t data, char version = 1) {
  std::string out = std::string("\x93NUMPY", 6) + version + '\0';
  const std::size_t n = dict.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>(n >> 8);
  if (version != 1) out += std::string(2, '\0');
  return out + dict + std::string(data, '\x01');
}

std::string refusal(const std::function<void()>& read) {
  try {
    read();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(ArrayFiles, IdxHeaderOfMnistLabelsAndImages) {
  const ArrayHeader labels = idx(std::string("\0\0\x08\x01\0\0\0\x03", 8) + "abc");
  EXPECT_EQ(labels.shape, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(labels.dtype, "|u1");
  EXPECT_EQ(labels.data_bytes, 3u);
  // 2 images of 3 x 4 pixels, sizes big-endian: 24 data bytes.
  const ArrayHeader images = idx(std::string("\0\0\x08\x03\0\0\0\x02\0\0\0\x03\0\0\0\x04", 16) + std::string(24, 'x'));
  EXPECT_EQ(images.shape, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(images.data_bytes, 24u);
  // MNIST's 60000 x 28 x 28: 0x0000ea60, 0x1c, 0x1c.
  std::istringstream in(std::string("\0\0\x08\x03\0\0\xea\x60\0\0\0\x1c\0\0\0\x1c", 16));
  EXPECT_EQ(detail::read_idx_header(in, 16 + 47040000, "mnist").data_bytes, 47040000u);
}

TEST(ArrayFiles, IdxRefusesBadMagicShortHeaderOverflowAndShortData) {
  EXPECT_NE(refusal([] { idx("PK\x03\x04"); }).find("not an uncompressed IDX file"), std::string::npos);
  EXPECT_NE(refusal([] { idx(std::string("\0\0\x08", 3)); }).find("not an uncompressed IDX file"), std::string::npos);
  EXPECT_NE(refusal([] { idx(std::string("\0\0\x08\x00", 4)); }).find("names no sizes"), std::string::npos);
  // Three sizes promised, the file ends after one: refused, not read from bytes that are not there.
  EXPECT_NE(refusal([] { idx(std::string("\0\0\x08\x03\0\0\0\x02", 8)); }).find("ends after 1"), std::string::npos);
  // Four sizes of 2^32 - 1: 2^128 bytes, more than any count holds.
  EXPECT_NE(refusal([] { idx(std::string("\0\0\x08\x04", 4) + std::string(16, '\xff')); }).find("more than 2^63"),
            std::string::npos);
  // 2 x 3 promised, 5 bytes present: refused before anything is allocated.
  EXPECT_NE(refusal([] { idx(std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x03", 12) + "12345"); })
                .find("promises 6 bytes of data, the file holds 5"),
            std::string::npos);
}

TEST(ArrayFiles, NpyHeaderOfEachSupportedType) {
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
  const ArrayHeader h = npy(npy_file(dict, 48));
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(h.dtype, "<f8");
  EXPECT_EQ(h.data_bytes, 48u);
  EXPECT_EQ(npy(npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", 20, 2)).data_bytes, 20u);
  EXPECT_EQ(npy(npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1, 3)).shape.size(), 0u);
  EXPECT_EQ(npy(npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 7), }", 0)).data_bytes, 0u);
}

TEST(ArrayFiles, NpyRefusesWhatItCannotRead) {
  auto why = [](const std::string& dict, std::size_t data = 0) { return refusal([&] { npy(npy_file(dict, data)); }); };
  EXPECT_NE(refusal([] { npy("\x93NUMPX\x01"); }).find("not an NPY file"), std::string::npos);
  EXPECT_NE(refusal([] { npy(std::string("\x93NUMPY\x07\0\0\0", 10)); }).find("version 7"), std::string::npos);
  EXPECT_NE(why("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }").find("dtype '>f8'"), std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }").find("Fortran order"), std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': False}").find("lacks 'shape'"), std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }").find("holds '-1'"), std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': False, 'shape': (3,,), }").find("holds ''"), std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': False, 'shape': (3 2,), }").find("holds '3 2'"), std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }").find("out of range"),
            std::string::npos);
  EXPECT_NE(why("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }").find("2^63"),
            std::string::npos);
  EXPECT_NE(why("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }", 8).find("promises 4000000000"),
            std::string::npos);
  // The header length says more than the file holds.
  EXPECT_NE(refusal([] { npy(std::string("\x93NUMPY\x01\0\xff\xff{}", 12)); }).find("truncated"), std::string::npos);
}

TEST(ArrayFiles, ReadIdxReadsTheBytesAndTheFirstItems) {
  test::TempDir dir;
  // Three 2 x 2 images with bytes 0..11.
  std::string file = std::string("\0\0\x08\x03\0\0\0\x03\0\0\0\x02\0\0\0\x02", 16);
  for (char b = 0; b < 12; ++b) file += b;
  const auto path = dir.write("images-idx3-ubyte", file);
  const IdxArray all = read_idx(path, "dataset 'x'");
  EXPECT_EQ(all.shape, (std::vector<std::int64_t>{3, 2, 2}));
  ASSERT_EQ(all.bytes.size(), 12u);
  EXPECT_EQ(all.bytes[11], 11);
  const IdxArray two = read_idx(path, "dataset 'x'", 2);
  EXPECT_EQ(two.shape, (std::vector<std::int64_t>{2, 2, 2}));
  ASSERT_EQ(two.bytes.size(), 8u);
  EXPECT_EQ(two.bytes[7], 7);
  EXPECT_EQ(read_idx(path, "dataset 'x'", 10).shape[0], 3);  // more than there are: all of them
}

TEST(ArrayFiles, ReadIdxRefusesAMissingOrShortFileWithTheHint) {
  test::TempDir dir;
  const std::string missing = refusal([&] { read_idx(dir.path / "none", "dataset 'x'", 0, "Run scripts/setup."); });
  EXPECT_NE(missing.find("dataset 'x': cannot read"), std::string::npos) << missing;
  EXPECT_NE(missing.find("Run scripts/setup."), std::string::npos) << missing;
  const auto shortfile = dir.write("short", std::string("\0\0\x08\x01\0\0\0\x05", 8) + "abc");
  const std::string cut = refusal([&] { read_idx(shortfile, "dataset 'x'", 0, "Run scripts/setup."); });
  EXPECT_NE(cut.find("short"), std::string::npos) << cut;
  EXPECT_NE(cut.find("Run scripts/setup."), std::string::npos) << cut;
}

TEST(BinaryFile, ReadsBackWhatWasWritten) {
  test::TempDir dir;
  const auto file = dir.path / "state.bin";
  Eigen::MatrixXd w(3, 2);
  w << 1, -2, 3.5, 1e-300, -0.0, 7;
  const Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(5, -1, 1);
  BinaryWriter out(file, 0x1234);
  out.u64(42), out.f64(-0.1), out.text("mlp_edm"), out.doubles({1.5, 2.5}), out.matrix(w), out.matrix(theta);
  out.close();

  BinaryReader in(file, 0x1234, "a test state");
  EXPECT_EQ(in.u64(), 42u);
  EXPECT_EQ(in.f64(), -0.1);
  EXPECT_EQ(in.text(), "mlp_edm");
  EXPECT_EQ(in.doubles(), (std::vector<double>{1.5, 2.5}));
  Eigen::MatrixXd w2;
  Eigen::VectorXd theta2;
  in.matrix(w2), in.matrix(theta2);
  EXPECT_EQ(w2, w);  // bit for bit
  EXPECT_EQ(theta2, theta);
  EXPECT_NO_THROW(in.expect_end());
}

TEST(BinaryFile, RefusesAnotherFormatAShortFileAndTrailingBytes) {
  test::TempDir dir;
  const auto file = dir.path / "state.bin";
  {
    BinaryWriter out(file, 7);
    out.u64(3), out.f64(1.0);
    out.close();
  }
  const std::string tag = refusal([&] { BinaryReader(file, 8, "a test state"); });
  EXPECT_NE(tag.find("not a test state"), std::string::npos) << tag;
  const std::string missing = refusal([&] { BinaryReader(dir.path / "none.bin", 7, "a test state"); });
  EXPECT_NE(missing.find("none.bin: cannot open"), std::string::npos) << missing;
  const std::string trailing = refusal([&] {
    BinaryReader in(file, 7, "a test state");
    in.u64();
    in.expect_end();
  });
  EXPECT_NE(trailing.find("bytes after its end"), std::string::npos) << trailing;
  const std::string cut = refusal([&] {
    BinaryReader in(file, 7, "a test state");
    in.u64(), in.f64(), in.f64();
  });
  EXPECT_NE(cut.find("truncated a test state"), std::string::npos) << cut;
  // 3 read as a string length is fine, but 3 rows by 2^62 columns is refused before any allocation.
  {
    BinaryWriter out(file, 7);
    out.u64(3), out.u64(std::uint64_t{1} << 62);
    out.close();
  }
  const std::string huge = refusal([&] {
    BinaryReader in(file, 7, "a test state");
    Eigen::MatrixXd m;
    in.matrix(m);
  });
  EXPECT_NE(huge.find("corrupt a test state"), std::string::npos) << huge;
  // A 3 x 2 matrix read into a vector.
  {
    BinaryWriter out(file, 7);
    out.matrix(Eigen::MatrixXd(Eigen::MatrixXd::Zero(3, 2)));
    out.close();
  }
  const std::string shape = refusal([&] {
    BinaryReader in(file, 7, "a test state");
    Eigen::VectorXd v;
    in.matrix(v);
  });
  EXPECT_NE(shape.find("where a vector belongs"), std::string::npos) << shape;
}
