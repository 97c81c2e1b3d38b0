// The client against a real model server (scripts/llm-local: llama.cpp through node-llama-cpp,
// serving a tiny random-weight model): seeds, temperature, grammars, schemas, logprobs, usage.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using json = nlohmann::json;

namespace {

llm::Endpoint local(const std::string& url) {
  llm::Endpoint e;
  e.name = "local", e.base_url = url, e.model = "nexp-tiny-random.gguf";
  e.timeout_s = 60, e.max_concurrency = 4;
  return e;
}

llm::Request question(double temperature, std::optional<std::int64_t> seed, int max_tokens = 8) {
  llm::Request r;
  r.messages = {llm::Message::system("You answer multiple-choice questions."),
                llm::Message::user("Which is a prime number? A) 4 B) 6 C) 7 D) 9")};
  r.temperature = temperature;
  r.seed = seed;
  r.max_tokens = max_tokens;
  return r;
}

}  // namespace

TEST(LlmLocal, ListsItsModel) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  EXPECT_EQ(client.models(), std::vector<std::string>{"nexp-tiny-random.gguf"});
}

TEST(LlmLocal, SeededCallsAreReproducible) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  const llm::Response a = client.chat(question(1.0, 123, 16));
  const llm::Response b = client.chat(question(1.0, 123, 16));
  EXPECT_EQ(a.text(), b.text());
  EXPECT_FALSE(a.text().empty());
  EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
}

TEST(LlmLocal, TemperatureZeroIsDeterministicAndOneVaries) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  std::set<std::string> greedy, sampled;
  for (int seed = 0; seed < 20; ++seed) {
    if (seed < 5) greedy.insert(client.chat(question(0.0, seed)).text());
    sampled.insert(client.chat(question(1.0, seed)).text());
  }
  EXPECT_EQ(greedy.size(), 1u) << "temperature 0 is greedy decoding: the seed must not matter";
  EXPECT_GE(sampled.size(), 10u) << "20 seeds at temperature 1 from a random-weight model over a 500-token "
                                    "vocabulary give many distinct 8-token answers";
}

TEST(LlmLocal, AGrammarRestrictsAnswersToAToD) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  std::set<std::string> seen;
  for (int seed = 0; seed < 20; ++seed) {
    llm::Request r = question(1.5, seed);
    r.grammar = "root ::= [A-D]";
    const llm::Response a = client.chat(r);
    EXPECT_TRUE(a.text() == "A" || a.text() == "B" || a.text() == "C" || a.text() == "D") << "'" << a.text() << "'";
    EXPECT_EQ(a.usage.completion_tokens, 1);
    seen.insert(a.text());
  }
  EXPECT_GE(seen.size(), 2u) << "the grammar restricts the sampler, it does not fix the answer";
}

TEST(LlmLocal, AJsonSchemaConstrainsTheAnswer) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  for (int seed = 0; seed < 3; ++seed) {
    llm::Request r = question(1.0, seed, 40);
    r.json_schema = R"({"type":"object","properties":{"answer":{"enum":["A","B","C","D"]}},"required":["answer"]})";
    const json j = json::parse(client.chat(r).text());
    EXPECT_TRUE(j["answer"] == "A" || j["answer"] == "B" || j["answer"] == "C" || j["answer"] == "D") << j.dump();
  }
}

TEST(LlmLocal, UsageLogprobsAndFinishReasonComeFromTheModel) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  llm::Request r = question(1.0, 9, 5);
  r.logprobs = true;
  r.top_logprobs = 3;
  const llm::Response a = client.chat(r);
  EXPECT_GT(a.usage.prompt_tokens, 10);
  EXPECT_LE(a.usage.completion_tokens, 5);
  ASSERT_EQ(a.choices[0].logprobs.size(), static_cast<size_t>(a.usage.completion_tokens));
  for (const auto& t : a.choices[0].logprobs) {
    EXPECT_LE(t.logprob, 0.0);
    ASSERT_EQ(t.top.size(), 3u);
    EXPECT_GE(t.top[0].second + 1e-9, t.logprob) << "the most likely alternative is at least as likely";
  }
  if (a.usage.completion_tokens == 5) {
    EXPECT_EQ(a.choices[0].finish_reason, "length");
  }
  EXPECT_GE(a.server_s, 0.0) << "the server reports its own time (Server-Timing)";
}

TEST(LlmLocal, NSamplesAreDrawnAsSeededCalls) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Client client(local(url));
  llm::Request r = question(1.0, 100);
  r.n = 4;
  const llm::Response a = client.chat(r);
  ASSERT_EQ(a.choices.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.choices[i].seed, 100 + i);
    EXPECT_EQ(a.choices[i].text, client.chat(question(1.0, 100 + i)).text()) << "sample " << i << " is seed " << 100 + i;
  }
}

TEST(LlmLocal, SixteenConcurrentRequestsSucceed) {
  NEXP_NEED_LOCAL_SERVER(url);
  llm::Endpoint e = local(url);
  e.max_concurrency = 16;
  llm::Client client(e);
  std::vector<std::string> answers(16), errors;
  std::mutex m;
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      try {
        answers[i] = client.chat(question(1.0, i, 4)).text();
      } catch (const std::exception& ex) {
        std::lock_guard<std::mutex> lock(m);
        errors.push_back(ex.what());
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  for (int i = 0; i < 16; i += 5)
    EXPECT_EQ(answers[i], client.chat(question(1.0, i, 4)).text()) << "concurrency does not change a seeded answer";
}
