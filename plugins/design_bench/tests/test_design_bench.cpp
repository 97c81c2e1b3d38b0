// Layouts, the LICA reader, the generator, and every task's scoring at known points: the oracle at the
// maximum, chance at its expectation, the noisy model falling with its noise, bad answers counted.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <nexp/error.hpp>
#include <nlohmann/json.hpp>

#include "../families.hpp"
#include "../methods.hpp"
#include "../metrics.hpp"
#include "../tasks.hpp"
#include "../vlm.hpp"

using namespace design_bench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const Corpus& corpus() {
  static const Corpus c = [] {
    FamiliesOptions o;
    o.families = 60;
    o.font_pool = 40;
    nexp::Random rng(11);
    Corpus out;
    out.layouts = generate_families(o, rng);
    out.index();
    return out;
  }();
  return c;
}

double primary(const std::string& task, const std::string& model, double noise = 0.5, int items = 300) {
  TaskSettings s;
  s.items = items, s.noise = noise;
  nexp::Random rng(3);
  const auto it = make_items(task, corpus(), s, rng);
  std::vector<json> answers;
  for (std::size_t i = 0; i < it.size(); ++i) {
    nexp::Random r = nexp::Random::stream(5, "answer", i);
    answers.push_back(answer(model, task, it[i], corpus(), s, r));
  }
  return score(task, it, answers, corpus()).metrics.at(primary_metric(task));
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("nexp-design-bench-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& f, const std::string& text) { std::ofstream(f) << text; }

const char* kLicaLayout = R"json({
  "layout_id": "L1", "width": "1080px", "height": "1350px", "background": "#FFFFFF",
  "components": [
    {"type": "IMAGE", "left": "0px", "top": "0px", "width": "1080px", "height": "700px"},
    {"id": "g", "type": "GROUP", "left": "100px", "top": "800px", "width": "300px", "height": "80px", "children": ["t2"]},
    {"id": "t2", "type": "TEXT", "left": "110px", "top": "810px", "width": "280px", "height": "60px",
     "fontFamily": "Arimo--700", "fontSize": "48px", "color": "rgb(255, 0, 0)", "text": "Sale"}
  ]})json";

}  // namespace

TEST(DesignBenchLayout, FontJaccardIsOneForSiblingsDifferingInWeightOnly) {
  Layout a, b;
  Component t;
  t.type = Kind::Text;
  t.font_family = "Arimo--700";
  a.components = {t};
  t.font_family = "Arimo--400";
  b.components = {t};
  t.font_family = "Lato";
  b.components.push_back(t);
  a.components.push_back(t);
  EXPECT_DOUBLE_EQ(font_jaccard(a, b), 1.0);
  EXPECT_EQ(font_family_name("Playfair Display--800"), "Playfair Display");
  t.font_family = "Roboto--400";
  b.components = {t};
  EXPECT_DOUBLE_EQ(font_jaccard(a, b), 0.0);
}

TEST(DesignBenchLayout, LicaFolderReadsPixelStringsGroupsAndMetadata) {
  const auto d = temp_dir("lica");
  write(d / "L1.json", kLicaLayout);
  write(d / "metadata.csv", "layout_id,template_id,category\nL1,T9,poster\n");
  const Corpus c = read_lica_folder(d.string(), 0);
  ASSERT_EQ(c.layouts.size(), 1u);
  const Layout& l = c.layouts[0];
  EXPECT_EQ(l.template_id, "T9");
  EXPECT_EQ(l.category, "poster");
  EXPECT_DOUBLE_EQ(l.height, 1350);
  EXPECT_EQ(l.background, "#ffffff");
  ASSERT_EQ(l.components.size(), 3u);
  EXPECT_EQ(l.components[2].color, "#ff0000");
  EXPECT_DOUBLE_EQ(l.components[2].font_size, 48);
  EXPECT_EQ(l.components[2].parent, 1);
  EXPECT_EQ(font_families(l), std::vector<std::string>{"Arimo"});
  // A round trip through nexp's writer reads back the same layout.
  const Layout back = layout_from_json(layout_to_json(l), "round trip");
  EXPECT_EQ(back.components[2].box.w, 280);
  EXPECT_EQ(back.components[2].font_family, "Arimo--700");
  fs::remove_all(d);
}

TEST(DesignBenchLayout, LicaTreeReadsTemplatesNestedGroupsAndTransforms) {
  // LICA's download: metadata.csv, layouts/<template_id>/<layout_id>.json, images/<template_id>/...png.
  const Corpus c = read_lica_folder(DESIGN_BENCH_LICA_FIXTURE, 0);
  ASSERT_EQ(c.layouts.size(), 8u);
  EXPECT_EQ(c.by_template.size(), 4u);
  std::map<std::string, const Layout*> by_id;
  for (const auto& l : c.layouts) by_id[l.id] = &l;
  const Layout& slide = *by_id.at("Kp3vR8sLq2WmT6yXn0Ab");
  EXPECT_EQ(slide.template_id, "5f0c2a91-7d3e-4b8a-9c61-2e4f8a0b7d15");
  EXPECT_EQ(slide.category, "Presentations");
  EXPECT_EQ(by_id.at("Rw5nY0aHf8PjM3xCs6Ue")->variant_index, 2);
  EXPECT_DOUBLE_EQ(slide.width, 1920);
  EXPECT_EQ(slide.image.filename().string(), "Kp3vR8sLq2WmT6yXn0Ab.png");
  EXPECT_TRUE(by_id.at("Tz9hG4cN1uQe7VbJk2Ld")->image.empty());
  // Paint order with the hierarchy flattened: background, title, subtitle, the card GROUP, its heading,
  // its nested GROUP, and that group's two lines.
  ASSERT_EQ(slide.components.size(), 8u);
  EXPECT_DOUBLE_EQ(slide.components[0].box.x, 0);  // no left/top: the canvas origin
  EXPECT_DOUBLE_EQ(slide.components[0].box.h, 1080);
  EXPECT_EQ(slide.components[3].type, Kind::Group);
  EXPECT_EQ(slide.components[3].children, (std::vector<std::string>{"c4", "c5"}));
  for (int k : {4, 5}) EXPECT_EQ(slide.components[k].parent, 3);
  for (int k : {6, 7}) EXPECT_EQ(slide.components[k].parent, 5);
  EXPECT_EQ(slide.components[5].color, "");  // rgba(1, 1, 1, 0): transparent
  EXPECT_EQ(slide.components[3].color, "#ffffff");
  EXPECT_EQ(font_families(slide), (std::vector<std::string>{"Arimo", "League Spartan"}));
  const Box moved = by_id.at("Rw5nY0aHf8PjM3xCs6Ue")->components.back().box;  // translate(20px, -10px)
  EXPECT_NEAR(moved.x, 1158.6 + 20, 1e-9);
  EXPECT_NEAR(moved.y, -84.5 - 10, 1e-9);
  // The square post and its story pair up for aspect_adapt, both ways.
  TaskSettings s;
  nexp::Random rng(1);
  EXPECT_EQ(make_items("aspect_adapt", c, s, rng).size(), 2u);
}

TEST(DesignBenchLayout, BadLicaFieldsAreNamedInTheError) {
  const auto d = temp_dir("bad");
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    write(d / "x.json", text);
    try {
      read_lica_folder(d.string(), 0);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const nexp::DataError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos) << e.what();
    }
  };
  std::string s = kLicaLayout;
  expect_error(std::string(s).replace(s.find("\"0px\""), 5, "\"12pt\""), "`left`");
  expect_error(std::string(s).replace(s.find("\"1080px\", \"height\": \"700px\""), 8, "null"), "`width`");
  expect_error(std::string(s).replace(s.find("\"children\""), 10, "\"components\": [{\"type\": \"TEXT\"}], \"x\""),
               "components[1].components[0]");
  expect_error(std::string(s).replace(s.find("\"IMAGE\""), 7, "\"VIDEO\""), "`type`");
  expect_error(std::string(s).replace(s.find("[\"t2\"]"), 6, "[\"t3\"]"), "t3");
  expect_error(std::string(s).replace(s.find("rgb(255, 0, 0)"), 14, "reddish"), "`color`");
  expect_error("{\"width\": 10}", "`height`");
  expect_error("not json", "not JSON");
  fs::remove_all(d);
  try {
    read_lica_folder((d / "absent").string(), 0);
    ADD_FAILURE();
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("<layout_id>.json"), std::string::npos) << e.what();
  }
}

TEST(DesignBenchFamilies, SiblingsShareFontsAndLayoutCountIsLicaLike) {
  const Corpus& c = corpus();
  EXPECT_EQ(c.by_template.size(), 60u);
  EXPECT_GT(c.layouts.size(), 60u * 4);
  EXPECT_LT(c.layouts.size(), 60u * 8);
  // Siblings keep the template's fonts; a variant that leaves out its subtitle may lose one of them.
  double sum = 0;
  int pairs = 0;
  for (const auto& [t, members] : c.by_template)
    for (std::size_t k = 1; k < members.size(); ++k) {
      const double j = font_jaccard(c.layouts[members[0]], c.layouts[members[k]]);
      EXPECT_GE(j, 0.5) << t;
      sum += j, ++pairs;
    }
  EXPECT_GT(sum / pairs, 0.9);
  // Every layout survives LICA's JSON form unchanged (one code path for generated and real data).
  const Layout& l = c.layouts[5];
  const Layout back = layout_from_json(layout_to_json(l), "round trip");
  ASSERT_EQ(back.components.size(), l.components.size());
  for (std::size_t k = 0; k < l.components.size(); ++k) EXPECT_EQ(back.components[k].parent, l.components[k].parent);
}

TEST(DesignBenchFamilies, RearrangedSiblingsDifferInGeometryAndResizedOnesKeepTheirComponents) {
  auto sibling_geometry = [](double rearrange) {
    FamiliesOptions o;
    o.families = 40, o.rearrange = rearrange, o.resize_share = 0;
    nexp::Random rng(7);
    Corpus c;
    c.layouts = generate_families(o, rng);
    c.index();
    double sum = 0;
    int n = 0;
    for (const auto& [t, members] : c.by_template)
      for (std::size_t k = 1; k < members.size(); ++k) sum += geometry_similarity(c.layouts[members[0]], c.layouts[members[k]]), ++n;
    return sum / n;
  };
  const double copies = sibling_geometry(0), own = sibling_geometry(1);
  EXPECT_GT(copies, 0.75);
  EXPECT_LT(own, copies - 0.15);
  // Resized siblings (another canvas format, the template's components) make the aspect_adapt items.
  TaskSettings s;
  nexp::Random rng(2);
  const auto items = make_items("aspect_adapt", corpus(), s, rng);
  EXPECT_GT(items.size(), 10u);
  for (const auto& it : items) {
    const Layout &from = corpus().layouts[it.layouts[0]], &to = corpus().layouts[it.layouts[1]];
    EXPECT_EQ(from.template_id, to.template_id);
    EXPECT_NE(from.width / from.height, to.width / to.height);
    EXPECT_GE(it.target.size(), 2u);
  }
}

TEST(DesignBenchTasks, AspectAdaptByHand) {
  // A 1000 x 1000 canvas re-targeted to 2000 x 1000. A sits by the top-left corner; B is centred in x and
  // sits by the bottom; their left edges align. The target (a designer's re-flow) keeps each element's
  // size and anchor: A [200, 100, 400, 200], B [600, 400, 800, 400].
  Item it;
  it.id = "hand";
  it.input = {{"width", 2000}, {"height", 1000}, {"source_width", 1000}, {"source_height", 1000},
              {"elements", json::array({{{"id", "A"}, {"type", "TEXT"}, {"box", {100, 100, 400, 200}}},
                                         {{"id", "B"}, {"type", "IMAGE"}, {"box", {100, 400, 800, 400}}}})}};
  it.target = json::array({{{"id", "A"}, {"box", {200, 100, 400, 200}}}, {{"id", "B"}, {"box", {600, 400, 800, 400}}}});
  const std::vector<Item> items = {it};
  nexp::Random rng(1);
  auto metrics = [&](const json& a) { return score("aspect_adapt", items, {a}, corpus()).metrics; };
  // Proportional rescale: A [200, 100, 800, 200], B [200, 400, 1600, 400]: IoU 1/2 each, both stretched
  // 2x (|log 2|), the left edges still shared.
  const auto r = metrics(answer("rescale", "aspect_adapt", it, corpus(), TaskSettings{}, rng));
  EXPECT_NEAR(r.at("miou"), 0.5, 1e-12);
  EXPECT_NEAR(r.at("distortion"), std::log(2.0), 1e-12);
  EXPECT_NEAR(r.at("violations"), 0.0, 1e-12);
  EXPECT_NEAR(r.at("alignment_kept"), 1.0, 1e-12);
  // The anchor-preserving re-flow lands on the target, undistorted, but B's centre anchor breaks the
  // shared left edge.
  const auto f = metrics(answer("reflow", "aspect_adapt", it, corpus(), TaskSettings{}, rng));
  EXPECT_NEAR(f.at("miou"), 1.0, 1e-12);
  EXPECT_NEAR(f.at("distortion"), 0.0, 1e-12);
  EXPECT_NEAR(f.at("alignment_kept"), 0.0, 1e-12);
  // A pushed off the canvas: one of two elements violates; A dropped onto B: both do. Missing B: IoU 0.
  const json off = json::array({{{"id", "A"}, {"box", {1900, 100, 400, 200}}}, {{"id", "B"}, {"box", {600, 400, 800, 400}}}});
  EXPECT_NEAR(metrics(off).at("violations"), 0.5, 1e-12);
  const json onto = json::array({{{"id", "A"}, {"box", {700, 500, 400, 200}}}, {{"id", "B"}, {"box", {600, 400, 800, 400}}}});
  EXPECT_NEAR(metrics(onto).at("violations"), 1.0, 1e-12);
  const json half = json::array({{{"id", "A"}, {"box", {200, 100, 400, 200}}}});
  EXPECT_NEAR(metrics(half).at("miou"), 0.5, 1e-12);
}

TEST(DesignBenchTasks, ProportionalRescaleIsExactWhenTheAspectIsUnchanged) {
  Item it;
  it.input = {{"width", 2160}, {"height", 2700}, {"source_width", 1080}, {"source_height", 1350},
              {"elements", json::array({{{"id", "a"}, {"type", "TEXT"}, {"box", {10, 20, 300, 80}}},
                                        {{"id", "b"}, {"type", "IMAGE"}, {"box", {100, 400, 880, 500}}},
                                        {{"id", "c"}, {"type", "IMAGE"}, {"box", {-50, 1200, 300, 300}}}})}};
  it.target = json::array({{{"id", "a"}, {"box", {20, 40, 600, 160}}}, {{"id", "b"}, {"box", {200, 800, 1760, 1000}}},
                           {{"id", "c"}, {"box", {-100, 2400, 600, 600}}}});
  nexp::Random rng(1);
  const auto m = score("aspect_adapt", {it}, {answer("rescale", "aspect_adapt", it, corpus(), TaskSettings{}, rng)},
                       corpus()).metrics;
  EXPECT_NEAR(m.at("miou"), 1.0, 1e-12);
  EXPECT_NEAR(m.at("distortion"), 0.0, 1e-12);
  EXPECT_NEAR(m.at("violations"), 0.0, 1e-12);
}

TEST(DesignBenchTasks, OracleScoresTheMaximumOnEveryTask) {
  for (const auto& task : task_names()) EXPECT_NEAR(primary(task, "oracle"), 1.0, 1e-12) << task;
}

TEST(DesignBenchTasks, ChanceScoresItsExpectation) {
  // Uniform guesses: 1/classes; tau and ARI 0; F1 of a fair coin on balanced pairs 1/2; MRR over C = 20
  // candidates H_20 / 20. Tolerances ~4 standard errors of 300 items.
  double h20 = 0;
  for (int k = 1; k <= 20; ++k) h20 += 1.0 / k;
  const std::map<std::string, std::pair<double, double>> expect = {
      {"aspect_ratio", {1.0 / 6, 0.09}}, {"type", {1.0 / 3, 0.11}},  {"alignment", {1.0 / 7, 0.08}},
      {"overlap", {0.25, 0.1}},          {"layer_order", {0.0, 0.1}}, {"grouping", {0.0, 0.08}},
      {"sibling_matching", {0.5, 0.08}}, {"retrieval", {h20 / 20, 0.05}}, {"clustering", {0.0, 0.03}}};
  for (const auto& [task, e] : expect) EXPECT_NEAR(primary(task, "chance"), e.first, e.second) << task;
  for (const char* task : {"count", "detection", "intent_to_layout", "partial_completion", "aspect_adapt", "insertion"})
    EXPECT_LT(primary(task, "chance"), 0.2) << task;
}

TEST(DesignBenchTasks, NoisyFallsWithItsNoiseOnEveryTask) {
  for (const auto& task : task_names()) {
    double last = 2;
    for (double noise : {0.0, 0.3, 0.6, 1.0}) {
      const double v = primary(task, "noisy", noise, 200);
      EXPECT_LE(v, last + 0.02) << task << " at noise " << noise;
      if (noise == 0.0) {
        EXPECT_NEAR(v, 1.0, 1e-12) << task;
      }
      last = v;
    }
    EXPECT_LT(last, 0.9) << task << ": full noise should hurt";
  }
}

TEST(DesignBenchTasks, UnparseableAnswersAreWrongAndCounted) {
  TaskSettings s;
  s.items = 20;
  nexp::Random rng(1);
  for (const auto& task : task_names()) {
    const auto items = make_items(task, corpus(), s, rng);
    std::vector<json> answers(items.size(), json("garbage {"));
    const auto r = score(task, items, answers, corpus());
    EXPECT_EQ(r.parse_failures, static_cast<int>(items.size())) << task;
    EXPECT_LE(r.metrics.at(primary_metric(task)), 0.05) << task;
  }
}

TEST(DesignBenchTasks, ModelsAreRefusedOnTasksTheyCannotAnswer) {
  EXPECT_FALSE(model_answers("font_jaccard", "detection"));
  EXPECT_TRUE(model_answers("font_jaccard", "clustering"));
  EXPECT_THROW(answer("grid", "count", Item{}, corpus(), TaskSettings{}, *std::make_unique<nexp::Random>(1)),
               nexp::ConfigError);
}

TEST(DesignBenchTasks, LargestEmptyRectangleOfAHalfFilledCanvas) {
  const Box r = largest_empty_rectangle({{0, 0, 48, 24}}, 48, 48);  // the top half is taken
  EXPECT_DOUBLE_EQ(r.y, 24);
  EXPECT_DOUBLE_EQ(r.w * r.h, 48 * 24);
}

TEST(DesignBenchVlm, RepliesAreParsedThroughReasoningAndFences) {
  EXPECT_EQ(parse_reply("<think>hmm</think>```json\n{\"answer\": \"4:5\"}\n```"), json("4:5"));
  EXPECT_EQ(parse_reply("{\"answer\": [1, 2]}"), json({1, 2}));
  EXPECT_TRUE(parse_reply("the answer is 4:5").is_null());
  EXPECT_TRUE(parse_reply("{\"other\": 1}").is_null());
  for (const auto& t : task_names()) EXPECT_TRUE(answer_schema(t).contains("properties")) << t;
}
