// The remote environment (http_env.hpp) against a fake AgentGym server in the test process: a tiny
// deterministic household behind agentenv-alfworld's routes and JSON (and agentenv-webshop's), with
// faults on demand. The episodes HttpEnv plays, the constructions and the evaluator on top of it, and
// the errors a person reads when the server is missing or answers badly.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nexp/error.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "../../../tests/llm/support.hpp"
#include "corpus.hpp"
#include "http_env.hpp"

namespace agent_sft {
namespace {

using nlohmann::json;

// Task g hides the key in drawer g % 3 + 1. Actions: open drawer k, take key 1 from drawer k (once
// that drawer is open), look, give up; anything else: "Nothing happens.". Taking the key ends the
// episode with reward 1, giving up with reward 0.
struct Room {
  std::int64_t task = -1;
  int key = 1;
  std::set<int> open;
  bool searched = false;  // the WebShop dialect's first page: only the search bar
  bool done = false;

  static std::string intro() {
    return "You are in a room with a drawer 1, a drawer 2 and a drawer 3.\nYour task is to: take the key.";
  }
  std::vector<std::string> actions() const {
    std::vector<std::string> a;
    if (done) return a;
    for (int k = 1; k <= 3; ++k)
      if (!open.count(k)) a.push_back("open drawer " + std::to_string(k));
    if (open.count(key)) a.push_back("take key 1 from drawer " + std::to_string(key));
    a.push_back("look");
    a.push_back("give up");
    return a;
  }
  // {observation, reward}
  std::pair<std::string, double> act(const std::string& action) {
    for (int k = 1; k <= 3; ++k) {
      const std::string d = std::to_string(k);
      if (action == "open drawer " + d && !open.count(k)) {
        open.insert(k);
        return {"You open the drawer " + d + (k == key ? ". In it, you see a key 1." : ". The drawer " + d + " is empty."), 0};
      }
    }
    if (open.count(key) && action == "take key 1 from drawer " + std::to_string(key)) {
      done = true;
      return {"You pick up the key 1 from the drawer " + std::to_string(key) + ".", 1};
    }
    if (action == "look") return {"You are in a room. " + std::to_string(open.size()) + " drawers are open.", 0};
    if (action == "give up") {
      done = true;
      return {"You give up.", 0};
    }
    return {"Nothing happens.", 0};
  }
};

class FakeAgentGym {
 public:
  explicit FakeAgentGym(bool webshop = false) : webshop_(webshop) {
    server_.routes.Post("/create", [this](const httplib::Request&, httplib::Response& res) { create(res); });
    server_.routes.Post("/reset", [this](const httplib::Request& req, httplib::Response& res) { reset(req, res); });
    server_.routes.Post("/step", [this](const httplib::Request& req, httplib::Response& res) { step(req, res); });
    server_.routes.Get("/observation", [this](const httplib::Request& req, httplib::Response& res) { observation(req, res); });
    server_.routes.Get("/available_actions", [this](const httplib::Request& req, httplib::Response& res) { actions(req, res); });
    if (webshop_) {
      server_.routes.Get("/instruction_text", [this](const httplib::Request& req, httplib::Response& res) {
        if (!faulted("/instruction_text", res) && room_of(req, res)) reply(res, json("Instruction: take the key"));
      });
      server_.routes.Post("/close", [this](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++closes;
        rooms_.erase(json::parse(req.body).at("env_idx").get<std::int64_t>());
        reply(res, {{"closed", true}});
      });
    }
    server_.start();
  }
  ~FakeAgentGym() { server_.stop(); }
  std::string url() const { return server_.origin(); }
  std::shared_ptr<AgentGymClient> client(int max_steps = 50) const {
    return std::make_shared<AgentGymClient>(RemoteSpec{url(), webshop_ ? "webshop" : "alfworld", max_steps, 10});
  }
  // What a route answers instead: "500", "404", "not-json", "error" (the server's {"error"}), "shape".
  void fail(const std::string& route, const std::string& how) {
    std::lock_guard<std::mutex> lock(mutex_);
    faults_[route] = how;
  }
  json last_reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_reset_;
  }
  std::atomic<int> creates{0}, steps{0}, closes{0};

 private:
  const char* key() const { return webshop_ ? "env_idx" : "id"; }
  static void reply(httplib::Response& res, const json& j) { res.set_content(j.dump(), "application/json"); }

  bool faulted(const std::string& route, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = faults_.find(route);
    if (it == faults_.end()) return false;
    if (it->second == "500") res.status = 500, res.set_content("Internal Server Error", "text/plain");
    if (it->second == "404") res.status = 404, reply(res, {{"detail", "Not Found"}});
    if (it->second == "not-json") res.set_content("<html>gateway</html>", "text/html");
    if (it->second == "error") reply(res, {{"error", "The id 0 is not valid."}});
    if (it->second == "shape") reply(res, {{"obs", "a field of another name"}});
    return true;
  }

  // The request's instance, or a FastAPI-style 422 when the body or query lacks its id.
  Room* room_of(const httplib::Request& req, httplib::Response& res) {
    std::int64_t id = -1;
    if (req.method == "GET" && req.has_param(key())) id = std::stoll(req.get_param_value(key()));
    if (req.method == "POST") {
      const json body = json::parse(req.body, nullptr, false);
      if (body.is_object() && body.contains(key()) && body[key()].is_number_integer()) id = body[key()].get<std::int64_t>();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!rooms_.count(id)) {
      res.status = 422;
      reply(res, {{"detail", std::string("missing or unknown ") + key()}});
      return nullptr;
    }
    return &rooms_[id];
  }

  void create(httplib::Response& res) {
    if (faulted("/create", res)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t id = next_id_++;
    rooms_[id] = Room();
    ++creates;
    webshop_ ? reply(res, json(id)) : reply(res, {{"id", id}});
  }

  void reset(const httplib::Request& req, httplib::Response& res) {
    if (faulted("/reset", res)) return;
    Room* room = room_of(req, res);
    if (!room) return;
    const json body = json::parse(req.body);
    const char* task_key = webshop_ ? "session_id" : "game";
    if (!body.contains(task_key) || (!webshop_ && body.value("world_type", "") != "Text")) {
      res.status = 422;
      return reply(res, {{"detail", "bad reset body"}});
    }
    std::lock_guard<std::mutex> lock(mutex_);
    last_reset_ = body;
    *room = Room();
    room->task = body[task_key].get<std::int64_t>();
    room->key = static_cast<int>(room->task % 3) + 1;
    if (webshop_) return reply(res, json::array({Room::intro(), nullptr}));
    reply(res, {{"id", body["id"]},
                {"observation", Room::intro()},
                {"available_actions", room->actions()},
                {"task_type", "pick_key-Key-None-Drawer-" + std::to_string(room->task) + "/trial_1"}});
  }

  void step(const httplib::Request& req, httplib::Response& res) {
    if (faulted("/step", res)) return;
    Room* room = room_of(req, res);
    if (!room) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ++steps;
    std::string action = json::parse(req.body).at("action").get<std::string>();
    if (room->done) return reply(res, {{"error", "The task with environment has finished."}});
    if (webshop_) {
      if (!room->searched && action == "search[take the key]") {
        room->searched = true;
        return reply(res, {{"state", "Results: three drawers"}, {"reward", 0.0}, {"done", false}, {"info", nullptr}});
      }
      const bool click = room->searched && action.rfind("click[", 0) == 0 && action.back() == ']';
      action = click ? action.substr(6, action.size() - 7) : "";
    }
    const auto [obs, reward] = room->act(action);
    if (webshop_) return reply(res, {{"state", obs}, {"reward", reward}, {"done", room->done}, {"info", nullptr}});
    reply(res, {{"observation", obs}, {"reward", reward}, {"available_actions", room->actions()}, {"done", room->done}});
  }

  void observation(const httplib::Request& req, httplib::Response& res) {
    if (faulted("/observation", res)) return;
    if (room_of(req, res)) reply(res, json(Room::intro()));
  }

  void actions(const httplib::Request& req, httplib::Response& res) {
    if (faulted("/available_actions", res)) return;
    Room* room = room_of(req, res);
    if (!room) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!webshop_) return reply(res, room->actions());
    reply(res, {{"has_search_bar", !room->searched},
                {"clickables", room->searched ? room->actions() : std::vector<std::string>{}}});
  }

  bool webshop_;
  nexp::test::LoopbackServer server_;
  std::mutex mutex_;
  std::map<std::int64_t, Room> rooms_;
  std::int64_t next_id_ = 0;
  std::map<std::string, std::string> faults_;
  json last_reset_;
};

using Actions = std::vector<std::string>;

// ------------------------------------------------------------------ episodes

TEST(HttpEnv, AlfworldEpisodeIsWhatTheServerServes) {
  FakeAgentGym server;
  HttpEnv env(server.client(), 4);  // the key is in drawer 2
  EXPECT_EQ(env.reset(), Room::intro());
  EXPECT_EQ(server.last_reset(), json({{"id", env.instance()}, {"game", 4}, {"world_type", "Text"}}));
  EXPECT_EQ(env.task_type(), "pick_key");
  EXPECT_EQ(env.admissible(), (Actions{"open drawer 1", "open drawer 2", "open drawer 3", "look", "give up"}));
  StepResult r = env.step("open drawer 1");
  EXPECT_EQ(r.observation, "You open the drawer 1. The drawer 1 is empty.");
  EXPECT_FALSE(r.done);
  EXPECT_EQ(env.admissible(), (Actions{"open drawer 2", "open drawer 3", "look", "give up"}));
  const std::string before = env.state_key();
  r = env.step("open drawer 2");
  EXPECT_EQ(r.observation, "You open the drawer 2. In it, you see a key 1.");
  EXPECT_NE(env.state_key(), before);
  EXPECT_EQ(env.admissible(), (Actions{"open drawer 3", "take key 1 from drawer 2", "look", "give up"}));
  EXPECT_EQ(env.step("dance").observation, "Nothing happens.");
  r = env.step("take key 1 from drawer 2");
  EXPECT_EQ(r.observation, "You pick up the key 1 from the drawer 2.");
  EXPECT_TRUE(r.done);
  EXPECT_TRUE(r.success);
  EXPECT_EQ(env.steps_taken(), 4);
  EXPECT_EQ(server.steps, 4);
  EXPECT_EQ(server.creates, 1);
}

TEST(HttpEnv, ResetPlaysTheTaskIndexGiven) {
  FakeAgentGym server;
  const auto client = server.client();
  for (std::int64_t task : {0, 1, 2, 7, 2620}) {
    HttpEnv env(client, task);
    env.reset();
    EXPECT_EQ(server.last_reset().at("game"), task);
    const std::string drawer = std::to_string(task % 3 + 1);
    EXPECT_EQ(env.step("open drawer " + drawer).observation, "You open the drawer " + drawer + ". In it, you see a key 1.");
  }
  EXPECT_EQ(server.creates, 1);  // one instance, reset to each task in turn
}

TEST(HttpEnv, DoneAtTheStepLimitOrTheServersDoneAndSuccessOnlyWithReward) {
  FakeAgentGym server;
  HttpEnv limited(server.client(2), 0);
  limited.reset();
  EXPECT_FALSE(limited.step("look").done);
  const StepResult r = limited.step("look");
  EXPECT_TRUE(r.done);
  EXPECT_FALSE(r.success);
  EXPECT_EQ(limited.step_limit(), 2);
  HttpEnv quitter(server.client(), 0);
  quitter.reset();
  const StepResult q = quitter.step("give up");
  EXPECT_TRUE(q.done);
  EXPECT_FALSE(q.success);  // done with reward 0
}

TEST(HttpEnv, PlanRefusesAndNamesTheLlmTeacher) {
  FakeAgentGym server;
  HttpEnv env(server.client(), 0);
  env.reset();
  try {
    env.plan();
    ADD_FAILURE() << "plan() answered for a remote environment";
  } catch (const nexp::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("params.teacher=llm"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(server.url()), std::string::npos) << e.what();
  }
}

TEST(HttpEnv, CloneReplaysOnAFreshInstanceAndBranchesIndependently) {
  FakeAgentGym server;
  HttpEnv env(server.client(), 5);  // key in drawer 3
  env.reset();
  env.step("open drawer 1");
  env.step("open drawer 3");
  const auto copy = env.clone();
  EXPECT_EQ(server.creates, 2);
  EXPECT_NE(static_cast<HttpEnv&>(*copy).instance(), env.instance());
  EXPECT_EQ(copy->admissible(), env.admissible());
  EXPECT_EQ(copy->state_key(), env.state_key());
  EXPECT_EQ(copy->steps_taken(), 2);
  EXPECT_TRUE(copy->step("take key 1 from drawer 3").success);
  EXPECT_EQ(env.admissible(), (Actions{"open drawer 2", "take key 1 from drawer 3", "look", "give up"}));
  EXPECT_FALSE(env.step("look").done);
}

TEST(HttpEnv, InstancesArePooledAcrossEpisodes) {
  FakeAgentGym server;
  const auto client = server.client();
  for (int i = 0; i < 3; ++i) start({World::Http, false, 0, static_cast<std::uint64_t>(i), client});
  EXPECT_EQ(server.creates, 1);  // each episode gave its instance back
  {
    Live a = start({World::Http, false, 0, 1, client}), b = start({World::Http, false, 0, 2, client});
    EXPECT_NE(static_cast<HttpEnv&>(*a.env).instance(), static_cast<HttpEnv&>(*b.env).instance());
  }
  EXPECT_EQ(server.creates, 2);
}

TEST(HttpEnv, WebshopDialectSearchesClicksAndClosesItsInstances) {
  auto server = std::make_unique<FakeAgentGym>(true);
  {
    const auto client = server->client();
    HttpEnv env(client, 1);  // key in drawer 2
    EXPECT_EQ(env.reset(), Room::intro());
    EXPECT_EQ(server->last_reset(), json({{"env_idx", env.instance()}, {"session_id", 1}}));
    EXPECT_EQ(env.admissible(), Actions{"search[take the key]"});
    EXPECT_EQ(env.step("search[take the key]").observation, "Results: three drawers");
    EXPECT_EQ(env.admissible(), (Actions{"click[open drawer 1]", "click[open drawer 2]", "click[open drawer 3]",
                                         "click[look]", "click[give up]"}));
    EXPECT_EQ(env.step("click[open drawer 2]").observation, "You open the drawer 2. In it, you see a key 1.");
    const StepResult r = env.step("click[take key 1 from drawer 2]");
    EXPECT_TRUE(r.done);
    EXPECT_TRUE(r.success);
    EXPECT_TRUE(env.admissible().empty());
    EXPECT_EQ(server->closes, 0);
  }
  EXPECT_EQ(server->closes, 1);  // the pool's idle instance, when the client went
}

// ------------------------------------------------------------------ the constructions on a server

// Opens drawers in order and takes the key once it shows: solves every task in at most 4 steps.
std::string solve(const Actions& a) {
  for (const auto& x : a)
    if (x.rfind("take", 0) == 0) return x;
  return a.front();
}

class Solver final : public Policy {
 public:
  std::vector<int> choose(const std::vector<const Episode*>& e, const std::vector<Actions>& a) override {
    std::vector<int> out;
    for (std::size_t i = 0; i < e.size(); ++i)
      out.push_back(static_cast<int>(std::find(a[i].begin(), a[i].end(), solve(a[i])) - a[i].begin()));
    return out;
  }
};

class Looker final : public Policy {  // never solves anything
 public:
  std::vector<int> choose(const std::vector<const Episode*>& e, const std::vector<Actions>& a) override {
    std::vector<int> out;
    for (std::size_t i = 0; i < e.size(); ++i) out.push_back(static_cast<int>(a[i].size()) - 2);
    return out;
  }
};

TEST(HttpEnvPipeline, EvaluatorAndConstructionsRunOnTheServer) {
  FakeAgentGym server;
  const auto client = server.client(6);
  std::vector<TaskSpec> eval;
  for (std::uint64_t g = 100; g < 106; ++g) eval.push_back({World::Http, false, 0, g, client});
  Solver solver;
  Looker looker;
  const Evaluation good = evaluate(solver, eval), bad = evaluate(looker, eval);
  EXPECT_EQ(good.success, 1.0);
  EXPECT_EQ(bad.success, 0.0);
  EXPECT_NEAR(good.steps_on_success, (1 + 2 + 3 + 1 + 2 + 3) / 6.0 + 1, 1e-12);  // drawers opened, then take
  EXPECT_EQ(good.by_type.at("remote"), 1.0);

  const TeacherFn teacher = [](const Env& env, const Episode&, nexp::Random&) { return solve(env.admissible()); };
  for (Construction c : {Construction::Cont, Construction::Filtered}) {
    TaskStream tasks(client, 10, 5, 42);
    nexp::Random rng(3);
    CollectOptions o;
    o.construction = c;
    o.k = 2;
    o.rollout_batch = 4;
    Corpus corpus;
    collect(o, 30, looker, tasks, teacher, rng, corpus);
    EXPECT_GE(corpus.ledger.kept, 30);
    EXPECT_EQ(corpus.ledger.kept + corpus.ledger.discarded, corpus.ledger.generated);
    for (const auto& e : corpus.episodes) {
      EXPECT_GE(e.task.id, 10u);
      EXPECT_LT(e.task.id, 15u);
      EXPECT_EQ(e.intro, Room::intro());
      const Live again = replay(e.task, e.actions());  // the server replays the same episode
      EXPECT_EQ(again.episode.observations, e.observations);
      EXPECT_EQ(again.episode.success, e.success);
      if (c == Construction::Filtered) {
        EXPECT_TRUE(e.success);
      } else {
        EXPECT_LE(e.labelled(), 2);
      }
    }
    if (c == Construction::Filtered) {
      EXPECT_GT(corpus.ledger.discarded, 0);  // from late states the teacher runs out of steps
    }
  }
}

// ------------------------------------------------------------------ errors a person reads

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nexp::DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}

void expect_has(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

TEST(HttpEnvErrors, UnreachableServerNamesTheUrlAndRoute) {
  std::string url;
  {
    FakeAgentGym gone;
    url = gone.url();
  }
  HttpEnv env(std::make_shared<AgentGymClient>(RemoteSpec{url, "alfworld", 50, 5}), 0);
  expect_has(error_of([&] { env.reset(); }), {"POST " + url + "/create", "expected an HTTP answer", "dataset.url"});
}

TEST(HttpEnvErrors, HttpStatusMalformedJsonAndServerErrorsNameTheRoute) {
  FakeAgentGym server;
  const auto client = server.client();
  const std::string url = server.url();
  server.fail("/step", "500");
  HttpEnv env(client, 0);
  env.reset();
  expect_has(error_of([&] { env.step("look"); }), {"POST " + url + "/step", "expected HTTP 200", "HTTP 500",
                                                   "Internal Server Error", "server's log"});
  server.fail("/reset", "not-json");
  expect_has(error_of([&] { env.reset(); }), {"POST " + url + "/reset", "expected a JSON body", "<html>gateway</html>"});
  server.fail("/reset", "error");
  expect_has(error_of([&] { env.reset(); }), {"/reset", "The id 0 is not valid.", "dataset.eval_first"});
  server.fail("/reset", "shape");
  expect_has(error_of([&] { env.reset(); }), {"the answer of POST " + url + "/reset", "\"observation\" (string)",
                                              "a field of another name", "dataset.env_name"});
  server.fail("/create", "404");
  HttpEnv other(client, 0);  // the pool is empty (env holds the one instance): /create
  expect_has(error_of([&] { other.reset(); }), {"POST " + url + "/create", "HTTP 404", "no such route"});
}

TEST(HttpEnvErrors, WrongDialectIsRefusedByTheServerAndNamed) {
  FakeAgentGym webshop(true);
  HttpEnv env(std::make_shared<AgentGymClient>(RemoteSpec{webshop.url(), "alfworld", 50, 5}), 0);
  // WebShop's /create answers a bare number where agentenv-alfworld's answers {"id": n}.
  expect_has(error_of([&] { env.reset(); }), {"the answer of POST " + webshop.url() + "/create",
                                              "expected {\"id\": instance number}", "found '0'", "dataset.env_name"});
  // The other way round: the webshop dialect's fields are refused by an ALFWorld server.
  FakeAgentGym alfworld;
  HttpEnv shop(std::make_shared<AgentGymClient>(RemoteSpec{alfworld.url(), "webshop", 50, 5}), 0);
  expect_has(error_of([&] { shop.reset(); }), {"answer of POST " + alfworld.url() + "/create", "instance number"});
}

TEST(HttpEnvErrors, BadUrlsAndDialectsAreConfigErrors) {
  for (const char* url : {"", "localhost:36001", "ftp://host:1", "http://", "http://host:1/a b"})
    EXPECT_THROW(AgentGymClient(RemoteSpec{url, "alfworld", 50, 5}), nexp::ConfigError) << url;
  EXPECT_THROW(AgentGymClient(RemoteSpec{"http://127.0.0.1:1", "babyai", 50, 5}), nexp::ConfigError);
  EXPECT_NO_THROW(AgentGymClient(RemoteSpec{"http://127.0.0.1:1/alfworld/", "alfworld", 50, 5}));
}

}  // namespace
}  // namespace agent_sft
