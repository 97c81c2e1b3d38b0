// The config's `llm:` section: schema, validation, resolved form (nexp/runtime/llm_config.hpp).
#include <fmt/format.h>

#include <set>

#include "nexp/error.hpp"
#include "nexp/options.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/llm_config.hpp"

namespace nexp {

namespace fs = std::filesystem;

namespace {

// One endpoint of `llm: {endpoints: [...]}`, and the section itself.
struct EndpointOptions {
  std::string name, base_url, model, api_key_env;
  double price_per_1k_input = 0, price_per_1k_output = 0;
  int max_concurrency = 4;
  double timeout = 120;
  int max_retries = 4;

  static void declare(Options<EndpointOptions>& o) {
    o.add("name", &EndpointOptions::name, "what methods ask for: ctx.llm(name)").required();
    o.add("base_url", &EndpointOptions::base_url, "the API root, up to and including /v1").required();
    o.add("model", &EndpointOptions::model, "the model the server is asked for").required();
    o.add("api_key_env", &EndpointOptions::api_key_env, "environment variable holding the API key; empty: no key");
    o.add("price_per_1k_input", &EndpointOptions::price_per_1k_input, "cost of 1000 prompt tokens").min(0);
    o.add("price_per_1k_output", &EndpointOptions::price_per_1k_output, "cost of 1000 completion tokens").min(0);
    o.add("max_concurrency", &EndpointOptions::max_concurrency, "requests in flight at once").range(1, 1024);
    o.add("timeout", &EndpointOptions::timeout, "seconds one attempt may take").range(0.001, 86400);
    o.add("max_retries", &EndpointOptions::max_retries, "further attempts after a connection error, timeout, 429 or 5xx")
        .range(0, 100);
  }
};

struct LlmOptions {
  bool cache = true;
  std::vector<EndpointOptions> endpoints;

  static void declare(Options<LlmOptions>& o) {
    o.add("cache", &LlmOptions::cache, "reuse the answers of seeded requests");
    o.add("endpoints", &LlmOptions::endpoints, "the endpoints methods may call, by name");
  }
};

llm::Endpoint endpoint_of(const EndpointOptions& o) {
  llm::Endpoint e;
  e.name = o.name, e.base_url = o.base_url, e.model = o.model, e.api_key_env = o.api_key_env;
  e.price_per_1k_input = o.price_per_1k_input, e.price_per_1k_output = o.price_per_1k_output;
  e.max_concurrency = o.max_concurrency, e.timeout_s = o.timeout, e.max_retries = o.max_retries;
  return e;
}

EndpointOptions options_of(const llm::Endpoint& e) {
  EndpointOptions o;
  o.name = e.name, o.base_url = e.base_url, o.model = e.model, o.api_key_env = e.api_key_env;
  o.price_per_1k_input = e.price_per_1k_input, o.price_per_1k_output = e.price_per_1k_output;
  o.max_concurrency = e.max_concurrency, o.timeout = e.timeout_s, o.max_retries = e.max_retries;
  return o;
}

}  // namespace

const llm::Endpoint* LlmConfig::find(const std::string& name) const {
  for (const auto& e : endpoints)
    if (e.name == name) return &e;
  return nullptr;
}

namespace {

std::string where(const YAML::Node& node, const fs::path& source) {
  if (node.IsDefined() && !node.Mark().is_null())
    return fmt::format("config '{}', line {}", source.string(), node.Mark().line + 1);
  return fmt::format("config '{}'", source.string());
}

// What a schema cannot say: the URL's scheme, the key variable's name, unique names.
void check_endpoint(const llm::Endpoint& e, const YAML::Node& node, const std::string& section, const fs::path& source) {
  if (e.base_url.rfind("http://", 0) != 0 && e.base_url.rfind("https://", 0) != 0)
    throw ConfigError(fmt::format("{}: '{}.base_url' must start with http:// or https://, found '{}' (e.g. "
                                  "http://127.0.0.1:8080/v1)",
                                  where(node["base_url"], source), section, e.base_url));
  if (!e.api_key_env.empty() && e.api_key_env.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                 "0123456789_") != std::string::npos)
    throw ConfigError(fmt::format("{}: '{}.api_key_env' names an environment variable (letters, digits, '_'), found "
                                  "'{}'. Never put the key itself in a config",
                                  where(node["api_key_env"], source), section, e.api_key_env));
}

}  // namespace

LlmConfig parse_llm_config(const YAML::Node& node, const fs::path& source) {
  LlmConfig c;
  if (!node.IsDefined() || node.IsNull()) return c;
  c.present = true;
  const auto o = bind<LlmOptions>(params_from_yaml(node, options_schema<LlmOptions>(), "llm", "the llm section", source));
  c.cache = o.cache;
  std::set<std::string> names;
  for (std::size_t i = 0; i < o.endpoints.size(); ++i) {
    const YAML::Node item = node["endpoints"][i];
    c.endpoints.push_back(endpoint_of(o.endpoints[i]));
    check_endpoint(c.endpoints.back(), item, fmt::format("llm.endpoints.{}", i), source);
    if (!names.insert(o.endpoints[i].name).second)
      throw ConfigError(fmt::format("{}: two llm endpoints are named '{}'; names must be unique", where(item, source),
                                    o.endpoints[i].name));
  }
  return c;
}

YAML::Node LlmConfig::to_yaml() const {
  LlmOptions o;
  o.cache = cache;
  for (const auto& e : endpoints) o.endpoints.push_back(options_of(e));
  return params_to_yaml(to_params(o), options_schema<LlmOptions>());
}

}  // namespace nexp
