#pragma once
// RunContext: everything a method may touch. Nothing else: no globals, no argv, no files outside
// the run folder, no thread-pool or logger settings (core owns those).
#include <spdlog/logger.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "nexp/comm.hpp"
#include "nexp/config.hpp"
#include "nexp/dataset.hpp"
#include "nexp/device.hpp"
#include "nexp/error.hpp"
#include "nexp/options.hpp"
#include "nexp/export.hpp"
#include "nexp/metric.hpp"
#include "nexp/random.hpp"
#include "nexp/stats.hpp"

namespace nexp::llm {
class Client;
}

namespace nexp {

namespace detail {
struct ProgressState;
NEXP_API std::string demangle(const char* name);
}  // namespace detail

// A progress bar: a live bar with ETA on a terminal, throttled plain lines elsewhere.
// Finishes when it goes out of scope.
class NEXP_API Progress {
 public:
  explicit Progress(std::shared_ptr<detail::ProgressState> state);
  Progress(Progress&&) noexcept;
  Progress& operator=(Progress&&) noexcept;
  ~Progress();
  void advance(std::int64_t n = 1);
  void set(std::int64_t done);
  void note(const std::string& text);  // a short status shown after the bar, e.g. "loss 0.31"

 private:
  std::shared_ptr<detail::ProgressState> state_;
};

class NEXP_API RunContext {
 public:
  virtual ~RunContext();

  // ---- What to run
  virtual const std::string& method_name() const = 0;
  virtual const Params& params() const = 0;
  // The method's options struct, filled from the validated config (nexp/options.hpp).
  template <class T>
  T options() const {
    return bind<T>(params());
  }
  virtual bool has_dataset() const = 0;
  virtual Dataset& dataset() = 0;  // throws ConfigError when the config names none
  template <class T>
  T& dataset_as();
  // The config's `metrics:` list (defaults to all the method produces).
  virtual const std::vector<std::string>& selected_metrics() const = 0;

  // ---- Where to run
  virtual Device& device() = 0;  // its tensors go to nexp::torch_device(ctx) (<nexp/torch.hpp>)
  virtual int threads() const = 0;  // core has already set torch's and oneTBB's pools to this
  // Every device this rank may use; device() is the first. With `device: auto` in a distributed run,
  // rank k's list starts at device k of auto's backend (CUDA: rank k computes on GPU k).
  virtual const std::vector<std::shared_ptr<Device>>& devices() = 0;

  // ---- Ranks (nexp/comm.hpp): the run's communicator; a world of size 1 without `distributed:`.
  // Rank 0 owns metrics.jsonl and the summary (the other ranks' log_metrics and summary go nowhere);
  // every rank logs (rank<k>.log) and checkpoints its own state; save_checkpoint is then collective.
  virtual Comm& comm() = 0;

  // ---- Randomness: before run(), core seeds torch's default generator and rng() from seed().
  virtual std::uint64_t seed() const = 0;
  virtual std::mt19937_64& rng() = 0;
  // An independent stream for one purpose of the run, e.g. stream("bootstrap"), stream("replica", r):
  // a function of (seed(), purpose, index) alone, so it draws the same numbers however the work is
  // ordered, threaded or resumed, and different purposes or indices draw unrelated numbers. The purpose
  // is hashed with FNV-1a; the key words are mixed as in Random::stream. Independent of rng().
  Random stream(std::string_view purpose, std::uint64_t index = 0) const {
    return Random::stream(seed(), purpose, index);
  }

  // ---- Reporting
  virtual spdlog::logger& log() = 0;
  // Appends one line to metrics.jsonl (flushed). Steps should increase; a resumed run rewinds the
  // file to the checkpoint, so each step is written once.
  virtual void log_metrics(std::int64_t step, const std::map<std::string, double>& values) = 0;
  // A final value (the last call for a name wins); goes to status.json and the index.
  virtual void summary(const std::string& name, double value) = 0;
  // An estimate with its interval as three summaries: <name>, <name>_ci_low and <name>_ci_high.
  void summary_interval(const std::string& name, const stats::Interval& interval) {
    summary(name, interval.estimate);
    summary(name + "_ci_low", interval.low);
    summary(name + "_ci_high", interval.high);
  }
  // The prediction metrics (MetricSpec::from_predictions) that the config selects for `prefix`
  // ("accuracy" or "<prefix>_accuracy"); all of them when it selects none. nexp::score_predictions()
  // (<nexp/torch.hpp>) computes them from a method's class probabilities.
  virtual std::vector<const MetricSpec*> prediction_metrics(const std::string& prefix) const = 0;
  virtual Progress progress(std::int64_t total, const std::string& label) = 0;

  // ---- Language models (nexp/llm.hpp): the client of an endpoint the config's `llm:` section names
  // (ConfigError otherwise). Its calls are logged to artifacts/llm_calls.jsonl and counted in the
  // summary (llm_calls, llm_tokens, llm_cost).
  virtual llm::Client& llm(const std::string& endpoint) = 0;

  // ---- Files: a method writes only below the run folder.
  virtual std::filesystem::path artifacts_dir() const = 0;

  // ---- Checkpoints. `write` fills a fresh folder; core commits it atomically as the latest
  // checkpoint, together with the position in metrics.jsonl. checkpoint() is that folder when the
  // run is being resumed from one, else nullopt.
  virtual void save_checkpoint(const std::function<void(const std::filesystem::path& dir)>& write) = 0;
  virtual std::optional<std::filesystem::path> checkpoint() const = 0;
  // Every checkpoint also holds the state of rng() and of torch's default generator. A resumed method
  // calls this once it has rebuilt its objects (whose initialisation draws random numbers) and loaded
  // its own state, so that the random stream continues exactly where the interrupted run stopped.
  virtual void restore_rng_state() = 0;

  // ---- Interruption: set by SIGINT, SIGTERM and Slurm's pre-emption signal. A method checks it
  // between steps, saves a checkpoint and returns; core marks the run interrupted.
  virtual bool stop_requested() const = 0;

 protected:
  [[noreturn]] void wrong_dataset_type(const std::type_info& wanted);
};

template <class T>
T& RunContext::dataset_as() {
  if (auto* d = dynamic_cast<T*>(&dataset())) return *d;
  wrong_dataset_type(typeid(T));
}

}  // namespace nexp
