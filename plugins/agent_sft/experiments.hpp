#pragma once
// The nexp glue: the data set agent_sft.env, the methods agent_sft.sft (the constructions at a
// matched budget), agent_sft.tenth (cont at B/10 without RL against BC at B plus RL), agent_sft.rl
// (REINFORCE from each construction's checkpoint) and agent_sft.export (a corpus as chat JSONL).
// Options are declared once, here.
#include <nexp/nexp.hpp>

#include <memory>
#include <string>
#include <vector>

#include "corpus.hpp"

namespace agent_sft {

struct EnvOptions {
  std::string env = "linklookup";
  std::string split = "seen";
  int tasks = 200;  // held-out evaluation tasks, shared by every seed and construction of a run
  // env=http: an AgentGym-style server (http_env.hpp). The defaults are ALFWorld's split there: games
  // 0-2419 train, 2420-2619 test.
  std::string url;
  std::string env_name = "alfworld";
  std::int64_t eval_first = 2420;
  std::int64_t train_first = 0;
  std::int64_t train_tasks = 2420;
  int max_steps = 50;
  double timeout = 60;
  static void declare(nexp::Options<EnvOptions>& o) {
    o.add("env", &EnvOptions::env, "the text environment: a procedural world, or http (an AgentGym-style server)")
        .choices({"linklookup", "household", "minishell", "http"});
    o.add("split", &EnvOptions::split, "evaluation split: seen worlds, or unseen names / layouts")
        .choices({"seen", "unseen"});
    o.add("tasks", &EnvOptions::tasks, "held-out evaluation tasks (task types in turn)").range(1, 100000);
    o.add("url", &EnvOptions::url, "env=http: the server's address, http://host:port");
    o.add("env_name", &EnvOptions::env_name, "env=http: the server's protocol, agentenv-alfworld's or agentenv-webshop's")
        .choices({"alfworld", "webshop"});
    o.add("eval_first", &EnvOptions::eval_first, "env=http: the first held-out task index; `tasks` consecutive ones")
        .range(0, 1e15);
    o.add("train_first", &EnvOptions::train_first, "env=http: the first training task index").range(0, 1e15);
    o.add("train_tasks", &EnvOptions::train_tasks,
          "env=http: training tasks are drawn uniformly from train_first .. train_first + train_tasks - 1")
        .range(1, 1e15);
    o.add("max_steps", &EnvOptions::max_steps, "env=http: step limit of an episode (the server's done ends it sooner)")
        .range(1, 100000);
    o.add("timeout", &EnvOptions::timeout, "env=http: seconds to wait for the server's answer to one request")
        .range(0.1, 3600);
  }
};

// The evaluation tasks of a run and the world they come from; for env=http the server and the
// training task range too.
struct EnvSet : nexp::Dataset {
  World world = World::LinkLookup;
  bool unseen = false;
  std::vector<TaskSpec> eval;
  std::shared_ptr<AgentGymClient> remote;
  std::uint64_t train_first = 0, train_tasks = 0;
  std::string describe() const override;
  TaskStream training_tasks(std::uint64_t seed) const;
};
std::shared_ptr<nexp::Dataset> make_env_set(const EnvOptions& o, nexp::RunContext& ctx);

struct StudentOptions {
  int dim = 64, layers = 2, heads = 4, context = 256, batch = 16;
  double lr = 2e-3;
  static void declare(nexp::Options<StudentOptions>& o) {
    o.add("dim", &StudentOptions::dim, "model width").range(8, 1024);
    o.add("layers", &StudentOptions::layers, "transformer blocks").range(1, 24);
    o.add("heads", &StudentOptions::heads, "attention heads (dim must be a multiple)").range(1, 64);
    o.add("context", &StudentOptions::context, "tokens the student reads: the pinned goal, then the latest history").range(16, 4096);
    o.add("batch", &StudentOptions::batch, "windows per update").range(1, 4096);
    o.add("lr", &StudentOptions::lr, "AdamW learning rate").range(1e-6, 1);
  }
};

// What every SFT run shares: the budget, the teacher, the student, the seeds.
struct SftOptions {
  std::vector<std::string> constructions = {"bc", "cont", "filtered", "hard"};
  std::int64_t budget = 5000;
  BudgetUnit budget_unit = BudgetUnit::Kept;
  int k = 4;
  int rounds = 4;
  double warm_share = 0.2;
  double eps = -1;
  int seeds = 5;
  int updates_per_1k = 100;
  int rollout_batch = 32;
  int states_per_rollout = 1;
  std::string teacher = "planner";
  std::string llm_endpoint = "teacher";
  StudentOptions student;
  static void declare(nexp::Options<SftOptions>& o);
};

struct RlOptions {
  int iterations = 40;      // REINFORCE updates
  int episodes = 32;        // student episodes per update
  int early = 10;           // the update after which "early" success is measured
  int eval_every = 10;
  double lr = 5e-4;
  static void declare(nexp::Options<RlOptions>& o);
};

struct TenthOptions : SftOptions {
  int divisor = 10;
  RlOptions rl;
  static void declare(nexp::Options<TenthOptions>& o);
};

struct RlRunOptions : SftOptions {
  RlOptions rl;
  static void declare(nexp::Options<RlRunOptions>& o);
};

struct ExportOptions : SftOptions {
  static void declare(nexp::Options<ExportOptions>& o);
};

void run_sft(nexp::RunContext& ctx);
void run_tenth(nexp::RunContext& ctx);
void run_rl(nexp::RunContext& ctx);
void run_export(nexp::RunContext& ctx);

}  // namespace agent_sft
