#pragma once
// A remote text environment: one task of an AgentGym-style server, played over HTTP with JSON behind
// the Env interface, so that the constructions, the student and the LLM teacher run on a real
// benchmark (ALFWorld, WebShop) where the procedural worlds stand in for it otherwise.
//
// The protocol (one server per environment; `env_name` picks the dialect):
//
//   alfworld   POST /create                                  -> {"id": n}
//              POST /reset {"id", "game": task, "world_type": "Text"}
//                                                            -> {"observation", "available_actions", "task_type"}
//              POST /step  {"id", "action"}                  -> {"observation", "reward", "done", "available_actions"}
//              GET  /observation?id=n                        -> the current observation (a string)
//              GET  /available_actions?id=n                  -> [action, ...]
//              a failure is an HTTP 200 answer {"error": message}; the server has no /close.
//   webshop    POST /create                                  -> n
//              POST /reset {"env_idx", "session_id": task}   -> [observation, null]
//              POST /step  {"env_idx", "action"}             -> {"state", "reward", "done", "info"}
//              GET  /observation?env_idx=n                   -> the current observation (a string)
//              GET  /available_actions?env_idx=n             -> {"has_search_bar", "clickables"}
//              GET  /instruction_text?env_idx=n              -> the task's instruction
//              POST /close {"env_idx"}                       -> {"closed"}
//
// Episode semantics:
//   admissible()  ALFWorld's available_actions; WebShop's click[c] for every clickable, and, while the
//                 page has a search bar, the one search the closed action list can hold:
//                 search[<the instruction's text>].
//   step()        done when the server says done or at the step limit (`max_steps`); success iff the
//                 server said done with a reward > 0 (ALFWorld's reward is 1 when won; WebShop's is the
//                 attribute-match score in [0, 1], so a partial match counts as success).
//   plan()        throws: a remote server exposes no world to plan in; such a run needs `teacher: llm`.
//   state_key()   a hash of the observation text.
//   clone()       a fresh server instance, reset to the same task and driven through the actions taken
//                 so far: what the constructions' replay() does too (the server cannot copy a state).
//
// Instances are pooled per client: an episode's instance goes back to the pool when its HttpEnv is
// destroyed and the next episode resets it, so a run creates as many instances as it plays episodes at
// once (ALFWorld's server never frees one). WebShop's are closed when the client goes.
// Every failure (no connection, an HTTP status other than 200, a body that is not JSON or lacks a
// field, the server's own {"error"}) is a nexp::DataError naming the method, URL and route, what was
// expected, what was found, and what to do. Requests are not retried: a step is not idempotent.
//
// httplib is included by http_env.cpp only.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "env.hpp"

namespace agent_sft {

struct RemoteSpec {
  std::string url;                   // http://host:port, optionally with a path prefix
  std::string env_name = "alfworld"; // the dialect: alfworld or webshop
  int max_steps = 50;                // step limit of an episode
  double timeout_s = 60;             // for one request: connect, send, wait for the answer
};

// One server: its address, its dialect, and its idle instances. Thread-safe.
class AgentGymClient {
 public:
  // Checks the spec (ConfigError for a URL that is not http(s)://host[:port][/prefix] or an unknown
  // env_name); contacts nothing.
  explicit AgentGymClient(RemoteSpec spec);
  ~AgentGymClient();
  AgentGymClient(const AgentGymClient&) = delete;
  AgentGymClient& operator=(const AgentGymClient&) = delete;
  const RemoteSpec& spec() const;

  struct Answer {
    std::string observation;
    std::vector<std::string> actions;  // admissible now
    double reward = 0;
    bool done = false;
    std::string task_type;             // when the server names it (ALFWorld's reset)
  };
  std::int64_t acquire();                  // an idle instance, else POST /create
  void release(std::int64_t instance);     // back to the pool
  Answer reset(std::int64_t instance, std::int64_t task);
  Answer step(std::int64_t instance, const std::string& action);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class HttpEnv final : public Env {
 public:
  HttpEnv(std::shared_ptr<AgentGymClient> client, std::int64_t task);
  ~HttpEnv() override;
  std::string reset() override;
  std::vector<std::string> admissible() const override { return actions_; }
  StepResult step(const std::string& action) override;
  std::string plan() const override;
  std::string state_key() const override;
  std::string task_type() const override { return task_type_; }
  int step_limit() const override;
  std::unique_ptr<Env> clone() const override;
  std::int64_t task() const { return task_; }
  std::int64_t instance() const { return instance_; }

 private:
  std::shared_ptr<AgentGymClient> client_;
  std::int64_t task_;
  std::int64_t instance_ = -1;
  std::string observation_, task_type_;
  std::vector<std::string> actions_, history_;
};

}  // namespace agent_sft
