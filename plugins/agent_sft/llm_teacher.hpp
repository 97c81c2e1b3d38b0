#pragma once
// A chat model as the teacher (the paper's LLM teacher): the transcript so far and the admissible
// actions go to an OpenAI-compatible endpoint (nexp/llm.hpp) with a GBNF grammar that admits exactly
// those actions, at temperature 0, seeded from the teacher's stream. Plain C++.
//
// A server that ignores grammars can still answer something else: then `fallback` acts instead (the
// planner, for the procedural worlds), or, without one (a remote environment, which has no planner),
// the answer is an error naming the endpoint, the answer and the admissible actions.
#include <nexp/llm.hpp>

#include <string>

#include "corpus.hpp"

namespace agent_sft {

TeacherFn llm_teacher(nexp::llm::Client& client, TeacherFn fallback = nullptr);

// The grammar that admits exactly `actions` (GBNF string literals, quotes and backslashes escaped).
std::string action_grammar(const std::vector<std::string>& actions);

}  // namespace agent_sft
