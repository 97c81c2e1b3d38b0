// The sweep launchers: local child processes and Slurm job arrays (nexp/runtime/sweep.hpp).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/text.hpp"
#include "run_signals.hpp"
#include "sweep_pruning.hpp"

extern char** environ;

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {


// Overwrites a trial's status when its process could not (killed, crashed before its handler ran).
void force_status(const SweepPlan& plan, const SweepTrial& trial, RunStatus status, const std::string& error,
                  const std::string& why = "", const std::map<std::string, double>& last_values = {}) {
  fs::create_directories(trial.folder);
  json j = json::object();
  if (std::ifstream in(trial.folder / "status.json"); in) {
    j = json::parse(in, nullptr, false);
    if (!j.is_object()) j = json::object();
  }
  j["status"] = to_string(status);
  j["error"] = error;
  if (why.empty()) j.erase("reason");
  else j["reason"] = why;
  j["ended"] = now_iso8601();
  if (!j.contains("summary") || !j["summary"].is_object()) j["summary"] = json::object();
  for (const auto& [k, v] : last_values)
    if (!j["summary"].contains(k)) j["summary"][k] = json_number(v);
  j["sweep"] = plan.folder.string();
  j["trial"] = trial.index;
  if (!j.contains("id")) j["id"] = trial.folder.filename().string();
  if (!j.contains("experiment")) j["experiment"] = plan.experiment;
  if (!j.contains("method")) j["method"] = plan.method;
  if (!j.contains("config_hash")) j["config_hash"] = trial.hash;
  write_file_atomic(trial.folder / "status.json", json_dump(j, 2) + "\n");
  if (!fs::exists(trial.folder / "config.yaml")) write_file_atomic(trial.folder / "config.yaml", trial.config);
  try {
    RunIndex(plan.runs_dir).upsert(read_run_folder(trial.folder));
  } catch (const std::exception&) {
  }
}

std::string assignment_text(const SweepTrial& t) {
  std::string s;
  for (const auto& [k, v] : t.assignment) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string outcome_text(const SweepPlan& plan, const SweepTrial& t) {
  TrialStatus s = trial_status(t);
  std::string text = fmt::format("trial {} {}", t.index, trial_state_name(s.state));
  if (s.state == TrialState::Interrupted && !s.reason.empty()) text += " (" + s.reason + ")";
  if (!t.assignment.empty()) text += "  " + assignment_text(t);
  if (plan.objective)
    if (auto it = s.summary.find(plan.objective->metric); it != s.summary.end())
      text += fmt::format("  {}={:.6g}", plan.objective->metric, it->second);
  text += fmt::format("  ({:.1f}s)", s.seconds);
  if (s.state == TrialState::Failed && !s.error.empty()) text += ": " + s.error.substr(0, 200);
  return text;
}

std::string signal_name(int sig) {
  const char* d = ::strsignal(sig);
  return fmt::format("signal {} ({})", sig, d ? d : "?");
}


pid_t spawn_trial(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a Ctrl-C at the terminal reaches the launcher only, which passes one
  // SIGINT on (two would abort the trial instead of letting it checkpoint).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw Error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc)));
  return pid;
}

// The trials to run; what an earlier attempt left is said once.
std::vector<int> trials_to_run(const SweepPlan& plan, bool retry_failed, SweepOutcome& outcome) {
  outcome.total = static_cast<int>(plan.trials.size());
  std::vector<int> queue = pending_trials(plan, retry_failed);
  outcome.skipped = outcome.total - static_cast<int>(queue.size());
  if (outcome.skipped > 0 && !queue.empty()) {
    int failed_before = 0;
    for (const auto& t : plan.trials) failed_before += trial_status(t).state == TrialState::Failed;
    logger().info("{} of {} trials already done ({} failed{}); {} to run", outcome.skipped, outcome.total,
                  failed_before, failed_before && !retry_failed ? ", --retry-failed runs them again" : "",
                  queue.size());
  }
  return queue;
}

void count_outcome(TrialState s, SweepOutcome& outcome) {
  if (s == TrialState::Completed) ++outcome.completed;
  else if (s == TrialState::Failed) ++outcome.failed;
  else if (s == TrialState::Pruned) ++outcome.pruned;
  else ++outcome.interrupted;
}

// ---------------------------------------------------------------- local

struct Child {
  pid_t pid;
  int trial;
  Clock::time_point start;
  bool term_sent = false;
  bool timed_out = false;
  std::string pruned;  // why the pruner stopped it
};

// Runs the queue as child processes, `jobs` at once, and settles each trial's status as it ends.
class LocalLauncher {
 public:
  LocalLauncher(const SweepPlan& plan, const LaunchOptions& options) : plan_(plan), options_(options) {
    queue_ = trials_to_run(plan, options.retry_failed, outcome_);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int to_start = static_cast<int>(queue_.size()) + (options.adaptive ? options.adaptive->remaining() : 0);
    jobs_ = std::max(1, std::min(options.jobs, to_start));
    threads_ = std::max(1, cores / jobs_);
    fs::create_directories(plan.folder / "logs");
    if (plan.pruner.active()) prune_ = std::make_unique<detail::PruneWatch>(plan);
  }

  SweepOutcome run() {
    detail::SignalCounter signals;
    const int adaptive = options_.adaptive ? options_.adaptive->remaining() : 0;
    Progress bar = make_progress(static_cast<std::int64_t>(queue_.size()) + adaptive, "sweep");
    while ((!outcome_.stopped && more_to_start()) || !running_.empty()) {
      forward_signals();
      start_trials();
      bar.note(fmt::format("{} running, {} failed", running_.size(), outcome_.failed));
      const bool prune_now = prune_ && Clock::now() - last_prune_check_ > std::chrono::milliseconds(200);
      if (prune_now) last_prune_check_ = Clock::now();
      for (auto it = running_.begin(); it != running_.end();) {
        int wstatus = 0;
        if (::waitpid(it->pid, &wstatus, WNOHANG) == 0) {
          if (prune_now) prune(*it);
          watch(*it++);
          continue;
        }
        settle(*it, wstatus);
        bar.advance();
        it = running_.erase(it);
      }
      if (!running_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    outcome_.total = static_cast<int>(plan_.trials.size());
    return outcome_;
  }

 private:
  fs::path log_of(int trial) const { return plan_.folder / "logs" / fmt::format("trial-{:04}.log", trial); }

  // Ctrl-C: stop launching; pass each signal on to the running trials (the first lets them checkpoint).
  void forward_signals() {
    if (detail::SignalCounter::count() <= forwarded_) return;
    forwarded_ = detail::SignalCounter::count();
    outcome_.stopped = true;
    logger().warn("stopping the sweep: {} running trial{} {}", running_.size(), running_.size() == 1 ? "" : "s",
                  forwarded_ == 1 ? "checkpoint and stop (Ctrl-C again to kill them)" : "killed");
    for (auto& c : running_) ::kill(c.pid, forwarded_ == 1 ? SIGINT : SIGKILL);
  }

  bool more_to_start() const {
    return next_ < queue_.size() || (options_.adaptive && options_.adaptive->remaining() > 0);
  }

  // Fills the free slots: the plan's own trials first, then (adaptive sweeps) one proposal per slot,
  // made now, from the results of every trial that has ended.
  void start_trials() {
    while (!outcome_.stopped && static_cast<int>(running_.size()) < jobs_) {
      if (next_ == queue_.size()) {
        const std::optional<int> proposed = options_.adaptive ? options_.adaptive->propose() : std::nullopt;
        if (!proposed) return;
        queue_.push_back(*proposed);
      }
      const SweepTrial& t = plan_.trials[static_cast<size_t>(queue_[next_++])];
      std::vector<std::string> argv = options_.nexp_command;
      for (const auto& a : {std::string("-q"), std::string("run-trial"), plan_.folder.string(), std::to_string(t.index),
                            std::string("--threads"), std::to_string(threads_)})
        argv.push_back(a);
      running_.push_back({spawn_trial(argv, log_of(t.index)), t.index, Clock::now(), false, false, {}});
    }
  }

  // --trial-timeout: SIGTERM (the trial checkpoints and stops), SIGKILL 10 s later.
  void watch(Child& c) const {
    const double age = std::chrono::duration<double>(Clock::now() - c.start).count();
    if (options_.trial_timeout > 0 && age > options_.trial_timeout && !c.term_sent) {
      ::kill(c.pid, SIGTERM);
      c.term_sent = c.timed_out = true;
    } else if (c.timed_out && age > options_.trial_timeout + 10) {
      ::kill(c.pid, SIGKILL);
    }
  }

  // The pruner's verdict on a running trial: SIGTERM, as for a timeout; it checkpoints and stops, and
  // settle() marks it pruned.
  void prune(Child& c) {
    if (c.term_sent) return;
    if (auto why = prune_->check(c.trial)) {
      ::kill(c.pid, SIGTERM);
      c.term_sent = true;
      c.pruned = *why;
      logger().info("trial {} pruned: {}", c.trial, *why);
    }
  }

  // The trial's process ended: its own status stands unless it could not write one.
  void settle(const Child& c, int wstatus) {
    const SweepTrial& t = plan_.trials[static_cast<size_t>(c.trial)];
    TrialStatus s = trial_status(t);
    const bool unfinished = s.state == TrialState::Running || s.state == TrialState::Pending;
    const bool killed = WIFSIGNALED(wstatus);
    if (s.state == TrialState::Completed) {
      // It finished before a signal reached it (perhaps while exiting).
    } else if (!c.pruned.empty() && s.state != TrialState::Failed) {
      force_status(plan_, t, RunStatus::Pruned, "", c.pruned, detail::last_logged(t.folder).values);
    } else if (c.timed_out) {
      force_status(plan_, t, RunStatus::Failed, fmt::format("exceeded --trial-timeout of {:g} s", options_.trial_timeout));
    } else if (outcome_.stopped && unfinished &&
               (!killed || WTERMSIG(wstatus) == SIGINT || WTERMSIG(wstatus) == SIGKILL)) {
      // Stopped before it could mark itself (still starting up, or killed by a second Ctrl-C).
      force_status(plan_, t, RunStatus::Interrupted, "the sweep was stopped", reason::aborted);
    } else if (killed && s.state != TrialState::Interrupted) {
      force_status(plan_, t, RunStatus::Failed, fmt::format("the trial process was killed by {}; see {}",
                                                            signal_name(WTERMSIG(wstatus)), log_of(t.index).string()));
    } else if (unfinished) {
      force_status(plan_, t, RunStatus::Failed,
                   fmt::format("the trial process exited with code {} before finishing; see {}",
                               WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, log_of(t.index).string()));
    }
    s = trial_status(t);
    count_outcome(s.state, outcome_);
    if (options_.adaptive) options_.adaptive->observe(c.trial);
    ++done_;
    const size_t total = queue_.size() + static_cast<size_t>(options_.adaptive ? options_.adaptive->remaining() : 0);
    if (s.state == TrialState::Failed) logger().warn("[{}/{}] {}", done_, total, outcome_text(plan_, t));
    else logger().info("[{}/{}] {}", done_, total, outcome_text(plan_, t));
  }

  const SweepPlan& plan_;
  const LaunchOptions& options_;
  SweepOutcome outcome_;
  std::vector<int> queue_;
  size_t next_ = 0;
  int jobs_ = 1, threads_ = 1, done_ = 0, forwarded_ = 0;
  std::vector<Child> running_;
  std::unique_ptr<detail::PruneWatch> prune_;
  Clock::time_point last_prune_check_{};
};

// ---------------------------------------------------------------- slurm

// The config's `slurm:` block.
struct SlurmSettings {
  std::string partition, time, cpus_per_task = "1", mem, gres;
  std::vector<std::string> extra;  // further #SBATCH lines
  int max_parallel = 0;            // 0: --jobs
};

SlurmSettings slurm_settings(const YAML::Node& block) {
  SlurmSettings s;
  if (!block.IsDefined() || !block.IsMap()) return s;
  static const std::vector<std::string> keys = {"partition", "time", "cpus_per_task", "mem", "gres", "extra", "max_parallel"};
  for (auto it = block.begin(); it != block.end(); ++it) {
    const std::string k = it->first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      throw ConfigError(fmt::format("unknown key 'slurm.{}'; the slurm block takes partition, time, cpus_per_task, mem, "
                                    "gres, extra (a list of #SBATCH lines) and max_parallel.{}",
                                    k, closest(k, keys).empty() ? "" : fmt::format(" Did you mean '{}'?", closest(k, keys))));
  }
  auto text = [&](const char* key, std::string& out) {
    if (block[key] && !block[key].IsNull()) out = block[key].as<std::string>();
  };
  text("partition", s.partition);
  text("time", s.time);
  text("cpus_per_task", s.cpus_per_task);
  text("mem", s.mem);
  text("gres", s.gres);
  if (block["extra"])
    for (const auto& line : block["extra"]) s.extra.push_back(line.as<std::string>());
  std::string parallel;
  text("max_parallel", parallel);
  if (!parallel.empty()) {
    char* end = nullptr;
    s.max_parallel = static_cast<int>(std::strtol(parallel.c_str(), &end, 10));
    if (*end != '\0' || s.max_parallel < 1)
      throw ConfigError(fmt::format("slurm.max_parallel: expected a positive integer, found '{}'", parallel));
  }
  return s;
}

// The most ranks a trial of the plan asks for (`distributed.processes`): the Slurm tasks of each array
// element, which the trial's run starts with srun.
int ranks_per_trial(const SweepPlan& plan) {
  int most = 1;
  for (const auto& t : plan.trials) {
    const YAML::Node d = YAML::Load(t.config)["distributed"];
    if (d && d["processes"]) most = std::max(most, d["processes"].as<int>());
  }
  return most;
}

std::string job_script(const SweepPlan& plan, const LaunchOptions& options, const SlurmSettings& slurm, size_t tasks,
                       int parallel, const fs::path& dir, const fs::path& array_file) {
  std::string script = "#!/bin/bash\n";
  script += fmt::format("#SBATCH --job-name=nexp-{}\n", plan.experiment);
  script += fmt::format("#SBATCH --array=0-{}%{}\n", tasks - 1, parallel);
  script += fmt::format("#SBATCH --output={}\n", (dir / "%A_%a.out").string());
  script += "#SBATCH --open-mode=append\n";
  script += fmt::format("#SBATCH --cpus-per-task={}\n", slurm.cpus_per_task);
  if (const int ranks = ranks_per_trial(plan); ranks > 1) script += fmt::format("#SBATCH --ntasks={}\n", ranks);
  if (!slurm.partition.empty()) script += fmt::format("#SBATCH --partition={}\n", slurm.partition);
  if (!slurm.time.empty()) script += fmt::format("#SBATCH --time={}\n", slurm.time);
  if (!slurm.mem.empty()) script += fmt::format("#SBATCH --mem={}\n", slurm.mem);
  if (!slurm.gres.empty()) script += fmt::format("#SBATCH --gres={}\n", slurm.gres);
  if (options.requeue) script += "#SBATCH --requeue\n";
  // B: the signal goes to the batch shell, which is nexp itself (exec below).
  if (!options.signal.empty()) script += fmt::format("#SBATCH --signal=B:{}\n", options.signal);
  for (const auto& line : slurm.extra) script += fmt::format("#SBATCH {}\n", line);
  script += "export OMP_WAIT_POLICY=PASSIVE\n";
  std::string command = "exec";
  for (const auto& a : options.nexp_command) command += " " + shell_quote(a);
  command += fmt::format(" -q run-trial {} --array-file {} --array-task \"$SLURM_ARRAY_TASK_ID\" --threads \"${{SLURM_CPUS_PER_TASK:-1}}\"",
                         shell_quote(plan.folder.string()), shell_quote(array_file.string()));
  if (options.requeue) command += " --requeue-on-stop";
  return script + command + "\n";
}

// The pruner under Slurm. A trial it stops gets a note in its folder (so that --requeue-on-stop does not
// requeue it) and SIGTERM through `scancel --batch` (the batch shell is `nexp run-trial`, exec'd): it
// checkpoints and ends interrupted, and is then marked pruned, with its last logged values.
constexpr const char* kPruneNote = "pruned-by-sweep";

class SlurmPruning {
 public:
  SlurmPruning(const SweepPlan& plan, std::string job_id) : plan_(plan), job_id_(std::move(job_id)) {
    if (plan.pruner.active()) watch_ = std::make_unique<detail::PruneWatch>(plan);
  }

  // Trial `i`, array task `task`, in state `s`: asks the pruner about it while it runs; marks it pruned
  // once it has stopped. Returns its state after that.
  TrialState update(int i, int task, TrialState s) {
    const SweepTrial& t = plan_.trials[static_cast<size_t>(i)];
    auto it = why_.find(i);
    if (it != why_.end() && s != TrialState::Running && s != TrialState::Pending) {
      if (s == TrialState::Interrupted) {  // else it ended before the signal reached it
        force_status(plan_, t, RunStatus::Pruned, "", it->second, detail::last_logged(t.folder).values);
        s = TrialState::Pruned;
      }
      fs::remove(t.folder / kPruneNote);
      why_.erase(it);
      return s;
    }
    if (!watch_ || s != TrialState::Running || it != why_.end()) return s;
    if (auto why = watch_->check(i)) {
      write_file_atomic(t.folder / kPruneNote, *why + "\n");
      int rc = 0;
      const std::string command = fmt::format("scancel --batch --signal=TERM {}_{}", job_id_, task);
      const std::string out = run_capture(command, &rc);
      if (rc != 0) logger().warn("`{}` failed ({}); trial {} runs on", command, out, i);
      else logger().info("trial {} pruned: {} ({})", i, *why, command);
      why_[i] = *why;
    }
    return s;
  }

 private:
  const SweepPlan& plan_;
  std::string job_id_;
  std::unique_ptr<detail::PruneWatch> watch_;
  std::map<int, std::string> why_;  // trials told to stop, and why
};

// Progress comes from the trials' own status files: Slurm's job ids restart and are never keys.
// Returns false when stopped by a signal.
bool wait_for_array(const SweepPlan& plan, const std::vector<int>& queue, const std::string& job_id) {
  detail::SignalCounter signals;
  Progress bar = make_progress(static_cast<std::int64_t>(queue.size()), "slurm");
  std::map<int, TrialState> reported;
  SlurmPruning pruning(plan, job_id);
  int rc = 0;
  auto queue_empty = [&] { return run_capture("squeue -h -j " + job_id + " -o %i", &rc).empty() && rc == 0; };
  Clock::time_point empty_since{};
  for (;;) {
    int finished = 0, running = 0;
    for (std::size_t task = 0; task < queue.size(); ++task) {
      const int i = queue[task];
      const SweepTrial& t = plan.trials[static_cast<size_t>(i)];
      const TrialState s = pruning.update(i, static_cast<int>(task), trial_status(t).state);
      running += s == TrialState::Running;
      if (s != TrialState::Completed && s != TrialState::Failed && s != TrialState::Pruned) continue;
      ++finished;
      if (reported.count(i) && reported[i] == s) continue;
      reported[i] = s;
      logger().info("[{}/{}] {}", finished, queue.size(), outcome_text(plan, t));
    }
    bar.set(finished);
    bar.note(fmt::format("{} running", running));
    if (finished == static_cast<int>(queue.size())) return true;
    if (detail::SignalCounter::count() > 0) {
      logger().warn("stopped waiting; Slurm job {} keeps running (`scancel {}` stops it; `nexp sweep status {}` follows it)",
                    job_id, job_id, plan.folder.string());
      return false;
    }
    // The array left the queue with trials unfinished: interrupted without requeue, or killed.
    if (!queue_empty()) {
      empty_since = {};
    } else if (empty_since == Clock::time_point{}) {
      empty_since = Clock::now();
    } else if (Clock::now() - empty_since > std::chrono::seconds(5)) {
      logger().warn("Slurm job {} has left the queue with {} trials unfinished; re-run the sweep to resume them",
                    job_id, queue.size() - static_cast<size_t>(finished));
      return true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace

SweepOutcome launch_local(const SweepPlan& plan, const LaunchOptions& options) {
  return LocalLauncher(plan, options).run();
}

namespace {

void require_sbatch() {
  int rc = 0;
  run_capture("command -v sbatch", &rc);
  if (rc != 0)
    throw ConfigError("--launcher slurm needs Slurm's sbatch on PATH (Debian slurm-client), and a cluster to talk to; "
                      "`scripts/slurm-local start` brings up a one-node cluster on this machine");
}

// Submits `queue` as one job array (slurm/job-<k>.sh, array-<k>.txt); returns the job id.
std::string submit_array(const SweepPlan& plan, const LaunchOptions& options, const std::vector<int>& queue,
                         int parallel) {
  const SlurmSettings slurm = slurm_settings(plan.slurm);
  const fs::path dir = plan.folder / "slurm";
  fs::create_directories(dir);
  int submission = 1;
  while (fs::exists(dir / fmt::format("job-{}.sh", submission))) ++submission;
  const fs::path array_file = dir / fmt::format("array-{}.txt", submission);
  std::string lines;
  for (int i : queue) lines += std::to_string(i) + "\n";
  write_file_atomic(array_file, lines);
  const fs::path job = dir / fmt::format("job-{}.sh", submission);
  write_file_atomic(job, job_script(plan, options, slurm, queue.size(), parallel, dir, array_file));
  int rc = 0;
  const std::string out = run_capture("sbatch --parsable " + shell_quote(job.string()), &rc);
  if (rc != 0) throw Error(fmt::format("sbatch refused the job script {}: {}", job.string(), out));
  const std::string job_id = out.substr(0, out.find(';'));
  logger().info("submitted Slurm job array {} ({} tasks, at most {} at once); script {}", job_id, queue.size(), parallel,
                job.string());
  return job_id;
}

int array_parallel(const SweepPlan& plan, const LaunchOptions& options) {
  const SlurmSettings slurm = slurm_settings(plan.slurm);
  return std::max(1, slurm.max_parallel > 0 ? slurm.max_parallel : options.jobs);
}

// An adaptive sweep on Slurm: waves of at most `parallel` array tasks; between waves the results go
// back to the sampler, which proposes the next wave from them.
SweepOutcome launch_slurm_waves(const SweepPlan& plan, const LaunchOptions& options, std::vector<int> queue,
                                SweepOutcome outcome) {
  if (!options.wait)
    throw ConfigError("an adaptive sweep on Slurm feeds each wave's results to its sampler, so nexp waits for the "
                      "waves; drop --no-wait (or run it inside an allocation)");
  const int parallel = array_parallel(plan, options);
  for (;;) {
    while (static_cast<int>(queue.size()) < parallel)
      if (const auto proposed = options.adaptive->propose()) queue.push_back(*proposed);
      else break;
    if (queue.empty()) break;
    outcome.stopped = !wait_for_array(plan, queue, submit_array(plan, options, queue, parallel));
    bool unfinished = false;
    for (int i : queue) {
      const TrialState s = trial_status(plan.trials[static_cast<size_t>(i)]).state;
      count_outcome(s, outcome);
      options.adaptive->observe(i);
      unfinished |= s != TrialState::Completed && s != TrialState::Failed && s != TrialState::Pruned;
    }
    if (outcome.stopped || unfinished) break;  // re-running the sweep resumes the wave
    queue.clear();
  }
  outcome.total = static_cast<int>(plan.trials.size());
  return outcome;
}

}  // namespace

SweepOutcome launch_slurm(const SweepPlan& plan, const LaunchOptions& options) {
  SweepOutcome outcome;
  const std::vector<int> queue = trials_to_run(plan, options.retry_failed, outcome);
  const bool more = options.adaptive && options.adaptive->remaining() > 0;
  if (queue.empty() && !more) {
    logger().info("all {} trials are done; nothing to submit", outcome.total);
    return outcome;
  }
  if (!options.wait && plan.pruner.active())
    throw ConfigError("the sweep's pruner reads the trials' curves while they run, so nexp waits for the Slurm job; drop "
                      "--no-wait (or remove sweep.pruner)");
  require_sbatch();
  if (options.adaptive) return launch_slurm_waves(plan, options, queue, outcome);
  const std::string job_id = submit_array(plan, options, queue, array_parallel(plan, options));
  if (!options.wait) {
    logger().info("follow it with `nexp sweep status {}`", plan.folder.string());
    return outcome;
  }
  outcome.stopped = !wait_for_array(plan, queue, job_id);
  for (int i : queue) count_outcome(trial_status(plan.trials[static_cast<size_t>(i)]).state, outcome);
  return outcome;
}

int trial_of_array_task(const fs::path& array_file, int task) {
  std::ifstream in(array_file);
  if (!in) throw ConfigError(fmt::format("--array-file '{}' cannot be read", array_file.string()));
  std::string line;
  for (int i = 0; std::getline(in, line); ++i) {
    if (i != task) continue;
    char* end = nullptr;
    const long index = std::strtol(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != '\0' || index < 0)
      throw ConfigError(fmt::format("line {} of {} is '{}', not a trial index", i + 1, array_file.string(), line));
    return static_cast<int>(index);
  }
  throw ConfigError(fmt::format("--array-task {} is not a line of {}", task, array_file.string()));
}

bool requeue_slurm_task(const RunResult& result) {
  const char* job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (result.status != RunStatus::Interrupted || !job || !task) return false;
  if (fs::exists(result.folder / kPruneNote)) return false;  // stopped by the sweep's pruner: not to run again
  const std::string command = fmt::format("scontrol requeue {}_{}", job, task);
  logger().info("interrupted under Slurm: {}", command);
  int rc = 0;
  const std::string out = run_capture(command, &rc);
  if (rc == 0) return true;
  logger().warn("`{}` failed ({}); run the sweep again to resume this trial", command, out);
  return false;
}

}  // namespace nexp
