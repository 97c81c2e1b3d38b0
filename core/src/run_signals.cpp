// Stop signals and crashes while a run is in progress (run_signals.hpp).
#include "run_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "nexp/text.hpp"

namespace nexp::detail {

namespace {

namespace fs = std::filesystem;

enum Phase : int { kSetup, kMethod, kAborting, kFinishing };
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "the signal handlers need lock-free atomics");

std::atomic<int> g_signals{0};  // stop signals received in this run
std::atomic<int> g_phase{kSetup};
std::atomic<bool> g_test_stop{false};
std::atomic<bool> g_armed{false};        // the prepared files below are complete
std::atomic<bool> g_crash_armed{false};  // a crash now marks the run failed

constexpr char kTimePlaceholder[] = "0000-00-00T00:00:00Z";  // 20 characters, replaced when written

// A file's content prepared in advance, written from a handler with async-signal-safe calls only.
struct Prepared {
  char path[4096] = {0};
  char tmp[4096] = {0};
  char body[32768] = {0};
  size_t size = 0;
  long time_at = -1;  // offset of kTimePlaceholder in body, or -1
};
Prepared g_abort_status, g_crash_status;
char g_log_path[4096] = {0};
char g_abort_line[1024] = {0};

void say(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

// YYYY-MM-DDTHH:MM:SSZ for `t` (days to civil date: pure arithmetic, safe in a handler).
void format_utc(std::time_t t, char* out) {
  long days = static_cast<long>(t / 86400), secs = static_cast<long>(t % 86400);
  days += 719468;
  const long era = days / 146097, doe = days - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  const long d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
  const long fields[] = {y, m, d, secs / 3600, secs / 60 % 60, secs % 60};
  const int widths[] = {4, 2, 2, 2, 2, 2};
  const char after[] = {'-', '-', 'T', ':', ':', 'Z'};
  for (int f = 0; f < 6; ++f) {
    long v = fields[f];
    for (int i = widths[f] - 1; i >= 0; --i) out[i] = static_cast<char>('0' + v % 10), v /= 10;
    out += widths[f];
    *out++ = after[f];
  }
}

void write_prepared(Prepared& p) {
  if (p.time_at >= 0) format_utc(::time(nullptr), p.body + p.time_at);
  const int fd = ::open(p.tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  for (size_t off = 0; off < p.size;) {
    const ssize_t n = ::write(fd, p.body + off, p.size - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  ::rename(p.tmp, p.path);
}

[[noreturn]] void abort_run() {
  if (g_armed) {
    write_prepared(g_abort_status);
    const int fd = ::open(g_log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) (void)!::write(fd, g_abort_line, std::strlen(g_abort_line)), ::close(fd);
  }
  say("\nnexp: aborted by a second stop signal; the run is marked interrupted\n");
  ::_exit(130);
}

void on_stop_signal(int) {
  const int saved_errno = errno;
  if (g_signals.fetch_add(1) == 0) {
    say("\nnexp: stop requested; the run checkpoints and stops at its next step (signal again to abort)\n");
  } else {
    int expected = kMethod;
    if (g_phase.compare_exchange_strong(expected, kAborting)) abort_run();
    if (expected != kAborting) say("\nnexp: a second stop signal; the run is being closed, then nexp exits with 130\n");
  }
  errno = saved_errno;
}

void on_fatal_signal(int sig) {
  if (g_crash_armed) write_prepared(g_crash_status);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void prepare_file(Prepared& p, const fs::path& file, nlohmann::json doc) {
  doc["ended"] = kTimePlaceholder;
  const std::string body = json_dump(doc, 2) + "\n";
  std::snprintf(p.path, sizeof p.path, "%s", file.c_str());
  std::snprintf(p.tmp, sizeof p.tmp, "%s.signal", file.c_str());
  p.size = std::min(body.size(), sizeof p.body);
  std::memcpy(p.body, body.data(), p.size);
  const auto at = body.find(kTimePlaceholder);
  p.time_at = at == std::string::npos || at + sizeof kTimePlaceholder - 1 > p.size ? -1 : static_cast<long>(at);
}

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGUSR1};
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_old[65];

}  // namespace

RunSignals::RunSignals(bool enabled) {
  g_signals = 0;
  g_test_stop = false;
  g_armed = g_crash_armed = false;
  g_phase = kSetup;
  if (!enabled) return;
  installed_ = true;
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;
  sigemptyset(&stop.sa_mask);
  for (int s : kStopSignals) ::sigaction(s, &stop, &g_old[s]);
  struct sigaction fatal {};
  fatal.sa_handler = on_fatal_signal;
  sigemptyset(&fatal.sa_mask);
  for (int s : kFatalSignals) ::sigaction(s, &fatal, &g_old[s]);
}

RunSignals::~RunSignals() {
  g_armed = g_crash_armed = false;
  if (!installed_) return;
  for (int s : kStopSignals) ::sigaction(s, &g_old[s], nullptr);
  for (int s : kFatalSignals) ::sigaction(s, &g_old[s], nullptr);
}

void RunSignals::prepare(const fs::path& status_file, const nlohmann::json& aborted, const nlohmann::json& crashed,
                         const fs::path& log_file, const std::string& abort_line) {
  g_armed = false;
  prepare_file(g_abort_status, status_file, aborted);
  prepare_file(g_crash_status, status_file, crashed);
  std::snprintf(g_log_path, sizeof g_log_path, "%s", log_file.c_str());
  std::snprintf(g_abort_line, sizeof g_abort_line, "%s\n", valid_utf8(abort_line).c_str());
  g_armed = g_crash_armed = true;
}

void RunSignals::enter_method() {
  g_phase = kMethod;
  // Two signals during set-up: abort as the handler would have.
  if (g_signals >= 2) {
    int expected = kMethod;
    if (g_phase.compare_exchange_strong(expected, kAborting)) abort_run();
    for (;;) ::pause();  // a handler is aborting: it ends the process
  }
}

void RunSignals::leave_method() {
  g_crash_armed = false;
  int expected = kMethod;
  if (!g_phase.compare_exchange_strong(expected, kFinishing))
    for (;;) ::pause();  // a handler on another thread is aborting: it ends the process
}

bool RunSignals::stop_requested() { return g_signals > 0 || g_test_stop; }
bool RunSignals::second_signal() { return g_signals >= 2; }
void RunSignals::request_stop() { g_test_stop = true; }

namespace {
volatile sig_atomic_t g_counted = 0;
extern "C" void count_signal(int) { g_counted = g_counted + 1; }
}  // namespace

SignalCounter::SignalCounter() {
  g_counted = 0;
  struct sigaction sa {};
  sa.sa_handler = count_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

SignalCounter::~SignalCounter() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

int SignalCounter::count() { return g_counted; }

}  // namespace nexp::detail
