// Starting, watching and stopping the rank processes of a distributed run (run_ranks.hpp).
#include "run_ranks.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "nexp/error.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/util.hpp"
#include "run_signals.hpp"

extern char** environ;

namespace nexp::detail {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// A port of `host` that nothing listens on now (the OS picks it; rank 0 binds it a moment later).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error(fmt::format("cannot find a free TCP port for the ranks' rendezvous: {}", std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

// Inside a Slurm allocation with enough tasks, the ranks are its tasks, started by srun.
bool under_slurm(int processes) {
  return !env_or("SLURM_JOB_ID").empty() && std::atoi(env_or("SLURM_NTASKS", "1").c_str()) >= processes &&
         env_or("NEXP_NO_SRUN").empty();
}

std::vector<std::string> rank_environment(const RanksLaunch& l, const std::string& rendezvous) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("NEXP_RANK", 0) != 0 && kv.rfind("NEXP_WORLD_SIZE=", 0) != 0 && kv.rfind("NEXP_RENDEZVOUS=", 0) != 0 &&
        kv.rfind("NEXP_RESUMING=", 0) != 0)
      env.push_back(kv);
  }
  env.push_back(fmt::format("NEXP_WORLD_SIZE={}", l.processes));
  env.push_back("NEXP_RENDEZVOUS=" + rendezvous);
  env.push_back(fmt::format("NEXP_RESUMING={}", l.resuming ? 1 : 0));
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// fork/exec of one rank (or of srun) into process group `group` (0: a new one, led by the child).
// Only async-signal-safe calls between fork and exec.
pid_t spawn(std::vector<std::string> argv, std::vector<std::string> env, pid_t group, const fs::path& output) {
  std::vector<char*> args = c_strings(argv), envp = c_strings(env);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("cannot start a rank: fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, group);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the parent gone (even by SIGKILL): the rank goes too
    if (::getppid() != parent) ::_exit(127);
    if (!output.empty()) {
      const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) ::dup2(fd, STDOUT_FILENO), ::dup2(fd, STDERR_FILENO), ::close(fd);
    }
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, group == 0 ? pid : group);  // also here, so that it holds before either side goes on
  return pid;
}

std::string death_text(int status) {
  if (WIFSIGNALED(status)) {
    const char* d = ::strsignal(WTERMSIG(status));
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), d ? d : "?");
  }
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

// What a rank that ended with `status` did wrong, in its own words when it wrote them.
std::string rank_failure(const fs::path& folder, int rank, int status) {
  std::ifstream in(folder / fmt::format("rank{}.error", rank));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string said = ss.str();
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (!said.empty()) return fmt::format("rank {} failed: {}", rank, said);
  const std::string log = rank == 0 ? "log.txt" : fmt::format("rank{}.log", rank);
  return fmt::format("rank {} {} without an error message; see {} in the run folder", rank, death_text(status), log);
}

struct Children {
  pid_t group = 0;
  std::map<pid_t, int> rank_of;  // running ones
};

// Reaps the ranks that end within `wait`; returns how each ended.
std::vector<std::pair<int, int>> reap(Children& c, std::chrono::milliseconds wait) {
  std::vector<std::pair<int, int>> ended;
  const auto deadline = Clock::now() + wait;
  while (!c.rank_of.empty()) {
    int s = 0;
    const pid_t pid = ::waitpid(-c.group, &s, WNOHANG);
    if (pid > 0) {
      ended.emplace_back(c.rank_of[pid], s);
      c.rank_of.erase(pid);
    } else if ((pid < 0 && errno == ECHILD) || Clock::now() > deadline) {
      break;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return ended;
}

// SIGTERM to the group, SIGKILL to what is left after two seconds; reaps them all.
void end_all(Children& c) {
  if (c.rank_of.empty()) return;
  ::kill(-c.group, SIGTERM);
  reap(c, std::chrono::seconds(2));
  if (!c.rank_of.empty()) {
    ::kill(-c.group, SIGKILL);
    int status = 0;
    for (auto& [p, _] : c.rank_of) ::waitpid(p, &status, 0);
  }
  c.rank_of.clear();
}

Children start(const RanksLaunch& l) {
  Children c;
  std::vector<std::string> base = l.nexp_command;
  if (base.empty()) base.push_back(fs::read_symlink("/proc/self/exe").string());
  base.insert(base.end(), {"run-rank", l.folder.string()});
  if (under_slurm(l.processes)) {
    const std::string rendezvous = fmt::format("tcp:{}:{}", hostname(), free_port());
    std::vector<std::string> argv{"/usr/bin/env", "srun", fmt::format("--ntasks={}", l.processes), "--kill-on-bad-exit=1",
                                  "--output", (l.folder / "rank%t.log").string()};
    argv.insert(argv.end(), base.begin(), base.end());
    auto env = rank_environment(l, rendezvous);
    env.push_back("NEXP_RANK_FROM_SLURM=1");
    c.group = spawn(argv, env, 0, "");
    c.rank_of[c.group] = -1;  // srun stands for them all
    return c;
  }
  const fs::path store = l.folder / ".rendezvous";
  fs::remove(store);
  for (int k = 0; k < l.processes; ++k) {
    auto env = rank_environment(l, "file:" + store.string());
    env.push_back(fmt::format("NEXP_RANK={}", k));
    const fs::path output = k == 0 ? fs::path() : l.folder / fmt::format("rank{}.log", k);
    const pid_t pid = spawn(base, env, c.group, output);
    if (k == 0) c.group = pid;
    c.rank_of[pid] = k;
  }
  return c;
}

// The first rank to fail, if any: with srun, the lowest rank that wrote an error.
RanksOutcome failure_of(const RanksLaunch& l, int rank, int status) {
  RanksOutcome o;
  o.failed = true;
  if (rank < 0) {  // srun: find the rank that wrote why
    for (int k = 0; k < l.processes; ++k)
      if (fs::exists(l.folder / fmt::format("rank{}.error", k))) return failure_of(l, k, status);
    o.error = fmt::format("srun {} (no rank wrote an error; see rank<k>.log in the run folder)", death_text(status));
    return o;
  }
  o.failed_rank = rank;
  o.error = rank_failure(l.folder, rank, status);
  o.config_error = WIFEXITED(status) && WEXITSTATUS(status) == 2;
  return o;
}

// Whether a rank's error says any of `words` (case aside).
bool says(const RanksOutcome& o, std::initializer_list<const char*> words) {
  std::string e = o.error;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return e.find(w) != std::string::npos; });
}

// A collective that waited past the timeout (Gloo's own words).
bool timed_out(const RanksOutcome& o) { return says(o, {"timed out"}); }

// Only the loss of a peer: a connection closed or reset under the rank.
bool lost_a_peer(const RanksOutcome& o) { return says(o, {"connection closed", "connection reset"}); }

// Among the ranks that ended (rank, wait status), the root cause: one killed by a signal, else a
// collective past its timeout, else a failure that is not just a lost peer, else the lowest rank.
std::pair<int, RanksOutcome> root_cause(const RanksLaunch& l, const std::vector<std::pair<int, int>>& ended) {
  std::optional<std::tuple<bool, bool, bool, int>> best_key;
  std::pair<int, RanksOutcome> best{0, {}};
  for (const auto& [k, s] : ended) {
    if (WIFEXITED(s) && WEXITSTATUS(s) == 0) continue;
    RanksOutcome o = failure_of(l, k, s);
    const auto key = std::make_tuple(!WIFSIGNALED(s), !timed_out(o), lost_a_peer(o), k);
    if (!best_key || key < *best_key) best_key = key, best = {k, std::move(o)};
  }
  return best;
}

// The rank to blame when `rank` ended with `status`. The others that end within a moment are reaped
// too: a rank killed by a signal or a collective that timed out takes the blame before the ranks that
// lost their peer to it (they fail a moment later, with a connection error; while only such failures
// are seen, nexp waits a second for the cause). When the cause is a collective past the timeout, the
// ranks still running a few seconds later are the ones that never joined it (stopped or stuck): the
// lowest of them is blamed.
RanksOutcome first_failure(const RanksLaunch& l, Children& c, int rank, int status) {
  std::vector<std::pair<int, int>> ended{{rank, status}};
  for (auto& e : reap(c, std::chrono::milliseconds(100))) ended.push_back(e);
  auto cause = root_cause(l, ended);
  if (cause.first >= 0 && lost_a_peer(cause.second)) {
    for (auto& e : reap(c, std::chrono::seconds(1))) ended.push_back(e);
    cause = root_cause(l, ended);
  }
  RanksOutcome o = std::move(cause.second);
  if (cause.first < 0 || !timed_out(o)) return o;
  reap(c, std::chrono::seconds(3));  // the other ranks waiting in the same collective time out too
  if (c.rank_of.empty()) return o;
  int hung = l.processes;
  for (const auto& [pid, k] : c.rank_of) hung = std::min(hung, k);
  o.failed_rank = hung;
  o.error = fmt::format("rank {} did not join a collective within the {:g} s timeout (it is stopped or stuck; "
                        "ended by nexp); {}", hung, l.timeout_seconds, o.error);
  return o;
}

}  // namespace

std::optional<RankEnv> RankEnv::from_environment() {
  const std::string size = env_or("NEXP_WORLD_SIZE");
  if (size.empty()) return std::nullopt;
  RankEnv r;
  r.size = std::atoi(size.c_str());
  r.rank = std::atoi(env_or(env_or("NEXP_RANK_FROM_SLURM").empty() ? "NEXP_RANK" : "SLURM_PROCID", "0").c_str());
  r.rendezvous = env_or("NEXP_RENDEZVOUS");
  r.resuming = env_or("NEXP_RESUMING") == "1";
  if (r.rendezvous.rfind("tcp:", 0) == 0) r.host = hostname();  // Gloo listens where the others can reach it
  if (r.size < 1 || r.rank < 0 || r.rank >= r.size || r.rendezvous.empty())
    throw Error(fmt::format("a rank process needs NEXP_WORLD_SIZE, NEXP_RANK (< size) and NEXP_RENDEZVOUS; found {}, "
                            "{} and '{}'. `nexp run` sets them; do not start run-rank by hand",
                            r.size, r.rank, r.rendezvous));
  return r;
}

void write_rank_error(const fs::path& folder, int rank, const std::string& error) noexcept {
  try {
    std::ofstream(folder / fmt::format("rank{}.error", rank), std::ios::trunc) << error << "\n";
  } catch (...) {
  }
}

RanksOutcome run_ranks(const RanksLaunch& l) {
  for (int k = 0; k < l.processes; ++k) fs::remove(l.folder / fmt::format("rank{}.error", k));
  Children c = start(l);
  bool passed_on = false;
  RanksOutcome outcome;
  while (!c.rank_of.empty()) {
    if (RunSignals::stop_requested() && !passed_on) {
      // Each rank checkpoints and returns, as a single run does. SIGTERM, which srun passes on to its
      // tasks (one SIGINT only makes it print their state).
      ::kill(-c.group, SIGTERM);
      passed_on = true;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-c.group, &status, WNOHANG);
    if (pid < 0 && errno == ECHILD) break;
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const int rank = c.rank_of[pid];
    c.rank_of.erase(pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    outcome = first_failure(l, c, rank, status);
    logger().error("{}; stopping the other ranks", outcome.error);
    end_all(c);
  }
  fs::remove(l.folder / ".rendezvous");
  return outcome;
}

}  // namespace nexp::detail
