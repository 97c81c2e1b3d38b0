#include "http_env.hpp"

#include <nexp/error.hpp>
#include <nexp/random.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <type_traits>

namespace agent_sft {

using nlohmann::json;

namespace {

bool is_webshop(const RemoteSpec& s) { return s.env_name == "webshop"; }
const char* id_key(const RemoteSpec& s) { return is_webshop(s) ? "env_idx" : "id"; }

// j[key] of an object that holds it, else null (which the readers below refuse with the answer shown).
json member(const json& j, const char* key) { return j.is_object() && j.contains(key) ? j[key] : json(); }

std::string clip(const std::string& s) { return s.size() <= 300 ? s : s.substr(0, 300) + "..."; }

// "http://host:port/prefix" -> {"http://host:port", "/prefix"}.
std::pair<std::string, std::string> split_url(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::string kind = scheme == std::string::npos ? "" : url.substr(0, scheme);
  const std::size_t slash = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  const std::string origin = url.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if ((kind != "http" && kind != "https") || origin.size() <= kind.size() + 3 ||
      url.find_first_of(" ?#") != std::string::npos)
    throw nexp::ConfigError("agent_sft: dataset.url is '" + url +
                            "'; expected the AgentGym server's address, http://host:port (e.g. "
                            "http://127.0.0.1:36001, as its launcher's --host and --port say); set dataset.url");
  return {origin, prefix};
}

void set_timeout(httplib::Client& c, double seconds) {
  const auto sec = static_cast<time_t>(seconds);
  const auto usec = static_cast<time_t>((seconds - static_cast<double>(sec)) * 1e6);
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
}

std::string no_answer(httplib::Error e) {
  if (e == httplib::Error::Connection) return "no connection (nothing listens there, or the host is unreachable)";
  if (e == httplib::Error::Read || e == httplib::Error::ConnectionTimeout)
    return "no answer within dataset.timeout (httplib: " + httplib::to_string(e) + ")";
  return "no answer (httplib: " + httplib::to_string(e) + ")";
}

std::string status_advice(int status, const RemoteSpec& spec) {
  if (status == 404)
    return "the server has no such route: dataset.url must be the address of an AgentGym " + spec.env_name +
           " server (dataset.env_name picks alfworld or webshop)";
  if (status == 422)
    return "the server refused the request's fields: it speaks another dialect than dataset.env_name=" +
           spec.env_name + " (alfworld or webshop)";
  return "see the server's log for the cause, then rerun";
}

}  // namespace

// ------------------------------------------------------------------ requests

struct AgentGymClient::Impl {
  RemoteSpec spec;
  std::string origin, prefix;
  httplib::Client http;
  std::mutex mutex;                 // one request at a time on the client; guards `idle`
  std::vector<std::int64_t> idle;   // instances no episode holds

  Impl(RemoteSpec s, const std::pair<std::string, std::string>& url)
      : spec(std::move(s)), origin(url.first), prefix(url.second), http(origin) {
    set_timeout(http, spec.timeout_s);
  }

  [[noreturn]] void fail(const std::string& where, const std::string& expected, const std::string& found,
                         const std::string& todo) const {
    throw nexp::DataError("agent_sft: remote environment (dataset.env=http), " + where + ": expected " + expected +
                          ", found " + found + "; " + todo);
  }

  std::string where(bool post, const std::string& route) const {
    return std::string(post ? "POST " : "GET ") + origin + prefix + route;
  }
  std::string answer_of(bool post, const std::string& route) const { return "the answer of " + where(post, route); }
  std::string wrong_server() const { return "dataset.env_name=" + spec.env_name + " may name the wrong server"; }

  // One request; its body parsed. `route` is the protocol's ("/step"), `query` an optional "?id=3".
  json call(bool post, const std::string& route, const json& body, const std::string& query = "") {
    const std::string path = prefix + route + query;
    const std::string where = this->where(post, route + query);
    const httplib::Result res = [&] {
      std::lock_guard<std::mutex> lock(mutex);
      return post ? http.Post(path, body.dump(), "application/json") : http.Get(path);
    }();
    if (!res)
      fail(where, "an HTTP answer", no_answer(res.error()),
           "start the server (its launcher, e.g. `" + spec.env_name +
               " --host 0.0.0.0 --port 36001`) or fix dataset.url, or raise dataset.timeout for a slow server");
    if (res->status != 200)
      fail(where, "HTTP 200", "HTTP " + std::to_string(res->status) + " '" + clip(res->body) + "'",
           status_advice(res->status, spec));
    json j = json::parse(res->body, nullptr, false);
    if (j.is_discarded())
      fail(where, "a JSON body", "'" + clip(res->body) + "'",
           "dataset.url must point at the environment server itself, not a proxy or another service");
    if (j.is_object() && j.contains("error"))
      fail(where, "an answer", "the server's error '" + clip(j["error"].is_string() ? j["error"].get<std::string>()
                                                                                      : j["error"].dump()) + "'",
           "a task index beyond the server's tasks means dataset.eval_first, train_first or train_tasks are too "
           "large; otherwise see the server's log");
    return j;
  }

  json get(const std::string& route, std::int64_t instance) {
    return call(false, route, json(), std::string("?") + id_key(spec) + "=" + std::to_string(instance));
  }

  // body[key] with the given type, or a DataError naming the field.
  template <class T>
  T field(const json& body, const char* key, const char* type, const std::string& answer) {
    const bool ok = body.is_object() && body.contains(key) &&
                    ((std::is_same_v<T, std::string> && body[key].is_string()) ||
                     (std::is_same_v<T, bool> && body[key].is_boolean()) ||
                     (std::is_same_v<T, double> && body[key].is_number()));
    if (!ok)
      fail(answer, "an object with \"" + std::string(key) + "\" (" + type + ")", "'" + clip(body.dump()) + "'",
           wrong_server());
    return body[key].get<T>();
  }

  std::vector<std::string> strings(const json& list, const std::string& answer) {
    if (!list.is_array()) fail(answer, "a list of actions", "'" + clip(list.dump()) + "'", wrong_server());
    std::vector<std::string> out;
    for (const auto& a : list) {
      if (!a.is_string()) fail(answer, "action strings", "'" + clip(a.dump()) + "'", wrong_server());
      out.push_back(a.get<std::string>());
    }
    return out;
  }

  // ---------------------------------------------------------------- the two dialects

  std::int64_t create() {
    const json j = call(true, "/create", json::object());
    const json id = is_webshop(spec) ? j : member(j, "id");
    if (!id.is_number_integer())
      fail(answer_of(true, "/create"), is_webshop(spec) ? "an instance number" : "{\"id\": instance number}",
           "'" + clip(j.dump()) + "'", wrong_server());
    return id.get<std::int64_t>();
  }

  // WebShop: click[c] for every clickable, and the instruction as the search while there is a search bar.
  std::vector<std::string> webshop_actions(std::int64_t instance) {
    const json j = get("/available_actions", instance);
    std::vector<std::string> out;
    if (field<bool>(j, "has_search_bar", "boolean", answer_of(false, "/available_actions"))) {
      const json instruction = get("/instruction_text", instance);
      if (!instruction.is_string())
        fail(answer_of(false, "/instruction_text"), "the instruction text", "'" + clip(instruction.dump()) + "'",
             wrong_server());
      std::string text = instruction.get<std::string>();
      if (text.rfind("Instruction:", 0) == 0) text = text.substr(12);
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
      out.push_back("search[" + text + "]");
    }
    for (const auto& c : strings(member(j, "clickables"), answer_of(false, "/available_actions")))
      out.push_back("click[" + c + "]");
    return out;
  }

  Answer reset(std::int64_t instance, std::int64_t task) {
    Answer a;
    if (is_webshop(spec)) {
      const json j = call(true, "/reset", {{"env_idx", instance}, {"session_id", task}});
      if (!j.is_array()) fail(answer_of(true, "/reset"), "[observation, null]", "'" + clip(j.dump()) + "'", wrong_server());
      const json obs = get("/observation", instance);
      if (!obs.is_string())
        fail(answer_of(false, "/observation"), "the observation text", "'" + clip(obs.dump()) + "'", wrong_server());
      a.observation = obs.get<std::string>();
      a.actions = webshop_actions(instance);
      a.task_type = "webshop";
      return a;
    }
    const json j = call(true, "/reset", {{"id", instance}, {"game", task}, {"world_type", "Text"}});
    a.observation = field<std::string>(j, "observation", "string", answer_of(true, "/reset"));
    a.actions = strings(member(j, "available_actions"), answer_of(true, "/reset"));
    const json named = member(j, "task_type");
    const std::string type = named.is_string() ? named.get<std::string>() : "";
    a.task_type = type.empty() ? "alfworld" : type.substr(0, type.find('-'));
    return a;
  }

  Answer step(std::int64_t instance, const std::string& action) {
    const json j = call(true, "/step", {{id_key(spec), instance}, {"action", action}});
    Answer a;
    const std::string answer = answer_of(true, "/step");
    a.observation = field<std::string>(j, is_webshop(spec) ? "state" : "observation", "string", answer);
    a.reward = field<double>(j, "reward", "number", answer);
    a.done = field<bool>(j, "done", "boolean", answer);
    if (is_webshop(spec))
      a.actions = a.done ? std::vector<std::string>{} : webshop_actions(instance);
    else
      a.actions = strings(member(j, "available_actions"), answer);
    return a;
  }
};

AgentGymClient::AgentGymClient(RemoteSpec spec) {
  if (spec.env_name != "alfworld" && spec.env_name != "webshop")
    throw nexp::ConfigError("agent_sft: dataset.env_name is '" + spec.env_name +
                            "'; expected alfworld or webshop (the AgentGym servers that list their admissible "
                            "actions); set dataset.env_name");
  const auto url = split_url(spec.url);
  impl_ = std::make_unique<Impl>(std::move(spec), url);
}

// WebShop's idle instances are closed (best effort, briefly: the server may be gone already).
AgentGymClient::~AgentGymClient() {
  if (!is_webshop(impl_->spec)) return;
  set_timeout(impl_->http, std::min(impl_->spec.timeout_s, 2.0));
  for (std::int64_t id : impl_->idle) {
    const json body = {{"env_idx", id}};
    if (!impl_->http.Post(impl_->prefix + "/close", body.dump(), "application/json")) break;
  }
}

const RemoteSpec& AgentGymClient::spec() const { return impl_->spec; }

std::int64_t AgentGymClient::acquire() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->idle.empty()) {
      const std::int64_t id = impl_->idle.back();
      impl_->idle.pop_back();
      return id;
    }
  }
  return impl_->create();
}

void AgentGymClient::release(std::int64_t instance) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->idle.push_back(instance);
}

AgentGymClient::Answer AgentGymClient::reset(std::int64_t instance, std::int64_t task) {
  return impl_->reset(instance, task);
}

AgentGymClient::Answer AgentGymClient::step(std::int64_t instance, const std::string& action) {
  return impl_->step(instance, action);
}

// ------------------------------------------------------------------ the environment

HttpEnv::HttpEnv(std::shared_ptr<AgentGymClient> client, std::int64_t task) : client_(std::move(client)), task_(task) {}

HttpEnv::~HttpEnv() {
  if (instance_ >= 0) client_->release(instance_);
}

std::string HttpEnv::reset() {
  if (instance_ < 0) instance_ = client_->acquire();
  const AgentGymClient::Answer a = client_->reset(instance_, task_);
  steps_ = 0;
  history_.clear();
  observation_ = a.observation;
  actions_ = a.actions;
  task_type_ = a.task_type;
  return a.observation;
}

StepResult HttpEnv::step(const std::string& action) {
  const AgentGymClient::Answer a = client_->step(instance_, action);
  ++steps_;
  history_.push_back(action);
  observation_ = a.observation;
  actions_ = a.actions;
  return {a.observation, a.done || steps_ >= step_limit(), a.done && a.reward > 0};
}

std::string HttpEnv::plan() const {
  throw nexp::ConfigError("agent_sft: the planner teacher asked a remote environment (dataset.env=http, " +
                          client_->spec().url + ") for its plan; a remote server exposes no world to plan in. "
                          "Set params.teacher=llm and name the teacher's endpoint in the config's llm: section");
}

std::string HttpEnv::state_key() const { return std::to_string(nexp::fnv1a64(observation_)); }

int HttpEnv::step_limit() const { return client_->spec().max_steps; }

std::unique_ptr<Env> HttpEnv::clone() const {
  auto copy = std::make_unique<HttpEnv>(client_, task_);
  copy->reset();  // on another instance: this episode holds its own
  for (const auto& a : history_) copy->step(a);
  return copy;
}

std::unique_ptr<Env> make_http_env(const TaskSpec& task) {
  if (!task.remote) throw nexp::Error("agent_sft: a remote task (world http) without its server; this is a bug");
  return std::make_unique<HttpEnv>(task.remote, static_cast<std::int64_t>(task.id));
}

}  // namespace agent_sft
