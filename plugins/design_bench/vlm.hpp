#pragma once
// A vision-language model as a benchmark model, through any OpenAI-compatible endpoint (nexp/llm.hpp).
// Each item becomes one chat request: nexp's own instruction for the task, the layout(s) as PNG data
// URLs (the dataset's PNG, else rendered with Cairo), the item's textual input (ids, boxes, canvas) and
// a JSON schema {"answer": ...} for the answer form of tasks.hpp. The reply's reasoning block
// (<think>...</think>) and code fences are stripped; a reply that is not JSON of that form is null,
// which the scorer counts in parse_failures and scores as wrong.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tasks.hpp"

namespace nexp::llm {
class Client;
}

namespace design_bench {

// The answer inside a model's reply text, or null.
nlohmann::json parse_reply(const std::string& text);
// The instruction and JSON schema of a task's answer.
std::string task_prompt(const std::string& task);
nlohmann::json answer_schema(const std::string& task);

class VlmModel {
 public:
  VlmModel(nexp::llm::Client& client, std::filesystem::path image_dir, std::uint64_t seed)
      : client_(client), image_dir_(std::move(image_dir)), seed_(seed) {}
  nlohmann::json answer(const std::string& task, const Item& item, const Corpus& c);

 private:
  nexp::llm::Client& client_;
  std::filesystem::path image_dir_;
  std::uint64_t seed_;
};

}  // namespace design_bench
