#pragma once
// Episodes, rollouts, the four constructions of supervised data, and the evaluator. Plain C++: the
// student enters only through the Policy interface.
//
// An episode's token stream is
//   tokenize(task text) , then per step: kAct, tokenize(action), kObs, tokenize(observation)
// and a Decision at step t sits on its kAct token: the student's state there has read everything
// before the action, and scores each admissible action. Labelled decisions are teacher steps kept for
// the loss (cross-entropy over the admissible actions); the student's own steps are context only.
// What the student reads at a decision (`view`) is the episode's goal, pinned, then kGoal, then the
// latest tokens of the stream: an agent keeps its task in its prompt however long the episode runs.
// The goal is the task text's last paragraph (ALFWorld's "Your task is to: ..."; the whole question
// or shell task where the text is one paragraph), at most a quarter of the context.
//
// Constructions (each from the same BC warm start; `k` and the budget as in the paper):
//   bc        the teacher from the start of a fresh task to the end; every step kept.
//   cont      roll the student out, pick a state s_t uniformly from its trajectory, let the teacher
//             act k steps from s_t (fewer if the episode ends); every step kept whatever the outcome.
//   filtered  the same states; the teacher acts to the end; kept only if the task succeeds (the
//             rejection step of on-policy expert corrections, OEC).
//   hard      filtered, only on tasks the student's rollout failed.
// Two budget views: teacher steps generated (discarded ones included: what the teacher costs) and
// steps kept (the corpus size). `BudgetUnit` picks the one a run is matched on.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "env.hpp"

namespace agent_sft {

struct Decision {
  std::vector<std::string> actions;  // admissible at this step
  int chosen = 0;
  bool labelled = false;  // a teacher step kept for the loss
  int position = 0;       // index of its kAct token in Episode::tokens
  std::string state;      // Env::state_key() before the action
};

struct Episode {
  TaskSpec task;
  std::string intro;
  std::vector<int> goal;  // tokens of the intro's last paragraph, pinned in every view
  std::vector<std::string> observations;  // one per decision
  std::vector<int> tokens;
  std::vector<Decision> decisions;
  bool done = false, success = false;
  int labelled() const;
  std::vector<std::string> actions() const;
};

// A policy chooses, for each live episode, an index into the actions admissible now.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::vector<int> choose(const std::vector<const Episode*>& episodes,
                                  const std::vector<std::vector<std::string>>& admissible) = 0;
};

// A live episode: its environment and its record so far.
struct Live {
  std::unique_ptr<Env> env;
  Episode episode;
};
using EnvFactory = std::function<std::unique_ptr<Env>(const TaskSpec&)>;
Live start(const TaskSpec& task, const EnvFactory& make = make_env);
// Takes action `index` of the admissible set in the record and in the environment.
void advance(Live& live, int index, bool labelled);
// The teacher's next action at the live state (the planner: Teacher::act; an LLM reads the episode).
using TeacherFn = std::function<std::string(const Env& env, const Episode& episode, nexp::Random& rng)>;
TeacherFn planner(const Teacher& teacher);

// A fresh environment driven through `actions` (unlabelled): the state the student reached.
Live replay(const TaskSpec& task, const std::vector<std::string>& actions);
// The teacher acts until the episode ends or `max_steps` steps are taken (labelled steps).
int teacher_steps(Live& live, const TeacherFn& teacher, nexp::Random& rng, int max_steps);

// Every task in lockstep: each step one batched call of the policy for the live episodes.
std::vector<Episode> rollout(Policy& policy, const std::vector<TaskSpec>& tasks, const EnvFactory& make = make_env);

struct Evaluation {
  double success = 0;                       // share of tasks solved
  std::map<std::string, double> by_type;    // success per task type
  double steps_on_success = 0;              // mean episode length of the solved tasks
  int tasks = 0;
};
Evaluation evaluate(Policy& policy, const std::vector<TaskSpec>& tasks, const EnvFactory& make = make_env);
Evaluation summarize(const std::vector<Episode>& episodes);
// Teacher-forced agreement: the share of the teacher's decisions on `tasks` (one teacher episode
// each) at which the policy's choice, reading the teacher's own history, is the teacher's action.
// Imitation accuracy on held-out tasks: it shows learning where whole-task success is still 0.
double agreement(Policy& policy, const std::vector<TaskSpec>& tasks, const TeacherFn& teacher, nexp::Random& rng);

// ------------------------------------------------------------------ constructions

enum class Construction { BC, Cont, Filtered, Hard };
enum class BudgetUnit { Kept, Generated };
Construction construction_from_name(const std::string& name);
std::string construction_name(Construction c);

struct Ledger {
  std::int64_t generated = 0;   // teacher steps taken
  std::int64_t kept = 0;        // teacher steps kept (labelled)
  std::int64_t discarded = 0;   // teacher steps of runs the filter threw away
  std::int64_t rollouts = 0;    // student rollouts spent to find states
  std::int64_t skipped = 0;     // hard: tasks the student solved alone (no teacher call)
  std::set<std::string> states; // abstract states at kept steps
  std::int64_t spent(BudgetUnit u) const { return u == BudgetUnit::Kept ? kept : generated; }
  double discard_share() const { return generated ? static_cast<double>(discarded) / generated : 0; }
};

struct Corpus {
  std::vector<Episode> episodes;  // every episode holds at least one labelled decision
  Ledger ledger;
};

struct CollectOptions {
  Construction construction = Construction::Cont;
  BudgetUnit unit = BudgetUnit::Kept;
  int k = 4;                 // cont: teacher steps per continuation
  int rollout_batch = 32;    // student rollouts per batched call
  int states_per_rollout = 1;  // states drawn from each student rollout
  std::int64_t max_rollouts = 0;  // stop (budget unspent) after this many rollouts; 0: never
};

// Feeds tasks to the constructions: one fresh task per call, from the training stream. A remote
// environment's training tasks are indices drawn uniformly from [first, first + count).
class TaskStream {
 public:
  TaskStream(World w, bool unseen, std::uint64_t seed) : world_(w), unseen_(unseen), rng_(seed) {}
  TaskStream(std::shared_ptr<AgentGymClient> remote, std::uint64_t first, std::uint64_t count, std::uint64_t seed)
      : world_(World::Http), unseen_(false), rng_(seed), remote_(std::move(remote)), first_(first), count_of_(count) {}
  TaskSpec next();

 private:
  World world_;
  bool unseen_;
  nexp::Random rng_;
  int count_ = 0;
  std::shared_ptr<AgentGymClient> remote_;
  std::uint64_t first_ = 0, count_of_ = 1;
};

// Adds to `corpus` until its ledger has spent `until` in the chosen unit. The student (for cont,
// filtered, hard) rolls out as it is now.
void collect(const CollectOptions& o, std::int64_t until, Policy& student, TaskStream& tasks, const TeacherFn& teacher,
             nexp::Random& rng, Corpus& corpus);

// ------------------------------------------------------------------ training examples

// What the student reads when deciding at episode token `end` (its kAct, inclusive): the goal (at most
// context / 4 tokens), kGoal, then episode tokens [begin, end], begin as early as `context` allows with
// `reserve` tokens left free (the decision's own kAct, not yet in the episode). Episode position p sits
// at p - begin + prefix in `tokens`.
struct View {
  std::vector<int> tokens;
  int begin = 0, prefix = 0;
};
View view(const Episode& episode, int end, int context, int reserve = 0);

// One view of at most `context` tokens ending at a labelled decision, with the decisions it trains.
struct Target {
  int position = 0;                              // in the window
  std::vector<std::vector<int>> candidates;      // tokens of each admissible action
  int chosen = 0;
};
struct Window {
  std::vector<int> tokens;
  std::vector<Target> targets;
};
// Cuts an episode into windows: from the last labelled decision backwards, each window covers the
// labelled decisions with at least half its stream tokens of history inside it (all of them from the
// start).
std::vector<Window> windows(const Episode& episode, int context);

// The corpus as chat JSONL for fine-tuning a language model elsewhere: one line per episode,
// {"task": ..., "messages": [{role, content, weight}]}, weight 1 on the kept teacher actions, 0 on
// the student's own (context) actions; observations are user messages.
std::string to_chat_jsonl(const Episode& episode);

}  // namespace agent_sft
