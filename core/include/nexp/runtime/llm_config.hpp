#pragma once
// The config's `llm:` section and a run's language-model clients (nexp/llm.hpp).
//
//   llm:
//     cache: true                    # answers of seeded requests are reused (default true)
//     endpoints:
//       - {name: judge, base_url: "https://api.example.com/v1", model: some-model,
//          api_key_env: EXAMPLE_API_KEY, price_per_1k_input: 0.15, price_per_1k_output: 0.6,
//          max_concurrency: 8, timeout: 60, max_retries: 4}
//
// No section, or no endpoints: nothing is ever called (ctx.llm() is a ConfigError).
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nexp/config.hpp"
#include "nexp/llm.hpp"

namespace nexp {

struct NEXP_API LlmConfig {
  bool present = false;  // the config has an `llm:` section (written back only then)
  bool cache = true;
  std::vector<llm::Endpoint> endpoints;

  const llm::Endpoint* find(const std::string& name) const;
  YAML::Node to_yaml() const;
};

// Validates `node` (the `llm:` value; undefined or null: no section). ConfigError names the key,
// file and line, what was expected and what was found.
NEXP_API LlmConfig parse_llm_config(const YAML::Node& node, const std::filesystem::path& source);

// A run's clients, made on first use; every call is appended to <artifacts>/llm_calls.jsonl.
class NEXP_API LlmSession {
 public:
  LlmSession(LlmConfig config, std::filesystem::path artifacts_dir, spdlog::logger* log);
  ~LlmSession();
  llm::Client& client(const std::string& name);  // ConfigError when the config names no such endpoint

  // llm_calls (answered by a server), llm_cached, llm_failed, llm_tokens and llm_cost, read from a
  // run's call log (so a resumed run counts every call it paid for).
  static std::map<std::string, double> summary(const std::filesystem::path& calls_file);

 private:
  void append(const llm::CallRecord& record);
  LlmConfig config_;
  std::filesystem::path calls_file_;
  spdlog::logger* log_;
  std::shared_ptr<const llm::ResponseCache> cache_;
  std::map<std::string, std::unique_ptr<llm::Client>> clients_;
  std::mutex mutex_;
};

}  // namespace nexp
