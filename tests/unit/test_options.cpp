// Options declared as structs (nexp/options.hpp): the schema they build, binding, round trips, nested
// maps and lists of maps, enums, inheritance, and validation of nested values from YAML.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <climits>

#include "nexp/options.hpp"
#include "nexp/runtime/experiment.hpp"

using namespace nexp;

namespace {

enum class Mode { Fast, Exact };

struct Platform {
  std::string name;
  double weight = 1.0;
  static void declare(Options<Platform>& o) {
    o.add("name", &Platform::name, "platform name").required();
    o.add("weight", &Platform::weight, "share").min(0);
  }
};

struct Inner {
  std::int64_t depth = 2;
  static void declare(Options<Inner>& o) { o.add("depth", &Inner::depth, "depth").range(1, 8); }
};

struct Opts {
  bool flag = true;
  int count = 3;
  std::int64_t big = 1;
  double lr = 0.5;
  std::string name = "abc";
  std::vector<std::int64_t> ns = {1, 2};
  std::vector<int> small = {4};
  std::vector<double> xs = {0.5};
  std::vector<std::string> tags = {"a"};
  std::optional<double> maybe;
  Mode mode = Mode::Exact;
  Inner inner;
  std::vector<Platform> platforms = {{"gpu", 2.0}};

  static void declare(Options<Opts>& o) {
    o.add("flag", &Opts::flag, "a flag");
    o.add("count", &Opts::count, "a count").min(0);
    o.add("big", &Opts::big, "a big number");
    o.add("lr", &Opts::lr, "rate").range(0, 1);
    o.add("name", &Opts::name, "name").choices({"abc", "def"});
    o.add("ns", &Opts::ns, "sizes");
    o.add("small", &Opts::small, "small sizes");
    o.add("xs", &Opts::xs, "reals");
    o.add("tags", &Opts::tags, "tags");
    o.add("maybe", &Opts::maybe, "optional");
    o.add("mode", &Opts::mode, "mode", {{"fast", Mode::Fast}, {"exact", Mode::Exact}});
    o.add("inner", &Opts::inner, "nested");
    o.add("platforms", &Opts::platforms, "list of maps");
  }
};

struct Base {
  double a = 1.0;
  static void declare(Options<Base>& o) { o.add("a", &Base::a, "from the base").min(0); }
};
struct Derived : Base {
  std::int64_t b = 2;
  static void declare(Options<Derived>& o) {
    o.inherit<Base>();
    o.add("b", &Derived::b, "own");
  }
};

struct Other {
  std::string c = "x";
  std::vector<double> d{0.5};
  static void declare(Options<Other>& o) {
    o.add("c", &Other::c, "from the second base");
    o.add("d", &Other::d, "a list from the second base");
  }
};
struct TwoBases : Base, Other {
  int e = 3;
  static void declare(Options<TwoBases>& o) {
    o.inherit<Base>();
    o.inherit<Other>();
    o.add("e", &TwoBases::e, "own");
  }
};

Params from_yaml(const std::string& text, const Schema& schema) {
  return params_from_yaml(YAML::Load(text), schema, "params", "test.method", "test.yaml");
}

std::string error_of(const std::string& text, const Schema& schema) {
  try {
    from_yaml(text, schema);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

}  // namespace

TEST(Options, SchemaComesFromTheDeclaration) {
  const Schema s = options_schema<Opts>();
  ASSERT_EQ(s.params().size(), 13u);
  EXPECT_EQ(s.find("count")->type(), Type::Int);
  EXPECT_EQ(s.find("lr")->type(), Type::Float);
  EXPECT_EQ(s.find("small")->type(), Type::IntList);
  EXPECT_EQ(s.find("mode")->type(), Type::String);
  EXPECT_EQ(s.find("mode")->allowed(), (std::vector<std::string>{"fast", "exact"}));
  EXPECT_EQ(std::get<std::string>(s.find("mode")->fallback()), "exact");
  EXPECT_TRUE(s.find("maybe")->is_optional());
  EXPECT_EQ(s.find("inner")->type(), Type::Map);
  EXPECT_EQ(s.find("inner")->nested()->find("depth")->constraint(), "int in [1, 8]");
  EXPECT_EQ(s.find("platforms")->type(), Type::MapList);
  EXPECT_EQ(std::get<double>(s.find("lr")->fallback()), 0.5);
  EXPECT_EQ(s.find("count")->constraint(), "int >= 0") << "the implicit 32-bit bound is not shown";
}

TEST(Options, DefaultsBindToTheDefaultStruct) {
  const Opts o = bind<Opts>(options_schema<Opts>().defaults());
  const Opts d;
  EXPECT_EQ(o.flag, d.flag);
  EXPECT_EQ(o.count, d.count);
  EXPECT_EQ(o.ns, d.ns);
  EXPECT_EQ(o.small, d.small);
  EXPECT_FALSE(o.maybe.has_value());
  EXPECT_EQ(o.mode, Mode::Exact);
  EXPECT_EQ(o.inner.depth, 2);
  ASSERT_EQ(o.platforms.size(), 1u);
  EXPECT_EQ(o.platforms[0].name, "gpu");
  EXPECT_EQ(o.platforms[0].weight, 2.0);
}

TEST(Options, YamlValuesBindAndRoundTrip) {
  const Schema s = options_schema<Opts>();
  const Params p = from_yaml(R"(
count: 7
lr: 1
maybe: 0.25
mode: fast
small: [1, 2, 3]
inner: {depth: 5}
platforms: [{name: a}, {name: b, weight: 3}]
)",
                             s);
  const Opts o = bind<Opts>(p);
  EXPECT_EQ(o.count, 7);
  EXPECT_EQ(o.lr, 1.0) << "an int converts to a float member";
  ASSERT_TRUE(o.maybe.has_value());
  EXPECT_EQ(*o.maybe, 0.25);
  EXPECT_EQ(o.mode, Mode::Fast);
  EXPECT_EQ(o.small, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(o.inner.depth, 5);
  ASSERT_EQ(o.platforms.size(), 2u);
  EXPECT_EQ(o.platforms[0].weight, 1.0) << "a list item's default";
  EXPECT_EQ(o.platforms[1].weight, 3.0);
  // YAML -> Params -> YAML -> Params -> struct gives the same struct.
  const Params back = params_from_yaml(YAML::Load(YAML::Dump(params_to_yaml(p, s))), s, "params", "x", "round-trip");
  const Opts again = bind<Opts>(back);
  EXPECT_EQ(again.platforms[1].name, "b");
  EXPECT_EQ(again.inner.depth, 5);
  EXPECT_EQ(to_string(to_params(again).get("inner")), "{depth: 5}");
}

TEST(Options, NestedErrorsNameTheFullPathAndAllAreReported) {
  const Schema s = options_schema<Opts>();
  const std::string e = error_of(R"(
count: -1
inner: {depht: 3}
platforms: [{weight: 2}, 7]
)",
                                 s);
  EXPECT_HAS(e, "4 problems in the config");
  EXPECT_HAS(e, "'params.count' is out of range");
  EXPECT_HAS(e, "unknown key 'params.inner.depht'");
  EXPECT_HAS(e, "Did you mean 'depth'?");
  EXPECT_HAS(e, "'params.platforms.0.name' is required");
  EXPECT_HAS(e, "'params.platforms.1' must be a map");
  EXPECT_HAS(e, "line 2");
}

TEST(Options, IntMembersRefuseValuesBeyond32Bits) {
  const std::string e = error_of("count: 3000000000", options_schema<Opts>());
  EXPECT_HAS(e, "does not fit a 32-bit int");
  EXPECT_EQ(error_of("big: 3000000000", options_schema<Opts>()), "") << "an int64 member takes it";
}

TEST(Options, EnumsAcceptOnlyTheirNames) {
  EXPECT_HAS(error_of("mode: quick", options_schema<Opts>()), "'quick' is not one of {fast, exact}");
}

TEST(Options, InheritedOptionsBindToTheDerivedStruct) {
  const Schema s = options_schema<Derived>();
  EXPECT_EQ(s.names(), (std::vector<std::string>{"a", "b"}));
  const Derived d = bind<Derived>(from_yaml("a: 4\nb: 9", s));
  EXPECT_EQ(d.a, 4.0);
  EXPECT_EQ(d.b, 9);
}

TEST(Options, OptionsFromTwoBasesBindToTheDerivedStruct) {
  const Schema s = options_schema<TwoBases>();
  EXPECT_EQ(s.names(), (std::vector<std::string>{"a", "c", "d", "e"}));
  const TwoBases t = bind<TwoBases>(from_yaml("a: 4\nc: y\nd: [1, 2]\ne: 7", s));
  EXPECT_EQ(t.a, 4.0);
  EXPECT_EQ(t.c, "y");
  EXPECT_EQ(t.d, (std::vector<double>{1, 2}));
  EXPECT_EQ(t.e, 7);
  const Params round = to_params(t);
  EXPECT_EQ(round.get_string("c"), "y");
  EXPECT_EQ(bind<TwoBases>(round).d, (std::vector<double>{1, 2}));
}

TEST(Options, ADefaultOutsideItsOwnRangeIsAnError) {
  struct Bad {
    int n = 0;
    static void declare(Options<Bad>& o) { o.add("n", &Bad::n, "count").min(1); }
  };
  EXPECT_THROW(options_schema<Bad>(), Error);
}
