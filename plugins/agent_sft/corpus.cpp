#include "corpus.hpp"

#include <nexp/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace agent_sft {

int Episode::labelled() const {
  int n = 0;
  for (const auto& d : decisions) n += d.labelled;
  return n;
}

std::vector<std::string> Episode::actions() const {
  std::vector<std::string> a;
  for (const auto& d : decisions) a.push_back(d.actions[d.chosen]);
  return a;
}

namespace {
std::string last_paragraph(const std::string& text) {
  const auto end = text.find_last_not_of(" \n");
  if (end == std::string::npos) return "";
  const auto cut = text.rfind("\n\n", end);
  const auto from = cut == std::string::npos ? 0 : cut + 2;
  return text.substr(from, end + 1 - from);
}
}  // namespace

Live start(const TaskSpec& task, const EnvFactory& make) {
  Live live{make(task), {}};
  live.episode.task = task;
  live.episode.intro = live.env->reset();
  live.episode.tokens = tokenize(live.episode.intro);
  live.episode.goal = tokenize(last_paragraph(live.episode.intro));
  return live;
}

void advance(Live& live, int index, bool labelled) {
  Episode& e = live.episode;
  Decision d;
  d.actions = live.env->admissible();
  d.chosen = index;
  d.labelled = labelled;
  d.state = live.env->state_key();
  d.position = static_cast<int>(e.tokens.size());
  const std::string& action = d.actions.at(index);
  const StepResult r = live.env->step(action);
  e.tokens.push_back(kAct);
  for (int t : tokenize(action)) e.tokens.push_back(t);
  e.tokens.push_back(kObs);
  for (int t : tokenize(r.observation)) e.tokens.push_back(t);
  e.observations.push_back(r.observation);
  e.decisions.push_back(std::move(d));
  e.done = r.done;
  e.success = r.success;
}

namespace {
int index_of(const std::vector<std::string>& actions, const std::string& a) {
  const auto it = std::find(actions.begin(), actions.end(), a);
  if (it == actions.end()) throw nexp::Error("agent_sft: action '" + a + "' is not admissible here");
  return static_cast<int>(it - actions.begin());
}
}  // namespace

Live replay(const TaskSpec& task, const std::vector<std::string>& actions) {
  Live live = start(task);
  for (const auto& a : actions) advance(live, index_of(live.env->admissible(), a), false);
  return live;
}

TeacherFn planner(const Teacher& teacher) {
  return [teacher](const Env& env, const Episode&, nexp::Random& rng) { return teacher.act(env, rng); };
}

int teacher_steps(Live& live, const TeacherFn& teacher, nexp::Random& rng, int max_steps) {
  int n = 0;
  while (!live.episode.done && n < max_steps) {
    const std::string a = teacher(*live.env, live.episode, rng);
    advance(live, index_of(live.env->admissible(), a), true);
    ++n;
  }
  return n;
}

std::vector<Episode> rollout(Policy& policy, const std::vector<TaskSpec>& tasks, const EnvFactory& make) {
  std::vector<Live> live;
  for (const auto& t : tasks) live.push_back(start(t, make));
  while (true) {
    std::vector<Live*> active;
    for (auto& l : live)
      if (!l.episode.done) active.push_back(&l);
    if (active.empty()) break;
    std::vector<const Episode*> view;
    std::vector<std::vector<std::string>> admissible;
    for (auto* l : active) view.push_back(&l->episode), admissible.push_back(l->env->admissible());
    const std::vector<int> choice = policy.choose(view, admissible);
    for (std::size_t i = 0; i < active.size(); ++i) advance(*active[i], choice[i], false);
  }
  std::vector<Episode> out;
  for (auto& l : live) out.push_back(std::move(l.episode));
  return out;
}

Evaluation summarize(const std::vector<Episode>& episodes) {
  Evaluation e;
  e.tasks = static_cast<int>(episodes.size());
  std::map<std::string, std::pair<int, int>> per_type;
  double solved = 0, steps = 0;
  for (const auto& ep : episodes) {
    auto& [s, n] = per_type[task_types(ep.task.world)[ep.task.type]];
    ++n;
    if (ep.success) ++s, ++solved, steps += static_cast<double>(ep.decisions.size());
  }
  e.success = e.tasks ? solved / e.tasks : 0;
  e.steps_on_success = solved ? steps / solved : 0;
  for (const auto& [type, sn] : per_type) e.by_type[type] = static_cast<double>(sn.first) / sn.second;
  return e;
}

Evaluation evaluate(Policy& policy, const std::vector<TaskSpec>& tasks, const EnvFactory& make) {
  return summarize(rollout(policy, tasks, make));
}

double agreement(Policy& policy, const std::vector<TaskSpec>& tasks, const TeacherFn& teacher, nexp::Random& rng) {
  std::vector<Episode> prefixes;  // one per decision: the teacher's episode up to it
  std::vector<std::vector<std::string>> admissible;
  std::vector<int> expected;
  for (const auto& task : tasks) {
    Live live = start(task);
    teacher_steps(live, teacher, rng, 1 << 30);
    const Episode& full = live.episode;
    for (std::size_t i = 0; i < full.decisions.size(); ++i) {
      Episode e{full.task, full.intro, full.goal, {}, {}, {}};
      e.observations.assign(full.observations.begin(), full.observations.begin() + i);
      e.tokens.assign(full.tokens.begin(), full.tokens.begin() + full.decisions[i].position);
      e.decisions.assign(full.decisions.begin(), full.decisions.begin() + i);
      prefixes.push_back(std::move(e));
      admissible.push_back(full.decisions[i].actions);
      expected.push_back(full.decisions[i].chosen);
    }
  }
  std::vector<const Episode*> view;
  for (const auto& e : prefixes) view.push_back(&e);
  const std::vector<int> chosen = policy.choose(view, admissible);
  int same = 0;
  for (std::size_t i = 0; i < chosen.size(); ++i) same += chosen[i] == expected[i];
  return chosen.empty() ? 0 : static_cast<double>(same) / static_cast<double>(chosen.size());
}

Construction construction_from_name(const std::string& name) {
  if (name == "bc") return Construction::BC;
  if (name == "cont") return Construction::Cont;
  if (name == "filtered") return Construction::Filtered;
  if (name == "hard") return Construction::Hard;
  throw nexp::ConfigError("agent_sft: unknown construction '" + name + "'; expected bc, cont, filtered or hard");
}

std::string construction_name(Construction c) {
  switch (c) {
    case Construction::BC: return "bc";
    case Construction::Cont: return "cont";
    case Construction::Filtered: return "filtered";
    default: return "hard";
  }
}

TaskSpec TaskStream::next() {
  if (remote_) return {World::Http, false, 0, first_ + rng_.below(count_of_), remote_};
  const int types = static_cast<int>(task_types(world_).size());
  return {world_, unseen_, count_++ % types, rng_()};
}

namespace {

void keep(Corpus& corpus, Episode&& e, int teacher_generated, bool kept) {
  Ledger& l = corpus.ledger;
  l.generated += teacher_generated;
  if (!kept) {
    l.discarded += teacher_generated;
    return;
  }
  for (const auto& d : e.decisions)
    if (d.labelled) l.states.insert(d.state);
  l.kept += e.labelled();
  if (e.labelled() > 0) corpus.episodes.push_back(std::move(e));
}

// From a state of the student's rollout: the teacher's continuation, kept or not by the construction.
void continue_from(const CollectOptions& o, const Episode& student, int t, const TeacherFn& teacher, nexp::Random& rng,
                   Corpus& corpus) {
  std::vector<std::string> prefix = student.actions();
  prefix.resize(t);
  Live live = replay(student.task, prefix);
  const bool full = o.construction != Construction::Cont;
  const int n = teacher_steps(live, teacher, rng, full ? 1 << 30 : o.k);
  keep(corpus, std::move(live.episode), n, !full || live.episode.success);
}

}  // namespace

void collect(const CollectOptions& o, std::int64_t until, Policy& student, TaskStream& tasks, const TeacherFn& teacher,
             nexp::Random& rng, Corpus& corpus) {
  Ledger& l = corpus.ledger;
  while (l.spent(o.unit) < until && (o.max_rollouts == 0 || l.rollouts < o.max_rollouts)) {
    if (o.construction == Construction::BC) {
      Live live = start(tasks.next());
      const int n = teacher_steps(live, teacher, rng, 1 << 30);
      keep(corpus, std::move(live.episode), n, true);
      continue;
    }
    std::vector<TaskSpec> batch;
    for (int i = 0; i < o.rollout_batch; ++i) batch.push_back(tasks.next());
    const std::vector<Episode> runs = rollout(student, batch);
    for (const auto& run : runs) {
      if (l.spent(o.unit) >= until) break;
      ++l.rollouts;
      if (o.construction == Construction::Hard && run.success) {
        ++l.skipped;
        continue;
      }
      const int length = static_cast<int>(run.decisions.size());
      for (int s = 0; s < o.states_per_rollout && l.spent(o.unit) < until; ++s)
        continue_from(o, run, static_cast<int>(rng.below(length)), teacher, rng, corpus);
    }
  }
}

View view(const Episode& episode, int end, int context, int reserve) {
  View v;
  const int goal = std::min(static_cast<int>(episode.goal.size()), context / 4);
  v.tokens.assign(episode.goal.begin(), episode.goal.begin() + goal);
  v.tokens.push_back(kGoal);
  v.prefix = goal + 1;
  v.begin = std::max(0, end + 1 - (context - reserve - v.prefix));
  v.tokens.insert(v.tokens.end(), episode.tokens.begin() + v.begin, episode.tokens.begin() + end + 1);
  return v;
}

std::vector<Window> windows(const Episode& episode, int context) {
  std::vector<int> targets;
  for (int i = 0; i < static_cast<int>(episode.decisions.size()); ++i)
    if (episode.decisions[i].labelled) targets.push_back(i);
  std::vector<Window> out;
  int last = static_cast<int>(targets.size()) - 1;
  while (last >= 0) {
    View v = view(episode, episode.decisions[targets[last]].position, context);
    const int min_position = v.begin == 0 ? 0 : v.begin + (context - v.prefix) / 2;
    Window w;
    w.tokens = std::move(v.tokens);
    int i = last;
    for (; i >= 0 && (episode.decisions[targets[i]].position >= min_position || i == last); --i) {
      const Decision& d = episode.decisions[targets[i]];
      Target t;
      t.position = d.position - v.begin + v.prefix;
      t.chosen = d.chosen;
      for (const auto& a : d.actions) t.candidates.push_back(tokenize(a));
      w.targets.push_back(std::move(t));
    }
    last = i;
    out.push_back(std::move(w));
  }
  return out;
}

std::string to_chat_jsonl(const Episode& episode) {
  nlohmann::json messages = nlohmann::json::array();
  messages.push_back({{"role", "system"},
                      {"content", "You are an agent in a text environment. Answer with exactly one of the "
                                  "admissible actions."}});
  messages.push_back({{"role", "user"}, {"content", episode.intro}});
  for (std::size_t i = 0; i < episode.decisions.size(); ++i) {
    const Decision& d = episode.decisions[i];
    messages.push_back({{"role", "assistant"}, {"content", d.actions[d.chosen]}, {"weight", d.labelled ? 1 : 0}});
    if (i + 1 < episode.decisions.size() || !episode.done)
      messages.push_back({{"role", "user"}, {"content", episode.observations[i]}});
  }
  nlohmann::json line = {{"env", world_name(episode.task.world)},
                         {"task_type", task_types(episode.task.world)[episode.task.type]},
                         {"task_id", episode.task.id},
                         {"success", episode.success},
                         {"messages", messages}};
  return line.dump();
}

}  // namespace agent_sft
