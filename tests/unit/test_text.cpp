// core/src/text.cpp: UTF-8 validation, \xNN escapes, JSON of any text, checked text files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "nexp/error.hpp"
#include "nexp/text.hpp"
#include "support.hpp"

using namespace nexp;
using nexp::test::TempDir;
using json = nlohmann::json;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}
}  // namespace

// Well-formed sequences of every length pass unchanged, at the edges of their ranges (Unicode 15,
// table 3-7): U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
TEST(Text, WellFormedUtf8PassesUnchanged) {
  const std::string text = "a\x7f \xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf "
                           "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf caf\xc3\xa9";
  EXPECT_EQ(invalid_utf8_offset(text), std::string::npos);
  EXPECT_EQ(valid_utf8(text), text);
}

// Each byte of an ill-formed sequence becomes \xNN; what follows is kept.
TEST(Text, IllFormedBytesBecomeHexEscapes) {
  EXPECT_EQ(valid_utf8("caf\xe9 ok"), "caf\\xE9 ok");                // latin-1
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\\xC0\\xAF");                    // overlong '/'
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\\xED\\xA0\\x80");           // a surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(valid_utf8("ab\xe2\x82"), "ab\\xE2\\x82");                // cut short at the end
  EXPECT_EQ(valid_utf8("\x80x\xc3\xa9"), "\\x80x\xc3\xa9");           // a lone continuation byte
  EXPECT_EQ(invalid_utf8_offset("ab\xff"), 2u);
  EXPECT_EQ(invalid_utf8_offset(valid_utf8(std::string_view("\xff\xfe\x00 random", 10))), std::string::npos);
}

// json_dump writes any JSON value: strings and keys that are not UTF-8 (nlohmann's dump throws
// type_error 316 on them) come out escaped, and the text parses back.
TEST(Text, JsonDumpWritesStringsThatAreNotUtf8) {
  json j = {{"error", "cannot parse 'caf\xe9'"}, {"list", {"ok", "\xff"}}};
  j["k\xe9y"] = 1;
  EXPECT_THROW(j.dump(), json::type_error);
  const json back = json::parse(json_dump(j, 2));
  EXPECT_EQ(back["error"], "cannot parse 'caf\\xE9'");
  EXPECT_EQ(back["list"][1], "\\xFF");
  EXPECT_EQ(back["k\\xE9y"], 1);
  EXPECT_EQ(json_dump(json{{"a", 1}}), "{\"a\":1}") << "valid text is dumped as nlohmann dumps it";
}

TEST(Text, ReadTextFileRefusesWhatIsNotText) {
  TempDir dir;
  EXPECT_EQ(read_text_file(dir.write("good.txt", "nodes 2\n1 -> 2\n"), "graph"), "nodes 2\n1 -> 2\n");
  const std::string latin1 = message_of([&] { read_text_file(dir.write("latin1.txt", "a\nb caf\xe9 x\n"), "graph"); });
  EXPECT_NE(latin1.find("is not UTF-8 text: line 2, column 6 holds the byte \\xE9"), std::string::npos) << latin1;
  EXPECT_NE(latin1.find("the line reads 'b caf\\xE9 x'"), std::string::npos) << latin1;
  EXPECT_NE(latin1.find("iconv"), std::string::npos) << latin1;
  EXPECT_EQ(invalid_utf8_offset(latin1), std::string::npos) << "the message itself is valid UTF-8";
  const std::string binary = message_of([&] { read_text_file(dir.write("bin", std::string("ab\0cd", 5)), "log"); });
  EXPECT_NE(binary.find("is not a text file: line 1, column 3 holds the byte \\x00"), std::string::npos) << binary;
  EXPECT_NE(message_of([&] { read_text_file(dir.write("empty", ""), "log"); }).find("is empty"), std::string::npos);
  EXPECT_NE(message_of([&] { read_text_file(dir.path, "log"); }).find("is a folder"), std::string::npos);
  EXPECT_NE(message_of([&] { read_text_file(dir.path / "missing", "log"); }).find("does not exist"), std::string::npos);
}
