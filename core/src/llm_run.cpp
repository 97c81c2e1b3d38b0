// A run's language-model clients and its call log, artifacts/llm_calls.jsonl
// (nexp/runtime/llm_config.hpp).
#include <fmt/format.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "nexp/error.hpp"
#include "nexp/runtime/llm_config.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

LlmSession::LlmSession(LlmConfig config, fs::path artifacts_dir, spdlog::logger* log)
    : config_(std::move(config)), calls_file_(std::move(artifacts_dir) / "llm_calls.jsonl"), log_(log) {
  if (config_.cache) cache_ = std::make_shared<llm::ResponseCache>(llm::ResponseCache::default_folder());
}

LlmSession::~LlmSession() = default;

llm::Client& LlmSession::client(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = clients_.find(name); it != clients_.end()) return *it->second;
  const llm::Endpoint* e = config_.find(name);
  if (!e) {
    std::vector<std::string> names;
    for (const auto& x : config_.endpoints) names.push_back(x.name);
    throw ConfigError(names.empty()
                          ? fmt::format("the method asked for the language-model endpoint '{}', but the config names "
                                        "none; add `llm: {{endpoints: [{{name: {}, base_url: ..., model: ...}}]}}`",
                                        name, name)
                          : fmt::format("the method asked for the language-model endpoint '{}', but the config's llm: "
                                        "section names only {}",
                                        name, fmt::join(names, ", ")));
  }
  llm::Client::Hooks hooks{cache_, [this](const llm::CallRecord& r) { append(r); }, log_};
  auto& slot = clients_[name];
  slot = std::make_unique<llm::Client>(*e, std::move(hooks));
  return *slot;
}

void LlmSession::append(const llm::CallRecord& r) {
  json line{{"time", now_iso8601()},
            {"endpoint", r.endpoint},
            {"model", r.model},
            {"request_sha256", r.request_hash},
            {"seed", r.seed ? json(*r.seed) : json()},
            {"n", r.n},
            {"prompt_tokens", r.usage.prompt_tokens},
            {"completion_tokens", r.usage.completion_tokens},
            {"latency_s", json_number(r.latency_s)},
            {"cost", json_number(r.cost)},
            {"attempts", r.attempts},
            {"cached", r.cached},
            {"status", r.status}};
  const std::string text = line.dump() + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  std::ofstream out(calls_file_, std::ios::app | std::ios::binary);
  out << text;
  if (!out) throw Error(fmt::format("cannot append to '{}'", calls_file_.string()));
}

std::map<std::string, double> LlmSession::summary(const fs::path& calls_file) {
  std::map<std::string, double> s{{"llm_calls", 0}, {"llm_cached", 0}, {"llm_failed", 0}, {"llm_tokens", 0},
                                  {"llm_cost", 0}};
  std::ifstream in(calls_file);
  std::string text;
  while (std::getline(in, text)) {
    const json j = json::parse(text, nullptr, false);
    if (!j.is_object()) continue;  // a line cut short by a crash
    const std::string status = j.value("status", "");
    if (status == "cached") {
      s["llm_cached"] += 1;
      continue;
    }
    s[status == "ok" ? "llm_calls" : "llm_failed"] += 1;
    s["llm_tokens"] += j.value("prompt_tokens", 0.0) + j.value("completion_tokens", 0.0);
    if (j["cost"].is_number()) s["llm_cost"] += j["cost"].get<double>();
  }
  return s;
}

}  // namespace nexp
