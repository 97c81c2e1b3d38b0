// core/src/reproduce_schema.cpp: results.yaml read, and every schema error naming file, line, key,
// expected and found.
#include <gtest/gtest.h>

#include "nexp/error.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test::results;
namespace fs = std::filesystem;

namespace {

// What load_results says about `text`: the message of the ConfigError ("" when it loads).
std::string error_of(const std::string& text) {
  try {
    parse_results(text, "plugins/demo/results.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

}  // namespace

TEST(Reproduce, ReadsEveryKey) {
  const ResultsFile f = parse_results(kValid, "plugins/demo/results.yaml");
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.plugin, "demo");
  EXPECT_EQ(f.readme, fs::path("plugins/demo/README.md"));
  const ResultRow& h = f.rows[0];
  EXPECT_EQ(h.table, "main") << "the first table is the default";
  EXPECT_EQ(h.command.text(), "nexp run configs/demo/headline.yaml params.platform=gpu threads=1");
  EXPECT_EQ(h.checks[0].compare.kind, ResultCompare::Kind::Interval);
  EXPECT_EQ(h.checks[0].compare.low_ref, "lo");
  EXPECT_DOUBLE_EQ(*h.checks[0].paper, 0.183);
  EXPECT_EQ(h.checks[0].recorded_text, "0.2176");
  EXPECT_EQ(h.checks[0].recorded_line, 13) << "0-based: the file's line 14";
  EXPECT_FALSE(h.quick);
  const ResultRow& c = f.rows[1];
  EXPECT_TRUE(c.quick);
  EXPECT_EQ(c.checks[1].where.at("policy"), std::vector<std::string>{"incumbent"});
  EXPECT_EQ(c.checks[1].source(), "table.csv: hours policy=incumbent");
  EXPECT_DOUBLE_EQ(c.cost, 2.5);
}

TEST(Reproduce, SchemaErrorsNameFileLineKeyExpectedAndFound) {
  std::string e = error_of(replace(kValid, "quick: true", "quick: sometimes"));
  EXPECT_NE(e.find("plugins/demo/results.yaml', line 29"), std::string::npos) << e;
  EXPECT_NE(e.find("rows[1] (count) > quick: expected true or false, found 'sometimes'"), std::string::npos) << e;

  e = error_of(replace(kValid, "metric: agree,", "metirc: agree,"));
  EXPECT_NE(e.find("unknown key 'metirc'. Did you mean 'metric'?"), std::string::npos) << e;
  EXPECT_NE(e.find("line 24"), std::string::npos) << e;

  e = error_of(replace(kValid, "    cost: 95\n", ""));
  EXPECT_NE(e.find("rows[0]: key 'cost' is required"), std::string::npos) << e;

  e = error_of(replace(kValid, "recorded: 60}", "recorded: sixty}"));
  EXPECT_NE(e.find("checks[0] > recorded: expected a finite number, found 'sixty'"), std::string::npos) << e;

  e = error_of(replace(kValid, "recorded: 60}", "recorded: 60, compare: roughly}"));
  EXPECT_NE(e.find("expected exact, {abs: X}, {rel: X} or {ci: [low, high]}"), std::string::npos) << e;
  EXPECT_NE(e.find("found 'roughly'"), std::string::npos) << e;

  e = error_of(replace(kValid, "ci: [lo, hi]", "ci: [lo, high]"));
  EXPECT_NE(e.find("ci bound 'high' is neither a number nor a check of this row"), std::string::npos) << e;

  e = error_of(replace(kValid, "{n} of 60", "{m} of 60"));
  EXPECT_NE(e.find("'{m}' in column 'value' is not a check of this row"), std::string::npos) << e;

  e = error_of(replace(kValid, "id: count", "id: headline"));
  EXPECT_NE(e.find("row id 'headline' is used twice"), std::string::npos) << e;

  e = error_of(replace(kValid, "table: second", "table: third"));
  EXPECT_NE(e.find("no table 'third'"), std::string::npos) << e;

  e = error_of(replace(kValid, "show: \"{:,.0f}\"", "show: \"{:q}\""));
  EXPECT_NE(e.find("is not a number format"), std::string::npos) << e;

  e = error_of(replace(kValid, "overrides: [params.platform=gpu,", "overrides: [params.platform=gpu,acc_t,"));
  EXPECT_NE(e.find("override 'acc_t' has no '='"), std::string::npos) << "a list item is one override: " << e;
  e = error_of(replace(kValid, "overrides: [params.platform=gpu,", "overrides: ['params.platform=gpu,acc_t',"));
  EXPECT_NE(e.find("is a sweep axis; put it under `sweep:`"), std::string::npos) << e;

  e = error_of(replace(kValid, "    quick: true\n", "    quick: true\n    needs: [{paht: x}]\n"));
  EXPECT_NE(e.find("unknown key 'paht'. Did you mean 'path'?"), std::string::npos) << e;

  e = error_of(replace(kValid, "{id: n, metric: agree,", "{id: n, metric: agree, artifact: x.csv,"));
  EXPECT_NE(e.find("give either `metric:`"), std::string::npos) << e;

  e = error_of(replace(kValid, "{id: n, metric: agree,", "{id: n, aggregate: paired_lo, metric: agree,"));
  EXPECT_NE(e.find("`paired_lo` is a bound of the interval of trials minus their partners in `baseline:`"),
            std::string::npos) << e;

  e = error_of(replace(kValid, "{id: n, metric: agree,", "{id: n, aggregate: mean_lo, baseline: {seed: 0}, metric: agree,"));
  EXPECT_NE(e.find("`mean_lo` bounds the mean of one selection"), std::string::npos) << e;

  e = error_of("plugin: demo\nrows: [{id: a, claim: c, command: {external: ./bench.sh}, cost: 1, quick: true}]\n");
  EXPECT_NE(e.find("cannot be quick"), std::string::npos) << e;
}
