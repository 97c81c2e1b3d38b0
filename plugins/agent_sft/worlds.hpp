#pragma once
// The three worlds behind make_env() (and, for World::Http, the remote environment of http_env.hpp).
// Each world keeps, next to its hidden world, what the agent has observed so far; plan() and the
// admissible arguments read only that.
//
//   LinkLookup (HotpotQA as ReAct plays it)   linklookup.cpp
//     A per-task knowledge world: a film, its director, their near-duplicates ("Karo Velin" /
//     "Karo Velan"), cities; two companies with founding years and near-duplicates. search[x] shows a
//     page's first paragraph, lookup[k] the next sentence of the open page holding k ("(Result i / n)"),
//     finish[x] ends the episode with exact match. Bridge: "Where was the director of F born?"
//     (search F, search its director, lookup[born] unless the first paragraph says it, finish);
//     comparison: "Which company was founded first, A or B?". Step limit 8. The unseen split draws its
//     names from a disjoint syllable pool.
//   Household (ALFWorld)                      household.cpp
//     13 receptacle types (cabinet, drawer, fridge and microwave closed until opened), 12 object types
//     placed by type-specific priors (apples in the fridge or on the countertop, knives in drawers ...),
//     ALFWorld's six task types (pick_and_place, look_at_obj_in_light, pick_clean_then_place,
//     pick_heat_then_place, pick_cool_then_place, pick_two_obj_and_place), its grammar (go to, open,
//     close, take X from R, put X in/on R, clean/heat/cool X with R, use desklamp 1, examine,
//     inventory, look) and observation text; "Nothing happens." for anything else; step limit 50. 40
//     seen layouts; the unseen split's 20 layouts hold more cabinets, drawers and shelves. The planner
//     searches unseen receptacles in the order of the object's prior.
//   MiniShell (Terminal-Bench)                minishell.cpp
//     A file tree; tasks find_copy (copy the file holding a token into a folder that may not exist),
//     count_lines (wc -l, echo N > /answer.txt), edit_key (find a service's config with grep, sed -i
//     its key), move_ext (ls, mv every .tmp into /trash); GNU error messages; submit runs the hidden
//     test on the final tree; step limit 30.
#include "env.hpp"

namespace agent_sft {

std::unique_ptr<Env> make_linklookup(const TaskSpec& task);
std::unique_ptr<Env> make_household(const TaskSpec& task);
std::unique_ptr<Env> make_minishell(const TaskSpec& task);
// World::Http: task.id of the server task.remote names (http_env.cpp).
std::unique_ptr<Env> make_http_env(const TaskSpec& task);

}  // namespace agent_sft
