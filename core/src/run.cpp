// Running one experiment: the run folder, the RunContext, checkpoints, the run's status from start
// to a terminal state (nexp/runtime/runner.hpp). Stop signals: run_signals.hpp.
#include "nexp/runtime/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
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
#include "nexp/runtime/torch_runtime.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/text.hpp"
#include "nexp/version.hpp"
#include "json_fields.hpp"
#include "run_ranks.hpp"
#include "run_signals.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// ---------------------------------------------------------------- run folder files

std::string error_text(const std::exception& e) {
  // LibTorch's errors carry a C++ backtrace; a user needs the message.
  if (TorchRuntime* torch = torch_runtime()) return torch->error_message(e);
  return e.what();
}

std::string read_text_or_empty(const fs::path& f) {
  std::ifstream in(f);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------- the context

// This process's place in the run: rank 0 of 1 without `distributed:`.
struct RankPlace {
  std::optional<detail::RankEnv> env;
  std::vector<std::shared_ptr<Device>> devices;  // every device the config names
  int rank() const { return env ? env->rank : 0; }
  // Where this rank's checkpoints go: rank 0's are the run's; the others' sit beside them.
  fs::path checkpoints(const fs::path& folder) const {
    return rank() == 0 ? folder / "checkpoints" : folder / "ranks" / std::to_string(rank()) / "checkpoints";
  }
};

class RunContextImpl final : public RunContext {
 public:
  RunContextImpl(const Experiment& e, const Registry& registry, const MethodSpec& method, fs::path folder,
                 std::shared_ptr<Device> device, int threads, std::shared_ptr<spdlog::logger> log,
                 std::optional<fs::path> checkpoint, int stop_after_checkpoints, RankPlace place = {})
      : experiment_(e), registry_(registry), method_(method), folder_(std::move(folder)), device_(std::move(device)),
        threads_(threads),
        rng_(e.seed), log_(std::move(log)), checkpoint_(std::move(checkpoint)),
        stop_after_checkpoints_(stop_after_checkpoints), start_(std::chrono::steady_clock::now()), place_(std::move(place)) {
    if (checkpoint_) next_checkpoint_number_ = std::stoi(checkpoint_->filename().string().substr(5)) + 1;
    if (place_.devices.empty()) place_.devices.push_back(device_);
    // Rank 0 owns metrics.jsonl and the summary; the other ranks' go nowhere.
    metrics_file_ = std::fopen(place_.rank() == 0 ? (folder_ / "metrics.jsonl").c_str() : "/dev/null", "ab");
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
  const std::vector<std::shared_ptr<Device>>& devices() override { return place_.devices; }
  Comm& comm() override;
  int threads() const override { return threads_; }
  std::uint64_t seed() const override { return experiment_.seed; }
  std::mt19937_64& rng() override { return rng_; }
  spdlog::logger& log() override { return *log_; }

  void log_metrics(std::int64_t step, const std::map<std::string, double>& values) override {
    json line;
    line["step"] = step;
    line["time"] = elapsed();
    for (const auto& [k, v] : values) line[k] = json_number(v);
    const std::string text = json_dump(line) + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    // A full disk or a folder that became read-only ends the run here, with the reason, rather than
    // losing metric lines unnoticed.
    if (std::fwrite(text.data(), 1, text.size(), metrics_file_) != text.size() || std::fflush(metrics_file_) != 0)
      throw Error(fmt::format("cannot write step {} to '{}': {}", step, (folder_ / "metrics.jsonl").string(),
                              std::strerror(errno)));
    device_->on_step(step);
  }
  void summary(const std::string& name, double value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    summary_[name] = value;
  }
  std::vector<const MetricSpec*> prediction_metrics(const std::string& prefix) const override;
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
  bool stop_requested() const override { return detail::RunSignals::stop_requested(); }

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
  const Registry& registry_;
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
  RankPlace place_;
  std::unique_ptr<Comm> comm_;
  std::mutex mutex_;
};

// Made on first use: a run that never calls comm() loads no c10d object (nor LibTorch, if it has none).
Comm& RunContextImpl::comm() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (comm_) return *comm_;
  CommSetup setup;
  if (const auto& env = place_.env) {
    setup.rank = env->rank, setup.size = env->size, setup.rendezvous = env->rendezvous, setup.host = env->host;
    setup.timeout_seconds = experiment_.timeout_seconds;
    log_->debug("rank {} of {}: rendezvous {}", setup.rank, setup.size, setup.rendezvous);
  }
  comm_ = require_torch_runtime().make_comm(setup);
  return *comm_;
}

std::vector<const MetricSpec*> RunContextImpl::prediction_metrics(const std::string& prefix) const {
  std::vector<const MetricSpec*> chosen, all;
  for (const auto* m : registry_.metrics()) {
    if (!m->from_predictions) continue;
    all.push_back(m);
    for (const auto& s : experiment_.metrics)
      if (s == m->name || s == prefix + "_" + m->name) {
        chosen.push_back(m);
        break;
      }
  }
  return chosen.empty() ? all : chosen;
}

void RunContextImpl::save_checkpoint(const std::function<void(const fs::path&)>& write) {
  const fs::path root = place_.checkpoints(folder_);
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
    write_file_atomic(tmp / "nexp_checkpoint.json", json_dump(meta, 2));
  }
  {
    std::ostringstream ss;
    ss << rng_;
    write_file_atomic(tmp / "nexp_rng_std.txt", ss.str());
    if (TorchRuntime* torch = torch_runtime()) write_file_atomic(tmp / "nexp_rng_torch.bin", torch->generator_state());
  }
  if (place_.env) comm().barrier();  // every rank has written its part before any commits
  fs::remove_all(dir);
  fs::rename(tmp, dir);
  // The commit: LATEST names the new checkpoint (an atomic rename). Then the older ones go, with any
  // that a process aborted half-way left behind.
  write_file_atomic(root / "LATEST", dir.filename().string());
  std::vector<fs::path> older;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.path() != dir && entry.path().filename() != "LATEST") older.push_back(entry.path());
  for (const auto& p : older) fs::remove_all(p);
  ++checkpoints_saved_;
  log_->debug("checkpoint {} saved", dir.filename().string());
  if (stop_after_checkpoints_ > 0 && checkpoints_saved_ >= stop_after_checkpoints_) detail::RunSignals::request_stop();
}

void RunContextImpl::restore_rng_state() {
  if (!checkpoint_) return;
  std::istringstream ss(read_file(*checkpoint_ / "nexp_rng_std.txt"));
  ss >> rng_;
  // Saved only when LibTorch was loaded; it is again, by the same plugins, when the run resumes.
  TorchRuntime* torch = torch_runtime();
  if (torch && fs::exists(*checkpoint_ / "nexp_rng_torch.bin"))
    torch->set_generator_state(read_file(*checkpoint_ / "nexp_rng_torch.bin"));
}

}  // namespace

// ---------------------------------------------------------------- the run's status

int RunResult::exit_code() const {
  if (aborted) return 130;
  if (status == RunStatus::Completed || status == RunStatus::Pruned) return 0;
  return config_error ? 2 : 1;
}

namespace {

// A new run id: <yyyymmdd-HHMMSS>-<first 8 hex of the config hash>-<4 random hex>.
std::string new_run_id(const std::string& config_hash) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  static std::mt19937 rng{std::random_device{}()};
  return fmt::format("{}-{}-{:04x}", stamp, config_hash.substr(0, 8), rng() & 0xffff);
}

// What a run needs: the experiment, how to run it, and where.
struct RunPlan {
  const Experiment& experiment;
  const RunOptions& options;
  Registry& registry;
  fs::path folder;
  std::string id;
  bool resuming;
  std::optional<detail::RankEnv> rank = {};  // set in a rank process of a distributed run
};

// status.json of one run, and its row in the index.
class StatusFile {
 public:
  StatusFile(fs::path folder, const std::string& id, std::string runs_dir)
      : folder_(std::move(folder)), runs_dir_(std::move(runs_dir)) {
    doc["id"] = id;
  }

  // What identifies the run (kept from the first attempt when resuming), and this process.
  void describe(const RunPlan& plan) {
    const Experiment& e = plan.experiment;
    if (plan.resuming || plan.rank) {  // a rank keeps what its parent wrote
      json before = json::parse(read_text_or_empty(file()), nullptr, false);
      if (before.is_object()) doc.update(before), doc["id"] = plan.id;
    }
    doc["experiment"] = e.experiment;
    doc["method"] = e.method;
    doc["dataset"] = e.dataset;
    doc["config_hash"] = e.config_hash();
    doc["seed"] = e.seed;
    if (!plan.options.sweep.empty()) doc["sweep"] = plan.options.sweep, doc["trial"] = plan.options.trial;
    if (!doc.contains("created")) doc["created"] = now_iso8601();
    doc["runs_dir"] = fs::absolute(e.runs_dir).lexically_normal().string();
    RunProcess::self().write_to(doc);
  }
  void set(RunStatus status, const std::string& error = "", const std::string& why = "") {
    doc["status"] = to_string(status);
    doc["error"] = error;
    if (why.empty()) doc.erase("reason");
    else doc["reason"] = why;
  }
  // Marks the run running from now, on disk and in the index.
  void start() {
    set(RunStatus::Running);
    doc["started"] = now_iso8601();
    doc.erase("ended");
    write();
    index();
  }
  void write() const { write_file_atomic(file(), json_dump(doc, 2) + "\n"); }
  // The index follows the folder; a failure to update it loses nothing (`nexp runs --reindex`).
  void index() const noexcept {
    try {
      RunIndex(runs_dir_).upsert(read_run_folder(folder_));
    } catch (const std::exception& ex) {
      logger().warn("the run index {}/nexp.db was not updated ({}); `nexp runs --reindex` rebuilds it from the folders",
                    runs_dir_, ex.what());
    } catch (...) {
    }
  }
  fs::path file() const { return folder_ / "status.json"; }

  json doc;

 private:
  fs::path folder_;
  std::string runs_dir_;
};

// A JSON string of plain ASCII: what cannot be written as is becomes \uNNNN or the text \xNN.
std::string ascii_json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else if (c >= 0x80) out += fmt::format("\\\\x{:02X}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

// The last resort when status.json cannot be written the usual way: a short file of plain ASCII
// (what identifies the run, and the error cut to 400 bytes), written in place.
void write_minimal_status(const fs::path& folder, const json& doc, const std::string& error) noexcept {
  try {
    std::string body = "{\n";
    for (const char* key : {"id", "experiment", "method", "config_hash", "runs_dir"})
      if (doc.contains(key) && doc[key].is_string())
        body += fmt::format("  \"{}\": {},\n", key, ascii_json_string(doc[key].get<std::string>()));
    body += "  \"status\": \"failed\",\n  \"error\": " + ascii_json_string(error.substr(0, 400)) + ",\n  \"ended\": \"" +
            now_iso8601() + "\"\n}\n";
    if (std::FILE* f = std::fopen((folder / "status.json").c_str(), "wb")) {
      std::fwrite(body.data(), 1, body.size(), f);
      std::fclose(f);
    }
  } catch (...) {
  }
}

// Writes the final status. When that fails, the run is failed, and status.json gets the last-resort
// form with both errors.
void write_final_status(const StatusFile& status, const fs::path& folder, RunResult& r) noexcept {
  try {
    try {
      status.write();
      return;
    } catch (const std::exception& ex) {
      r.error = fmt::format("writing status.json failed ({}) after the run ended {}{}", valid_utf8(ex.what()),
                            to_string(r.status), r.error.empty() ? "" : ": " + r.error);
    }
    r.status = RunStatus::Failed;
    r.reason.clear();
    write_minimal_status(folder, status.doc, r.error);
  } catch (...) {
    write_minimal_status(folder, status.doc, r.error);
  }
}

// An exception as a user reads it, and whether their input caused it (a config or data error: exit 2).
struct Failure {
  std::string message;
  bool config_error = false;
};

Failure describe_failure(const std::exception_ptr& ex) {
  try {
    std::rethrow_exception(ex);
  } catch (const ConfigError& e) {
    return {valid_utf8(e.what()), true};
  } catch (const std::exception& e) {
    return {valid_utf8(error_text(e)), false};
  } catch (...) {
    return {"an exception that is not a std::exception (its type is unknown) ended the run", false};
  }
}

// Whatever escaped (a method, a dataset factory, core itself): the run ends failed all the same.
RunResult fail_run(const RunPlan& plan, StatusFile& status, const std::exception_ptr& ex) noexcept {
  const Failure failure = describe_failure(ex);
  RunResult r;
  r.id = plan.id;
  r.folder = plan.folder;
  r.status = RunStatus::Failed;
  r.error = failure.message;
  r.config_error = failure.config_error;
  try {
    logger().error("{}", r.error);
    std::ofstream(plan.folder / "log.txt", std::ios::app) << "error: " << r.error << "\n";
    status.set(RunStatus::Failed, r.error);
    status.doc["ended"] = now_iso8601();
  } catch (...) {
  }
  write_final_status(status, plan.folder, r);
  status.index();
  return r;
}

// ---------------------------------------------------------------- the steps of a run

json device_json(const Device& device) {
  DeviceInfo info = device.info();
  json j{{"id", info.id}, {"backend", info.backend}, {"name", info.name}};
  if (info.memory_bytes >= 0) j["memory_bytes"] = info.memory_bytes;
  if (info.cores >= 0) j["cores"] = info.cores;
  return j;
}

// Threads change floating-point reduction order, so meta.json records them.
int thread_count(const Experiment& e, const RunOptions& options) {
  int wanted = options.threads > 0 ? options.threads : e.threads;
  if (options.max_threads > 0) wanted = wanted > 0 ? std::min(wanted, options.max_threads) : options.max_threads;
  return configure_threads(wanted);
}

// meta.json: how the run was made (on resume, the first attempt's record plus a line per resume).
void write_meta(const RunPlan& plan, const Device& device, int threads, const json& created) {
  const Experiment& e = plan.experiment;
  const fs::path file = plan.folder / "meta.json";
  json meta = plan.resuming ? json::parse(read_text_or_empty(file), nullptr, false) : json::object();
  if (!meta.is_object()) meta = json::object();
  if (plan.resuming) {
    meta["resumed"].push_back({{"time", now_iso8601()}, {"command_line", plan.options.command_line},
                               {"host", hostname()}, {"threads", threads}});
  } else {
    auto [commit, dirty] = git_state(fs::current_path());
    const PluginRecord* plugin = plan.registry.owner(e.method);
    meta["command_line"] = plan.options.command_line;
    meta["seed"] = e.seed;
    meta["git"] = {{"commit", commit}, {"dirty", dirty}};
    meta["host"] = hostname();
    meta["nexp_version"] = NEXP_VERSION;
    meta["torch_version"] = NEXP_TORCH_VERSION;
    meta["build_fingerprint"] = build_fingerprint();
    meta["config_hash"] = e.config_hash();
    meta["plugin"] = plugin ? json{{"name", plugin->name}, {"version", plugin->version}, {"file", plugin->path},
                                   {"sha256", plugin->sha256}}
                            : json::object();
    meta["device"] = device_json(device);
    meta["threads"] = threads;
    meta["created"] = created;
  }
  write_file_atomic(file, json_dump(meta, 2) + "\n");
}

// Where a resumed run continues: its last committed checkpoint, with metrics.jsonl cut back to
// where that checkpoint stood (or emptied when there is none).
struct ResumePoint {
  std::optional<fs::path> checkpoint;
  std::map<std::string, double> summary;
};

// The ranks of a distributed run other than 0 own no metrics.jsonl: only their checkpoints count.
ResumePoint resume_point(const fs::path& folder, bool resuming, const RankPlace& place = {}) {
  ResumePoint point;
  if (!resuming) return point;
  const fs::path root = place.checkpoints(folder);
  const std::string latest = read_text_or_empty(root / "LATEST");
  const fs::path dir = root / latest;
  const bool follower = place.rank() > 0;
  if (latest.empty() || !fs::exists(dir / "nexp_checkpoint.json")) {
    if (!follower) std::ofstream(folder / "metrics.jsonl", std::ios::trunc);
    return point;
  }
  if (follower) {
    point.checkpoint = dir;
    return point;
  }
  const json meta = json::parse(read_file(dir / "nexp_checkpoint.json"), nullptr, false);
  if (!meta.is_object() || !meta.contains("metrics_offset"))
    throw DataError(fmt::format("checkpoint '{}' is damaged (nexp_checkpoint.json does not parse); delete the "
                                "run's checkpoints folder to start it again from the beginning",
                                dir.string()));
  fs::resize_file(folder / "metrics.jsonl", meta["metrics_offset"].get<std::uintmax_t>());
  if (meta.contains("summary"))
    for (auto& [k, v] : meta["summary"].items())
      if (v.is_number()) point.summary[k] = v.get<double>();
  point.checkpoint = dir;
  return point;
}

// What the signal handlers write if a second stop signal or a crash ends the process.
void arm_signals(detail::RunSignals& signals, const StatusFile& status, const fs::path& folder, const std::string& id) {
  json aborted = status.doc;
  aborted["status"] = to_string(RunStatus::Interrupted);
  aborted["reason"] = reason::aborted;
  aborted["error"] = "aborted by a second stop signal; `nexp run --resume` continues from the last checkpoint";
  json crashed = status.doc;
  crashed["status"] = to_string(RunStatus::Failed);
  crashed["error"] = "the process crashed with a fatal signal (segmentation fault, bus error, abort, ...); see log.txt "
                     "for the last lines";
  signals.prepare(folder / "status.json", aborted, crashed, folder / "log.txt",
                  fmt::format("[nexp] aborted by a second stop signal; the run is marked interrupted; continue it with "
                              "`nexp run --resume {}`",
                              id));
}

void load_dataset(RunContextImpl& ctx, const Experiment& e, Registry& registry, spdlog::logger& log) {
  if (e.dataset.empty()) return;
  auto data = registry.find_dataset(e.dataset)->make(e.dataset_params, ctx);
  if (!data) throw Error(fmt::format("dataset '{}' returned nothing", e.dataset));
  log.info("dataset {}", data->describe());
  ctx.set_dataset(std::move(data));
}

// The method's part: the dataset and run(). Everything it throws ends the run failed.
RunResult run_method(RunContextImpl& ctx, const RunPlan& plan, detail::RunSignals& signals, spdlog::logger& log) {
  RunResult r;
  signals.enter_method();
  try {
    load_dataset(ctx, plan.experiment, plan.registry, log);
    plan.registry.find_method(plan.experiment.method)->run(ctx);
    r.status = ctx.stop_requested() ? RunStatus::Interrupted : RunStatus::Completed;
  } catch (...) {
    const Failure failure = describe_failure(std::current_exception());
    r.status = RunStatus::Failed;
    r.error = failure.message;
    r.config_error = failure.config_error;
  }
  signals.leave_method();
  return r;
}

// The final status: summaries, time, and why the run ended.
RunResult finish(const RunPlan& plan, StatusFile& status, RunContextImpl& ctx, spdlog::logger& log, RunResult r) {
  r.id = plan.id;
  r.folder = plan.folder;
  if (!plan.experiment.llm.endpoints.empty())  // counted from the call log, so a resumed run counts every paid call
    for (const auto& [k, v] : LlmSession::summary(plan.folder / "artifacts" / "llm_calls.jsonl")) ctx.summary(k, v);
  r.summary = ctx.summaries();
  r.seconds = ctx.elapsed();
  const bool checkpointed = fs::exists(plan.folder / "checkpoints" / "LATEST");
  if (r.status == RunStatus::Interrupted) r.reason = checkpointed ? reason::checkpointed : reason::stopped;
  status.set(r.status, r.error, r.reason);
  status.doc["ended"] = now_iso8601();
  status.doc["seconds"] = r.seconds + (plan.resuming ? detail::real_field(status.doc, "seconds") : 0.0);
  status.doc["summary"] = json::object();
  for (const auto& [k, v] : r.summary) status.doc["summary"][k] = json_number(v);
  status.doc["checkpoint"] = checkpointed;
  write_final_status(status, plan.folder, r);
  if (r.status == RunStatus::Failed) log.error("{}", r.error);
  else if (r.status == RunStatus::Interrupted) log.warn("interrupted; continue with `nexp run --resume {}`", plan.id);
  else log.info("completed in {:.1f}s", r.seconds);
  log.flush();
  status.index();
  return r;
}

// The devices of this process: the config's (one, or its list), or with `device: auto` in a distributed
// run every device of auto's backend. Rank k's list starts at device k (mod their number): with CUDA,
// rank k computes on GPU k.
RankPlace place_of(const RunPlan& plan) {
  const Experiment& e = plan.experiment;
  RankPlace place;
  place.env = plan.rank;
  std::shared_ptr<Device> first = resolve_device(plan.registry, e.device, e.device_options);
  for (const auto& id : e.devices) place.devices.push_back(resolve_device(plan.registry, id, Params{}));
  if (e.device == "auto" && plan.rank && plan.rank->size > 1) {
    const std::string backend = first->info().backend;
    for (const auto& listing : list_devices(plan.registry))
      if (listing.backend == backend) place.devices = listing.devices;
  }
  if (place.devices.empty()) place.devices.push_back(first);
  if (plan.rank)  // rank k starts at device k
    std::rotate(place.devices.begin(),
                place.devices.begin() + static_cast<long>(static_cast<size_t>(plan.rank->rank) % place.devices.size()),
                place.devices.end());
  return place;
}

// A rank other than 0: its own log (rank<k>.log) and checkpoints, no status; a failure goes to
// rank<k>.error for the parent, which fails the run with it.
RunResult execute_follower(const RunPlan& plan, detail::RunSignals& signals) {
  const Experiment& e = plan.experiment;
  RankPlace place = place_of(plan);
  const int k = place.rank();
  const int threads = thread_count(e, plan.options);
  const ResumePoint from = resume_point(plan.folder, plan.resuming, place);
  auto log = make_run_logger(fmt::format("{}.rank{}", e.method, k), "/dev/null");  // stderr is rank<k>.log
  seed_torch(e.seed);
  std::shared_ptr<Device> device = place.devices.front();
  RunContextImpl ctx(e, plan.registry, *plan.registry.find_method(e.method), plan.folder, device, threads, log,
                     from.checkpoint, plan.options.stop_after_checkpoints, std::move(place));
  log->info("rank {} of {} ({} on {}, seed {})", k, plan.rank->size, e.method, device->info().id, e.seed);
  RunResult r = run_method(ctx, plan, signals, *log);
  r.id = plan.id;
  r.folder = plan.folder;
  if (r.status == RunStatus::Failed) {
    log->error("{}", r.error);
    detail::write_rank_error(plan.folder, k, r.error);
  }
  log->flush();
  return r;
}

RunResult execute(const RunPlan& plan, StatusFile& status, detail::RunSignals& signals) {
  const Experiment& e = plan.experiment;
  status.describe(plan);
  RankPlace place = place_of(plan);
  std::shared_ptr<Device> device = place.devices.front();
  const int threads = thread_count(e, plan.options);
  if (!plan.rank) write_meta(plan, *device, threads, status.doc["created"]);  // a rank's parent wrote it
  const ResumePoint from = resume_point(plan.folder, plan.resuming);

  status.start();

  auto log = make_run_logger(e.method, plan.folder / "log.txt");
  arm_signals(signals, status, plan.folder, plan.id);
  seed_torch(e.seed);  // now if LibTorch is loaded, else when it is
  RunContextImpl ctx(e, plan.registry, *plan.registry.find_method(e.method), plan.folder, device, threads, log, from.checkpoint,
                     plan.options.stop_after_checkpoints, std::move(place));
  if (from.checkpoint) {
    ctx.restore_summaries(from.summary);
    log->info("resuming {} from {}", plan.id, from.checkpoint->filename().string());
  } else {
    log->info("run {} ({} on {}, seed {}, {} thread{})", plan.id, e.method, device->info().id, e.seed, threads,
              threads == 1 ? "" : "s");
  }
  log->debug("folder {}", plan.folder.string());
  RunResult r = finish(plan, status, ctx, *log, run_method(ctx, plan, signals, *log));
  if (plan.rank && r.status == RunStatus::Failed) detail::write_rank_error(plan.folder, 0, r.error);
  return r;
}

// The parent of a distributed run: the run's status around the ranks it starts and waits for. Rank 0
// writes the summary and the final status; a failed rank's error replaces it.
RunResult execute_parent(const RunPlan& plan, StatusFile& status, detail::RunSignals& signals) {
  const Experiment& e = plan.experiment;
  status.describe(plan);
  status.doc["processes"] = e.processes;
  std::shared_ptr<Device> device = resolve_device(plan.registry, e.device, e.device_options);
  write_meta(plan, *device, thread_count(e, plan.options), status.doc["created"]);
  status.start();
  arm_signals(signals, status, plan.folder, plan.id);
  logger().info("run {} ({} on {} ranks, seed {})", plan.id, e.method, e.processes, e.seed);
  const auto started = std::chrono::steady_clock::now();
  signals.enter_method();
  const detail::RanksOutcome outcome =
      detail::run_ranks({plan.folder, e.processes, e.timeout_seconds, plan.resuming, plan.options.nexp_command});
  signals.leave_method();
  const json after = json::parse(read_text_or_empty(status.file()), nullptr, false);
  if (after.is_object()) status.doc = after;
  RunResult r;
  r.id = plan.id;
  r.folder = plan.folder;
  r.status = outcome.failed ? RunStatus::Failed
                             : parse_run_status(detail::text_field(status.doc, "status")).value_or(RunStatus::Failed);
  r.error = outcome.failed ? outcome.error : detail::text_field(status.doc, "error");
  r.config_error = outcome.config_error;
  r.reason = outcome.failed ? "" : detail::text_field(status.doc, "reason");
  if (r.status == RunStatus::Running)  // rank 0 ended without its final status
    r.status = RunStatus::Failed, r.error = "rank 0 ended without writing the run's final status; see log.txt";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (status.doc.contains("summary"))
    for (auto& [k, v] : status.doc["summary"].items())
      if (v.is_number()) r.summary[k] = v.get<double>();
  status.set(r.status, r.error, r.reason);
  status.doc["processes"] = e.processes;
  if (!status.doc.contains("ended")) status.doc["ended"] = now_iso8601();
  RunProcess::self().write_to(status.doc);
  if (r.status == RunStatus::Failed)
    std::ofstream(plan.folder / "log.txt", std::ios::app) << "error: " << r.error << "\n";
  write_final_status(status, plan.folder, r);
  status.index();
  return r;
}

// Runs `plan` to a terminal state whatever escapes, with the run's signal handling in force
// throughout; `prepare` fills the folder first.
RunResult run_to_the_end(const RunPlan& plan, const std::function<void()>& prepare) {
  detail::RunSignals signals(plan.options.handle_signals);
  StatusFile status(plan.folder, plan.id, plan.experiment.runs_dir);
  RunResult r;
  try {
    if (prepare) prepare();
    r = !plan.rank && plan.experiment.processes > 1 ? execute_parent(plan, status, signals) : execute(plan, status, signals);
  } catch (...) {
    r = fail_run(plan, status, std::current_exception());
  }
  if (plan.options.on_finished) plan.options.on_finished(r);
  r.aborted = detail::RunSignals::second_signal();
  return r;
}

}  // namespace

RunResult run_experiment(const Experiment& e, const RunOptions& options, Registry& registry) {
  const std::string id = options.folder ? options.folder->filename().string() : new_run_id(e.config_hash());
  const fs::path folder = options.folder ? *options.folder : fs::path(e.runs_dir) / e.experiment / id;
  fs::create_directories(folder);
  return run_to_the_end({e, options, registry, folder, id, /*resuming=*/false}, [&] {
    // Remove what an earlier attempt in the same folder left (a sweep trial run again).
    fs::remove_all(folder / "checkpoints");
    fs::remove_all(folder / "ranks");
    fs::create_directories(folder / "checkpoints");
    fs::create_directories(folder / "artifacts");
    write_file_atomic(folder / "config.yaml", e.to_yaml_text());
    std::string overrides;
    for (const auto& o : options.overrides) overrides += o + "\n";
    write_file_atomic(folder / "overrides.txt", overrides);
    std::ofstream(folder / "metrics.jsonl", std::ios::trunc);
  });
}

RunResult resume_run(const fs::path& folder, const RunOptions& options, Registry& registry) {
  if (!fs::exists(folder / "config.yaml"))
    throw ConfigError(fmt::format("'{}' is not a run folder (it has no config.yaml); give a run id or a folder "
                                  "under runs/<experiment>/",
                                  folder.string()));
  const std::string id = folder.filename().string();
  json status = json::parse(read_text_or_empty(folder / "status.json"), nullptr, false);
  if (!status.is_object()) status = json::object();
  const std::string state = detail::text_field(status, "status");
  if (state == to_string(RunStatus::Completed))
    throw ConfigError(fmt::format("run '{}' already completed; nothing to resume. Start a new run with `nexp run`", id));
  if (state == to_string(RunStatus::Running) && detail::text_field(status, "host") == hostname() &&
      !process_gone(status)) {
    const long pid = detail::integer_field<long>(status, "pid", 0);
    throw ConfigError(fmt::format("run '{}' is still running (process {} on this host); stop it first (Ctrl-C, or "
                                  "kill -INT {}), then resume it",
                                  id, pid, pid));
  }
  Experiment e = resolve_experiment(read_yaml_file(folder / "config.yaml"), folder / "config.yaml", {}, registry);
  // The run stays indexed where it was created; a folder moved elsewhere is indexed next to it.
  const std::string runs_dir = detail::text_field(status, "runs_dir");
  e.runs_dir = !runs_dir.empty() && fs::is_directory(runs_dir) ? runs_dir : folder.parent_path().parent_path().string();
  return run_to_the_end({e, options, registry, folder, id, /*resuming=*/true}, nullptr);
}

RunResult run_rank(const fs::path& folder, const RunOptions& options, Registry& registry) {
  const auto env = detail::RankEnv::from_environment();
  if (!env) throw ConfigError("`nexp run-rank` is started by `nexp run` for the ranks of a distributed run, not by hand");
  Experiment e = resolve_experiment(read_yaml_file(folder / "config.yaml"), folder / "config.yaml", {}, registry);
  const json before = json::parse(read_text_or_empty(folder / "status.json"), nullptr, false);
  if (before.is_object() && before.contains("runs_dir")) e.runs_dir = before["runs_dir"].get<std::string>();
  const RunPlan plan{e, options, registry, folder, folder.filename().string(), env->resuming, env};
  if (env->rank == 0) return run_to_the_end(plan, nullptr);
  detail::RunSignals signals(options.handle_signals);
  try {
    return execute_follower(plan, signals);
  } catch (...) {
    const Failure failure = describe_failure(std::current_exception());
    detail::write_rank_error(folder, env->rank, failure.message);
    RunResult r;
    r.error = failure.message;
    return r;
  }
}

}  // namespace nexp
