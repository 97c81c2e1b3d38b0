#pragma once
// A client for OpenAI-compatible chat-completions endpoints (hosted APIs, vLLM, llama.cpp's server,
// Ollama, scripts/llm-local), written once for every method that evaluates or drives language models.
//
// A method asks its context: `nexp::llm::Client& lm = ctx.llm("judge");` for an endpoint that the
// config's `llm:` section names. Nothing is ever called unless the config names an endpoint.
//
//   nexp::llm::Request r;
//   r.messages = {nexp::llm::Message::system("Answer with one letter."), nexp::llm::Message::user(q)};
//   r.grammar = "root ::= [A-D]";  r.seed = ctx.seed();  r.temperature = 0.7;
//   nexp::llm::Response a = lm.chat(r);   // a.text(), a.usage, a.cost, a.cached
//
// The client is thread-safe: at most `max_concurrency` requests of an endpoint are in flight at once;
// the others wait. Failed requests (connection errors, timeouts, HTTP 429 and 5xx) are retried with
// exponential back-off and jitter, honouring the server's Retry-After. Within a run, every call is
// appended to artifacts/llm_calls.jsonl, and seeded requests are answered from a response cache
// when the same request was answered before (see README, "Language models").
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nexp/error.hpp"
#include "nexp/export.hpp"

namespace spdlog {
class logger;
}

namespace nexp::llm {

// One endpoint: an entry of the config's `llm.endpoints` list.
struct NEXP_API Endpoint {
  std::string name;          // what methods ask for: ctx.llm(name)
  std::string base_url;      // up to and including /v1, e.g. http://127.0.0.1:8080/v1
  std::string model;         // the model the server is asked for
  std::string api_key_env;   // the environment variable holding the key; empty: no key sent
  double price_per_1k_input = 0;   // currency units per 1000 prompt tokens
  double price_per_1k_output = 0;  // per 1000 completion tokens
  int max_concurrency = 4;   // requests in flight at once
  double timeout_s = 120;    // for one HTTP attempt (connect, send, wait for the answer)
  int max_retries = 4;       // further attempts after a failed one
  double backoff_s = 0.5;    // first back-off; doubles per attempt, with jitter, capped at 30 s
};

// A chat message. Images (for vision models) travel as data URLs or http(s) URLs.
struct NEXP_API Message {
  std::string role;  // system, user, assistant, tool
  std::string text;
  std::vector<std::string> images;

  static Message system(std::string text) { return {"system", std::move(text), {}}; }
  static Message user(std::string text) { return {"user", std::move(text), {}}; }
  static Message assistant(std::string text) { return {"assistant", std::move(text), {}}; }
  Message& image(std::string url) {
    images.push_back(std::move(url));
    return *this;
  }
};

// "data:<mime>;base64,..." of raw bytes, and of a file (the type from its extension: png, jpg, gif, webp).
NEXP_API std::string image_data_url(const std::string& bytes, const std::string& mime_type);
NEXP_API std::string image_data_url_from_file(const std::string& path);

struct NEXP_API Request {
  std::vector<Message> messages;
  std::optional<double> temperature;  // unset: the server's default
  std::optional<double> top_p;
  std::optional<int> max_tokens;
  std::vector<std::string> stop;
  std::optional<std::int64_t> seed;   // a seeded request is reproducible, hence cacheable
  int n = 1;                          // samples; when the server refuses n > 1 they are drawn as n
                                      // calls seeded seed, seed+1, ... (seed 0 when unset)
  bool logprobs = false;
  int top_logprobs = 0;
  std::string json_schema;  // JSON text of a schema: the answer must validate (response_format)
  std::string grammar;      // a GBNF grammar (llama.cpp, vLLM): the answer must match it
  std::string extra_json;   // a JSON object merged into the body, for server-specific fields
};

struct NEXP_API TokenLogprob {
  std::string token;
  double logprob = 0;
  std::vector<std::pair<std::string, double>> top;  // the most likely alternatives
};

struct NEXP_API Choice {
  std::string text;
  std::string finish_reason;  // stop, length, ...
  std::vector<TokenLogprob> logprobs;  // empty unless asked for and served
  std::optional<std::int64_t> seed;    // the seed this sample was drawn with, when known
};

struct NEXP_API Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t total() const { return prompt_tokens + completion_tokens; }
};

struct NEXP_API Response {
  std::vector<Choice> choices;  // n of them
  Usage usage;                  // summed over the calls that drew them
  std::string model;            // as the server names it
  double latency_s = 0;         // wall time, retries and waits for a free slot included
  double server_s = -1;         // the server's own time when it says (Server-Timing), else -1
  int attempts = 0;             // HTTP attempts, retries included (0: all from the cache)
  bool cached = false;          // every choice came from the response cache
  double cost = 0;              // from the endpoint's prices; 0 for cached answers
  const std::string& text() const;  // the first choice's text
};

// A call that failed for good: the message names the endpoint, the URL, the HTTP status or the
// connection error, the server's own message, and what to do.
class NEXP_API LlmError : public Error {
 public:
  LlmError(const std::string& message, int http_status) : Error(message), http_status_(http_status) {}
  ~LlmError() override;
  int http_status() const { return http_status_; }  // 0 when no HTTP answer came (timeout, refused)

 private:
  int http_status_;
};

// One line of artifacts/llm_calls.jsonl: one call of chat(), whether answered by the server, the
// cache, or not at all.
struct NEXP_API CallRecord {
  std::string endpoint, model;
  std::string request_hash;  // SHA-256 of the request as sent (prompt included), never the prompt
  std::optional<std::int64_t> seed;
  int n = 1;
  Usage usage;
  double latency_s = 0;
  double cost = 0;
  int attempts = 0;
  bool cached = false;
  std::string status;  // "ok", "cached", or the error
};

// Where answers of seeded requests are kept between runs, keyed by (base URL, model, request).
class NEXP_API ResponseCache {
 public:
  explicit ResponseCache(std::string folder);
  // The default folder: $NEXP_LLM_CACHE_DIR, else $XDG_CACHE_HOME/nexp/llm, else ~/.cache/nexp/llm.
  static std::string default_folder();
  std::optional<std::string> get(const std::string& key) const;  // the stored answer (JSON text)
  void put(const std::string& key, const std::string& answer) const;
  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
};

// What a run adds to a client: the cache, the call log, its logger.
struct NEXP_API ClientHooks {
  std::shared_ptr<const ResponseCache> cache;      // null: no cache
  std::function<void(const CallRecord&)> on_call;  // e.g. the run's call log
  spdlog::logger* log = nullptr;                   // retries are noted here; null: nexp's logger
};

class NEXP_API Client {
 public:
  using Hooks = ClientHooks;
  // Reads the key from the endpoint's environment variable now (ConfigError when it is named but
  // unset). The key lives in this object's memory only: it is sent in the Authorization header and
  // never logged, cached or written.
  explicit Client(Endpoint endpoint, Hooks hooks = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Response chat(const Request& request);  // throws LlmError
  std::vector<std::string> models();      // GET /models: the ids the server serves
  const Endpoint& endpoint() const;

  // The body chat() sends for a request asking for `n` samples with `seed` (for tests and tools).
  static std::string request_body(const Endpoint& endpoint, const Request& request, int n,
                                  std::optional<std::int64_t> seed);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nexp::llm
