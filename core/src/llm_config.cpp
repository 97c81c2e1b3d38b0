// The config's `llm:` section: schema, validation, resolved form (nexp/runtime/llm_config.hpp).
#include <fmt/format.h>

#include <set>

#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/llm_config.hpp"

namespace nexp {

namespace fs = std::filesystem;

const Schema& llm_endpoint_schema() {
  static const Schema schema{
      Param::string("name", "", "what methods ask for: ctx.llm(name)").required(),
      Param::string("base_url", "", "the API root, up to and including /v1").required(),
      Param::string("model", "", "the model the server is asked for").required(),
      Param::string("api_key_env", "", "environment variable holding the API key; empty: no key"),
      Param::real("price_per_1k_input", 0, "cost of 1000 prompt tokens").min(0),
      Param::real("price_per_1k_output", 0, "cost of 1000 completion tokens").min(0),
      Param::integer("max_concurrency", 4, "requests in flight at once").range(1, 1024),
      Param::real("timeout", 120, "seconds one attempt may take").range(0.001, 86400),
      Param::integer("max_retries", 4, "further attempts after a connection error, timeout, 429 or 5xx").range(0, 100)};
  return schema;
}

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

llm::Endpoint endpoint_from(const YAML::Node& node, size_t i, const fs::path& source) {
  const std::string section = fmt::format("llm.endpoints.{}", i);
  if (!node.IsMap())
    throw ConfigError(fmt::format("{}: '{}' must be a map {{name, base_url, model, ...}}, found a {}",
                                  where(node, source), section, node.IsSequence() ? "list" : "single value"));
  const Params p = params_from_yaml(node, llm_endpoint_schema(), section, "llm", source);
  llm::Endpoint e;
  e.name = p.get_string("name");
  e.base_url = p.get_string("base_url");
  e.model = p.get_string("model");
  e.api_key_env = p.get_string("api_key_env");
  e.price_per_1k_input = p.get_float("price_per_1k_input");
  e.price_per_1k_output = p.get_float("price_per_1k_output");
  e.max_concurrency = static_cast<int>(p.get_int("max_concurrency"));
  e.timeout_s = p.get_float("timeout");
  e.max_retries = static_cast<int>(p.get_int("max_retries"));
  if (e.base_url.rfind("http://", 0) != 0 && e.base_url.rfind("https://", 0) != 0)
    throw ConfigError(fmt::format("{}: '{}.base_url' must start with http:// or https://, found '{}' (e.g. "
                                  "http://127.0.0.1:8080/v1)",
                                  where(node["base_url"], source), section, e.base_url));
  if (!e.api_key_env.empty() && e.api_key_env.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                 "0123456789_") != std::string::npos)
    throw ConfigError(fmt::format("{}: '{}.api_key_env' names an environment variable (letters, digits, '_'), found "
                                  "'{}'. Never put the key itself in a config",
                                  where(node["api_key_env"], source), section, e.api_key_env));
  return e;
}

}  // namespace

LlmConfig parse_llm_config(const YAML::Node& node, const fs::path& source) {
  LlmConfig c;
  if (!node.IsDefined() || node.IsNull()) return c;
  c.present = true;
  if (!node.IsMap())
    throw ConfigError(fmt::format("{}: 'llm' must be a map {{endpoints: [...], cache: true|false}}", where(node, source)));
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (key != "endpoints" && key != "cache")
      throw ConfigError(fmt::format("{}: unknown key 'llm.{}'; the llm section takes endpoints and cache.{}",
                                    where(it->first, source), key,
                                    closest(key, {"endpoints", "cache"}).empty()
                                        ? ""
                                        : " Did you mean '" + closest(key, {"endpoints", "cache"}) + "'?"));
  }
  const Schema cache_schema{Param::boolean("cache", true, "reuse the answers of seeded requests")};
  YAML::Node cache_only(YAML::NodeType::Map);
  if (node["cache"].IsDefined()) cache_only["cache"] = node["cache"];
  c.cache = params_from_yaml(cache_only, cache_schema, "llm", "llm", source).get_bool("cache");
  const YAML::Node list = node["endpoints"];
  if (!list.IsDefined() || list.IsNull()) return c;
  if (!list.IsSequence())
    throw ConfigError(fmt::format("{}: 'llm.endpoints' must be a list of maps {{name, base_url, model, ...}}",
                                  where(list, source)));
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    c.endpoints.push_back(endpoint_from(list[i], i, source));
    if (!names.insert(c.endpoints.back().name).second)
      throw ConfigError(fmt::format("{}: two llm endpoints are named '{}'; names must be unique",
                                    where(list[i], source), c.endpoints.back().name));
  }
  return c;
}

YAML::Node LlmConfig::to_yaml() const {
  YAML::Node out(YAML::NodeType::Map);
  out["cache"] = cache;
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& e : endpoints) {
    YAML::Node n(YAML::NodeType::Map);
    n["name"] = e.name;
    n["base_url"] = e.base_url;
    n["model"] = e.model;
    n["api_key_env"] = e.api_key_env;
    n["price_per_1k_input"] = e.price_per_1k_input;
    n["price_per_1k_output"] = e.price_per_1k_output;
    n["max_concurrency"] = e.max_concurrency;
    n["timeout"] = e.timeout_s;
    n["max_retries"] = e.max_retries;
    list.push_back(n);
  }
  out["endpoints"] = list;
  return out;
}

}  // namespace nexp
