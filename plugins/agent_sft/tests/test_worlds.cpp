// The worlds, the teacher, the constructions' budget invariants and the evaluator, against
// independent references: exhaustive runs, golden transcripts, dynamic programming.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "corpus.hpp"

namespace agent_sft {
namespace {

const World kWorlds[] = {World::LinkLookup, World::Household, World::MiniShell};

Episode teacher_episode(const TaskSpec& t, double eps, nexp::Random& rng) {
  Live live = start(t);
  teacher_steps(live, planner(Teacher(eps)), rng, 1 << 30);
  return std::move(live.episode);
}

// With eps = 0 the planner, which reads only what the agent has observed, solves every task.
TEST(Worlds, NoiselessTeacherSolvesEveryTaskOfEveryType) {
  for (World w : kWorlds) {
    const int types = static_cast<int>(task_types(w).size());
    for (int type = 0; type < types; ++type) {
      nexp::Random rng(17 + type);
      int solved = 0;
      for (int i = 0; i < 200; ++i) {
        const TaskSpec t{w, i % 2 == 1, type, rng()};
        const Episode e = teacher_episode(t, 0, rng);
        solved += e.success;
        ASSERT_LE(static_cast<int>(e.decisions.size()), make_env(t)->step_limit());
      }
      EXPECT_EQ(solved, 200) << world_name(w) << " " << task_types(w)[type];
    }
  }
}

// The default noise puts the teacher's success in the 85-95% the paper's teachers reach.
TEST(Worlds, DefaultNoiseGivesTeacherSuccessBetween85And95Percent) {
  for (World w : kWorlds) {
    nexp::Random rng(5);
    const auto tasks = draw_tasks(w, false, 600, rng);
    int solved = 0;
    for (const auto& t : tasks) solved += teacher_episode(t, default_eps(w), rng).success;
    const double rate = solved / 600.0;
    EXPECT_GE(rate, 0.85) << world_name(w);
    EXPECT_LE(rate, 0.97) << world_name(w);
  }
}

std::string transcript(const Episode& e) {
  std::string s = e.intro + "\n";
  for (std::size_t i = 0; i < e.decisions.size(); ++i)
    s += "> " + e.decisions[i].actions[e.decisions[i].chosen] + "\n" + e.observations[i] + "\n";
  return s + (e.success ? "SUCCESS\n" : "FAILURE\n");
}

// Golden transcripts of one small task per world (tests/golden/*.txt): the text the student reads.
TEST(Worlds, TranscriptsMatchTheGoldenFiles) {
  const TaskSpec tasks[] = {{World::LinkLookup, false, 0, 7}, {World::LinkLookup, true, 1, 8},
                            {World::Household, false, 2, 3}, {World::MiniShell, false, 0, 11},
                            {World::MiniShell, false, 2, 12}};
  std::string all;
  for (const auto& t : tasks) {
    nexp::Random rng(1);
    all += "=== " + world_name(t.world) + " " + task_types(t.world)[t.type] + "\n" + transcript(teacher_episode(t, 0, rng));
  }
  if (const char* out = std::getenv("AGENT_SFT_WRITE_GOLDEN")) std::ofstream(out) << all;  // to renew the file
  std::ifstream in("plugins/agent_sft/tests/golden/transcripts.txt");
  ASSERT_TRUE(in) << "run the tests from the repository root";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(all, golden.str());
}

TEST(Worlds, RealErrorsAndNothingHappens) {
  Live shell = start({World::MiniShell, false, 1, 3});
  EXPECT_EQ(shell.env->step("cat /nope").observation, "cat: /nope: No such file or directory");
  EXPECT_EQ(shell.env->step("mkdir /srv").observation, "mkdir: cannot create directory '/srv': File exists");
  EXPECT_EQ(shell.env->step("ls /void").observation, "ls: cannot access '/void': No such file or directory");
  Live house = start({World::Household, false, 0, 3});
  EXPECT_EQ(house.env->step("take apple 1 from fridge 1").observation, "Nothing happens.");
  Live wiki = start({World::LinkLookup, false, 0, 3});
  EXPECT_EQ(wiki.env->step("lookup[born]").observation, "No page is open: search[] an entity first.");
  const StepResult r = wiki.env->step("finish[Nowhere]");
  EXPECT_TRUE(r.done);
  EXPECT_FALSE(r.success);
}

// ------------------------------------------------------------------ budget invariants

// A fixed student: the first admissible action, or a seeded random one.
class FixedPolicy final : public Policy {
 public:
  explicit FixedPolicy(std::uint64_t seed = 0) : rng_(seed), random_(seed != 0) {}
  std::vector<int> choose(const std::vector<const Episode*>& e, const std::vector<std::vector<std::string>>& a) override {
    std::vector<int> out;
    for (std::size_t i = 0; i < e.size(); ++i)
      out.push_back(random_ ? static_cast<int>(rng_.below(a[i].size())) : 0);
    return out;
  }

 private:
  nexp::Random rng_;
  bool random_;
};

// A student that acts as the noiseless planner would (it replays each episode to ask it).
class PlannerPolicy final : public Policy {
 public:
  std::vector<int> choose(const std::vector<const Episode*>& e, const std::vector<std::vector<std::string>>& a) override {
    std::vector<int> out;
    for (std::size_t i = 0; i < e.size(); ++i) {
      const std::string want = replay(e[i]->task, e[i]->actions()).env->plan();
      out.push_back(static_cast<int>(std::find(a[i].begin(), a[i].end(), want) - a[i].begin()));
    }
    return out;
  }
};

Corpus collected(World w, Construction c, double eps, std::int64_t until, BudgetUnit unit = BudgetUnit::Kept,
                 Policy* policy = nullptr) {
  FixedPolicy fixed;
  Policy& student = policy ? *policy : fixed;
  TaskStream tasks(w, false, 99);
  nexp::Random rng(3);
  CollectOptions o;
  o.construction = c;
  o.unit = unit;
  o.k = 2;
  o.rollout_batch = 8;
  Corpus corpus;
  collect(o, until, student, tasks, planner(Teacher(eps)), rng, corpus);
  return corpus;
}

TEST(Constructions, ContKeepsEveryTeacherStepAndAtMostK) {
  for (World w : kWorlds) {
    const Corpus c = collected(w, Construction::Cont, 0.3, 300);
    EXPECT_EQ(c.ledger.discarded, 0);
    EXPECT_EQ(c.ledger.kept, c.ledger.generated);
    EXPECT_GE(c.ledger.kept, 300);
    for (const auto& e : c.episodes) {
      EXPECT_LE(e.labelled(), 2);
      for (std::size_t i = 0; i + 1 < e.decisions.size(); ++i)  // the student's prefix, then the teacher's steps
        EXPECT_LE(e.decisions[i].labelled, e.decisions[i + 1].labelled);
    }
  }
}

TEST(Constructions, FilteredKeepsOnlyRunsWhoseReplaySucceeds) {
  for (World w : kWorlds) {
    const Corpus c = collected(w, Construction::Filtered, 0.3, 300);
    std::int64_t kept = 0;
    for (const auto& e : c.episodes) {
      EXPECT_TRUE(replay(e.task, e.actions()).episode.success);
      kept += e.labelled();
    }
    EXPECT_EQ(kept, c.ledger.kept);
    EXPECT_EQ(c.ledger.kept + c.ledger.discarded, c.ledger.generated);
  }
}

TEST(Constructions, HardKeepsOnlyTasksTheStudentFailsAlone) {
  for (World w : kWorlds) {
    const Corpus c = collected(w, Construction::Hard, 0.3, 200);
    FixedPolicy student;
    for (const auto& e : c.episodes) EXPECT_FALSE(rollout(student, {e.task}).front().success);
    EXPECT_GT(c.ledger.kept, 0);
  }
}

// From the states a teacher-like student reaches, the noiseless teacher always succeeds: the filter
// has nothing to discard. (From a poor student's states it can run out of steps: those it discards.)
TEST(Constructions, WithoutNoiseTheFilterDiscardsNothing) {
  PlannerPolicy student;
  for (World w : kWorlds) {
    const Corpus c = collected(w, Construction::Filtered, 0.0, 200, BudgetUnit::Kept, &student);
    EXPECT_EQ(c.ledger.discarded, 0) << world_name(w);
    EXPECT_GE(c.ledger.kept, 200);
  }
}

TEST(Constructions, GeneratedBudgetCountsDiscardedSteps) {
  const Corpus c = collected(World::LinkLookup, Construction::Filtered, 0.5, 200, BudgetUnit::Generated);
  EXPECT_GE(c.ledger.generated, 200);
  EXPECT_LT(c.ledger.generated, 200 + 9);  // stops within one teacher run
  EXPECT_GT(c.ledger.discarded, 0);
}

// ------------------------------------------------------------------ windows and export

TEST(Windows, EveryLabelledDecisionOnceAtItsActToken) {
  nexp::Random rng(2);
  Episode e = teacher_episode({World::Household, false, 5, 21}, 0.3, rng);
  for (std::size_t i = 0; i < e.decisions.size(); ++i) e.decisions[i].labelled = i % 3 != 0;
  for (int context : {32, 64, 4096}) {
    int targets = 0;
    for (const auto& w : windows(e, context)) {
      EXPECT_LE(static_cast<int>(w.tokens.size()), context);
      for (const auto& t : w.targets) {
        EXPECT_EQ(w.tokens[t.position], kAct);
        ++targets;
      }
    }
    EXPECT_EQ(targets, e.labelled());
  }
}

// The goal stays in view however long the episode: every view opens with the task's last paragraph
// ("Your task is to: ..."), then kGoal, then the episode's tokens up to the decision, as many as fit.
TEST(Windows, PinTheGoalAndKeepTheLatestTokens) {
  nexp::Random rng(3);
  Episode e = teacher_episode({World::Household, false, 4, 9}, 0.5, rng);
  ASSERT_EQ(e.goal, tokenize(e.intro.substr(e.intro.rfind("Your task is to:"))));
  ASSERT_GT(e.tokens.size(), 300u);  // longer than the context: the intro scrolls out
  const int context = 128, g = static_cast<int>(e.goal.size());
  for (const auto& d : e.decisions) {
    const View v = view(e, d.position, context);
    ASSERT_EQ(v.prefix, g + 1);
    ASSERT_EQ(std::vector<int>(v.tokens.begin(), v.tokens.begin() + g), e.goal);
    ASSERT_EQ(v.tokens[g], kGoal);
    ASSERT_TRUE(std::equal(v.tokens.begin() + g + 1, v.tokens.end(), e.tokens.begin() + v.begin,
                           e.tokens.begin() + d.position + 1));
    EXPECT_EQ(v.tokens.size(), v.begin > 0 ? static_cast<std::size_t>(context) : d.position + 1 + g + 1u);
    const View r = view(e, d.position, context, 1);  // room for a decision's kAct: the same goal, one token less
    EXPECT_EQ(r.prefix, v.prefix);
    EXPECT_EQ(r.tokens.size(), std::min(v.tokens.size(), static_cast<std::size_t>(context - 1)));
  }
  std::vector<int> pinned = e.goal;
  pinned.push_back(kGoal);
  for (auto& d : e.decisions) d.labelled = true;
  for (const auto& w : windows(e, context))
    EXPECT_EQ(std::vector<int>(w.tokens.begin(), w.tokens.begin() + g + 1), pinned);
}

TEST(Export, ChatJsonlWeightsTheKeptTeacherStepsOnly) {
  const Corpus c = collected(World::MiniShell, Construction::Cont, 0.1, 20);
  for (const auto& e : c.episodes) {
    const std::string line = to_chat_jsonl(e);
    std::size_t ones = 0, zeros = 0;
    for (std::size_t p = line.find("\"weight\":1"); p != std::string::npos; p = line.find("\"weight\":1", p + 1)) ++ones;
    for (std::size_t p = line.find("\"weight\":0"); p != std::string::npos; p = line.find("\"weight\":0", p + 1)) ++zeros;
    EXPECT_EQ(static_cast<int>(ones), e.labelled());
    EXPECT_EQ(ones + zeros, e.decisions.size());
  }
}

// ------------------------------------------------------------------ the evaluator against DP

// A chain 0..n: "right" moves up with probability q (else stays), "left" moves down; success on
// reaching n within the step limit.
class Chain final : public Env {
 public:
  Chain(int n, int limit, double q, std::uint64_t seed) : n_(n), limit_(limit), q_(q), rng_(seed) {}
  std::string reset() override { return "chain"; }
  std::vector<std::string> admissible() const override { return {"left", "right"}; }
  StepResult step(const std::string& a) override {
    ++steps_;
    if (a == "right" && rng_.bernoulli(q_)) ++x_;
    if (a == "left" && x_ > 0) --x_;
    return {std::to_string(x_), x_ == n_ || steps_ >= limit_, x_ == n_};
  }
  std::string plan() const override { return "right"; }
  std::string state_key() const override { return std::to_string(x_); }
  std::string task_type() const override { return "bridge"; }
  int step_limit() const override { return limit_; }
  std::unique_ptr<Env> clone() const override { return std::make_unique<Chain>(*this); }

 private:
  int n_, limit_, x_ = 0;
  double q_;
  nexp::Random rng_;
};

// Agreement with the noiseless planner: 1 for a policy that asks the planner; for the fixed first-action
// policy, the share of the planner's decisions that are the first admissible action (counted directly).
TEST(Evaluator, AgreementCountsTheTeachersDecisionsMatched) {
  for (World w : kWorlds) {
    nexp::Random draw(5);
    const auto tasks = draw_tasks(w, true, 12, draw);
    nexp::Random rng(1);
    PlannerPolicy planner_policy;
    EXPECT_DOUBLE_EQ(agreement(planner_policy, tasks, planner(Teacher(0)), rng), 1.0) << world_name(w);
    int first = 0, decisions = 0;
    for (const auto& t : tasks) {
      const Episode e = teacher_episode(t, 0, rng);
      for (const auto& d : e.decisions) first += d.chosen == 0, ++decisions;
    }
    FixedPolicy fixed;
    EXPECT_DOUBLE_EQ(agreement(fixed, tasks, planner(Teacher(0)), rng), static_cast<double>(first) / decisions)
        << world_name(w);
  }
}

// The policy plays right with probability p.
class Biased final : public Policy {
 public:
  explicit Biased(double p) : p_(p), rng_(11) {}
  std::vector<int> choose(const std::vector<const Episode*>& e, const std::vector<std::vector<std::string>>&) override {
    std::vector<int> out;
    for (std::size_t i = 0; i < e.size(); ++i) out.push_back(rng_.bernoulli(p_) ? 1 : 0);
    return out;
  }

 private:
  double p_;
  nexp::Random rng_;
};

TEST(Evaluator, SuccessRateEqualsDynamicProgramming) {
  const int n = 4, limit = 10;
  const double p = 0.7, q = 0.8;
  // V[t][x]: probability of reaching n from x with t steps left.
  std::vector<std::vector<double>> v(limit + 1, std::vector<double>(n + 1, 0));
  for (int t = 0; t <= limit; ++t) v[t][n] = 1;
  for (int t = 1; t <= limit; ++t)
    for (int x = 0; x < n; ++x)
      v[t][x] = p * (q * v[t - 1][x + 1] + (1 - q) * v[t - 1][x]) + (1 - p) * v[t - 1][std::max(0, x - 1)];
  const double exact = v[limit][0];
  std::vector<TaskSpec> tasks(20000);
  for (std::size_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
  Biased policy(p);
  const Evaluation e =
      evaluate(policy, tasks, [&](const TaskSpec& t) { return std::make_unique<Chain>(n, limit, q, t.id + 1); });
  const double se = std::sqrt(exact * (1 - exact) / tasks.size());
  EXPECT_NEAR(e.success, exact, 4 * se) << "DP " << exact;
}

TEST(Tokens, ClosedVocabularyAndStableIds) {
  const auto a = tokenize("go to Cabinet 3.");
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a, tokenize("GO  to cabinet 3 ."));
  for (int t : a) EXPECT_TRUE(t >= kFirstWord && t < kVocab);
  EXPECT_NE(tokenize("Velin"), tokenize("Velan"));
}

}  // namespace
}  // namespace agent_sft
