#include "llm_teacher.hpp"

#include <nexp/error.hpp>

#include <algorithm>
#include <cctype>

namespace agent_sft {

namespace {

std::string gbnf_literal(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string transcript(const Episode& e) {
  std::string t = e.intro + "\n";
  for (std::size_t i = 0; i < e.decisions.size(); ++i)
    t += "> " + e.decisions[i].actions[e.decisions[i].chosen] + "\n" + e.observations[i] + "\n";
  return t;
}

}  // namespace

std::string action_grammar(const std::vector<std::string>& actions) {
  std::string grammar = "root ::= ";
  for (std::size_t i = 0; i < actions.size(); ++i) grammar += (i ? " | " : "") + gbnf_literal(actions[i]);
  return grammar;
}

TeacherFn llm_teacher(nexp::llm::Client& client, TeacherFn fallback) {
  nexp::llm::Client* c = &client;
  return [c, fallback](const Env& env, const Episode& e, nexp::Random& rng) {
    const auto actions = env.admissible();
    nexp::llm::Request r;
    r.messages = {nexp::llm::Message::system("You are an expert agent in a text environment. Reply with exactly one "
                                             "of the admissible actions, nothing else."),
                  nexp::llm::Message::user(transcript(e) + "\nAdmissible actions:\n- " + join(actions, "\n- "))};
    r.grammar = action_grammar(actions);
    r.temperature = 0;
    r.max_tokens = 48;
    r.seed = static_cast<std::int64_t>(rng() >> 33);  // 31 bits: llama.cpp's and JSON-number-safe servers' range
    std::string answer = c->chat(r).text();
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back()))) answer.pop_back();
    if (std::find(actions.begin(), actions.end(), answer) != actions.end()) return answer;
    if (fallback) return fallback(env, e, rng);
    throw nexp::ConfigError("agent_sft: the LLM teacher (endpoint '" + c->endpoint().name + "', " + c->endpoint().base_url +
                      ") answered '" + answer + "', which is none of the " + std::to_string(actions.size()) +
                      " admissible actions ('" + join(actions, "', '") +
                      "'); the request carried a GBNF grammar admitting exactly them, so the server ignores "
                      "grammars: serve the model with one that honours them (llama.cpp's server, vLLM)");
  };
}

}  // namespace agent_sft
