// The chat-completions client: request bodies, HTTP with retries and a concurrency limit, answers
// (nexp/llm.hpp). The cache lives in llm_cache.cpp, the config section and the run's call log in
// llm_config.cpp.
#include "nexp/llm.hpp"

#include <httplib.h>
#include <spdlog/logger.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp::llm {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

LlmError::~LlmError() = default;

const std::string& Response::text() const {
  if (choices.empty()) throw Error("the language-model answer has no choices");
  return choices.front().text;
}

// An endpoint's base URL split for httplib (outside the anonymous namespace: Client::Impl holds one).
struct Url {
  std::string origin;  // scheme://host[:port], what httplib connects to
  std::string prefix;  // the path up to /v1, no trailing slash
};

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---------------------------------------------------------------- URLs and bodies

Url parse_base_url(const Endpoint& e) {
  const std::string& u = e.base_url;
  const auto scheme_end = u.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : u.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    throw ConfigError(fmt::format("llm endpoint '{}': base_url '{}' must start with http:// or https://, e.g. "
                                  "http://127.0.0.1:8080/v1",
                                  e.name, u));
  const auto path = u.find('/', scheme_end + 3);
  Url out{u.substr(0, path), path == std::string::npos ? "" : u.substr(path)};
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  return out;
}

json message_json(const Message& m) {
  if (m.images.empty()) return {{"role", m.role}, {"content", m.text}};
  json parts = json::array({{{"type", "text"}, {"text", m.text}}});
  for (const auto& url : m.images) parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
  return {{"role", m.role}, {"content", parts}};
}

json parse_json_field(const std::string& text, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw ConfigError(fmt::format("the request's {} is not a JSON object: '{}'", what, text.substr(0, 200)));
  return j;
}

// ---------------------------------------------------------------- answers

std::vector<TokenLogprob> parse_logprobs(const json& choice) {
  std::vector<TokenLogprob> out;
  const json& lp = choice.contains("logprobs") ? choice["logprobs"] : json();
  if (!lp.is_object() || !lp.contains("content") || !lp["content"].is_array()) return out;
  for (const auto& t : lp["content"]) {
    TokenLogprob x{t.value("token", ""), t.value("logprob", 0.0), {}};
    if (t.contains("top_logprobs") && t["top_logprobs"].is_array())
      for (const auto& a : t["top_logprobs"]) x.top.emplace_back(a.value("token", ""), a.value("logprob", 0.0));
    out.push_back(std::move(x));
  }
  return out;
}

// The choices, usage and model of a chat.completion body; throws Error when it is not one.
Response parse_answer(const std::string& body, const std::string& where) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("choices") || !j["choices"].is_array())
    throw LlmError(fmt::format("{}: the answer is not a chat completion (no 'choices' list): '{}'", where,
                               body.substr(0, 300)),
                   200);
  Response r;
  r.model = j.value("model", "");
  for (const auto& c : j["choices"]) {
    Choice choice;
    if (c.contains("message") && c["message"].is_object() && c["message"].contains("content") &&
        c["message"]["content"].is_string())
      choice.text = c["message"]["content"].get<std::string>();
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) choice.finish_reason = c["finish_reason"];
    choice.logprobs = parse_logprobs(c);
    r.choices.push_back(std::move(choice));
  }
  if (j.contains("usage") && j["usage"].is_object()) {
    r.usage.prompt_tokens = j["usage"].value("prompt_tokens", std::int64_t{0});
    r.usage.completion_tokens = j["usage"].value("completion_tokens", std::int64_t{0});
  }
  return r;
}

// The server's own message in an error body ({"error": {"message": ...}} or {"error": "..."}).
std::string server_message(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  }
  return body.substr(0, 300);
}

// Retry-After: delta-seconds or an HTTP date. Negative when absent or unreadable.
double retry_after_s(const httplib::Response& res) {
  if (!res.has_header("Retry-After")) return -1;
  const std::string v = res.get_header_value("Retry-After");
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (end && *end == '\0' && end != v.c_str()) return std::max(0.0, s);
  std::tm tm{};
  if (!strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) return -1;
  return std::max(0.0, std::difftime(timegm(&tm), std::time(nullptr)));
}

// Server-Timing: "total;dur=12.3" (milliseconds). Negative when absent.
double server_time_s(const httplib::Response& res) {
  if (!res.has_header("Server-Timing")) return -1;
  const std::string v = res.get_header_value("Server-Timing");
  const auto at = v.find("dur=");
  return at == std::string::npos ? -1 : std::atof(v.c_str() + at + 4) / 1000.0;
}

bool retryable(int status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

}  // namespace

// ---------------------------------------------------------------- the client

struct Client::Impl {
  Endpoint ep;
  Hooks hooks;
  std::string key;
  Url url;
  std::mutex mutex;
  std::condition_variable slot_free;
  std::vector<std::unique_ptr<httplib::Client>> idle;  // keep-alive connections not in use
  int in_flight = 0;
  std::mt19937_64 jitter{std::random_device{}()};
  bool refuses_n = false;

  struct HttpAnswer {
    int status = 0;
    std::string body;
    int attempts = 0;
    double server_s = -1;
  };

  spdlog::logger& log() const { return hooks.log ? *hooks.log : logger(); }
  std::string where(const std::string& path) const {
    return fmt::format("llm endpoint '{}' ({}{})", ep.name, url.origin, url.prefix + path);
  }

  std::unique_ptr<httplib::Client> connect() const {
    auto c = std::make_unique<httplib::Client>(url.origin);
    const auto timeout = std::chrono::duration<double>(ep.timeout_s);
    c->set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(std::min(timeout, std::chrono::duration<double>(10))));
    c->set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    c->set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);  // a request is one small write; Nagle would hold it for a delayed ACK
    return c;
  }

  // A connection of its own for one request at a time: at most max_concurrency are lent at once.
  std::unique_ptr<httplib::Client> lease() {
    std::unique_lock<std::mutex> lock(mutex);
    slot_free.wait(lock, [&] { return in_flight < std::max(1, ep.max_concurrency); });
    ++in_flight;
    if (!idle.empty()) {
      auto c = std::move(idle.back());
      idle.pop_back();
      return c;
    }
    lock.unlock();
    return connect();
  }
  void give_back(std::unique_ptr<httplib::Client> c) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      --in_flight;
      if (c) idle.push_back(std::move(c));
    }
    slot_free.notify_one();
  }

  double backoff(int attempt) {
    const double cap = std::min(30.0, ep.backoff_s * std::pow(2.0, attempt));
    std::lock_guard<std::mutex> lock(mutex);
    return cap / 2 + std::uniform_real_distribution<double>(0, cap / 2)(jitter);  // "equal jitter"
  }

  httplib::Headers headers() const {
    httplib::Headers h{{"Accept", "application/json"}};
    if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
    return h;
  }

  // One exchange, retried on connection errors, timeouts, 408/409/429 and 5xx. A non-retryable HTTP
  // error, or the last failure, comes back as it is (status 0: no answer at all).
  HttpAnswer exchange(const std::string& method, const std::string& path, const std::string& body,
                      std::string* failure) {
    HttpAnswer a;
    auto http = lease();
    for (int attempt = 0;; ++attempt) {
      const auto t0 = Clock::now();
      auto res = method == "GET" ? http->Get((url.prefix + path).c_str(), headers())
                                 : http->Post((url.prefix + path).c_str(), headers(), body, "application/json");
      a.attempts = attempt + 1;
      double wait = -1;
      if (res) {
        a.status = res->status;
        a.body = res->body;
        a.server_s = server_time_s(*res);
        if (!retryable(res->status)) break;
        *failure = fmt::format("HTTP {}: {}", res->status, server_message(res->body));
        wait = retry_after_s(*res);
      } else {
        a.status = 0;
        const double spent = seconds_since(t0);
        *failure = spent >= ep.timeout_s * 0.95
                       ? fmt::format("no answer within the timeout of {:g} s ({})", ep.timeout_s,
                                     httplib::to_string(res.error()))
                       : fmt::format("connection failed: {}", httplib::to_string(res.error()));
        http = connect();  // a fresh connection: the old one may be half-closed
      }
      if (attempt >= ep.max_retries) break;
      if (wait < 0) wait = backoff(attempt);
      wait = std::min(wait, 300.0);
      log().warn("{}: {}; retry {} of {} in {:.2f} s", where(path), *failure, attempt + 1, ep.max_retries, wait);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    give_back(a.status != 0 ? std::move(http) : nullptr);
    return a;
  }

  [[noreturn]] void fail(const std::string& path, const HttpAnswer& a, const std::string& failure) const {
    std::string advice = "check that the server runs (`nexp llm ping " + ep.name + " -c <config>`)";
    if (a.status == 401 || a.status == 403)
      advice = ep.api_key_env.empty() ? "the endpoint wants a key: set api_key_env to the variable that holds it"
                                      : "check the key in $" + ep.api_key_env;
    else if (a.status == 404)
      advice = "check base_url (it usually ends in /v1) and the model name '" + ep.model + "'";
    else if (a.status >= 400 && a.status < 500)
      advice = "the server refused the request as sent; see its message";
    const std::string what = a.status >= 400 && !retryable(a.status)
                                 ? fmt::format("HTTP {}: {}", a.status, server_message(a.body))
                                 : failure;
    throw LlmError(fmt::format("{}: {} after {} attempt{}; {}", where(path), what, a.attempts,
                               a.attempts == 1 ? "" : "s", advice),
                   a.status);
  }

  // One call drawing one or n samples: from the cache when a seeded request was answered before.
  Response call(const Request& req, int n, std::optional<std::int64_t> seed) {
    const auto t0 = Clock::now();
    const std::string body = request_body(ep, req, n, seed);
    const std::string key_text = url.origin + url.prefix + "\n" + ep.model + "\n" + body;
    CallRecord rec{ep.name, ep.model, sha256_hex(body), seed, n, {}, 0, 0, 0, false, "ok"};
    const bool cacheable = hooks.cache && seed.has_value();
    const std::string cache_key = cacheable ? sha256_hex(key_text) : "";
    try {
      Response r;
      if (auto hit = cacheable ? hooks.cache->get(cache_key) : std::nullopt) {
        r = parse_answer(*hit, where("/chat/completions"));
        r.cached = true;
        rec.status = "cached";
      } else {
        std::string failure;
        const HttpAnswer a = exchange("POST", "/chat/completions", body, &failure);
        if (a.status < 200 || a.status >= 300) {
          rec.attempts = a.attempts;
          fail("/chat/completions", a, failure);
        }
        r = parse_answer(a.body, where("/chat/completions"));
        r.attempts = a.attempts;
        r.server_s = a.server_s;
        r.cost = r.usage.prompt_tokens / 1000.0 * ep.price_per_1k_input +
                 r.usage.completion_tokens / 1000.0 * ep.price_per_1k_output;
        if (cacheable && static_cast<int>(r.choices.size()) == n) hooks.cache->put(cache_key, a.body);
      }
      for (auto& c : r.choices) c.seed = seed;
      r.latency_s = seconds_since(t0);
      rec.usage = r.usage, rec.latency_s = r.latency_s, rec.cost = r.cost, rec.attempts = r.attempts;
      rec.cached = r.cached;
      if (hooks.on_call) hooks.on_call(rec);
      return r;
    } catch (const Error& e) {
      rec.latency_s = seconds_since(t0);
      rec.status = e.what();
      if (hooks.on_call) hooks.on_call(rec);
      throw;
    }
  }

  // n samples as n calls seeded seed, seed+1, ...: for servers that refuse n > 1.
  Response call_each(const Request& req) {
    Response out;
    out.cached = true;
    const std::int64_t base = req.seed.value_or(0);
    for (int i = 0; i < req.n; ++i) {
      Response r = call(req, 1, base + i);
      for (auto& c : r.choices) out.choices.push_back(std::move(c));
      out.usage.prompt_tokens += r.usage.prompt_tokens;
      out.usage.completion_tokens += r.usage.completion_tokens;
      out.latency_s += r.latency_s, out.cost += r.cost, out.attempts += r.attempts;
      out.cached = out.cached && r.cached;
      out.model = r.model;
      if (r.server_s >= 0) out.server_s = std::max(0.0, out.server_s) + r.server_s;
    }
    return out;
  }
};

Client::Client(Endpoint endpoint, Hooks hooks) : impl_(std::make_unique<Impl>()) {
  impl_->ep = std::move(endpoint);
  impl_->hooks = std::move(hooks);
  impl_->url = parse_base_url(impl_->ep);
  if (!impl_->ep.api_key_env.empty()) {
    const char* k = std::getenv(impl_->ep.api_key_env.c_str());
    if (!k || !*k)
      throw ConfigError(fmt::format("llm endpoint '{}' reads its API key from the environment variable {}, which is "
                                    "not set. Export it (the key is never written to the config or the run folder)",
                                    impl_->ep.name, impl_->ep.api_key_env));
    impl_->key = k;
  }
}

Client::~Client() = default;

const Endpoint& Client::endpoint() const { return impl_->ep; }

std::string Client::request_body(const Endpoint& endpoint, const Request& r, int n, std::optional<std::int64_t> seed) {
  json body{{"model", endpoint.model}, {"messages", json::array()}, {"stream", false}};
  for (const auto& m : r.messages) body["messages"].push_back(message_json(m));
  if (r.temperature) body["temperature"] = *r.temperature;
  if (r.top_p) body["top_p"] = *r.top_p;
  if (r.max_tokens) body["max_tokens"] = *r.max_tokens;
  if (!r.stop.empty()) body["stop"] = r.stop;
  if (seed) body["seed"] = *seed;
  if (n != 1) body["n"] = n;
  if (r.logprobs) {
    body["logprobs"] = true;
    if (r.top_logprobs > 0) body["top_logprobs"] = r.top_logprobs;
  }
  if (!r.json_schema.empty())
    body["response_format"] = {{"type", "json_schema"},
                               {"json_schema", {{"name", "answer"}, {"strict", true},
                                                {"schema", parse_json_field(r.json_schema, "json_schema")}}}};
  if (!r.grammar.empty()) body["grammar"] = r.grammar;
  if (!r.extra_json.empty()) body.update(parse_json_field(r.extra_json, "extra_json"));
  return body.dump();
}

Response Client::chat(const Request& request) {
  if (request.messages.empty()) throw Error("llm: a chat request needs at least one message");
  if (request.n < 1) throw Error(fmt::format("llm: n must be at least 1, got {}", request.n));
  if (request.n == 1) return impl_->call(request, 1, request.seed);
  bool refuses_n;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    refuses_n = impl_->refuses_n;
  }
  if (refuses_n) return impl_->call_each(request);
  try {
    Response r = impl_->call(request, request.n, request.seed);
    if (static_cast<int>(r.choices.size()) == request.n) return r;
  } catch (const LlmError& e) {
    if (e.http_status() != 400 && e.http_status() != 422) throw;
  }
  impl_->log().info("llm endpoint '{}' does not draw n = {} samples in one call; drawing them as {} seeded calls",
                    impl_->ep.name, request.n, request.n);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->refuses_n = true;
  }
  return impl_->call_each(request);
}

std::vector<std::string> Client::models() {
  std::string failure;
  const auto a = impl_->exchange("GET", "/models", "", &failure);
  if (a.status < 200 || a.status >= 300) impl_->fail("/models", a, failure);
  const json j = json::parse(a.body, nullptr, false);
  std::vector<std::string> ids;
  if (j.is_object() && j.contains("data") && j["data"].is_array())
    for (const auto& m : j["data"])
      if (m.is_object() && m.contains("id") && m["id"].is_string()) ids.push_back(m["id"]);
  return ids;
}

}  // namespace nexp::llm
