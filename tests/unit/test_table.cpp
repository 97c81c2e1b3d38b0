// nexp/table.hpp: RFC 4180 quoting, round-trip numbers, typed columns, flushing, and the reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/random.hpp"
#include "nexp/table.hpp"
#include "support.hpp"

using namespace nexp;
using C = CsvColumn;

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(Table, QuotesWhatRfc4180Asks) {
  EXPECT_EQ(csv_field("plain text"), "plain text");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(Table, WritesTypedRowsWithAHeader) {
  std::ostringstream out;
  CsvWriter csv(out, {C::text("name"), C::integer("n"), C::real("x"), C::real("slope").fixed(3),
                      C::real("err").significant(2), C::real("tiny").scientific(2), C::boolean("ok")});
  csv.row("a,b", 3, 0.1, 2.0, 0.012345, 12345.678, true);
  csv.row(std::string("q\"uote"), std::size_t{40}, NAN, -1.23456, INFINITY, -INFINITY, false);
  csv.row(std::nullopt, std::optional<int>(), std::optional<double>(2.5), 7, 1e-300, 0.0, std::optional<bool>(true));
  EXPECT_EQ(csv.rows(), 3u);
  EXPECT_EQ(out.str(),
            "name,n,x,slope,err,tiny,ok\n"
            "\"a,b\",3,0.1,2.000,0.012,1.23e+04,true\n"
            "\"q\"\"uote\",40,,-1.235,inf,-inf,false\n"
            ",,2.5,7.000,1e-300,0.00e+00,true\n");
}

TEST(Table, RefusesValuesThatDoNotFitTheirColumn) {
  std::ostringstream out;
  CsvWriter csv(out, {C::text("name"), C::integer("n"), C::real("x")});
  EXPECT_THROW(csv.row("a", 1.5, 2.0), Error) << "a double in an integer column";
  EXPECT_THROW(csv.row("a", 1, "2"), Error) << "text in a real column";
  EXPECT_THROW(csv.row(1, 1, 2.0), Error) << "a number in a text column";
  try {
    csv.row("a", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 3 values"), std::string::npos) << e.what();
  }
  EXPECT_EQ(csv.rows(), 0u);
  EXPECT_EQ(out.str(), "name,n,x\n") << "a refused row writes nothing";
  EXPECT_THROW(C::integer("n").fixed(2), Error) << "only reals have a precision";
}

TEST(Table, RealsRoundTripBitForBit) {
  test::TempDir dir;
  const auto file = dir.path / "reals.csv";
  std::vector<double> values{0.1, 1.0 / 3, -2.5e-310, 1e308, 123456789.125, -0.0, 5e-324,
                             std::numeric_limits<double>::max(), std::numeric_limits<double>::epsilon()};
  Random rng(17);
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
  }
  {
    CsvWriter csv(file, {C::integer("i"), C::real("v")});
    for (std::size_t i = 0; i < values.size(); ++i) csv.row(i, values[i]);
  }
  const auto t = CsvTable::read(file);
  ASSERT_EQ(t.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double back = t.real(i, "v");
    EXPECT_EQ(std::memcmp(&back, &values[i], sizeof back), 0) << values[i] << " read back as " << back;
    EXPECT_EQ(t.integer(i, "i"), static_cast<std::int64_t>(i));
  }
}

TEST(Table, EachRowReachesTheFileWhenWritten) {
  test::TempDir dir;
  const auto file = dir.path / "live.csv";
  CsvWriter csv(file, {C::text("step"), C::real("loss")});
  EXPECT_EQ(slurp(file), "step,loss\n");
  csv.row("one", 0.5);
  EXPECT_EQ(slurp(file), "step,loss\none,0.5\n") << "a run that dies now keeps the row";
  csv.flush_every_row(false);
  csv.row("two", 0.25);
  csv.flush();
  EXPECT_EQ(slurp(file), "step,loss\none,0.5\ntwo,0.25\n");
  EXPECT_THROW(CsvWriter(dir.path / "no" / "such" / "folder.csv", {C::text("a")}), Error);
}

TEST(Table, ReaderParsesQuotesNewlinesAndCrlf) {
  const auto t = CsvTable::parse(
      "\xEF\xBB\xBF" "name,note,value\r\n"
      "a,\"with, comma\",1\r\n"
      "\r\n"
      "b,\"two\nlines and \"\"quotes\"\"\",-2.5e3\n"
      "c,,\n"
      "\"\",\"\",+7",
      "t.csv");
  EXPECT_EQ(t.header(), (std::vector<std::string>{"name", "note", "value"}));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.text(0, "note"), "with, comma");
  EXPECT_EQ(t.text(1, "note"), "two\nlines and \"quotes\"");
  EXPECT_EQ(t.real(1, "value"), -2500);
  EXPECT_TRUE(std::isnan(t.real(2, "value"))) << "an empty number is missing";
  EXPECT_EQ(t.text(3, "name"), "");
  EXPECT_EQ(t.integer(3, "value"), 7);
  EXPECT_EQ(t.reals("value").size(), 4u);
  EXPECT_TRUE(t.has_column("note"));
  EXPECT_FALSE(t.has_column("notes"));
}

TEST(Table, WriterAndReaderAgreeOnAwkwardText) {
  std::ostringstream out;
  const std::vector<std::string> texts{"", ",", "\"", "\"\"", "a\r\nb", " spaced ", "x,\"y\"\nz"};
  {
    CsvWriter csv(out, {C::text("t"), C::integer("i")});
    for (std::size_t i = 0; i < texts.size(); ++i) csv.row(texts[i], i);
  }
  const auto t = CsvTable::parse(out.str());
  ASSERT_EQ(t.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(t.text(i, "t"), texts[i]) << i;
}

TEST(Table, ReaderErrorsNameTheFileLineAndColumn) {
  auto message = [](const std::string& text, auto&& read) {
    try {
      read(CsvTable::parse(text, "runs.csv"));
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto nothing = [](const CsvTable&) {};
  EXPECT_NE(message("a,b\n1,2\n3\n", nothing).find("runs.csv, line 3: expected 2 fields"), std::string::npos);
  EXPECT_NE(message("a,b\n1,\"open\n", nothing).find("line 2: a quoted field is never closed"), std::string::npos);
  EXPECT_NE(message("a\n\"x\"y\n", nothing).find("text after a closing quote"), std::string::npos);
  EXPECT_NE(message("", nothing).find("expected a header row"), std::string::npos);
  const auto real = [](const CsvTable& t) { t.real(1, "b"); };
  EXPECT_NE(message("a,b\n1,2\n3,4x\n", real).find("runs.csv, line 3, column 'b': expected a number, found '4x'"),
            std::string::npos);
  const auto absent = [](const CsvTable& t) { t.column("c"); };
  EXPECT_NE(message("a,b\n1,2\n", absent).find("no column 'c'; the header has: a, b"), std::string::npos);
  EXPECT_THROW(CsvTable::read("/nonexistent/file.csv"), DataError);
}
