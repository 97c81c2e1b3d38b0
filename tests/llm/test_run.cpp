// Language models inside runs: the `llm:` section, ctx.llm(), the call log, the summary, the cache,
// and the key that never reaches the run folder.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "nexp/run_context.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/runner.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char* kKey = "sk-nexp-test-7f3a9c1e5b2d";

struct AskOptions {
  std::int64_t questions = 3;
  static void declare(Options<AskOptions>& o) { o.add("questions", &AskOptions::questions, "how many").min(0); }
};

// A method that asks the endpoint `fake` `questions` seeded questions.
Registry& registry() {
  static Registry* registry = nullptr;  // never destroyed, like the CLI's
  if (!registry) {
    registry = new Registry();
    PluginRecord record{"llmtest", "1", "language-model test methods", "", "", "", ""};
    registry->register_plugin(record, [](Registrar& r) {
      r.metric("answered", Direction::Maximize, "questions answered");
      r.method("llmtest.ask", "asks an endpoint seeded questions", [](RunContext& ctx) {
         const auto n = ctx.options<AskOptions>().questions;
         double answered = 0;
         for (std::int64_t i = 0; i < n; ++i) {
           llm::Request q;
           q.messages = {llm::Message::user("question " + std::to_string(i))};
           q.seed = static_cast<std::int64_t>(ctx.seed()) + i;
           answered += !ctx.llm("fake").chat(q).text().empty();
         }
         ctx.summary("answered", answered);
       })
          .options<AskOptions>()
          .produces({"answered"});
    });
    configure_logging(Verbosity::Quiet);
  }
  return *registry;
}

struct Folder {
  fs::path path;
  Folder() {
    char tmpl[] = "/tmp/nexp-llm-run-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Folder() { fs::remove_all(path); }
};

Experiment experiment(const fs::path& dir, const std::string& llm_section) {
  std::ofstream(dir / "ask.yaml") << "method: llmtest.ask\nseed: 5\nruns_dir: " << (dir / "runs").string() << "\n"
                                  << llm_section;
  return load_experiment(dir / "ask.yaml", {}, registry());
}

RunResult run(const Experiment& e) {
  RunOptions o;
  o.handle_signals = false;
  o.command_line = "test";
  return run_experiment(e, o, registry());
}

std::vector<json> calls(const fs::path& folder) {
  std::vector<json> out;
  std::ifstream in(folder / "artifacts" / "llm_calls.jsonl");
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

std::string section(const FakeServer& s, const std::string& extra = "") {
  return "llm:\n" + extra + "  endpoints:\n    - {name: fake, base_url: \"" + s.base_url() +
         "\", model: fake, api_key_env: NEXP_TEST_LLM_KEY, price_per_1k_input: 2, price_per_1k_output: 4}\n";
}

}  // namespace

TEST(LlmRun, CallsAreLoggedCountedAndCachedSoASecondRunCallsNothing) {
  Folder dir;
  ::setenv("NEXP_LLM_CACHE_DIR", (dir.path / "cache").c_str(), 1);
  ::setenv("NEXP_TEST_LLM_KEY", kKey, 1);
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content(completion_body("B", 100, 10), "application/json");
  });
  const Experiment e = experiment(dir.path, section(server));
  const RunResult first = run(e);
  ASSERT_EQ(first.status, RunStatus::Completed) << first.error;
  EXPECT_EQ(server.requests.load(), 3);
  EXPECT_EQ(first.summary.at("llm_calls"), 3);
  EXPECT_EQ(first.summary.at("llm_tokens"), 330);
  EXPECT_NEAR(first.summary.at("llm_cost"), 3 * (0.1 * 2 + 0.01 * 4), 1e-12);
  const auto log = calls(first.folder);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0]["seed"], 5);
  EXPECT_EQ(log[2]["seed"], 7);
  EXPECT_EQ(log[0]["status"], "ok");
  EXPECT_EQ(log[0]["request_sha256"].get<std::string>().size(), 64u);

  const RunResult second = run(e);
  ASSERT_EQ(second.status, RunStatus::Completed) << second.error;
  EXPECT_EQ(server.requests.load(), 3) << "every seeded request was answered from the cache";
  EXPECT_EQ(second.summary.at("llm_calls"), 0);
  EXPECT_EQ(second.summary.at("llm_cached"), 3);
  EXPECT_EQ(second.summary.at("llm_cost"), 0);
  for (const auto& c : calls(second.folder)) EXPECT_EQ(c["cached"], true);
  ::unsetenv("NEXP_LLM_CACHE_DIR");
}

TEST(LlmRun, CacheFalseCallsAgain) {
  Folder dir;
  ::setenv("NEXP_LLM_CACHE_DIR", (dir.path / "cache").c_str(), 1);
  ::setenv("NEXP_TEST_LLM_KEY", kKey, 1);
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content(completion_body("B"), "application/json");
  });
  const Experiment e = experiment(dir.path, section(server, "  cache: false\n"));
  run(e);
  run(e);
  EXPECT_EQ(server.requests.load(), 6);
  EXPECT_FALSE(fs::exists(dir.path / "cache"));
  ::unsetenv("NEXP_LLM_CACHE_DIR");
}

TEST(LlmRun, TheKeyNeverReachesTheRunFolder) {
  Folder dir;
  ::setenv("NEXP_LLM_CACHE_DIR", (dir.path / "cache").c_str(), 1);
  ::setenv("NEXP_TEST_LLM_KEY", kKey, 1);
  std::string seen;
  FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    seen = req.get_header_value("Authorization");
    res.set_content(completion_body("B"), "application/json");
  });
  const RunResult r = run(experiment(dir.path, section(server)));
  ASSERT_EQ(r.status, RunStatus::Completed) << r.error;
  EXPECT_EQ(seen, std::string("Bearer ") + kKey) << "the key was used";
  // Every file the run or the cache wrote, the index included: no trace of the key.
  int files = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir.path)) {
    if (!f.is_regular_file()) continue;
    ++files;
    std::ifstream in(f.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().find(kKey), std::string::npos) << f.path();
    EXPECT_EQ(text.str().find("7f3a9c1e5b2d"), std::string::npos) << f.path();
  }
  EXPECT_GT(files, 8);
  ::unsetenv("NEXP_LLM_CACHE_DIR");
}

TEST(LlmRun, WithoutAnLlmSectionNothingIsCalled) {
  Folder dir;
  const Experiment e = experiment(dir.path, "");
  EXPECT_TRUE(e.llm.endpoints.empty());
  const RunResult r = run(e);
  EXPECT_EQ(r.status, RunStatus::Failed);
  EXPECT_TRUE(r.config_error);
  EXPECT_NE(r.error.find("names none"), std::string::npos) << r.error;
  EXPECT_EQ(r.summary.count("llm_calls"), 0u);
  EXPECT_FALSE(fs::exists(r.folder / "artifacts" / "llm_calls.jsonl"));
}

TEST(LlmRun, TheSectionIsValidated) {
  Folder dir;
  auto error = [&](const std::string& text) {
    try {
      experiment(dir.path, text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("llm: {endpoint: []}\n").find("Did you mean 'endpoints'"), std::string::npos);
  EXPECT_NE(error("llm:\n  endpoints:\n    - {name: a, model: m}\n").find("'llm.endpoints.0.base_url' is required"),
            std::string::npos)
      << error("llm:\n  endpoints:\n    - {name: a, model: m}\n");
  EXPECT_NE(error("llm:\n  endpoints:\n    - {name: a, base_url: ftp://x, model: m}\n").find("http://"),
            std::string::npos);
  // The config file has three lines before `llm:`; the endpoint is on line 6.
  const std::string range = error("llm:\n  endpoints:\n    - {name: a, base_url: http://x, model: m, max_concurrency: 0}\n");
  EXPECT_NE(range.find("line 6"), std::string::npos) << range;
  EXPECT_NE(range.find("llm.endpoints.0.max_concurrency"), std::string::npos) << range;
  EXPECT_NE(error("llm:\n  endpoints:\n    - {name: a, base_url: http://x, model: m, api_key_env: sk-123}\n")
                .find("environment variable"),
            std::string::npos);
  const std::string twice = "llm:\n  endpoints:\n    - {name: a, base_url: http://x, model: m}\n"
                            "    - {name: a, base_url: http://y, model: m}\n";
  EXPECT_NE(error(twice).find("unique"), std::string::npos);
  // The resolved config holds the section with every default filled in.
  const Experiment e = experiment(dir.path, "llm:\n  endpoints:\n    - {name: a, base_url: http://x/v1, model: m}\n");
  const YAML::Node y = e.to_yaml()["llm"];
  EXPECT_EQ(y["cache"].as<bool>(), true);
  EXPECT_EQ(y["endpoints"][0]["max_concurrency"].as<int>(), 4);
  EXPECT_EQ(y["endpoints"][0]["api_key_env"].as<std::string>(), "");
}
