#include "env.hpp"

#include <nexp/error.hpp>

#include <cctype>

#include "worlds.hpp"

namespace agent_sft {

World world_from_name(const std::string& name) {
  if (name == "linklookup") return World::LinkLookup;
  if (name == "household") return World::Household;
  if (name == "minishell") return World::MiniShell;
  if (name == "http") return World::Http;
  throw nexp::ConfigError("agent_sft: unknown environment '" + name +
                          "'; expected linklookup, household, minishell or http");
}

std::string world_name(World w) {
  switch (w) {
    case World::LinkLookup: return "linklookup";
    case World::Household: return "household";
    case World::Http: return "http";
    default: return "minishell";
  }
}

std::vector<std::string> task_types(World w) {
  switch (w) {
    case World::LinkLookup: return {"bridge", "comparison"};
    case World::Household:
      return {"pick_and_place",       "look_at_obj_in_light", "pick_clean_then_place",
              "pick_heat_then_place", "pick_cool_then_place", "pick_two_obj_and_place"};
    case World::Http: return {"remote"};
    default: return {"find_copy", "count_lines", "edit_key", "move_ext"};
  }
}

std::unique_ptr<Env> make_env(const TaskSpec& task) {
  switch (task.world) {
    case World::LinkLookup: return make_linklookup(task);
    case World::Household: return make_household(task);
    case World::Http: return make_http_env(task);
    default: return make_minishell(task);
  }
}

std::vector<TaskSpec> draw_tasks(World w, bool unseen, int n, nexp::Random& rng) {
  const int types = static_cast<int>(task_types(w).size());
  std::vector<TaskSpec> tasks(n);
  for (int i = 0; i < n; ++i) tasks[i] = {w, unseen, i % types, rng()};
  return tasks;
}

double default_eps(World w) { return w == World::Household ? 0.5 : 0.1; }

std::string Teacher::act(const Env& env, nexp::Random& rng) const {
  if (eps_ > 0 && rng.bernoulli(eps_)) {
    const auto actions = env.admissible();
    return actions[rng.below(actions.size())];
  }
  return env.plan();
}

std::vector<int> tokenize(const std::string& text) {
  std::vector<int> out;
  auto emit = [&](const std::string& w) {
    out.push_back(kFirstWord + static_cast<int>(nexp::fnv1a64(w) % (kVocab - kFirstWord)));
  };
  std::string word;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_') {
      word += static_cast<char>(std::tolower(u));
      continue;
    }
    if (!word.empty()) emit(word), word.clear();
    if (!std::isspace(u)) emit(std::string(1, c));
  }
  if (!word.empty()) emit(word);
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

}  // namespace agent_sft
