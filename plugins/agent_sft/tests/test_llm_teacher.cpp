// The LLM teacher (llm_teacher.hpp): against a scripted server, what it sends (the transcript, a
// grammar of exactly the admissible actions, temperature 0, a seed) and what it does with an answer
// outside them; against the local random-weight model server (scripts/llm-local, started by the
// llm_server fixture; skipped without it), a LinkLookup episode whose every teacher action is
// admissible, every call logged.
#include <gtest/gtest.h>

#include <algorithm>

#include "../../../tests/llm/support.hpp"
#include "llm_teacher.hpp"

namespace agent_sft {
namespace {

using nlohmann::json;

TaskSpec link_task() { return {World::LinkLookup, false, 0, 3}; }

TEST(LlmTeacherFake, SendsTheTranscriptAndAGrammarOfTheAdmissibleActions) {
  Live live = start(link_task());
  advance(live, 0, false);
  const auto actions = live.env->admissible();
  std::string body;
  nexp::test::FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    body = req.body;
    res.set_content(nexp::test::completion_body(actions.back() + "\n"), "application/json");
  });
  nexp::llm::Client client(server.endpoint());
  nexp::Random rng(9);
  EXPECT_EQ(llm_teacher(client)(*live.env, live.episode, rng), actions.back());
  const json sent = json::parse(body);
  EXPECT_EQ(sent["grammar"], action_grammar(actions));
  EXPECT_EQ(sent["temperature"], 0.0);
  EXPECT_TRUE(sent["seed"].is_number_integer());
  EXPECT_GE(sent["seed"].get<std::int64_t>(), 0);
  EXPECT_LT(sent["seed"].get<std::int64_t>(), std::int64_t{1} << 31);  // servers refuse wider seeds
  const std::string prompt = sent["messages"][1]["content"].is_string()
                                 ? sent["messages"][1]["content"].get<std::string>()
                                 : sent["messages"][1]["content"][0]["text"].get<std::string>();
  EXPECT_EQ(prompt.rfind(live.episode.intro + "\n> " + live.episode.actions()[0] + "\n" + live.episode.observations[0], 0),
            0u) << prompt;
  for (const auto& a : actions) EXPECT_NE(prompt.find("\n- " + a), std::string::npos) << a;
  EXPECT_EQ(action_grammar({"say \"hi\"", "a\\b"}), "root ::= \"say \\\"hi\\\"\" | \"a\\\\b\"");
}

TEST(LlmTeacherFake, AnAnswerOutsideTheActionsFallsBackOrIsAClearError) {
  Live live = start(link_task());
  nexp::test::FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content(nexp::test::completion_body("dance"), "application/json");
  });
  nexp::llm::Client client(server.endpoint());
  nexp::Random rng(1);
  const std::string planned = live.env->plan();
  EXPECT_EQ(llm_teacher(client, planner(Teacher(0)))(*live.env, live.episode, rng), planned);
  try {
    llm_teacher(client)(*live.env, live.episode, rng);
    ADD_FAILURE() << "an answer outside the admissible actions was accepted";
  } catch (const nexp::ConfigError& e) {
    const std::string m = e.what();
    for (const std::string& part : std::vector<std::string>{"'dance'", "admissible", "grammar", server.base_url(), planned})
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  }
}

TEST(LlmTeacherLocal, EveryActionIsAdmissibleAndEveryCallIsLogged) {
  NEXP_NEED_LOCAL_SERVER(url);
  nexp::llm::Endpoint e;
  e.name = "local", e.base_url = url, e.model = "nexp-tiny-random.gguf", e.timeout_s = 120;
  std::vector<nexp::llm::CallRecord> calls;
  nexp::llm::ClientHooks hooks;  // no cache: every call reaches the server
  hooks.on_call = [&](const nexp::llm::CallRecord& r) { calls.push_back(r); };
  nexp::llm::Client client(e, hooks);
  const TeacherFn teacher = llm_teacher(client);  // no fallback: an answer outside the actions throws
  Live live = start(link_task());
  nexp::Random rng(4);
  int steps = 0;
  for (; steps < 5 && !live.episode.done; ++steps) {
    const auto actions = live.env->admissible();
    const std::string a = teacher(*live.env, live.episode, rng);
    const auto it = std::find(actions.begin(), actions.end(), a);
    ASSERT_NE(it, actions.end()) << "'" << a << "' is not admissible";
    advance(live, static_cast<int>(it - actions.begin()), true);
  }
  EXPECT_EQ(live.episode.labelled(), steps);
  ASSERT_EQ(static_cast<int>(calls.size()), steps);
  for (const auto& c : calls) {
    EXPECT_EQ(c.status, "ok");
    EXPECT_EQ(c.endpoint, "local");
    EXPECT_FALSE(c.cached);
    EXPECT_TRUE(c.seed.has_value());
    EXPECT_GT(c.usage.prompt_tokens, 0);
    EXPECT_GT(c.usage.completion_tokens, 0);
    EXPECT_EQ(c.request_hash.size(), 64u);
  }
}

}  // namespace
}  // namespace agent_sft
