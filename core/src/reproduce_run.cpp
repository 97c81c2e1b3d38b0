// Running the rows of results.yaml: each distinct command once, as `nexp run ...` in a child process
// (`jobs` at once; a sweep runs alone with its own --jobs), completed runs of the same plugin build
// reused, interrupted ones resumed; then every check held against its recorded value
// (nexp/runtime/reproduce.hpp).
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/dataset.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/experiment.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/registry.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "run_signals.hpp"

extern char** environ;

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {


// One distinct command of the reproduction, shared by the rows that run it.
struct Task {
  std::string plugin, key, label;
  const ResultCommand* command = nullptr;
  bool sweep = false;
  std::vector<std::string> argv;  // empty: nothing to run (reused)
  fs::path folder;                // the run or sweep folder, once known
  std::string run_id;
  std::string resumes;  // the interrupted run it continues
  bool reused = false;
  std::string error;  // set when the command could not run or failed
  std::string skip;   // set when it was not run: over the budget, interrupted
  std::string note;   // said with the verdict (completed sweep trials of another plugin build)
  double cpu_seconds = -1;
  fs::path out_log, err_log;
  pid_t pid = 0;
};

std::string expand(std::string path, const fs::path& runs_dir) {
  for (const auto& [var, value] : {std::pair<std::string, std::string>{"${data}", data_dir().string()},
                                   {"${runs}", runs_dir.string()}})
    for (std::size_t at; (at = path.find(var)) != std::string::npos;) path.replace(at, var.size(), value);
  return path;
}

std::string missing_data(const ResultRow& row, const fs::path& runs_dir) {
  for (const auto& need : row.needs) {
    const std::string path = expand(need.path, runs_dir);
    if (!fs::exists(path))
      return fmt::format("missing data: {} does not exist{}", path, need.hint.empty() ? "" : " (" + need.hint + ")");
  }
  return "";
}

std::vector<Override> command_overrides(const ResultCommand& c, const fs::path& runs_dir) {
  std::vector<Override> out;
  for (const auto& o : split_overrides(c.overrides, true).overrides) out.push_back(o);
  out.push_back(parse_override("runs_dir=" + runs_dir.string()));
  return out;
}

// The latest run of `e` made by the same plugin file with the same threads, or nullopt.
std::optional<RunRecord> earlier_run(const Experiment& e, const Registry& registry, const fs::path& runs_dir) {
  const PluginRecord* plugin = registry.owner(e.method);
  if (!plugin || !fs::exists(runs_dir / "nexp.db")) return std::nullopt;
  RunQuery q;
  q.experiment = e.experiment;
  q.method = e.method;
  std::optional<RunRecord> best;
  for (const auto& r : RunIndex(runs_dir).query(q)) {
    if (r.config_hash != e.config_hash() || !r.sweep.empty()) continue;
    if ((r.status != RunStatus::Completed && r.status != RunStatus::Interrupted) || !fs::exists(r.folder / "meta.json")) continue;
    const json meta = json::parse(read_file(r.folder / "meta.json"), nullptr, false);
    if (!meta.is_object() || meta.value("/plugin/sha256"_json_pointer, std::string()) != plugin->sha256) continue;
    if (e.threads > 0 && meta.value("threads", 0) != e.threads) continue;
    if (!best || r.created > best->created || (r.created == best->created && r.status == RunStatus::Completed)) best = r;
  }
  return best;
}

// Completed trials that another build of the plugin made: the sweep keeps them (they match by config).
std::string stale_trials(const SweepPlan& plan, const Registry& registry) {
  const PluginRecord* plugin = registry.owner(plan.method);
  int stale = 0;
  for (const auto& t : plan.trials) {
    if (!plugin || trial_status(t).state != TrialState::Completed || !fs::exists(t.folder / "meta.json")) continue;
    const json meta = json::parse(read_file(t.folder / "meta.json"), nullptr, false);
    stale += meta.is_object() && meta.value("/plugin/sha256"_json_pointer, std::string()) != plugin->sha256;
  }
  if (stale == 0) return "";
  return fmt::format("{} completed trial{} of {} came from another build of the plugin; `--fresh` runs the sweep again "
                     "in a folder of its own",
                     stale, stale == 1 ? "" : "s", plan.folder.string());
}

// The experiment name a fresh sweep gets, so that it has a folder of its own.
Override fresh_experiment(const ResultCommand& c, const std::string& experiment) {
  const std::string name = experiment + "-" + now_iso8601().substr(0, 19);
  std::string safe;
  for (char ch : name) safe += (ch == ':' ? '-' : ch);
  const bool has = read_yaml_file(c.config)["experiment"].IsDefined();
  return parse_override((has ? "experiment=" : "+experiment=") + safe);
}

// Validates the command and decides what runs: a new run, a resume, a sweep, or nothing (reused).
void plan_task(Task& t, const ReproduceOptions& options, Registry& registry) {
  const ResultCommand& c = *t.command;
  auto overrides = command_overrides(c, options.runs_dir);
  std::vector<std::string> base = options.nexp_command;
  base.insert(base.end(), {"-q", "run"});
  const auto runs_flag = std::vector<std::string>{"--runs-dir", options.runs_dir.string()};
  if (t.sweep) {
    if (options.fresh) {
      const Experiment e = load_experiment(c.config, overrides, registry);
      overrides.push_back(fresh_experiment(c, e.experiment));
    }
    const SweepPlan plan = plan_sweep(c.config, overrides, split_overrides(c.sweep, true).axes, registry);
    t.folder = plan.folder;
    t.argv = base;
    t.argv.push_back(c.config);
    t.argv.push_back("-m");
    for (const auto& o : overrides)
      if (o.key != "runs_dir") t.argv.push_back(o.text);
    t.argv.insert(t.argv.end(), c.sweep.begin(), c.sweep.end());
    t.argv.insert(t.argv.end(), {"--jobs", std::to_string(c.jobs > 0 ? c.jobs : options.jobs)});
    t.argv.insert(t.argv.end(), runs_flag.begin(), runs_flag.end());
    if (!options.fresh) t.note = stale_trials(plan, registry);
    if (pending_trials(plan, false).empty() && !options.fresh) {
      t.reused = true;
      t.argv.clear();
    }
    return;
  }
  const Experiment e = load_experiment(c.config, overrides, registry);
  const auto earlier = options.fresh ? std::nullopt : earlier_run(e, registry, options.runs_dir);
  if (earlier && earlier->status == RunStatus::Completed) {
    t.reused = true;
    t.folder = earlier->folder;
    t.run_id = earlier->id;
    return;
  }
  t.argv = base;
  if (earlier) {
    t.resumes = earlier->id;
    t.argv.insert(t.argv.end(), {"--resume", earlier->id});
  } else {
    t.argv.push_back(c.config);
    t.argv.insert(t.argv.end(), c.overrides.begin(), c.overrides.end());
  }
  t.argv.insert(t.argv.end(), runs_flag.begin(), runs_flag.end());
}

pid_t spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a Ctrl-C at the terminal reaches nexp reproduce only, which passes one on.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw Error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc)));
  return pid;
}

// The last lines of a log that say what went wrong.
std::string tail_of(const fs::path& log) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  return out.empty() ? "(no output)" : out;
}

// After the child exits: where its run went (stdout's last `run:`/`sweep:` line) and whether it worked.
void finish(Task& t, int wstatus, const rusage& usage) {
  t.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  std::ifstream in(t.out_log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("run: ", 0) == 0) {
      std::istringstream ss(line.substr(5));
      std::string folder;
      ss >> t.run_id;
      std::getline(ss >> std::ws, folder);
      t.folder = folder;
    } else if (line.rfind("sweep: ", 0) == 0) {
      t.folder = line.substr(7);
    }
  }
  const int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  if (code != 0)
    t.error = fmt::format("`{}` exited with {}: {}", t.command->text(), code, tail_of(t.err_log));
}

// Runs the tasks: single runs `jobs` at once, a sweep alone. Returns when all are done or stopped.
void execute(std::vector<Task*>& tasks, const ReproduceOptions& options) {
  detail::SignalCounter signals;
  std::vector<Task*> running;
  std::size_t next = 0;
  int forwarded = 0;
  auto can_start = [&](const Task& t) {
    if (running.empty()) return true;
    return !t.sweep && !running.front()->sweep && static_cast<int>(running.size()) < std::max(1, options.jobs);
  };
  while ((detail::SignalCounter::count() == 0 && next < tasks.size()) || !running.empty()) {
    if (detail::SignalCounter::count() > forwarded) {
      forwarded = detail::SignalCounter::count();
      logger().warn("stopping: {} command{} asked to {}", running.size(), running.size() == 1 ? "" : "s",
                    forwarded == 1 ? "checkpoint and stop (Ctrl-C again to kill)" : "stop now");
      for (Task* t : running) ::kill(t->pid, forwarded == 1 ? SIGINT : SIGKILL);
    }
    while (detail::SignalCounter::count() == 0 && next < tasks.size() && can_start(*tasks[next])) {
      Task& t = *tasks[next++];
      logger().info("{}: {}{}", t.label, t.command->text(), t.resumes.empty() ? "" : " (resuming run " + t.resumes + ")");
      t.pid = spawn(t.argv, t.out_log, t.err_log);
      running.push_back(&t);
    }
    int wstatus = 0;
    rusage usage{};
    const pid_t pid = ::wait4(-1, &wstatus, 0, &usage);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = std::find_if(running.begin(), running.end(), [&](Task* t) { return t->pid == pid; });
    if (it == running.end()) continue;
    finish(**it, wstatus, usage);
    logger().info("{}: {} ({:.1f} CPU-s)", (*it)->label, (*it)->error.empty() ? "done" : "failed", (*it)->cpu_seconds);
    running.erase(it);
  }
  for (std::size_t i = next; i < tasks.size(); ++i) tasks[i]->skip = "interrupted before it ran";
}

RowOutcome evaluate(const ResultsFile& file, const ResultRow& row, const Task& t) {
  RowOutcome o{file.plugin, row.id, "", "", t.folder, t.run_id, t.reused, t.cpu_seconds, {}};
  if (!t.skip.empty()) {
    o.verdict = "skipped";
    o.reason = t.skip;
    o.folder.clear();
    return o;
  }
  if (!t.error.empty()) {
    o.verdict = "error";
    o.reason = t.error;
    if (t.folder.empty() || !fs::exists(t.folder)) return o;
  }
  bool all = true;
  for (const auto& c : row.checks) {
    CheckOutcome co{c.id, read_check(c, t.folder, nullptr), false, ""};
    if (!co.now) read_check(c, t.folder, &co.note);
    co.ok = co.now && within_tolerance(row, c, *co.now);
    all = all && co.ok;
    o.checks.push_back(co);
  }
  if (o.verdict.empty()) o.verdict = all ? "passed" : "failed";
  if (o.reason.empty()) o.reason = t.note;
  return o;
}

// The method a command runs: the config's `method:`, or a `method=` override.
std::string method_of(const ResultCommand& c) {
  std::string method;
  try {
    const YAML::Node root = read_yaml_file(c.config);
    if (root["method"] && root["method"].IsScalar()) method = root["method"].Scalar();
  } catch (const ConfigError&) {
    return "";  // reported when the command is planned
  }
  for (const auto& o : c.overrides)
    if (o.rfind("method=", 0) == 0) method = o.substr(7);
  return method;
}

// Why a row is not run (empty: it runs).
std::string skip_reason(const ResultRow& row, const ReproduceOptions& options, const Registry& registry) {
  if (row.command.is_external())
    return "external command: nexp shows it but does not run it; run it by hand to check the README's numbers";
  const std::string method = method_of(row.command);
  if (!method.empty() && !registry.find_method(method)) {
    const std::string plugin = method.substr(0, method.find('.'));
    for (const auto& f : registry.failures())
      if (f.path.find("nexp_plugin_" + plugin + ".so") != std::string::npos) return "plugin not loaded: " + f.message;
    return fmt::format("method '{}' is not registered: plugin '{}' is not loaded (built with -DNEXP_BUILD_PLUGINS=ON?)",
                       method, plugin);
  }
  return missing_data(row, options.runs_dir);
}

bool selected(const ResultRow& row, const ReproduceOptions& options) {
  if (options.quick && !row.quick) return false;
  return options.rows.empty() || std::find(options.rows.begin(), options.rows.end(), row.id) != options.rows.end();
}

}  // namespace

std::vector<RowOutcome> reproduce(const std::vector<ResultsFile>& files, const ReproduceOptions& options,
                                  Registry& registry) {
  std::map<std::string, Task> tasks;  // by plugin and command
  std::vector<Task*> order;
  std::vector<std::pair<std::size_t, const ResultRow*>> rows;  // file index, row
  std::map<const ResultRow*, std::string> skipped;
  double planned = 0;
  fs::create_directories(options.runs_dir / "reproduce" / "logs");
  for (std::size_t f = 0; f < files.size(); ++f)
    for (const auto& row : files[f].rows) {
      if (!selected(row, options)) continue;
      rows.emplace_back(f, &row);
      if (auto why = skip_reason(row, options, registry); !why.empty()) {
        skipped[&row] = why;
        continue;
      }
      const std::string key = files[f].plugin + " " + row.command.key();
      if (tasks.count(key)) continue;
      Task& t = tasks[key];
      t.plugin = files[f].plugin;
      t.key = key;
      t.label = files[f].plugin + "/" + row.id;
      t.command = &row.command;
      t.sweep = !row.command.sweep.empty() || config_has_sweep(row.command.config, row.command.overrides);
      t.out_log = options.runs_dir / "reproduce" / "logs" / (files[f].plugin + "-" + row.id + ".out");
      t.err_log = options.runs_dir / "reproduce" / "logs" / (files[f].plugin + "-" + row.id + ".err");
      try {
        plan_task(t, options, registry);
      } catch (const ConfigError& e) {
        t.error = e.what();
        continue;
      }
      if (t.argv.empty()) continue;
      if (options.budget > 0 && planned + row.cost > options.budget) {
        t.skip = fmt::format("over the budget: its recorded cost, {} CPU-s, would take the total past {} s", row.cost,
                             options.budget);
        continue;
      }
      planned += row.cost;
      order.push_back(&t);
    }
  // Sweeps after single runs, so that the single runs share the cores.
  std::stable_partition(order.begin(), order.end(), [](const Task* t) { return !t->sweep; });
  execute(order, options);
  std::vector<RowOutcome> out;
  for (const auto& [f, row] : rows) {
    if (auto it = skipped.find(row); it != skipped.end()) {
      out.push_back({files[f].plugin, row->id, "skipped", it->second, {}, "", false, -1, {}});
      continue;
    }
    const Task& t = tasks.at(files[f].plugin + " " + row->command.key());
    out.push_back(evaluate(files[f], *row, t));
  }
  return out;
}

}  // namespace nexp
