// core/src/util.cpp: hashing and atomic files.
#include <gtest/gtest.h>

#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

TEST(Util, Sha256MatchesTheStandardVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TempDir dir;
  write_file_atomic(dir.path / "f.txt", "abc");
  EXPECT_EQ(sha256_file(dir.path / "f.txt"), sha256_hex("abc"));
}
