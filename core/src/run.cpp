// Running one experiment: the run folder, the RunContext, signals, checkpoints (nexp/runtime/runner.hpp).
#include "nexp/runtime/runner.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nexp/runtime/hal.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/version.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- signals
//
// The first SIGINT/SIGTERM/SIGUSR1 only sets a flag that the method polls. A second one aborts at once:
// the handler writes a status.json prepared in advance (open, write, rename and _exit are
// async-signal-safe) so that the folder still says "interrupted". A fatal signal (a crash) writes a
// prepared "failed" status the same way and re-raises. metrics.jsonl and log.txt are flushed line by
// line, so nothing already written is lost.
namespace {

volatile sig_atomic_t g_stop_signals = 0;
volatile sig_atomic_t g_stop_requested_by_test = 0;

struct PreparedStatus {
  char tmp[4096] = {0};
  char path[4096] = {0};
  char body[16384] = {0};
  size_t size = 0;
};
PreparedStatus g_abort_status, g_crash_status;
volatile sig_atomic_t g_prepared = 0;

void write_prepared(const PreparedStatus& s) {
  int fd = ::open(s.tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t off = 0;
  while (off < s.size) {
    ssize_t n = ::write(fd, s.body + off, s.size - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  ::rename(s.tmp, s.path);
}

void on_stop_signal(int) {
  g_stop_signals = g_stop_signals + 1;
  if (g_stop_signals == 1) {
    const char msg[] = "\nnexp: stop requested; the run checkpoints and stops at its next step (signal again to abort)\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    return;
  }
  if (g_prepared) write_prepared(g_abort_status);
  const char msg[] = "\nnexp: aborted; the run is marked interrupted\n";
  (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
  ::_exit(130);
}

void on_fatal_signal(int sig) {
  if (g_prepared) write_prepared(g_crash_status);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void prepare(PreparedStatus& s, const fs::path& status_file, const std::string& body) {
  std::string tmp = status_file.string() + ".signal";
  std::snprintf(s.tmp, sizeof s.tmp, "%s", tmp.c_str());
  std::snprintf(s.path, sizeof s.path, "%s", status_file.string().c_str());
  s.size = std::min(body.size(), sizeof s.body);
  std::memcpy(s.body, body.data(), s.size);
}

class SignalScope {
 public:
  explicit SignalScope(bool enabled) : enabled_(enabled) {
    g_stop_signals = 0;
    g_stop_requested_by_test = 0;
    if (!enabled_) return;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGUSR1}) ::sigaction(s, &sa, &old_[s]);
    struct sigaction fatal {};
    fatal.sa_handler = on_fatal_signal;
    sigemptyset(&fatal.sa_mask);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(s, &fatal, &old_[s]);
  }
  ~SignalScope() {
    g_prepared = 0;
    if (!enabled_) return;
    for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(s, &old_[s], nullptr);
  }

 private:
  bool enabled_;
  struct sigaction old_[65] {};
};

// ---------------------------------------------------------------- run folder files

struct StatusDoc {
  json j;
  void set(const std::string& status, const std::string& error = "") {
    j["status"] = status;
    j["error"] = error;
  }
};

std::string error_text(const std::exception& e) {
  // LibTorch's errors carry a C++ backtrace; a user needs the message.
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

std::string read_text_or_empty(const fs::path& f) {
  std::ifstream in(f);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------- the context

class RunContextImpl final : public RunContext {
 public:
  RunContextImpl(const Experiment& e, const MethodSpec& method, fs::path folder, std::shared_ptr<Device> device,
                 int threads, std::shared_ptr<spdlog::logger> log, std::optional<fs::path> checkpoint,
                 int stop_after_checkpoints)
      : experiment_(e), method_(method), folder_(std::move(folder)), device_(std::move(device)), threads_(threads),
        rng_(e.seed), log_(std::move(log)), checkpoint_(std::move(checkpoint)),
        stop_after_checkpoints_(stop_after_checkpoints), start_(std::chrono::steady_clock::now()) {
    if (checkpoint_) next_checkpoint_number_ = std::stoi(checkpoint_->filename().string().substr(5)) + 1;
    metrics_file_ = std::fopen((folder_ / "metrics.jsonl").c_str(), "ab");
    if (!metrics_file_)
      throw Error(fmt::format("cannot open '{}' for appending: {}", (folder_ / "metrics.jsonl").string(),
                              std::strerror(errno)));
  }
  ~RunContextImpl() override {
    if (metrics_file_) std::fclose(metrics_file_);
  }

  const std::string& method_name() const override { return method_.name; }
  const Params& params() const override { return experiment_.params; }
  bool has_dataset() const override { return dataset_ != nullptr; }
  Dataset& dataset() override {
    if (!dataset_)
      throw ConfigError(fmt::format("method '{}' asked for a dataset, but the config names none; add `dataset: "
                                    "<name>` ({})",
                                    method_.name, experiment_.source.string()));
    return *dataset_;
  }
  const std::vector<std::string>& selected_metrics() const override { return experiment_.metrics; }
  Device& device() override { return *device_; }
  int threads() const override { return threads_; }
  std::uint64_t seed() const override { return experiment_.seed; }
  std::mt19937_64& rng() override { return rng_; }
  spdlog::logger& log() override { return *log_; }

  void log_metrics(std::int64_t step, const std::map<std::string, double>& values) override {
    json line;
    line["step"] = step;
    line["time"] = elapsed();
    for (const auto& [k, v] : values) line[k] = json_number(v);
    const std::string text = line.dump() + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    std::fwrite(text.data(), 1, text.size(), metrics_file_);
    std::fflush(metrics_file_);
    device_->on_step(step);
  }
  void summary(const std::string& name, double value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    summary_[name] = value;
  }
  std::map<std::string, double> score_predictions(std::int64_t step, const std::string& prefix, const at::Tensor& probs,
                                                  const at::Tensor& labels) override;
  Progress progress(std::int64_t total, const std::string& label) override { return make_progress(total, label); }
  fs::path artifacts_dir() const override { return folder_ / "artifacts"; }
  llm::Client& llm(const std::string& endpoint) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!llm_) llm_ = std::make_unique<LlmSession>(experiment_.llm, artifacts_dir(), log_.get());
    return llm_->client(endpoint);
  }

  void save_checkpoint(const std::function<void(const fs::path&)>& write) override;
  std::optional<fs::path> checkpoint() const override { return checkpoint_; }
  void restore_rng_state() override;
  bool stop_requested() const override { return g_stop_signals > 0 || g_stop_requested_by_test; }

  void set_dataset(std::shared_ptr<Dataset> d) { dataset_ = std::move(d); }
  std::map<std::string, double> summaries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
  }
  void restore_summaries(const std::map<std::string, double>& s) { summary_ = s; }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  const Experiment& experiment_;
  const MethodSpec& method_;
  fs::path folder_;
  std::shared_ptr<Device> device_;
  int threads_;
  std::mt19937_64 rng_;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<Dataset> dataset_;
  std::optional<fs::path> checkpoint_;
  int stop_after_checkpoints_;
  int checkpoints_saved_ = 0;
  int next_checkpoint_number_ = 1;  // continues after the resumed checkpoint's number
  std::chrono::steady_clock::time_point start_;
  std::FILE* metrics_file_ = nullptr;
  std::map<std::string, double> summary_;
  std::unique_ptr<LlmSession> llm_;
  std::mutex mutex_;
};

std::map<std::string, double> RunContextImpl::score_predictions(std::int64_t step, const std::string& prefix,
                                                                const at::Tensor& probs, const at::Tensor& labels) {
  TORCH_CHECK(probs.dim() == 2 && labels.dim() == 1 && probs.size(0) == labels.size(0),
              "score_predictions: expected probs [N, C] and labels [N], got ", probs.sizes(), " and ", labels.sizes());
  const Registry& registry = Registry::global();
  // The prediction metrics the config selects ("accuracy" or "<prefix>_accuracy"); all of them when
  // it selects none.
  std::vector<const MetricSpec*> chosen;
  for (const auto* m : registry.metrics()) {
    if (!m->from_predictions) continue;
    for (const auto& s : experiment_.metrics)
      if (s == m->name || s == prefix + "_" + m->name) chosen.push_back(m);
  }
  if (chosen.empty())
    for (const auto* m : registry.metrics())
      if (m->from_predictions) chosen.push_back(m);
  at::Tensor p = probs.detach().to(at::kCPU, at::kDouble), y = labels.detach().to(at::kCPU, at::kLong);
  std::map<std::string, double> out;
  for (const auto* m : chosen) out[prefix + "_" + m->name] = m->from_predictions(p, y);
  log_metrics(step, out);
  for (const auto& [k, v] : out) summary(k, v);
  return out;
}

void RunContextImpl::save_checkpoint(const std::function<void(const fs::path&)>& write) {
  const fs::path root = folder_ / "checkpoints";
  const int number = next_checkpoint_number_++;
  const fs::path tmp = root / fmt::format(".tmp-{}", number);
  const fs::path dir = root / fmt::format("ckpt-{:06}", number);
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  write(tmp);
  // Core's part: where metrics.jsonl stood, the summaries so far, and both random generators.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fflush(metrics_file_);
    json meta;
    meta["metrics_offset"] = static_cast<std::int64_t>(fs::file_size(folder_ / "metrics.jsonl"));
    meta["summary"] = json::object();
    for (const auto& [k, v] : summary_) meta["summary"][k] = json_number(v);
    meta["saved"] = now_iso8601();
    write_file_atomic(tmp / "nexp_checkpoint.json", meta.dump(2));
  }
  {
    std::ostringstream ss;
    ss << rng_;
    write_file_atomic(tmp / "nexp_rng_std.txt", ss.str());
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    at::Tensor state = gen.get_state();
    std::string bytes(static_cast<const char*>(state.data_ptr()), static_cast<size_t>(state.numel()));
    write_file_atomic(tmp / "nexp_rng_torch.bin", bytes);
  }
  fs::remove_all(dir);
  fs::rename(tmp, dir);
  const std::string previous = read_text_or_empty(root / "LATEST");
  write_file_atomic(root / "LATEST", dir.filename().string());
  if (!previous.empty() && previous != dir.filename().string()) fs::remove_all(root / previous);
  ++checkpoints_saved_;
  log_->debug("checkpoint {} saved", dir.filename().string());
  if (stop_after_checkpoints_ > 0 && checkpoints_saved_ >= stop_after_checkpoints_) g_stop_requested_by_test = 1;
}

void RunContextImpl::restore_rng_state() {
  if (!checkpoint_) return;
  std::istringstream ss(read_file(*checkpoint_ / "nexp_rng_std.txt"));
  ss >> rng_;
  const std::string bytes = read_file(*checkpoint_ / "nexp_rng_torch.bin");
  at::Tensor state = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kByte);
  std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  gen.set_state(state);
}

}  // namespace

// ---------------------------------------------------------------- running

int RunResult::exit_code() const {
  if (status == "completed") return 0;
  return config_error ? 2 : 1;
}

std::string new_run_id(const std::string& config_hash) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  static std::mt19937 rng{std::random_device{}()};
  return fmt::format("{}-{}-{:04x}", stamp, config_hash.substr(0, 8), rng() & 0xffff);
}

namespace {

json device_json(const Device& device) {
  DeviceInfo info = device.info();
  json j{{"id", info.id}, {"backend", info.backend}, {"name", info.name}};
  if (info.memory_bytes >= 0) j["memory_bytes"] = info.memory_bytes;
  if (info.cores >= 0) j["cores"] = info.cores;
  return j;
}

RunResult execute(const Experiment& e, const RunOptions& options, Registry& registry, const fs::path& folder,
                  const std::string& id, bool resuming) {
  RunResult result;
  result.id = id;
  result.folder = folder;
  const MethodSpec& method = *registry.find_method(e.method);
  const fs::path status_file = folder / "status.json";

  // Status and meta (kept from the first attempt when resuming).
  StatusDoc status;
  if (resuming && fs::exists(status_file)) status.j = json::parse(read_file(status_file), nullptr, false);
  if (!status.j.is_object()) status.j = json::object();
  status.j["id"] = id;
  status.j["experiment"] = e.experiment;
  status.j["method"] = e.method;
  status.j["dataset"] = e.dataset;
  status.j["config_hash"] = e.config_hash();
  status.j["seed"] = e.seed;
  if (!options.sweep.empty()) status.j["sweep"] = options.sweep, status.j["trial"] = options.trial;
  if (!status.j.contains("created")) status.j["created"] = now_iso8601();
  status.j["runs_dir"] = fs::absolute(e.runs_dir).lexically_normal().string();
  status.j["host"] = hostname();
  status.j["pid"] = ::getpid();

  auto write_status = [&] { write_file_atomic(status_file, status.j.dump(2) + "\n"); };
  auto index = [&] {
    try {
      RunIndex(fs::path(e.runs_dir)).upsert(read_run_folder(folder));
    } catch (const std::exception& ex) {
      logger().warn("the run index {}/nexp.db was not updated ({}); `nexp runs --reindex` rebuilds it from the folders",
                    e.runs_dir, ex.what());
    }
  };

  std::shared_ptr<Device> device;
  try {
    device = resolve_device(registry, e.device, e.device_options);
  } catch (const ConfigError& ex) {
    logger().error("{}", ex.what());
    status.set("failed", ex.what());
    status.j["ended"] = now_iso8601();
    write_status();
    index();
    result.status = "failed";
    result.error = ex.what();
    result.config_error = true;
    return result;
  }

  // Threads change floating-point reduction order, so meta.json records them.
  int wanted = options.threads > 0 ? options.threads : e.threads;
  if (options.max_threads > 0) wanted = wanted > 0 ? std::min(wanted, options.max_threads) : options.max_threads;
  const int threads = configure_threads(wanted);

  json meta;
  if (resuming && fs::exists(folder / "meta.json")) meta = json::parse(read_file(folder / "meta.json"), nullptr, false);
  if (!meta.is_object()) meta = json::object();
  if (!resuming) {
    auto [commit, dirty] = git_state(fs::current_path());
    const PluginRecord* plugin = registry.owner(e.method);
    meta["command_line"] = options.command_line;
    meta["seed"] = e.seed;
    meta["git"] = {{"commit", commit}, {"dirty", dirty}};
    meta["host"] = hostname();
    meta["nexp_version"] = NEXP_VERSION;
    meta["torch_version"] = TORCH_VERSION;
    meta["build_fingerprint"] = build_fingerprint();
    meta["config_hash"] = e.config_hash();
    meta["plugin"] = plugin ? json{{"name", plugin->name}, {"version", plugin->version}, {"file", plugin->path},
                                   {"sha256", plugin->sha256}}
                            : json::object();
    meta["device"] = device_json(*device);
    meta["threads"] = threads;
    meta["created"] = status.j["created"];
  } else {
    meta["resumed"].push_back({{"time", now_iso8601()}, {"command_line", options.command_line}, {"host", hostname()},
                              {"threads", threads}});
  }
  write_file_atomic(folder / "meta.json", meta.dump(2) + "\n");

  // The checkpoint to continue from, and metrics.jsonl rewound to where that checkpoint stood.
  std::optional<fs::path> checkpoint;
  json checkpoint_meta;
  if (resuming) {
    const std::string latest = read_text_or_empty(folder / "checkpoints" / "LATEST");
    if (!latest.empty() && fs::exists(folder / "checkpoints" / latest / "nexp_checkpoint.json")) {
      checkpoint = folder / "checkpoints" / latest;
      checkpoint_meta = json::parse(read_file(*checkpoint / "nexp_checkpoint.json"));
      fs::resize_file(folder / "metrics.jsonl", checkpoint_meta["metrics_offset"].get<std::uintmax_t>());
    } else {
      std::ofstream(folder / "metrics.jsonl", std::ios::trunc);
    }
  }

  status.set("running");
  status.j["started"] = now_iso8601();
  status.j.erase("ended");
  write_status();
  index();

  // A second signal or a crash must still leave an honest status.json behind.
  {
    StatusDoc aborted = status;
    aborted.set("interrupted", "aborted by a second stop signal");
    prepare(g_abort_status, status_file, aborted.j.dump(2) + "\n");
    StatusDoc crashed = status;
    crashed.set("failed", "the process crashed with a fatal signal (segmentation fault, bus error, abort, ...); "
                          "see log.txt for the last lines");
    prepare(g_crash_status, status_file, crashed.j.dump(2) + "\n");
    g_prepared = 1;
  }
  SignalScope signals(options.handle_signals);

  auto log = make_run_logger(e.method, folder / "log.txt");
  at::manual_seed(e.seed);
  RunContextImpl ctx(e, method, folder, device, threads, log, checkpoint, options.stop_after_checkpoints);
  if (checkpoint) {
    std::map<std::string, double> s;
    for (auto& [k, v] : checkpoint_meta["summary"].items())
      if (v.is_number()) s[k] = v.get<double>();
    ctx.restore_summaries(s);
    log->info("resuming {} from {}", id, checkpoint->filename().string());
  } else {
    log->info("run {} ({} on {}, seed {}, {} thread{})", id, e.method, device->info().id, e.seed, threads,
              threads == 1 ? "" : "s");
  }
  log->debug("folder {}", folder.string());

  try {
    if (!e.dataset.empty()) {
      const DatasetSpec* ds = registry.find_dataset(e.dataset);
      auto data = ds->make(e.dataset_params, ctx);
      if (!data) throw Error(fmt::format("dataset '{}' returned nothing", e.dataset));
      log->info("dataset {}", data->describe());
      ctx.set_dataset(std::move(data));
    }
    method.run(ctx);
    result.status = ctx.stop_requested() ? "interrupted" : "completed";
  } catch (const ConfigError& ex) {
    result.status = "failed";
    result.error = ex.what();
    result.config_error = true;
  } catch (const std::exception& ex) {
    result.status = "failed";
    result.error = error_text(ex);
  }
  g_prepared = 0;
  if (!e.llm.endpoints.empty())  // counted from the call log, so a resumed run counts every paid call
    for (const auto& [k, v] : LlmSession::summary(folder / "artifacts" / "llm_calls.jsonl")) ctx.summary(k, v);

  result.summary = ctx.summaries();
  result.seconds = ctx.elapsed();
  status.set(result.status, result.error);
  status.j["ended"] = now_iso8601();
  status.j["seconds"] = result.seconds + (resuming ? status.j.value("seconds", 0.0) : 0.0);
  status.j["summary"] = json::object();
  for (const auto& [k, v] : result.summary) status.j["summary"][k] = json_number(v);
  status.j["checkpoint"] = fs::exists(folder / "checkpoints" / "LATEST");
  write_status();
  if (result.status == "failed") log->error("{}", result.error);
  else if (result.status == "interrupted")
    log->warn("interrupted; continue with `nexp run --resume {}`", id);
  else
    log->info("completed in {:.1f}s", result.seconds);
  log->flush();
  index();
  return result;
}

}  // namespace

RunResult run_experiment(const Experiment& e, const RunOptions& options, Registry& registry) {
  const std::string hash = e.config_hash();
  fs::path folder;
  std::string id;
  if (options.folder) {
    folder = *options.folder;
    id = folder.filename().string();
  } else {
    id = new_run_id(hash);
    folder = fs::path(e.runs_dir) / e.experiment / id;
  }
  fs::create_directories(folder / "artifacts");
  fs::create_directories(folder / "checkpoints");
  write_file_atomic(folder / "config.yaml", e.to_yaml_text());
  std::string overrides;
  for (const auto& o : options.overrides) overrides += o + "\n";
  write_file_atomic(folder / "overrides.txt", overrides);
  std::ofstream(folder / "metrics.jsonl", std::ios::trunc);
  // Remove what an earlier attempt in the same folder left (a sweep trial run again).
  fs::remove_all(folder / "checkpoints");
  fs::create_directories(folder / "checkpoints");
  return execute(e, options, registry, folder, id, /*resuming=*/false);
}

RunResult resume_run(const fs::path& folder, const RunOptions& options, Registry& registry) {
  if (!fs::exists(folder / "config.yaml"))
    throw ConfigError(fmt::format("'{}' is not a run folder (it has no config.yaml); give a run id or a folder "
                                  "under runs/<experiment>/",
                                  folder.string()));
  json status = json::parse(read_text_or_empty(folder / "status.json"), nullptr, false);
  if (status.is_object() && status.value("status", "") == "completed")
    throw ConfigError(fmt::format("run '{}' already completed; nothing to resume. Start a new run with `nexp run`",
                                  folder.filename().string()));
  Experiment e = resolve_experiment(read_yaml_file(folder / "config.yaml"), folder / "config.yaml", {}, registry);
  // The run stays indexed where it was created; a folder moved elsewhere is indexed next to it.
  std::string runs_dir = status.is_object() ? status.value("runs_dir", "") : "";
  e.runs_dir = !runs_dir.empty() && fs::is_directory(runs_dir) ? runs_dir : folder.parent_path().parent_path().string();
  return execute(e, options, registry, folder, folder.filename().string(), /*resuming=*/true);
}

}  // namespace nexp
