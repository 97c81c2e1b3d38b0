// Logging to stderr and run logs, progress bars, and thread pools (nexp/runtime/logging.hpp).
#include "nexp/runtime/logging.hpp"

#include <oneapi/tbb/global_control.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "nexp/runtime/torch_runtime.hpp"

namespace nexp {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<Verbosity> g_verbosity{Verbosity::Normal};

// stderr, shared by log lines and the live progress bar: a log line first clears the bar, then the
// bar is drawn again below it.
class Terminal {
 public:
  static Terminal& get() {
    static Terminal* t = new Terminal();  // never destroyed: loggers may log during exit
    return *t;
  }
  bool live() const { return live_; }
  bool color() const { return color_; }

  void write_line(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    if (live_ && !bar_.empty()) out += "\r\033[K";
    out += line;
    out += '\n';
    if (live_ && !bar_.empty()) out += bar_;
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
  }
  void draw_bar(const std::string& bar) {
    std::lock_guard<std::mutex> lock(mutex_);
    bar_ = bar;
    std::string out = "\r\033[K" + bar;
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
  }
  void clear_bar() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_ && !bar_.empty()) std::fputs("\r\033[K", stderr), std::fflush(stderr);
    bar_.clear();
  }

 private:
  Terminal() {
    const char* term = std::getenv("TERM");
    live_ = ::isatty(STDERR_FILENO) && !(term && std::string(term) == "dumb");
    const char* no_color = std::getenv("NO_COLOR");
    color_ = live_ && !(no_color && *no_color);
  }
  std::mutex mutex_;
  std::string bar_;
  bool live_ = false;
  bool color_ = false;
};

class TerminalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    Terminal& t = Terminal::get();
    std::string level;
    switch (msg.level) {
      case spdlog::level::warn: level = t.color() ? "\033[33mwarning:\033[0m " : "warning: "; break;
      case spdlog::level::err:
      case spdlog::level::critical: level = t.color() ? "\033[31merror:\033[0m " : "error: "; break;
      case spdlog::level::debug:
      case spdlog::level::trace: level = "debug: "; break;
      default: break;
    }
    std::string prefix = msg.logger_name.size() && msg.logger_name != "nexp"
                             ? fmt::format("[{}] ", std::string_view(msg.logger_name.data(), msg.logger_name.size()))
                             : std::string();
    t.write_line(prefix + level + std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override { std::fflush(stderr); }
};

spdlog::level::level_enum terminal_level() {
  switch (g_verbosity.load()) {
    case Verbosity::Quiet: return spdlog::level::warn;
    case Verbosity::Verbose: return spdlog::level::debug;
    default: return spdlog::level::info;
  }
}

std::shared_ptr<TerminalSink> terminal_sink() {
  static auto sink = std::make_shared<TerminalSink>();
  return sink;
}

std::string format_seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.1f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
}

}  // namespace

void configure_logging(Verbosity v) {
  g_verbosity = v;
  terminal_sink()->set_level(terminal_level());
  logger().set_level(spdlog::level::debug);
}

Verbosity verbosity() { return g_verbosity.load(); }

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = std::make_shared<spdlog::logger>("nexp", terminal_sink());
    terminal_sink()->set_level(terminal_level());
    l->set_level(spdlog::level::debug);
    return l;
  }();
  return *log;
}

std::shared_ptr<spdlog::logger> make_run_logger(const std::string& name, const std::filesystem::path& log_file) {
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file.string(), /*truncate=*/false);
  file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  file->set_level(spdlog::level::debug);
  auto log = std::make_shared<spdlog::logger>(name, spdlog::sinks_init_list{terminal_sink(), file});
  log->set_level(spdlog::level::debug);
  log->flush_on(spdlog::level::debug);  // a crash loses no line of log.txt
  return log;
}

bool stderr_is_live() { return Terminal::get().live(); }

// ---------------------------------------------------------------- progress

namespace detail {
struct ProgressState {
  std::int64_t total = 0;
  std::atomic<std::int64_t> done{0};
  std::string label;
  std::string note;
  Clock::time_point start = Clock::now();
  Clock::time_point last_draw{};
  bool finished = false;
  std::mutex mutex;

  void draw(bool force) {
    if (g_verbosity.load() == Verbosity::Quiet) return;
    std::lock_guard<std::mutex> lock(mutex);
    const auto now = Clock::now();
    const bool live = Terminal::get().live();
    // Live: redraw at most 10 times a second. Elsewhere (pipes, Slurm logs, CI): a line every 10 s.
    const auto every = live ? std::chrono::milliseconds(100) : std::chrono::milliseconds(10000);
    if (!force && now - last_draw < every) return;
    last_draw = now;
    const std::int64_t d = done.load();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const double frac = total > 0 ? std::min(1.0, static_cast<double>(d) / static_cast<double>(total)) : 0.0;
    const double eta = d > 0 && total > 0 ? elapsed * static_cast<double>(total - d) / static_cast<double>(d) : NAN;
    if (live) {
      const int width = 24;
      const int filled = static_cast<int>(frac * width);
      std::string bar = fmt::format("{} [{}{}] {:3.0f}% {}/{} {} ETA {}{}{}", label, std::string(filled, '#'),
                                    std::string(width - filled, '.'), 100 * frac, d, total, format_seconds(elapsed),
                                    format_seconds(eta), note.empty() ? "" : "  ", note);
      Terminal::get().draw_bar(bar);
    } else {
      Terminal::get().write_line(fmt::format("{}: {}/{} ({:.0f}%), {} elapsed, ETA {}{}{}", label, d, total,
                                             100 * frac, format_seconds(elapsed), format_seconds(eta),
                                             note.empty() ? "" : ", ", note));
    }
  }
  void finish() {
    if (finished) return;
    finished = true;
    if (Terminal::get().live()) Terminal::get().clear_bar();
  }
};
}  // namespace detail

Progress::Progress(std::shared_ptr<detail::ProgressState> state) : state_(std::move(state)) {}
Progress::Progress(Progress&&) noexcept = default;
Progress& Progress::operator=(Progress&&) noexcept = default;
Progress::~Progress() {
  if (state_) state_->finish();
}
void Progress::advance(std::int64_t n) {
  state_->done += n;
  state_->draw(state_->done.load() >= state_->total);
}
void Progress::set(std::int64_t done) {
  state_->done = done;
  state_->draw(done >= state_->total);
}
void Progress::note(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->note = text;
  }
  state_->draw(false);
}

Progress make_progress(std::int64_t total, const std::string& label) {
  auto state = std::make_shared<detail::ProgressState>();
  state->total = total;
  state->label = label;
  // Off a terminal, the first line appears after 10 s, so short loops stay quiet.
  state->last_draw = Clock::now();
  return Progress(state);
}

// ---------------------------------------------------------------- threads

int configure_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  static std::unique_ptr<oneapi::tbb::global_control> tbb_limit;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  set_torch_threads(n);  // now if LibTorch is loaded, else when it is
  tbb_limit.reset();
  tbb_limit = std::make_unique<oneapi::tbb::global_control>(oneapi::tbb::global_control::max_allowed_parallelism,
                                                            static_cast<size_t>(n));
  return n;
}

}  // namespace nexp
