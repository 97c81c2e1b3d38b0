// The VLM path: a scripted server in the test process checks what nexp sends (the PNG as a data URL,
// the JSON schema) and returns malformed answers; the real local model server (scripts/llm-local, a
// random-weight text model) runs the text-only task end to end and refuses images with a clear error.
#include <gtest/gtest.h>

#include <nexp/llm.hpp>
#include <nlohmann/json.hpp>

#include "../../../tests/llm/support.hpp"
#include "../families.hpp"
#include "../render.hpp"
#include "../vlm.hpp"

using namespace design_bench;
using nlohmann::json;

namespace {

Corpus small_corpus() {
  FamiliesOptions o;
  o.families = 6;
  nexp::Random rng(2);
  Corpus c;
  c.layouts = generate_families(o, rng);
  c.index();
  return c;
}

std::vector<json> run_vlm(nexp::llm::Client& client, const std::string& task, const Corpus& c,
                          std::vector<Item>& items) {
  TaskSettings s;
  s.items = 4;
  nexp::Random rng(1);
  items = make_items(task, c, s, rng);
  const auto dir = std::filesystem::temp_directory_path() / ("nexp-design-bench-png-" + std::to_string(::getpid()));
  VlmModel vlm(client, dir, 0);
  std::vector<json> out;
  try {
    for (const auto& it : items) out.push_back(vlm.answer(task, it, c));
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  return out;
}

}  // namespace

TEST(DesignBenchVlmFake, SendsThePngAndSchemaAndCountsMalformedAnswers) {
  std::atomic<int> call{0};
  std::string first_body;
  nexp::test::FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    if (call++ == 0) first_body = req.body;
    // Alternate: reasoning and a fenced valid answer; prose; JSON of the wrong shape; a valid answer.
    const char* replies[] = {"<think>square-ish</think>```json\n{\"answer\": \"4:5\"}\n```", "It is 4:5.",
                             "{\"answer\": 7}", "{\"answer\": \"1:1\"}"};
    res.set_content(nexp::test::completion_body(replies[(call - 1) % 4]), "application/json");
  });
  nexp::llm::Client client(server.endpoint());
  const Corpus c = small_corpus();
  std::vector<Item> items;
  const auto answers = run_vlm(client, "aspect_ratio", c, items);
  ASSERT_EQ(answers.size(), 4u);
  const json body = json::parse(first_body);
  const auto& parts = body["messages"][1]["content"];
  bool png = false;
  for (const auto& p : parts)
    if (p["type"] == "image_url")
      png = p["image_url"]["url"].get<std::string>().rfind("data:image/png;base64,iVBORw0KGgo", 0) == 0;
  EXPECT_TRUE(png) << first_body.substr(0, 300);
  EXPECT_EQ(body["response_format"]["type"], "json_schema");
  const auto scored = score("aspect_ratio", items, answers, c);
  EXPECT_EQ(scored.parse_failures, 2);  // the prose and the number
  EXPECT_EQ(answers[0], json("4:5"));
}

TEST(DesignBenchVlmLocal, TextOnlyTaskRunsEndToEndAndImagesAreRefusedClearly) {
  NEXP_NEED_LOCAL_SERVER(url);
  nexp::llm::Endpoint e;
  e.name = "local", e.base_url = url, e.model = "nexp-tiny-random.gguf", e.timeout_s = 120;
  nexp::llm::Client client(e);
  const Corpus c = small_corpus();
  std::vector<Item> items;
  // intent_to_layout shows no image: the random model's schema-constrained JSON reaches the scorer.
  const auto answers = run_vlm(client, "intent_to_layout", c, items);
  const auto scored = score("intent_to_layout", items, answers, c);
  EXPECT_EQ(scored.item_scores.size(), items.size());
  EXPECT_GE(scored.metrics.at("miou"), 0.0);
  EXPECT_LE(scored.parse_failures, static_cast<int>(items.size()));
  // This model reads text only: an image task fails with the server's reason, not a silent zero.
  try {
    run_vlm(client, "count", c, items);
    ADD_FAILURE() << "the text-only server accepted an image";
  } catch (const nexp::llm::LlmError& err) {
    EXPECT_EQ(err.http_status(), 400);
    EXPECT_NE(std::string(err.what()).find("image"), std::string::npos) << err.what();
  }
}
