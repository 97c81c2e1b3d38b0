// core/src/override_grammar.cpp (through nexp/runtime/overrides.hpp and the sweep axes it feeds):
// a table of cases in Hydra's override grammar, each with what nexp must make of it.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "nexp/runtime/overrides.hpp"
#include "nexp/runtime/registry.hpp"
#include "nexp/runtime/sweep.hpp"

using namespace nexp;

namespace {

const char* kTree = R"(params: {lr: 0.1, name: abc, sizes: [1, 2]}
dataset: {name: iris, n: 5, d: 3}
seed: 3
)";

// The value the override leaves at `key`, as flow YAML ("<deleted>" when gone), or "error: <message>".
std::string applied(const std::string& text, const std::string& key) {
  YAML::Node root = YAML::Load(kTree);
  try {
    const std::vector<Override> os = {parse_override(text)};
    static const Registry registry;  // core only
    apply_overrides(root, os, "test.yaml", registry);
  } catch (const ConfigError& e) {
    return std::string("error: ") + e.what();
  }
  YAML::Node n = root;
  std::string rest = key;
  while (!rest.empty()) {
    const auto dot = rest.find('.');
    const std::string part = rest.substr(0, dot);
    if (!n.IsMap() || !n[part].IsDefined()) return "<deleted>";
    n.reset(n[part]);
    rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
  }
  YAML::Emitter em;
  em << YAML::Flow << YAML::DoubleQuoted << n;
  return em.c_str();
}

// The values of the axis that `-m text` makes, joined by " | ", or "error: <message>".
std::string axis(const std::string& text) {
  try {
    const Override o = parse_override(text);
    if (!is_sweep(o)) return "not a sweep";
    const SweepAxis a = parse_axis(o.key, o.value, "command line");
    if (a.sampled())
      return std::string(a.kind == SweepAxis::Kind::LogUniform ? "loguniform" : "uniform") + (a.integer ? " int" : "") +
             " [" + std::to_string(a.lo) + ", " + std::to_string(a.hi) + "]";
    std::string out;
    for (const auto& v : a.values) out += (out.empty() ? "" : " | ") + v;
    return out;
  } catch (const ConfigError& e) {
    return std::string("error: ") + e.what();
  }
}

struct Case {
  const char* text;
  const char* key;       // for value cases: where to look; "" for sweep cases
  const char* expected;  // exact result, or "error: <part of the message>"
};

void check(const Case& c, const std::string& got) {
  const std::string expected = c.expected;
  if (expected.rfind("error: ", 0) == 0) {
    EXPECT_EQ(got.rfind("error: ", 0), 0u) << c.text << " should fail, gave " << got;
    EXPECT_NE(got.find(expected.substr(7)), std::string::npos) << c.text << ": " << got;
  } else {
    EXPECT_EQ(got, expected) << c.text;
  }
}

// Values: primitives keep YAML's reading; quotes make strings; escapes; containers; leftovers.
const std::vector<Case> kValues = {
    {"params.lr=0.5", "params.lr", "\"0.5\""},
    {"params.lr=1e-3", "params.lr", "\"1e-3\""},
    {"params.lr=.inf", "params.lr", "\".inf\""},
    {"params.name=hello world", "params.name", "\"hello world\""},
    {"params.name=  padded  ", "params.name", "\"padded\""},
    {"params.name=", "params.name", "\"\""},
    {"params.name=null", "params.name", "~"},
    {"params.name='null'", "params.name", "\"null\""},
    {"params.name='abc'", "params.name", "\"abc\""},
    {"params.name=\"abc\"", "params.name", "\"abc\""},
    {"params.name='a,b'", "params.name", "\"a,b\""},
    {"params.name=a\\,b", "params.name", "\"a,b\""},
    {"params.name=a\\ ", "params.name", "\"a \""},
    {"params.name=\\(x\\)", "params.name", "\"(x)\""},
    {"params.name=a\\\\b", "params.name", "\"a\\\\b\""},
    {"params.name=a\\=b", "params.name", "\"a=b\""},
    {"params.name='foo \\'bar'", "params.name", "\"foo 'bar\""},
    {"params.name=\"foo \\\"bar\"", "params.name", "\"foo \\\"bar\""},
    {"params.name='it''s'", "params.name", "error: unexpected"},
    {"params.name=${env:HOME}", "params.name", "\"${env:HOME}\""},
    {"params.name=${params.lr}", "params.name", "\"${params.lr}\""},
    {"params.name=héllo", "params.name", "\"héllo\""},
    {"params.name=1_000", "params.name", "\"1_000\""},
    {"params.name=http://x.org/a", "params.name", "\"http://x.org/a\""},
    {"params.sizes=[1,2,3]", "params.sizes", "[\"1\", \"2\", \"3\"]"},
    {"params.sizes=[ 1 , 2 ]", "params.sizes", "[\"1\", \"2\"]"},
    {"params.sizes=[]", "params.sizes", "[]"},
    {"params.sizes=[[1,2],[3]]", "params.sizes", "[[\"1\", \"2\"], [\"3\"]]"},
    {"params.sizes=['a,b', c]", "params.sizes", "[\"a,b\", \"c\"]"},
    {"params.sizes={a: 1, b: [2]}", "params.sizes", "{\"a\": \"1\", \"b\": [\"2\"]}"},
    {"params.sizes={a:1}", "params.sizes", "{\"a\": \"1\"}"},
    {"params.sizes={}", "params.sizes", "{}"},
    {"dataset={n: 12}", "dataset", "{\"name\": \"iris\", \"n\": \"12\", \"d\": \"3\"}"},
    {"dataset=wine", "dataset", "{\"name\": \"wine\", \"n\": \"5\", \"d\": \"3\"}"},
    {"params.sizes=[1,2]aa", "params.sizes", "error: unexpected 'aa' after a list, at column 19"},
    {"params.sizes=[1,2", "params.sizes", "error: the value ends before its closing ']'"},
    {"params.sizes=[1,,2]", "params.sizes", "error: an empty element"},
    {"params.sizes={a 1}", "params.sizes", "error: expected ':'"},
    {"params.name='abc", "params.name", "error: the quote ' opened here is never closed"},
    {"params.name=abc'", "params.name", "error: a quote inside unquoted text"},
    {"params.name=a=b", "params.name", "error: '=' inside a value"},
    {"params.name=a)", "params.name", "error: unexpected ')' after the value"},
    {"params.name=${env:X", "params.name", "error: never closed"},
    {"params.name='x'y", "params.name", "error: unexpected 'y' after a quoted value"},
    // Kinds.
    {"+params.momentum=0.9", "params.momentum", "\"0.9\""},
    {"+params.lr=0.9", "params.lr", "error: already in the config"},
    {"++params.lr=0.9", "params.lr", "\"0.9\""},
    {"++params.momentum=0.9", "params.momentum", "\"0.9\""},
    {"~params.lr", "params.lr", "<deleted>"},
    {"~params.lr=", "params.lr", "<deleted>"},
    {"~params.lr=0.1", "params.lr", "<deleted>"},
    {"~params.lr=0.10", "params.lr", "<deleted>"},
    {"~params.lr=0.2", "params.lr", "error: 'params.lr' is 0.1, not 0.2"},
    {"~params.nothing", "params.nothing", "error: cannot delete"},
    {"~dataset", "dataset", "<deleted>"},
    // Keys.
    {"params.lr", "", "error: has no '='"},
    {"=3", "", "error: '' is not a key path"},
    {"params..lr=1", "", "error: is not a key path"},
    {"par ams=1", "", "error: is not a key path"},
    {"sead=1", "", "error: Did you mean 'seed'?"},
    {"seed.x=1", "", "error: 'seed' is '3', not a map"},
    // A sweep is not a value.
    {"params.lr=0.1,0.2", "params.lr", "error: add -m"},
    {"params.lr=range(3)", "params.lr", "error: add -m"},
    {"+params.x=a,b", "params.x", "error: add -m"},
};

// Sweeps (-m): several elements or a sweep function.
const std::vector<Case> kSweeps = {
    {"a=1,2,3", "", "1 | 2 | 3"},
    {"a= 1 , 2 ", "", "1 | 2"},
    {"a='x,y',z", "", "'x,y' | z"},
    {"a=x\\,y,z", "", "'x,y' | z"},
    {"a=[1,2],[3]", "", "[1, 2] | [3]"},
    {"a={b: 1},{b: 2}", "", "{b: 1} | {b: 2}"},
    {"a=choice(x,y)", "", "x | y"},
    {"a=choice (1,2)", "", "1 | 2"},
    {"a=choice('a b',c)", "", "'a b' | c"},
    {"a=range(3)", "", "0 | 1 | 2"},
    {"a=range(1,10,4)", "", "1 | 5 | 9"},
    {"a=range(start=1,stop=10,step=4)", "", "1 | 5 | 9"},
    {"a=range(10, 0, -4)", "", "10 | 6 | 2"},
    {"a=range(0, 1, 0.25)", "", "0 | 0.25 | 0.5 | 0.75"},
    {"a=range(stop=2)", "", "0 | 1"},
    {"a=uniform(0,1)", "", "uniform [0.000000, 1.000000]"},
    {"a=interval(0.5,2)", "", "uniform [0.500000, 2.000000]"},
    {"a=interval(start=1,end=2)", "", "uniform [1.000000, 2.000000]"},
    {"a=loguniform(1e-4, 1e-1)", "", "loguniform [0.000100, 0.100000]"},
    {"a=int(uniform(1,8))", "", "uniform int [1.000000, 8.000000]"},
    {"+a=x,y", "", "x | y"},
    {"a=[1,2]", "", "not a sweep"},
    {"a='1,2'", "", "not a sweep"},
    {"a=3", "", "not a sweep"},
    {"a=1,,2", "", "error: an empty element"},
    {"a=range(5, 0)", "", "error: the range is empty"},
    {"a=range(0, 5, 0)", "", "error: cannot be 0"},
    {"a=range(1,2,3,4)", "", "error: '4' is not one of its arguments"},
    {"a=range(begin=1,stop=3)", "", "error: 'begin' is not one of its arguments"},
    {"a=range(x)", "", "error: expected a number, found x"},
    {"a=uniform(1)", "", "error: uniform needs 'high'"},
    {"a=uniform(2,1)", "", "error: the lower bound must be below the upper bound"},
    {"a=loguniform(0,1)", "", "error: positive bounds"},
    {"a=int(range(1,3))", "", "error: int(...) wraps a distribution"},
    {"a=glob(*)", "", "error: unknown sweep function 'glob'"},
    {"a=choice(x=1)", "", "error: choice(...) takes values"},
    {"a=choice(1,2)x", "", "error: unexpected 'x' after choice(...)"},
    {"~a=1,2", "", "not a sweep"},
};

}  // namespace

TEST(Overrides, ValuesKindsAndKeysFollowHydrasGrammar) {
  for (const auto& c : kValues) check(c, applied(c.text, c.key));
}

TEST(Overrides, SweepAxesFollowHydrasGrammar) {
  for (const auto& c : kSweeps) check(c, axis(c.text));
}

TEST(Overrides, ErrorsPointAtTheColumnWithACaret) {
  const std::string e = applied("params.sizes=[1,2]aa", "params.sizes");
  EXPECT_NE(e.find("    params.sizes=[1,2]aa\n                      ^"), std::string::npos) << e;
}

TEST(Overrides, ATableOfAtLeastSixtyCases) { EXPECT_GE(kValues.size() + kSweeps.size(), 60u); }
