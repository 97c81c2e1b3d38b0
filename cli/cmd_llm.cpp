// nexp llm ping: the first thing to run when a language-model endpoint misbehaves.
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "app.hpp"
#include "nexp/error.hpp"
#include "nexp/llm.hpp"
#include "nexp/runtime/experiment.hpp"

namespace nexp::cli {

namespace {

// The endpoint: by name from a config's llm: section, or a base URL given directly.
llm::Endpoint find_endpoint(const std::string& name, const std::string& config, const std::string& model) {
  if (name.rfind("http://", 0) == 0 || name.rfind("https://", 0) == 0) {
    llm::Endpoint e;
    e.name = name, e.base_url = name, e.model = model;
    return e;
  }
  if (config.empty())
    throw ConfigError(fmt::format("`nexp llm ping {}`: name the config whose llm: section defines '{}' with -c FILE, "
                                  "or give a base URL (http://host:port/v1)",
                                  name, name));
  // Only the llm: section is read (no plugin is loaded, no ${...} is resolved): a config whose
  // method does not load can still have its endpoints checked.
  const LlmConfig section = parse_llm_config(read_yaml_file(config)["llm"], config);
  const llm::Endpoint* e = section.find(name);
  if (!e) {
    std::vector<std::string> names;
    for (const auto& x : section.endpoints) names.push_back(x.name);
    throw ConfigError(fmt::format("config '{}' names no llm endpoint '{}' (it names: {})", config, name,
                                  names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
  }
  llm::Endpoint out = *e;
  if (!model.empty()) out.model = model;
  return out;
}

int ping(const std::string& name, const std::string& config, const std::string& model) {
  llm::Endpoint e = find_endpoint(name, config, model);
  e.max_retries = 0;  // report what happens, do not hide it behind retries
  llm::Client client(e);
  std::cout << fmt::format("endpoint  {} ({})\n", e.name, e.base_url);
  const auto t0 = std::chrono::steady_clock::now();
  const auto models = client.models();
  const double list_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("models    {} ({:.1f} ms)\n", models.empty() ? "(none listed)" : fmt::format("{}", fmt::join(models, ", ")),
                           list_s * 1e3);
  if (e.model.empty()) {
    if (models.empty()) throw ConfigError("the server lists no model; give one with --model");
    e.model = models.front();
  }
  llm::Client chat_client(e);
  llm::Request r;
  r.messages = {llm::Message::user("Say OK.")};
  r.max_tokens = 1;
  r.temperature = 0;
  const llm::Response a = chat_client.chat(r);
  std::cout << fmt::format("chat      {} answered {:?} in {:.1f} ms ({} prompt + {} completion tokens{})\n",
                           a.model.empty() ? e.model : a.model, a.text(), a.latency_s * 1e3, a.usage.prompt_tokens,
                           a.usage.completion_tokens,
                           a.server_s >= 0 ? fmt::format("; the server's own time {:.1f} ms", a.server_s * 1e3) : "");
  return 0;
}

}  // namespace

void add_llm_commands(CLI::App& cli, App&) {
  auto* llm = cli.add_subcommand("llm", "Language-model endpoints (the config's llm: section)");
  llm->require_subcommand(1);
  auto name = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>();
  auto* p = llm->add_subcommand("ping", "List an endpoint's models and time one round trip (a one-token answer)");
  p->add_option("name", *name, "an endpoint named in the config's llm: section, or a base URL")->required();
  p->add_option("-c,--config", *config, "the experiment config that names the endpoint");
  p->add_option("--model", *model, "ask for this model (default: the endpoint's, or the first listed)");
  p->callback([name, config, model] { ping(*name, *config, *model); });
}

}  // namespace nexp::cli
