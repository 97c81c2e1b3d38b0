// The sweep launchers: local child processes and Slurm job arrays (nexp/runtime/sweep.hpp).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"

extern char** environ;

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

volatile sig_atomic_t g_sweep_signals = 0;
void on_sweep_signal(int) { g_sweep_signals = g_sweep_signals + 1; }

class SweepSignals {
 public:
  SweepSignals() {
    g_sweep_signals = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sweep_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SweepSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// Overwrites a trial's status when its process could not (killed, crashed before its handler ran).
void force_status(const SweepPlan& plan, const SweepTrial& trial, const std::string& status, const std::string& error) {
  fs::create_directories(trial.folder);
  json j = json::object();
  if (std::ifstream in(trial.folder / "status.json"); in) {
    j = json::parse(in, nullptr, false);
    if (!j.is_object()) j = json::object();
  }
  j["status"] = status;
  j["error"] = error;
  j["ended"] = now_iso8601();
  j["sweep"] = plan.folder.string();
  j["trial"] = trial.index;
  if (!j.contains("id")) j["id"] = trial.folder.filename().string();
  if (!j.contains("experiment")) j["experiment"] = plan.experiment;
  if (!j.contains("method")) j["method"] = plan.method;
  if (!j.contains("config_hash")) j["config_hash"] = trial.hash;
  write_file_atomic(trial.folder / "status.json", j.dump(2) + "\n");
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

struct Child {
  pid_t pid;
  int trial;
  Clock::time_point start;
  bool term_sent = false;
  bool timed_out = false;
};

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

}  // namespace

SweepOutcome launch_local(const SweepPlan& plan, const LaunchOptions& options) {
  SweepOutcome outcome;
  outcome.total = static_cast<int>(plan.trials.size());
  std::vector<int> queue = pending_trials(plan, options.retry_failed);
  outcome.skipped = outcome.total - static_cast<int>(queue.size());
  if (outcome.skipped > 0) {
    int failed_before = 0;
    for (const auto& t : plan.trials) failed_before += trial_status(t).state == TrialState::Failed;
    logger().info("{} of {} trials already done ({} failed{}); {} to run", outcome.skipped, outcome.total,
                  failed_before, failed_before && !options.retry_failed ? ", --retry-failed runs them again" : "",
                  queue.size());
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int jobs = std::max(1, std::min(options.jobs, static_cast<int>(queue.size())));
  const int threads = std::max(1, cores / jobs);
  fs::create_directories(plan.folder / "logs");

  SweepSignals signals;
  std::vector<Child> running;
  size_t next = 0;
  int done = 0, failed = 0;
  Progress bar = make_progress(static_cast<std::int64_t>(queue.size()), "sweep");
  int forwarded = 0;
  while ((!outcome.stopped && next < queue.size()) || !running.empty()) {
    // Ctrl-C: stop launching; pass each signal on to the running trials (the first lets them checkpoint).
    if (g_sweep_signals > forwarded) {
      forwarded = g_sweep_signals;
      outcome.stopped = true;
      logger().warn("stopping the sweep: {} running trial{} {}", running.size(), running.size() == 1 ? "" : "s",
                    forwarded == 1 ? "checkpoint and stop (Ctrl-C again to kill them)" : "killed");
      for (auto& c : running) ::kill(c.pid, forwarded == 1 ? SIGINT : SIGKILL);
    }
    while (!outcome.stopped && next < queue.size() && static_cast<int>(running.size()) < jobs) {
      const SweepTrial& t = plan.trials[static_cast<size_t>(queue[next++])];
      std::vector<std::string> argv = options.nexp_command;
      for (const auto& a : {std::string("-q"), std::string("run-trial"), plan.folder.string(), std::to_string(t.index),
                            std::string("--threads"), std::to_string(threads)})
        argv.push_back(a);
      running.push_back({spawn_trial(argv, plan.folder / "logs" / fmt::format("trial-{:04}.log", t.index)), t.index,
                         Clock::now()});
    }
    bar.note(fmt::format("{} running, {} failed", running.size(), failed));
    // Reap finished trials.
    for (auto it = running.begin(); it != running.end();) {
      int wstatus = 0;
      pid_t r = ::waitpid(it->pid, &wstatus, WNOHANG);
      if (r == 0) {
        const double age = std::chrono::duration<double>(Clock::now() - it->start).count();
        if (options.trial_timeout > 0 && age > options.trial_timeout && !it->term_sent) {
          ::kill(it->pid, SIGTERM);
          it->term_sent = it->timed_out = true;
        } else if (it->timed_out && age > options.trial_timeout + 10) {
          ::kill(it->pid, SIGKILL);
        }
        ++it;
        continue;
      }
      const SweepTrial& t = plan.trials[static_cast<size_t>(it->trial)];
      TrialStatus s = trial_status(t);
      if (s.state == TrialState::Completed) {
        // It finished before a signal reached it (perhaps while exiting): its own status stands.
      } else if (it->timed_out) {
        force_status(plan, t, "failed", fmt::format("exceeded --trial-timeout of {:g} s", options.trial_timeout));
      } else if (outcome.stopped && (s.state == TrialState::Running || s.state == TrialState::Pending) &&
                 (!WIFSIGNALED(wstatus) || WTERMSIG(wstatus) == SIGINT || WTERMSIG(wstatus) == SIGKILL)) {
        // Stopped before it could mark itself (still starting up, or killed by a second Ctrl-C).
        force_status(plan, t, "interrupted", "the sweep was stopped");
      } else if (WIFSIGNALED(wstatus) && s.state != TrialState::Interrupted) {
        force_status(plan, t, "failed", fmt::format("the trial process was killed by {}; see {}",
                                                    signal_name(WTERMSIG(wstatus)),
                                                    (plan.folder / "logs" / fmt::format("trial-{:04}.log", t.index)).string()));
      } else if (s.state == TrialState::Running || s.state == TrialState::Pending) {
        force_status(plan, t, "failed", fmt::format("the trial process exited with code {} before finishing; see {}",
                                                    WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
                                                    (plan.folder / "logs" / fmt::format("trial-{:04}.log", t.index)).string()));
      }
      s = trial_status(t);
      if (s.state == TrialState::Completed) ++outcome.completed;
      else if (s.state == TrialState::Failed) ++outcome.failed, ++failed;
      else ++outcome.interrupted;
      ++done;
      bar.advance();
      if (s.state == TrialState::Failed) logger().warn("[{}/{}] {}", done, queue.size(), outcome_text(plan, t));
      else logger().info("[{}/{}] {}", done, queue.size(), outcome_text(plan, t));
      it = running.erase(it);
    }
    if (!running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return outcome;
}

// ---------------------------------------------------------------- slurm

SweepOutcome launch_slurm(const SweepPlan& plan, const LaunchOptions& options) {
  SweepOutcome outcome;
  outcome.total = static_cast<int>(plan.trials.size());
  std::vector<int> queue = pending_trials(plan, options.retry_failed);
  outcome.skipped = outcome.total - static_cast<int>(queue.size());
  if (queue.empty()) {
    logger().info("all {} trials are done; nothing to submit", outcome.total);
    return outcome;
  }
  int rc = 0;
  run_capture("command -v sbatch", &rc);
  if (rc != 0)
    throw ConfigError("--launcher slurm needs Slurm's sbatch on PATH (Debian slurm-client), and a cluster to talk to; "
                      "`scripts/slurm-local start` brings up a one-node cluster on this machine");

  const fs::path dir = plan.folder / "slurm";
  fs::create_directories(dir);
  int submission = 1;
  while (fs::exists(dir / fmt::format("job-{}.sh", submission))) ++submission;
  const fs::path array_file = dir / fmt::format("array-{}.txt", submission);
  std::string lines;
  for (int i : queue) lines += std::to_string(i) + "\n";
  write_file_atomic(array_file, lines);

  auto opt = [&](const char* key) -> std::string {
    if (plan.slurm.IsDefined() && plan.slurm.IsMap() && plan.slurm[key] && !plan.slurm[key].IsNull())
      return plan.slurm[key].as<std::string>();
    return "";
  };
  if (plan.slurm.IsDefined() && plan.slurm.IsMap())
    for (auto it = plan.slurm.begin(); it != plan.slurm.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      static const std::vector<std::string> keys = {"partition", "time", "cpus_per_task", "mem", "gres", "extra", "max_parallel"};
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        throw ConfigError(fmt::format("unknown key 'slurm.{}'; the slurm block takes partition, time, cpus_per_task, mem, "
                                      "gres, extra (a list of #SBATCH lines) and max_parallel.{}",
                                      k, closest(k, keys).empty() ? "" : fmt::format(" Did you mean '{}'?", closest(k, keys))));
    }
  const int parallel = !opt("max_parallel").empty() ? std::stoi(opt("max_parallel")) : options.jobs;
  const std::string cpus = opt("cpus_per_task").empty() ? "1" : opt("cpus_per_task");
  std::string script = "#!/bin/bash\n";
  script += fmt::format("#SBATCH --job-name=nexp-{}\n", plan.experiment);
  script += fmt::format("#SBATCH --array=0-{}%{}\n", queue.size() - 1, std::max(1, parallel));
  script += fmt::format("#SBATCH --output={}\n", (dir / "%A_%a.out").string());
  script += "#SBATCH --open-mode=append\n";
  script += fmt::format("#SBATCH --cpus-per-task={}\n", cpus);
  if (!opt("partition").empty()) script += fmt::format("#SBATCH --partition={}\n", opt("partition"));
  if (!opt("time").empty()) script += fmt::format("#SBATCH --time={}\n", opt("time"));
  if (!opt("mem").empty()) script += fmt::format("#SBATCH --mem={}\n", opt("mem"));
  if (!opt("gres").empty()) script += fmt::format("#SBATCH --gres={}\n", opt("gres"));
  if (options.requeue) script += "#SBATCH --requeue\n";
  // B: the signal goes to the batch shell, which is nexp itself (exec below).
  if (!options.signal.empty()) script += fmt::format("#SBATCH --signal=B:{}\n", options.signal);
  if (plan.slurm.IsDefined() && plan.slurm.IsMap() && plan.slurm["extra"])
    for (const auto& line : plan.slurm["extra"]) script += fmt::format("#SBATCH {}\n", line.as<std::string>());
  script += "export OMP_WAIT_POLICY=PASSIVE\n";
  std::string command = "exec";
  for (const auto& a : options.nexp_command) command += " " + shell_quote(a);
  command += fmt::format(" -q run-trial {} --array-file {} --array-task \"$SLURM_ARRAY_TASK_ID\" --threads \"${{SLURM_CPUS_PER_TASK:-1}}\"",
                         shell_quote(plan.folder.string()), shell_quote(array_file.string()));
  if (options.requeue) command += " --requeue-on-stop";
  script += command + "\n";
  const fs::path job = dir / fmt::format("job-{}.sh", submission);
  write_file_atomic(job, script);

  std::string out = run_capture("sbatch --parsable " + shell_quote(job.string()), &rc);
  if (rc != 0) throw Error(fmt::format("sbatch refused the job script {}: {}", job.string(), out));
  const std::string job_id = out.substr(0, out.find(';'));
  logger().info("submitted Slurm job array {} ({} tasks, at most {} at once); script {}", job_id, queue.size(), parallel,
                job.string());
  if (!options.wait) {
    logger().info("follow it with `nexp sweep status {}`", plan.folder.string());
    return outcome;
  }

  // Progress comes from the trials' own status files: Slurm's job ids restart and are never keys.
  SweepSignals signals;
  Progress bar = make_progress(static_cast<std::int64_t>(queue.size()), "slurm");
  std::map<int, TrialState> reported;
  auto queue_empty = [&] { return run_capture("squeue -h -j " + job_id + " -o %i", &rc).empty() && rc == 0; };
  Clock::time_point empty_since{};
  for (;;) {
    int finished = 0, running = 0;
    for (int i : queue) {
      const SweepTrial& t = plan.trials[static_cast<size_t>(i)];
      TrialState s = trial_status(t).state;
      if (s == TrialState::Completed || s == TrialState::Failed) {
        ++finished;
        if (!reported.count(i) || reported[i] != s) {
          reported[i] = s;
          logger().info("[{}/{}] {}", finished, queue.size(), outcome_text(plan, t));
        }
      } else if (s == TrialState::Running) {
        ++running;
      }
    }
    bar.set(finished);
    bar.note(fmt::format("{} running", running));
    if (finished == static_cast<int>(queue.size())) break;
    if (g_sweep_signals > 0) {
      outcome.stopped = true;
      logger().warn("stopped waiting; Slurm job {} keeps running (`scancel {}` stops it; `nexp sweep status {}` follows it)",
                    job_id, job_id, plan.folder.string());
      break;
    }
    // The array left the queue with trials unfinished: interrupted without requeue, or killed.
    if (queue_empty()) {
      if (empty_since == Clock::time_point{}) empty_since = Clock::now();
      if (Clock::now() - empty_since > std::chrono::seconds(5)) {
        logger().warn("Slurm job {} has left the queue with {} trials unfinished; re-run the sweep to resume them",
                      job_id, queue.size() - static_cast<size_t>(finished));
        break;
      }
    } else {
      empty_since = {};
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  for (int i : queue) {
    TrialState s = trial_status(plan.trials[static_cast<size_t>(i)]).state;
    if (s == TrialState::Completed) ++outcome.completed;
    else if (s == TrialState::Failed) ++outcome.failed;
    else ++outcome.interrupted;
  }
  return outcome;
}

}  // namespace nexp
