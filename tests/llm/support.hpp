#pragma once
// Helpers of the language-model tests: a scriptable HTTP server in the test process, and the
// address of the real local model server (scripts/llm-local) when the test fixture started it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/llm.hpp"

namespace nexp::test {

// An OpenAI-style chat.completion body.
inline std::string completion_body(const std::string& text, int prompt_tokens = 7, int completion_tokens = 3) {
  nlohmann::json j{{"id", "chatcmpl-test"}, {"object", "chat.completion"}, {"model", "fake"},
                   {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}},
                                 {"finish_reason", "stop"}}}},
                   {"usage", {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens},
                              {"total_tokens", prompt_tokens + completion_tokens}}}};
  return j.dump();
}

// An HTTP server on 127.0.0.1 (a free port), served from a thread of the test: add handlers to
// `routes`, then start(). stop() (also on destruction) returns once no handler runs any more.
class LoopbackServer {
 public:
  httplib::Server routes;
  void start() {
    port_ = routes.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { routes.listen_after_bind(); });
    while (!routes.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void stop() {
    if (!thread_.joinable()) return;
    routes.stop();
    thread_.join();
  }
  ~LoopbackServer() { stop(); }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::thread thread_;
};

// A server on 127.0.0.1 (a free port) whose POST /v1/chat/completions runs `handler`.
class FakeServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  explicit FakeServer(Handler handler) {
    server_.routes.Post("/v1/chat/completions", [this, handler](const httplib::Request& req, httplib::Response& res) {
      ++requests;
      handler(req, res);
    });
    server_.routes.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"fake","object":"model"}]})", "application/json");
    });
    server_.start();
  }
  ~FakeServer() { server_.stop(); }
  std::string base_url() const { return server_.origin() + "/v1"; }
  llm::Endpoint endpoint(double timeout_s = 10, int retries = 4) const {
    llm::Endpoint e;
    e.name = "fake", e.base_url = base_url(), e.model = "fake", e.timeout_s = timeout_s, e.max_retries = retries;
    e.backoff_s = 0.01;
    return e;
  }
  std::atomic<int> requests{0};

 private:
  LoopbackServer server_;
};

// The base URL of the server scripts/llm-local started for these tests, or "" (then the caller skips).
inline std::string local_server_url() {
  const char* state = std::getenv("NEXP_LLM_LOCAL_STATE");
  if (!state) return "";
  std::ifstream in(std::string(state) + "/port");
  int port = 0;
  if (!(in >> port) || port <= 0) return "";
  return "http://127.0.0.1:" + std::to_string(port) + "/v1";
}

#define NEXP_NEED_LOCAL_SERVER(url)                                                                          \
  const std::string url = ::nexp::test::local_server_url();                                                 \
  if (url.empty())                                                                                           \
  GTEST_SKIP() << "the local model server is not running: scripts/llm-local start failed or npm is "         \
                  "unavailable (see the output of the test llm.server_start)"

}  // namespace nexp::test
