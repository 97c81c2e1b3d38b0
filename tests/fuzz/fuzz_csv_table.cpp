// Fuzz target for nexp's CSV reader (core/src/table.cpp: nexp::CsvTable, the SDK's reader of user CSV
// files). For any input:
//   1. parsing returns a table or refuses the text with a DataError, nothing else; so does every
//      typed read (text, real, integer, boolean) of every field;
//   2. every row has as many fields as the header;
//   3. a non-empty field written back by csv_field (the writer's quoting) reads back as itself.
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "nexp/table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nexp;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CsvTable table;
  if (!fuzz::accepted("csv_table", input, [&] { table = CsvTable::parse(input, "fuzz.csv"); })) return 0;
  const auto& header = table.header();
  for (std::size_t r = 0; r < table.size(); ++r) {
    if (table.row(r).size() != header.size()) fuzz::fail("csv_table", "a row of another width than the header", input);
    for (const auto& column : header) {
      fuzz::accepted("csv_table", input, [&] { (void)table.real(r, column); });
      fuzz::accepted("csv_table", input, [&] { (void)table.integer(r, column); });
      fuzz::accepted("csv_table", input, [&] { (void)table.boolean(r, column); });
    }
  }
  for (const auto& column : header) fuzz::accepted("csv_table", input, [&] { (void)table.reals(column); });
  for (const auto& field : header) {
    if (field.empty()) continue;
    const std::string written = "h\n" + csv_field(field) + "\n";
    fuzz::must("csv_table", input, "a field written by csv_field does not parse", [&] {
      const CsvTable back = CsvTable::parse(written);
      if (back.size() != 1 || back.row(0).at(0) != field)
        fuzz::fail("csv_table", "a field written by csv_field reads back as another: " + written, input);
    });
  }
  return 0;
}
