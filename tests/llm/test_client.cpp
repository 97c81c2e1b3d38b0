// The client against a scripted server in the test process: retries, Retry-After, timeouts, the
// concurrency limit, n samples as seeded calls, the cache, request bodies and the key.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
using json = nlohmann::json;

namespace {

llm::Request ask(const std::string& text, std::optional<std::int64_t> seed = std::nullopt) {
  llm::Request r;
  r.messages = {llm::Message::user(text)};
  r.seed = seed;
  return r;
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(LlmClient, RetriesAServerThatFailsTwiceWith503) {
  std::atomic<int> calls{0};
  FakeServer server([&](const httplib::Request&, httplib::Response& res) {
    if (++calls <= 2) {
      res.status = 503;
      res.set_content(R"({"error":{"message":"overloaded"}})", "application/json");
    } else {
      res.set_content(completion_body("fine"), "application/json");
    }
  });
  std::vector<llm::CallRecord> log;
  llm::Client client(server.endpoint(), {nullptr, [&](const llm::CallRecord& r) { log.push_back(r); }, nullptr});
  const llm::Response r = client.chat(ask("hello"));
  EXPECT_EQ(r.text(), "fine");
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(server.requests.load(), 3);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].attempts, 3);
  EXPECT_EQ(log[0].status, "ok");
}

TEST(LlmClient, HonoursRetryAfter) {
  std::atomic<int> calls{0};
  FakeServer server([&](const httplib::Request&, httplib::Response& res) {
    if (++calls == 1) {
      res.status = 429;
      res.set_header("Retry-After", "1");
    } else {
      res.set_content(completion_body("ok"), "application/json");
    }
  });
  llm::Client client(server.endpoint());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(client.chat(ask("x")).text(), "ok");
  EXPECT_GE(seconds(t0), 0.95) << "the back-off alone is 0.01 s; only Retry-After makes it wait a second";
}

TEST(LlmClient, GivesUpAfterMaxRetriesAndSaysWhy) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content(R"({"error":{"message":"upstream down"}})", "application/json");
  });
  llm::Client client(server.endpoint(10, 2));
  try {
    client.chat(ask("x"));
    FAIL() << "expected an LlmError";
  } catch (const llm::LlmError& e) {
    EXPECT_EQ(e.http_status(), 502);
    EXPECT_NE(std::string(e.what()).find("upstream down"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 attempts"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server.requests.load(), 3);
}

TEST(LlmClient, DoesNotRetryARefusedRequest) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_content(R"({"error":{"message":"bad key"}})", "application/json");
  });
  llm::Client client(server.endpoint());
  EXPECT_THROW(client.chat(ask("x")), llm::LlmError);
  EXPECT_EQ(server.requests.load(), 1);
}

TEST(LlmClient, TimeoutsFire) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content(completion_body("late"), "application/json");
  });
  llm::Client client(server.endpoint(0.2, 1));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    client.chat(ask("x"));
    FAIL() << "expected a timeout";
  } catch (const llm::LlmError& e) {
    EXPECT_EQ(e.http_status(), 0);
    EXPECT_NE(std::string(e.what()).find("timeout of 0.2 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(seconds(t0), 1.4) << "two attempts of 0.2 s and a short back-off, not the server's 1.5 s";
  EXPECT_EQ(server.requests.load(), 2);
}

TEST(LlmClient, ConnectionRefusedIsRetriedThenReported) {
  llm::Endpoint e;
  {
    FakeServer gone([](const httplib::Request&, httplib::Response&) {});
    e = gone.endpoint(2, 2);
  }  // the port is closed now
  llm::Client client(e);
  try {
    client.chat(ask("x"));
    FAIL() << "expected a connection error";
  } catch (const llm::LlmError& err) {
    EXPECT_EQ(err.http_status(), 0);
    EXPECT_NE(std::string(err.what()).find("3 attempts"), std::string::npos) << err.what();
  }
}

TEST(LlmClient, KeepsToTheConcurrencyLimit) {
  std::mutex m;
  int now = 0, peak = 0;
  FakeServer server([&](const httplib::Request&, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(m);
      peak = std::max(peak, ++now);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    {
      std::lock_guard<std::mutex> lock(m);
      --now;
    }
    res.set_content(completion_body("x"), "application/json");
  });
  llm::Endpoint e = server.endpoint();
  e.max_concurrency = 3;
  llm::Client client(e);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 9; ++i)
    threads.emplace_back([&] { ok += client.chat(ask("x")).text() == "x"; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 9);
  EXPECT_EQ(peak, 3) << "9 requests of 0.1 s through 3 slots overlap exactly 3 at a time";
}

TEST(LlmClient, DrawsNSamplesAsSeededCallsWhenTheServerRefusesN) {
  std::mutex m;
  std::vector<json> bodies;
  FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    json body = json::parse(req.body);
    {
      std::lock_guard<std::mutex> lock(m);
      bodies.push_back(body);
    }
    if (body.value("n", 1) != 1) {
      res.status = 400;
      res.set_content(R"({"error":{"message":"Only one completion choice is allowed"}})", "application/json");
      return;
    }
    res.set_content(completion_body("seed " + std::to_string(body["seed"].get<int>()), 5, 2), "application/json");
  });
  llm::Client client(server.endpoint());
  llm::Request r = ask("x", 40);
  r.n = 3;
  const llm::Response a = client.chat(r);
  ASSERT_EQ(a.choices.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.choices[i].text, "seed " + std::to_string(40 + i));
    EXPECT_EQ(a.choices[i].seed, 40 + i);
  }
  EXPECT_EQ(a.usage.prompt_tokens, 15);
  EXPECT_EQ(a.usage.completion_tokens, 6);
  ASSERT_EQ(bodies.size(), 4u) << "one refused call with n = 3, then three seeded calls";
  client.chat(r);
  EXPECT_EQ(bodies.size(), 7u) << "the refusal is remembered: no second n = 3 attempt";
}

TEST(LlmClient, SendsTheKeyOnlyInTheAuthorizationHeader) {
  std::string auth, body;
  FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    auth = req.get_header_value("Authorization");
    body = req.body;
    res.set_content(completion_body("x"), "application/json");
  });
  ::setenv("NEXP_TEST_LLM_KEY", "sk-test-0123456789", 1);
  llm::Endpoint e = server.endpoint();
  e.api_key_env = "NEXP_TEST_LLM_KEY";
  llm::Client(e).chat(ask("x"));
  EXPECT_EQ(auth, "Bearer sk-test-0123456789");
  EXPECT_EQ(body.find("sk-test"), std::string::npos);
  e.api_key_env = "NEXP_TEST_LLM_KEY_UNSET";
  ::unsetenv("NEXP_TEST_LLM_KEY_UNSET");
  EXPECT_THROW(llm::Client{e}, ConfigError);
}

TEST(LlmClient, CachesSeededRequestsOnly) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content(completion_body("answer", 10, 4), "application/json");
  });
  char tmpl[] = "/tmp/nexp-llm-cache-XXXXXX";
  auto cache = std::make_shared<llm::ResponseCache>(::mkdtemp(tmpl));
  llm::Endpoint e = server.endpoint();
  e.price_per_1k_input = 1.0, e.price_per_1k_output = 2.0;
  llm::Client client(e, {cache, nullptr, nullptr});
  const llm::Response first = client.chat(ask("q", 7));
  EXPECT_FALSE(first.cached);
  EXPECT_DOUBLE_EQ(first.cost, 10 / 1000.0 * 1.0 + 4 / 1000.0 * 2.0);
  const llm::Response again = client.chat(ask("q", 7));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.text(), "answer");
  EXPECT_EQ(again.cost, 0.0);
  EXPECT_EQ(again.usage.total(), 14) << "a cached answer still reports the tokens it holds";
  EXPECT_EQ(server.requests.load(), 1);
  client.chat(ask("q", 8));  // another seed: another request
  client.chat(ask("q"));     // unseeded: never cached
  client.chat(ask("q"));
  EXPECT_EQ(server.requests.load(), 4);
  std::filesystem::remove_all(cache->folder());
}

TEST(LlmClient, RequestBodiesFollowTheChatCompletionsFormat) {
  llm::Endpoint e;
  e.model = "m";
  llm::Request r;
  r.messages = {llm::Message::system("be brief"),
                llm::Message::user("what is this?").image(llm::image_data_url("\x89PNG", "image/png"))};
  r.temperature = 0.5, r.top_p = 0.9, r.max_tokens = 12;
  r.stop = {"\n"};
  r.logprobs = true, r.top_logprobs = 2;
  r.json_schema = R"({"type":"object","properties":{"a":{"type":"string"}}})";
  const json b = json::parse(llm::Client::request_body(e, r, 1, 3));
  EXPECT_EQ(b["model"], "m");
  EXPECT_EQ(b["stream"], false);
  EXPECT_EQ(b["messages"][0]["content"], "be brief");
  EXPECT_EQ(b["messages"][1]["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw==");
  EXPECT_EQ(b["seed"], 3);
  EXPECT_FALSE(b.contains("n"));
  EXPECT_EQ(b["top_logprobs"], 2);
  EXPECT_EQ(b["response_format"]["json_schema"]["schema"]["properties"]["a"]["type"], "string");
  r.json_schema = "not json";
  EXPECT_THROW(llm::Client::request_body(e, r, 1, 3), ConfigError);
}
