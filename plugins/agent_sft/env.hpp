#pragma once
// Text environments for agent SFT, the interface every world implements, and the teacher.
//
//   Env           one episode of one task: reset() gives the task text and first observation,
//                 admissible() the actions allowed now (the student scores exactly these), step() the
//                 next observation; done on success, on a terminal failure (a wrong answer, a failed
//                 hidden test) or at the step limit.
//   Env::plan()   the planner's next action, computed from what the agent has observed so far (the
//                 facts revealed by its observations, never the hidden world): a teacher whose
//                 actions depend on hidden state could not be imitated from the transcript. A remote
//                 environment has no world to plan in: its plan() throws (such a run needs `teacher: llm`).
//   Teacher       plan() with probability 1 - eps, else a uniformly random admissible action, then
//                 re-plans from wherever that leads (eps sets the teacher's success rate).
//   TaskSpec      (env, split, type, id): the world and task are a pure function of it; for a remote
//                 environment (World::Http, http_env.hpp) id is the server's task index.
//   tokenize()    the closed vocabulary of the student: lower-cased words, numbers and punctuation
//                 hashed (FNV-1a) into kVocab buckets; ids below kFirstWord are reserved.
//
// The worlds (linklookup.cpp, household.cpp, minishell.cpp) and the remote environment (http_env.cpp)
// are plain C++: no LibTorch.
#include <nexp/random.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace agent_sft {

struct StepResult {
  std::string observation;
  bool done = false;
  bool success = false;
};

class Env {
 public:
  virtual ~Env() = default;
  virtual std::string reset() = 0;
  virtual std::vector<std::string> admissible() const = 0;
  // An action outside admissible() is answered like a real environment answers it (e.g. "Nothing
  // happens."), costs a step and changes nothing.
  virtual StepResult step(const std::string& action) = 0;
  virtual std::string plan() const = 0;
  // The abstract state (what has been revealed, where the agent is, what it holds), for coverage.
  virtual std::string state_key() const = 0;
  virtual std::string task_type() const = 0;
  virtual int step_limit() const = 0;
  virtual std::unique_ptr<Env> clone() const = 0;
  int steps_taken() const { return steps_; }

 protected:
  int steps_ = 0;
};

// Http: a task of an AgentGym-style server (http_env.hpp), not a procedural world.
enum class World { LinkLookup, Household, MiniShell, Http };
World world_from_name(const std::string& name);
std::string world_name(World w);
// Task types per world: LinkLookup {bridge, comparison}; Household ALFWorld's six; MiniShell
// {find_copy, count_lines, edit_key, move_ext}; Http {remote}.
std::vector<std::string> task_types(World w);

class AgentGymClient;

struct TaskSpec {
  World world = World::LinkLookup;
  bool unseen = false;  // the held-out split: worlds drawn from another pool (names, layouts, trees)
  int type = 0;         // index into task_types(world)
  std::uint64_t id = 0;
  std::shared_ptr<AgentGymClient> remote = nullptr;  // World::Http: the server that plays task `id`
};
std::unique_ptr<Env> make_env(const TaskSpec& task);
// n tasks of a split, types in turn, ids drawn from the stream.
std::vector<TaskSpec> draw_tasks(World w, bool unseen, int n, nexp::Random& rng);

class Teacher {
 public:
  explicit Teacher(double eps) : eps_(eps) {}
  std::string act(const Env& env, nexp::Random& rng) const;
  double eps() const { return eps_; }

 private:
  double eps_;
};

// The teacher noise an environment uses when eps < 0: the value that puts the planner's success in
// the 85-95% the paper's teachers reach (measured: tests/test_worlds.cpp).
double default_eps(World w);

// ------------------------------------------------------------------ tokens

constexpr int kVocab = 4096;
constexpr int kPad = 0, kAct = 1, kObs = 2, kGoal = 3, kFirstWord = 8;
std::vector<int> tokenize(const std::string& text);

// ------------------------------------------------------------------ helpers shared by the worlds

// "a b, c and d" style lists as ALFWorld writes them ("a apple 1, a knife 1").
std::string join(const std::vector<std::string>& items, const std::string& sep);
bool starts_with(const std::string& s, const std::string& prefix);

}  // namespace agent_sft
