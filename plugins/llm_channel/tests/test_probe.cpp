// The real path against the local model server (scripts/llm-local; CTest fixture llm_server, label
// llm): seeds, temperature, accounting and replay. Skips, saying why, when the server is not running;
// the two checks that need no server run always.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <nexp/error.hpp>
#include <nexp/llm.hpp>

#include "operators.hpp"
#include "probe.hpp"

using namespace llm_channel;
namespace llm = nexp::llm;

namespace {

std::string local_url() {
  const char* state = std::getenv("NEXP_LLM_LOCAL_STATE");
  if (!state) return "";
  std::ifstream in(std::string(state) + "/port");
  int port = 0;
  return (in >> port) && port > 0 ? "http://127.0.0.1:" + std::to_string(port) + "/v1" : "";
}

#define NEED_SERVER(url)                                                                                  \
  const std::string url = local_url();                                                                    \
  if (url.empty())                                                                                        \
  GTEST_SKIP() << "the local model server is not running (scripts/llm-local start failed or npm is "      \
                  "unavailable; see the test llm.server_start), so the real path is not exercised"

llm::Endpoint endpoint(const std::string& url) {
  llm::Endpoint e;
  e.name = "local", e.base_url = url, e.model = "nexp-tiny-random.gguf", e.timeout_s = 60;
  return e;
}

std::vector<AnswerId> answers(llm::Client& client, double temperature, std::int64_t seed, int n) {
  LlmChannel ch({&client}, {1}, make_questions(1, 3)[0], temperature, seed);
  std::vector<AnswerId> out;
  for (int i = 0; i < n; ++i) out.push_back(ch.generate(0));
  return out;
}

double entropy(const std::vector<AnswerId>& a) {
  std::map<AnswerId, int> counts;
  for (AnswerId x : a) ++counts[x];
  double h = 0;
  for (const auto& [x, c] : counts) h -= c / double(a.size()) * std::log(c / double(a.size()));
  return h;
}

}  // namespace

TEST(ProbeLocal, SameSeedSameAnswersAndGreedyIsOneAnswer) {
  NEED_SERVER(url);
  llm::Client client(endpoint(url));
  EXPECT_EQ(answers(client, 1.0, 500, 6), answers(client, 1.0, 500, 6));
  const auto greedy = answers(client, 0.0, 700, 6);
  EXPECT_EQ(std::set<AnswerId>(greedy.begin(), greedy.end()).size(), 1u);
}

TEST(ProbeLocal, EntropyRisesWithTemperature) {
  NEED_SERVER(url);
  llm::Client client(endpoint(url));
  const double cold = entropy(answers(client, 0.2, 900, 24)), hot = entropy(answers(client, 2.0, 900, 24));
  EXPECT_GT(hot, cold + 0.2) << "cold " << cold << " hot " << hot;
}

TEST(ProbeLocal, CallsAndTokensEqualTheServersUsageAndReplayEqualsLive) {
  NEED_SERVER(url);
  const auto cache_dir = std::filesystem::temp_directory_path() / ("llm_channel_probe_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache_dir);
  auto run = [&](std::vector<llm::CallRecord>& log) {
    llm::ClientHooks hooks;
    hooks.cache = std::make_shared<llm::ResponseCache>(cache_dir.string());
    hooks.on_call = [&log](const llm::CallRecord& r) { log.push_back(r); };
    llm::Client client(endpoint(url), hooks);
    LlmChannel ch({&client}, {1}, make_questions(1, 5)[0], 1.0, 4242);
    const auto out = harq(ch, 0, 3, false);
    const auto voted = combine(ch, 0, 3, Combiner::Plurality);
    return std::tuple(out.answer, voted.answer, ch.usage().calls, ch.tokens(), ch.cached());
  };
  std::vector<llm::CallRecord> live_log, replay_log;
  const auto live = run(live_log), replay = run(replay_log);
  std::int64_t served = 0;
  for (const auto& r : live_log) {
    served += r.usage.total();
    EXPECT_EQ(r.status, "ok");
  }
  EXPECT_EQ(static_cast<int>(live_log.size()), std::get<2>(live));
  EXPECT_EQ(served, std::get<3>(live));
  EXPECT_EQ(std::get<4>(live), 0);
  // The same calls again: all from the cache, the same answers, the same accounting.
  EXPECT_EQ(std::get<0>(replay), std::get<0>(live));
  EXPECT_EQ(std::get<1>(replay), std::get<1>(live));
  EXPECT_EQ(std::get<2>(replay), std::get<2>(live));
  EXPECT_EQ(std::get<3>(replay), std::get<3>(live));
  EXPECT_EQ(std::get<4>(replay), std::get<2>(live));
  std::filesystem::remove_all(cache_dir);
}

TEST(Probe, NoEndpointMeansNoCall) {
  ProbeOptions o;  // endpoints empty: refused before any client exists
  EXPECT_THROW(check_probe_options(o), nexp::ConfigError);
  o.endpoints = {"local"};
  EXPECT_NO_THROW(check_probe_options(o));
  o.arms = {"plurality/m7/n5"};
  EXPECT_THROW(check_probe_options(o), nexp::ConfigError);
}

TEST(Probe, ADeadServerIsAClearError) {
  llm::Endpoint e = endpoint("http://127.0.0.1:9/v1");  // the discard port: nothing listens
  e.max_retries = 0, e.timeout_s = 2;
  llm::Client client(e);
  LlmChannel ch({&client}, {1}, make_questions(1, 1)[0], 1.0, 1);
  try {
    ch.generate(0);
    ADD_FAILURE() << "a call to a dead server returned";
  } catch (const llm::LlmError& err) {
    EXPECT_NE(std::string(err.what()).find("127.0.0.1:9"), std::string::npos) << err.what();
    EXPECT_EQ(err.http_status(), 0);
  }
  EXPECT_EQ(ch.usage().calls, 0);  // nothing is charged for a call that never answered
}
