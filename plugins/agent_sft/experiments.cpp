#include "experiments.hpp"

#include <nexp/stats.hpp>
#include <nexp/table.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>

#include "http_env.hpp"
#include "llm_teacher.hpp"
#include "student.hpp"

namespace agent_sft {

// ------------------------------------------------------------------ options

void SftOptions::declare(nexp::Options<SftOptions>& o) {
  o.add("constructions", &SftOptions::constructions, "constructions to compare: bc, cont, filtered, hard");
  o.add("budget", &SftOptions::budget, "supervision budget B in teacher steps (warm start included)").range(10, 10000000);
  o.add("budget_unit", &SftOptions::budget_unit, "the matched budget: steps kept (corpus) or teacher steps generated",
        {{"kept", BudgetUnit::Kept}, {"generated", BudgetUnit::Generated}});
  o.add("k", &SftOptions::k, "cont: teacher steps per continuation").range(1, 64);
  o.add("rounds", &SftOptions::rounds, "DAgger-style rounds R after the warm start").range(1, 100);
  o.add("warm_share", &SftOptions::warm_share, "share of B spent on the shared BC warm start").range(0.01, 1);
  o.add("eps", &SftOptions::eps, "teacher noise: a random admissible action with this probability; < 0: the "
                                  "environment's default (teacher success 85-95%)").range(-1, 1);
  o.add("seeds", &SftOptions::seeds, "seeds (paired: every construction of a seed shares tasks and warm start)")
      .range(1, 1000);
  o.add("updates_per_1k", &SftOptions::updates_per_1k,
        "student updates per 1000 budget steps (the same for every construction: matched compute)").range(1, 100000);
  o.add("rollout_batch", &SftOptions::rollout_batch, "student rollouts per batched call").range(1, 4096);
  o.add("states_per_rollout", &SftOptions::states_per_rollout, "states drawn from each student rollout").range(1, 64);
  o.add("teacher", &SftOptions::teacher, "planner (the env's planner with noise eps) or llm (an endpoint of the "
                                          "config's llm: section, constrained to the admissible actions)")
      .choices({"planner", "llm"});
  o.add("llm_endpoint", &SftOptions::llm_endpoint, "teacher: llm: the endpoint's name");
  o.add("student", &SftOptions::student, "the student transformer");
}

void RlOptions::declare(nexp::Options<RlOptions>& o) {
  o.add("iterations", &RlOptions::iterations, "REINFORCE updates").range(1, 100000);
  o.add("episodes", &RlOptions::episodes, "student episodes per update").range(1, 4096);
  o.add("early", &RlOptions::early, "success is 'early' after this many updates").range(1, 100000);
  o.add("eval_every", &RlOptions::eval_every, "updates between evaluations").range(1, 100000);
  o.add("lr", &RlOptions::lr, "AdamW learning rate of the RL stage").range(1e-7, 1);
}

void TenthOptions::declare(nexp::Options<TenthOptions>& o) {
  o.inherit<SftOptions>();
  o.add("divisor", &TenthOptions::divisor, "cont runs at budget / divisor").range(1, 1000);
  o.add("rl", &TenthOptions::rl, "the RL stage after BC at the full budget");
}

void RlRunOptions::declare(nexp::Options<RlRunOptions>& o) {
  o.inherit<SftOptions>();
  o.add("rl", &RlRunOptions::rl, "the RL stage after each construction");
}

void ExportOptions::declare(nexp::Options<ExportOptions>& o) { o.inherit<SftOptions>(); }

// ------------------------------------------------------------------ data set

std::string EnvSet::describe() const {
  if (remote)
    return "agent_sft.env: http (" + remote->spec().env_name + " at " + remote->spec().url + "), " +
           std::to_string(eval.size()) + " evaluation tasks from " + std::to_string(eval.front().id) +
           ", training tasks " + std::to_string(train_first) + " to " + std::to_string(train_first + train_tasks - 1);
  return "agent_sft.env: " + world_name(world) + " (" + (unseen ? "unseen" : "seen") + "), " +
         std::to_string(eval.size()) + " evaluation tasks";
}

TaskStream EnvSet::training_tasks(std::uint64_t seed) const {
  if (remote) return TaskStream(remote, train_first, train_tasks, seed);
  return TaskStream(world, false, seed);
}

namespace {

// env=http: the server's held-out tasks are eval_first .. eval_first + tasks - 1; nothing is contacted yet.
void make_remote_set(const EnvOptions& o, EnvSet& set) {
  if (o.url.empty())
    throw nexp::ConfigError("agent_sft: dataset.env is http but dataset.url is empty; expected the AgentGym server's "
                            "address, e.g. dataset.url=http://127.0.0.1:36001; set dataset.url");
  const std::int64_t eval_end = o.eval_first + o.tasks, train_end = o.train_first + o.train_tasks;
  if (o.eval_first < train_end && o.train_first < eval_end)
    throw nexp::ConfigError("agent_sft: the held-out tasks " + std::to_string(o.eval_first) + ".." +
                            std::to_string(eval_end - 1) + " (dataset.eval_first, dataset.tasks) overlap the training "
                            "tasks " + std::to_string(o.train_first) + ".." + std::to_string(train_end - 1) +
                            " (dataset.train_first, dataset.train_tasks); expected disjoint ranges; move one of them");
  set.remote = std::make_shared<AgentGymClient>(RemoteSpec{o.url, o.env_name, o.max_steps, o.timeout});
  set.train_first = static_cast<std::uint64_t>(o.train_first);
  set.train_tasks = static_cast<std::uint64_t>(o.train_tasks);
  for (int i = 0; i < o.tasks; ++i)
    set.eval.push_back({World::Http, false, 0, static_cast<std::uint64_t>(o.eval_first + i), set.remote});
}

}  // namespace

std::shared_ptr<nexp::Dataset> make_env_set(const EnvOptions& o, nexp::RunContext& ctx) {
  auto set = std::make_shared<EnvSet>();
  set->world = world_from_name(o.env);
  if (set->world == World::Http) {
    make_remote_set(o, *set);
    return set;
  }
  set->unseen = o.split == "unseen";
  nexp::Random rng = ctx.stream("eval_tasks");
  set->eval = draw_tasks(set->world, set->unseen, o.tasks, rng);
  return set;
}

namespace {

// ------------------------------------------------------------------ setup

struct Setup {
  const EnvSet& env;
  SftOptions o;
  TeacherFn teacher;
  Teacher planner_teacher;
  StudentConfig student;
};

Setup make_setup(nexp::RunContext& ctx, const SftOptions& o) {
  const auto& env = ctx.dataset_as<EnvSet>();
  if (o.student.dim % o.student.heads != 0)
    throw nexp::ConfigError("agent_sft: params.student.dim (" + std::to_string(o.student.dim) +
                            ") must be a multiple of params.student.heads (" + std::to_string(o.student.heads) +
                            "); change one of them");
  for (const auto& c : o.constructions) construction_from_name(c);
  if (env.remote && o.teacher != "llm")
    throw nexp::ConfigError("agent_sft: params.teacher is '" + o.teacher + "' but dataset.env is http (a remote " +
                            env.remote->spec().env_name + " server at " + env.remote->spec().url +
                            "): the planner reads a procedural world's internals, which a remote server does not "
                            "expose. Expected params.teacher=llm: set it, and name the teacher's endpoint "
                            "(params.llm_endpoint, default 'teacher') in the config's llm: section");
  const Teacher planner_teacher(o.eps < 0 ? default_eps(env.world) : o.eps);
  StudentConfig s{o.student.dim, o.student.layers, o.student.heads, o.student.context, o.student.lr, o.student.batch};
  // The planner stands in for an LLM answer outside the admissible actions; a remote env has none.
  TeacherFn teacher = o.teacher == "llm"
                          ? llm_teacher(ctx.llm(o.llm_endpoint), env.remote ? TeacherFn() : planner(planner_teacher))
                          : planner(planner_teacher);
  return {env, o, std::move(teacher), planner_teacher, s};
}

// ------------------------------------------------------------------ one seed's pipeline

struct Trained {
  std::unique_ptr<Student> student;
  Corpus corpus;
  std::vector<Window> windows;
  double loss = NAN;
};

struct SeedStreams {
  std::uint64_t tasks, teacher, train, rollout, init;
  SeedStreams(nexp::RunContext& ctx, int s)
      : tasks(ctx.stream("tasks", s)()), teacher(ctx.stream("teacher", s)()), train(ctx.stream("train", s)()),
        rollout(ctx.stream("rollout", s)()), init(ctx.stream("student", s)()) {}
};

int updates_for(const SftOptions& o, double share, std::int64_t budget) {
  return std::max(1, static_cast<int>(o.updates_per_1k * budget / 1000.0 * share + 0.5));
}

void add_windows(Trained& t, std::size_t from, int context) {
  for (std::size_t i = from; i < t.corpus.episodes.size(); ++i)
    for (auto& w : windows(t.corpus.episodes[i], context)) t.windows.push_back(std::move(w));
}

// BC from the start at warm_share of the budget: the checkpoint every construction starts from.
Trained warm_start(const Setup& s, const SeedStreams& seeds, std::int64_t budget) {
  Trained t;
  t.student = std::make_unique<Student>(s.student, seeds.init);
  TaskStream tasks = s.env.training_tasks(seeds.tasks);
  nexp::Random teacher_rng(seeds.teacher), train_rng(seeds.train);
  CollectOptions c;
  c.construction = Construction::BC;
  c.unit = s.o.budget_unit;
  collect(c, static_cast<std::int64_t>(s.o.warm_share * budget), *t.student, tasks, s.teacher, teacher_rng, t.corpus);
  add_windows(t, 0, s.student.context);
  t.loss = t.student->train(t.windows, updates_for(s.o, s.o.warm_share, budget), train_rng);
  return t;
}

// R rounds of one construction from the warm start, up to the budget.
Trained construct(const Setup& s, const SeedStreams& seeds, const Trained& warm, Construction c, std::int64_t budget) {
  Trained t;
  t.student = std::make_unique<Student>(*warm.student);
  t.corpus = warm.corpus;
  t.windows = warm.windows;
  // The same training tasks, teacher draws and student draws for every construction of a seed.
  TaskStream tasks = s.env.training_tasks(nexp::mix64(seeds.tasks));
  nexp::Random teacher_rng(nexp::mix64(seeds.teacher)), train_rng(nexp::mix64(seeds.train)),
      rollout_rng(seeds.rollout);
  CollectOptions co;
  co.construction = c;
  co.unit = s.o.budget_unit;
  co.k = s.o.k;
  co.rollout_batch = s.o.rollout_batch;
  co.states_per_rollout = s.o.states_per_rollout;
  const std::int64_t start = warm.corpus.ledger.spent(s.o.budget_unit);
  co.max_rollouts = 20 * budget;
  for (int r = 1; r <= s.o.rounds; ++r) {
    const std::size_t before = t.corpus.episodes.size();
    t.student->sample(&rollout_rng);
    collect(co, start + (budget - start) * r / s.o.rounds, *t.student, tasks, s.teacher, teacher_rng, t.corpus);
    t.student->sample(nullptr);
    add_windows(t, before, s.student.context);
    t.loss = t.student->train(t.windows, updates_for(s.o, (1 - s.o.warm_share) / s.o.rounds, budget), train_rng);
  }
  return t;
}

// The planner teacher's success on the evaluation tasks (summary teacher_success). Not for a remote
// environment: it has no planner, and the LLM teacher would cost an episode of calls per task.
void report_teacher_success(const Setup& s, nexp::RunContext& ctx) {
  if (s.env.remote) {
    ctx.log().info("teacher_success: not measured on a remote environment");
    return;
  }
  nexp::Random rng = ctx.stream("teacher_eval");
  int ok = 0;
  for (const auto& task : s.env.eval) {
    Live live = start(task);
    teacher_steps(live, planner(s.planner_teacher), rng, 1 << 30);
    ok += live.episode.success;
  }
  ctx.summary("teacher_success", static_cast<double>(ok) / static_cast<double>(s.env.eval.size()));
}

// The student's teacher-forced agreement with the noiseless planner on the held-out tasks (corpus.hpp:
// agreement); NAN on a remote environment, which has no planner.
double planner_agreement(const Setup& s, Student& student) {
  if (s.env.remote) return NAN;
  nexp::Random rng(0);  // eps = 0: the teacher's draws change nothing
  return agreement(student, s.env.eval, planner(Teacher(0)), rng);
}

// REINFORCE from a checkpoint; returns the success after `early` updates and at the end.
std::pair<double, double> reinforce(const Setup& s, const RlOptions& rl, Student& student, std::uint64_t seed,
                                    nexp::RunContext& ctx, const std::string& label) {
  student.set_lr(rl.lr);
  TaskStream tasks = s.env.training_tasks(nexp::mix64(seed ^ 0x5151));
  nexp::Random rng(seed);
  double early = NAN;
  for (int it = 1; it <= rl.iterations && !ctx.stop_requested(); ++it) {
    std::vector<TaskSpec> batch;
    for (int i = 0; i < rl.episodes; ++i) batch.push_back(tasks.next());
    student.sample(&rng);
    const auto episodes = rollout(student, batch);
    student.sample(nullptr);
    double baseline = 0;
    for (const auto& e : episodes) baseline += e.success;
    student.reinforce(episodes, baseline / static_cast<double>(episodes.size()));
    if (it == rl.early || it % rl.eval_every == 0 || it == rl.iterations) {
      const double success = evaluate(student, s.env.eval).success;
      if (it == rl.early) early = success;
      ctx.log().info("{}: RL update {}: success {:.3f}", label, it, success);
      if (it == rl.iterations) return {early, success};
    }
  }
  return {early, evaluate(student, s.env.eval).success};
}

// ------------------------------------------------------------------ reporting

void report_paired(nexp::RunContext& ctx, const std::string& name, const std::vector<double>& a,
                   const std::vector<double>& b) {
  if (a.size() < 2) {
    ctx.summary(name, nexp::stats::mean(a) - nexp::stats::mean(b));
    return;
  }
  ctx.summary_interval(name, nexp::stats::paired_t_interval(a, b));
}

void report_mean(nexp::RunContext& ctx, const std::string& name, const std::vector<double>& x) {
  if (x.size() < 2) return ctx.summary(name, nexp::stats::mean(x));
  ctx.summary_interval(name, nexp::stats::mean_t_interval(x));
}

}  // namespace

// ------------------------------------------------------------------ agent_sft.sft

namespace {

using C = nexp::CsvColumn;

struct Outcome {
  std::map<std::string, std::vector<double>> success, agreement, generated, kept, coverage;
  std::map<std::string, std::map<std::string, std::vector<double>>> by_type;
  std::map<std::string, std::int64_t> discarded_sum, generated_sum;
};

void record(Outcome& out, nexp::CsvWriter& csv, int seed, const std::string& c, const Trained& t,
            const Evaluation& e, double agreement, double seconds) {
  const Ledger& l = t.corpus.ledger;
  out.success[c].push_back(e.success);
  if (!std::isnan(agreement)) out.agreement[c].push_back(agreement);
  out.generated[c].push_back(static_cast<double>(l.generated));
  out.kept[c].push_back(static_cast<double>(l.kept));
  out.coverage[c].push_back(static_cast<double>(l.states.size()));
  out.discarded_sum[c] += l.discarded;
  out.generated_sum[c] += l.generated;
  for (const auto& [type, v] : e.by_type) out.by_type[c][type].push_back(v);
  csv.row(seed, c, e.success, agreement, e.steps_on_success, l.generated, l.kept, l.discarded, l.discard_share(),
          static_cast<std::int64_t>(l.states.size()), l.rollouts, l.skipped, t.loss, seconds);
}

void summarize_outcome(nexp::RunContext& ctx, const Outcome& out) {
  for (const auto& [c, v] : out.agreement) report_mean(ctx, "agreement_" + c, v);
  for (const auto& [c, v] : out.success) {
    report_mean(ctx, "success_" + c, v);
    ctx.summary("teacher_steps_" + c, nexp::stats::mean(out.generated.at(c)));
    ctx.summary("kept_steps_" + c, nexp::stats::mean(out.kept.at(c)));
    ctx.summary("state_coverage_" + c, nexp::stats::mean(out.coverage.at(c)));
    const auto g = out.generated_sum.at(c);
    ctx.summary("discard_share_" + c, g ? static_cast<double>(out.discarded_sum.at(c)) / g : 0.0);
  }
  auto has = [&](const char* c) { return out.success.count(c) > 0; };
  if (has("cont") && has("bc")) report_paired(ctx, "gain_cont_vs_bc", out.success.at("cont"), out.success.at("bc"));
  if (has("cont") && has("filtered"))
    report_paired(ctx, "gain_cont_vs_filtered", out.success.at("cont"), out.success.at("filtered"));
  if (has("cont") && has("hard"))
    report_paired(ctx, "gain_cont_vs_hard", out.success.at("cont"), out.success.at("hard"));
}

void write_by_type(nexp::RunContext& ctx, const Outcome& out) {
  nexp::CsvWriter csv(ctx.artifacts_dir() / "by_type.csv",
                      {C::text("construction"), C::text("task_type"), C::real("success"), C::integer("seeds")});
  for (const auto& [c, types] : out.by_type)
    for (const auto& [type, v] : types) csv.row(c, type, nexp::stats::mean(v), v.size());
}

nexp::CsvWriter seeds_table(nexp::RunContext& ctx) {
  return nexp::CsvWriter(ctx.artifacts_dir() / "seeds.csv",
                         {C::integer("seed"), C::text("construction"), C::real("success"), C::real("agreement"),
                          C::real("steps_on_success"),
                          C::integer("teacher_steps"), C::integer("kept_steps"), C::integer("discarded_steps"),
                          C::real("discard_share"), C::integer("states_covered"), C::integer("rollouts"),
                          C::integer("skipped_tasks"), C::real("final_loss"), C::real("seconds")});
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void run_sft(nexp::RunContext& ctx) {
  const Setup s = make_setup(ctx, ctx.options<SftOptions>());
  ctx.log().info("{}; teacher eps {}; student {} parameters", s.env.describe(), s.planner_teacher.eps(),
                 Student(s.student, 0).parameters());
  report_teacher_success(s, ctx);
  Outcome out;
  auto csv = seeds_table(ctx);
  auto progress = ctx.progress(static_cast<std::int64_t>(s.o.seeds * s.o.constructions.size()), "SFT runs");
  for (int seed = 0; seed < s.o.seeds && !ctx.stop_requested(); ++seed) {
    const SeedStreams streams(ctx, seed);
    const Trained warm = warm_start(s, streams, s.o.budget);
    for (const auto& name : s.o.constructions) {
      if (ctx.stop_requested()) break;
      const auto t0 = std::chrono::steady_clock::now();
      const Trained t = construct(s, streams, warm, construction_from_name(name), s.o.budget);
      const Evaluation e = evaluate(*t.student, s.env.eval);
      const double agree = planner_agreement(s, *t.student);
      record(out, csv, seed, name, t, e, agree, seconds_since(t0));
      ctx.log_metrics(seed, {{"success_" + name, e.success}});
      ctx.log().info("seed {} {}: success {:.3f}, agreement {:.3f}, teacher steps {}, kept {}, loss {:.3f}", seed, name,
                     e.success, agree, t.corpus.ledger.generated, t.corpus.ledger.kept, t.loss);
      progress.advance();
    }
  }
  summarize_outcome(ctx, out);
  write_by_type(ctx, out);
}

// ------------------------------------------------------------------ agent_sft.tenth

void run_tenth(nexp::RunContext& ctx) {
  const auto o = ctx.options<TenthOptions>();
  const Setup s = make_setup(ctx, o);
  report_teacher_success(s, ctx);
  const std::int64_t tenth = o.budget / o.divisor;
  std::vector<double> cont, bc, bc_rl;
  for (int seed = 0; seed < o.seeds && !ctx.stop_requested(); ++seed) {
    const SeedStreams streams(ctx, seed);
    const Trained small = construct(s, streams, warm_start(s, streams, tenth), Construction::Cont, tenth);
    cont.push_back(evaluate(*small.student, s.env.eval).success);
    const Trained full = construct(s, streams, warm_start(s, streams, o.budget), Construction::BC, o.budget);
    bc.push_back(evaluate(*full.student, s.env.eval).success);
    bc_rl.push_back(reinforce(s, o.rl, *full.student, streams.rollout, ctx, "bc at B").second);
    ctx.log().info("seed {}: cont at B/{} {:.3f}; BC at B {:.3f}, + RL {:.3f}", seed, o.divisor, cont.back(),
                   bc.back(), bc_rl.back());
    ctx.log_metrics(seed, {{"success_cont_tenth", cont.back()}, {"success_bc_full_rl", bc_rl.back()}});
  }
  report_mean(ctx, "success_cont_tenth", cont);
  report_mean(ctx, "success_bc_full", bc);
  report_mean(ctx, "success_bc_full_rl", bc_rl);
  report_paired(ctx, "gap", cont, bc_rl);
}

// ------------------------------------------------------------------ agent_sft.rl

void run_rl(nexp::RunContext& ctx) {
  const auto o = ctx.options<RlRunOptions>();
  const Setup s = make_setup(ctx, o);
  std::map<std::string, std::vector<double>> sft, early, late;
  for (int seed = 0; seed < o.seeds && !ctx.stop_requested(); ++seed) {
    const SeedStreams streams(ctx, seed);
    const Trained warm = warm_start(s, streams, o.budget);
    for (const auto& name : o.constructions) {
      Trained t = construct(s, streams, warm, construction_from_name(name), o.budget);
      sft[name].push_back(evaluate(*t.student, s.env.eval).success);
      const auto [e, l] = reinforce(s, o.rl, *t.student, streams.rollout, ctx, name);
      early[name].push_back(e);
      late[name].push_back(l);
      ctx.log().info("seed {} {}: SFT {:.3f}, RL early {:.3f}, late {:.3f}", seed, name, sft[name].back(), e, l);
    }
  }
  for (const auto& [name, v] : sft) {
    report_mean(ctx, "sft_success_" + name, v);
    report_mean(ctx, "rl_early_success_" + name, early[name]);
    report_mean(ctx, "rl_late_success_" + name, late[name]);
    std::vector<double> gain(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) gain[i] = early[name][i] - v[i];
    report_mean(ctx, "rl_early_gain_" + name, gain);
  }
}

// ------------------------------------------------------------------ agent_sft.export

void run_export(nexp::RunContext& ctx) {
  const Setup s = make_setup(ctx, ctx.options<ExportOptions>());
  const SeedStreams streams(ctx, 0);
  const Trained warm = warm_start(s, streams, s.o.budget);
  for (const auto& name : s.o.constructions) {
    const Trained t = construct(s, streams, warm, construction_from_name(name), s.o.budget);
    std::ofstream out(ctx.artifacts_dir() / ("corpus_" + name + ".jsonl"));
    for (const auto& e : t.corpus.episodes) out << to_chat_jsonl(e) << "\n";
    ctx.summary("kept_steps_" + name, static_cast<double>(t.corpus.ledger.kept));
    ctx.summary("teacher_steps_" + name, static_cast<double>(t.corpus.ledger.generated));
    ctx.summary("episodes_" + name, static_cast<double>(t.corpus.episodes.size()));
  }
}

}  // namespace agent_sft
