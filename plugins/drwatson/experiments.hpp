#pragma once
// The nexp methods of DrWatson: the glue between RunContext (parameters, metrics, checkpoints,
// artifacts) and the simulator, the policies and the models.
//   drwatson.calibrate  the incumbent against the public figures (ETTR, accuracy, interruption rate)
//   drwatson.pretrain   masked-event pretraining across platforms        -> artifacts/encoder.pt
//   drwatson.finetune   few-label fine-tuning (+ temperature)            -> artifacts/model.pt
//   drwatson.headline   every policy on one platform's fleet under common random numbers, with
//                       reductions against the incumbent and bootstrap confidence intervals; also
//                       the ablations (params.variant)
//   drwatson.diagnose   this machine's device (HAL telemetry and an active probe) and/or a log file
#include <nexp/nexp.hpp>
#include <nexp/stats.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fleet.hpp"
#include "simulator.hpp"

namespace drwatson {

// ---- options (declared once: the schema, `nexp describe` and the values the methods read)

// The fleet file every method simulates or reads, and an override of its ambiguity.
struct FleetOptions {
  std::string fleet = "configs/drwatson/fleet.yaml";
  double ambiguity = -1;
  static void declare(nexp::Options<FleetOptions>& o) {
    o.add("fleet", &FleetOptions::fleet,
          "the fleet description (YAML): platforms, causes, repairs, QA tests, job; see configs/drwatson/fleet.yaml");
    o.add("ambiguity", &FleetOptions::ambiguity, "override the fleet file's noise.ambiguity; -1: keep it").range(-1, 10);
  }
};

// The event transformer and its training, shared by every method that trains one. The step counts'
// defaults differ by method: each method's struct sets them and declares them with declare_steps().
struct TrainingOptions {
  std::int64_t dim = 64, heads = 4, layers = 2, max_len = 40;
  double dropout = 0.1;
  std::vector<std::string> pretrain_platforms = {"gpu", "acc_t", "acc_n"};
  std::vector<std::int64_t> pretrain_incidents = {3000, 1000, 1000};
  std::vector<std::string> label_platforms = {"gpu", "acc_t", "acc_n"};
  std::int64_t labels_per_platform = 150, test_per_platform = 300;
  std::int64_t pretrain_steps = 0, finetune_steps = 0;
  std::int64_t batch = 64;
  double pretrain_lr = 1e-3, finetune_lr = 5e-4;
  std::int64_t checkpoint_every = 100;

  static void declare(nexp::Options<TrainingOptions>& o) {
    using T = TrainingOptions;
    o.add("dim", &T::dim, "transformer width").range(8, 512);
    o.add("heads", &T::heads, "attention heads").range(1, 16);
    o.add("layers", &T::layers, "transformer layers").range(1, 8);
    o.add("max_len", &T::max_len, "tokens per node sequence ([CLS], history, events)").range(4, 256);
    o.add("dropout", &T::dropout, "dropout in the transformer layers").range(0, 0.9);
    o.add("pretrain_platforms", &T::pretrain_platforms, "platforms whose unlabelled incidents pretrain the encoder");
    o.add("pretrain_incidents", &T::pretrain_incidents, "unlabelled incidents per pretraining platform (same order)")
        .min(1);
    o.add("label_platforms", &T::label_platforms, "platforms that contribute labelled incidents");
    o.add("labels_per_platform", &T::labels_per_platform, "labelled incidents per platform for fine-tuning (few labels)")
        .range(5, 100000);
    o.add("test_per_platform", &T::test_per_platform, "held-out labelled incidents per platform for test accuracy")
        .range(1, 100000);
    o.add("batch", &T::batch, "sequences per optimisation step").range(1, 4096);
    o.add("pretrain_lr", &T::pretrain_lr, "Adam learning rate for pretraining").range(1e-6, 1);
    o.add("finetune_lr", &T::finetune_lr, "Adam learning rate for fine-tuning").range(1e-6, 1);
    o.add("checkpoint_every", &T::checkpoint_every, "steps between metrics and checkpoints").min(1);
  }
  // pretrain_steps and finetune_steps, with the defaults the method's struct T sets.
  template <class T>
  static void declare_steps(nexp::Options<T>& o) {
    o.template add<std::int64_t>("pretrain_steps", &T::pretrain_steps, "masked-event pretraining steps (0: none)").min(0);
    o.template add<std::int64_t>("finetune_steps", &T::finetune_steps, "fine-tuning steps").min(0);
  }
};

// drwatson.calibrate
struct CalibrateOptions : FleetOptions {
  std::string platform = "gpu";
  int seeds = 8;
  double horizon_days = -1;
  std::vector<double> ambiguities = {0.25, 0.5, 0.75, 1.0};
  static void declare(nexp::Options<CalibrateOptions>& o) {
    o.inherit<FleetOptions>();
    o.add("platform", &CalibrateOptions::platform, "the platform whose fleet is simulated (a name in the fleet file)");
    o.add("seeds", &CalibrateOptions::seeds, "simulated fleets (replicas) per setting").range(1, 10000);
    o.add("horizon_days", &CalibrateOptions::horizon_days, "simulated days; -1: the fleet file's").range(-1, 3650);
    o.add("ambiguities", &CalibrateOptions::ambiguities, "ambiguity levels to tabulate the incumbent at").range(0, 10);
  }
};

// drwatson.pretrain
struct PretrainOptions : FleetOptions, TrainingOptions {
  PretrainOptions() { pretrain_steps = 800, finetune_steps = 0; }
  static void declare(nexp::Options<PretrainOptions>& o) {
    o.inherit<FleetOptions>();
    o.inherit<TrainingOptions>();
    declare_steps(o);
  }
};

// drwatson.finetune
struct FinetuneOptions : FleetOptions, TrainingOptions {
  std::string pretrained;
  FinetuneOptions() { pretrain_steps = 0, finetune_steps = 400; }
  static void declare(nexp::Options<FinetuneOptions>& o) {
    o.inherit<FleetOptions>();
    o.add("pretrained", &FinetuneOptions::pretrained, "encoder.pt of a drwatson.pretrain run; empty: train from scratch");
    o.inherit<TrainingOptions>();
    declare_steps(o);
  }
};

// drwatson.headline: DrWatson as in the paper, or an ablation.
// (The decision layer's ablation is an arm of every run: `drwatson_no_decision` and
// `logistic_decision` beside `drwatson` and `logistic`; so is `drwatson_oracle_costs`, the decision
// layer given the simulator's true parameters, an upper bound.)
enum class Variant { Full, NoPretrain, SinglePlatform, ZeroAmbiguity };
inline const std::vector<std::pair<std::string, Variant>> kVariants = {{"full", Variant::Full},
                                                                       {"no_pretrain", Variant::NoPretrain},
                                                                       {"single_platform", Variant::SinglePlatform},
                                                                       {"zero_ambiguity", Variant::ZeroAmbiguity}};

struct HeadlineOptions : FleetOptions, TrainingOptions {
  std::string platform = "gpu";
  Variant variant = Variant::Full;
  int seeds = 16;
  double horizon_days = -1;
  double residual_risk = 0.04;
  double training_days = 365;
  std::vector<double> risk_curve;
  std::string model;
  HeadlineOptions() { pretrain_steps = 800, finetune_steps = 400; }
  static void declare(nexp::Options<HeadlineOptions>& o) {
    using T = HeadlineOptions;
    o.inherit<FleetOptions>();
    o.add("platform", &T::platform, "the platform whose fleet is simulated (a name in the fleet file)");
    o.add("variant", &T::variant, "DrWatson as in the paper, or an ablation", kVariants);
    o.add("seeds", &T::seeds, "simulated fleets (replicas), shared by all policies").range(2, 10000);
    o.add("horizon_days", &T::horizon_days, "simulated days; -1: the fleet file's").range(-1, 3650);
    o.add("residual_risk", &T::residual_risk,
          "QA planning target: P(a node returns with its fault); 0.04 matches the incumbent's escapes")
        .range(1e-4, 1);
    o.add("training_days", &T::training_days,
          "days of the incumbent's repair tickets the cost model is estimated from")
        .range(1, 36500);
    o.add("risk_curve", &T::risk_curve,
          "more residual-risk targets to run DrWatson at (same model and fleets; artifacts/risk_curve.csv)")
        .range(1e-4, 1);
    o.add("model", &T::model, "model.pt of a drwatson.finetune run; empty: pretrain and fine-tune here");
    o.inherit<TrainingOptions>();
    declare_steps(o);
  }
};

// drwatson.diagnose
enum class LogFormat { Auto, Kernel, Dcgm, NvidiaSmi };
inline const std::vector<std::pair<std::string, LogFormat>> kLogFormats = {
    {"auto", LogFormat::Auto}, {"kernel", LogFormat::Kernel}, {"dcgm", LogFormat::Dcgm}, {"nvidia_smi", LogFormat::NvidiaSmi}};

struct DiagnoseOptions : FleetOptions, TrainingOptions {
  std::string log;
  LogFormat format = LogFormat::Auto;
  std::string platform = "auto";
  std::string model;
  std::int64_t probe_steps = 12, probe_size = 128;
  double residual_risk = 0.04;
  double training_days = 365;
  bool interrupted = false;
  double fault_prior = 0.05;
  DiagnoseOptions() { pretrain_steps = 300, finetune_steps = 300; }
  static void declare(nexp::Options<DiagnoseOptions>& o) {
    using T = DiagnoseOptions;
    o.inherit<FleetOptions>();
    o.add("log", &T::log, "a kernel log, dcgm-exporter scrape or nvidia-smi -q output; empty: none");
    o.add("format", &T::format, "format of params.log", kLogFormats);
    o.add("platform", &T::platform,
          "vocabulary to read the device in: auto (cuda/cpu: gpu, others: acc_t), gpu, acc_t or acc_n");
    o.add("model", &T::model, "model.pt of a drwatson.finetune run; empty: train a small one first");
    o.add("probe_steps", &T::probe_steps, "known-answer matmul steps on the device (0: telemetry only)").range(0, 100000);
    o.add("probe_size", &T::probe_size, "matrix size of the probe").range(2, 8192);
    o.add("residual_risk", &T::residual_risk, "QA planning target: P(the machine returns with its fault)").range(1e-4, 1);
    o.add("training_days", &T::training_days, "days of simulated repair tickets the cost model is estimated from")
        .range(1, 36500);
    o.add("interrupted", &T::interrupted, "the machine's job has already stopped (the log shows an interruption)");
    o.add("fault_prior", &T::fault_prior, "P(fault) of a machine in production before looking (when not interrupted)")
        .range(1e-6, 0.999);
    o.inherit<TrainingOptions>();
    declare_steps(o);
  }
};

void run_calibrate(nexp::RunContext& ctx);
void run_pretrain(nexp::RunContext& ctx);
void run_finetune(nexp::RunContext& ctx);
void run_headline(nexp::RunContext& ctx);
void run_diagnose(nexp::RunContext& ctx);

// Paired bootstrap of the reduction 1 - sum(treated) / sum(base) over replicas: the estimate and its
// 95% percentile interval (nexp::stats::bootstrap), resampling replicas with rng.
using Interval = nexp::stats::Interval;
Interval paired_reduction(const std::vector<double>& base, const std::vector<double>& treated, nexp::Random& rng,
                          int resamples = 2000);

// Runs `policy` on `replicas` simulated fleets (seeds derived from `seed`, the same for every policy:
// common random numbers), in parallel with oneTBB.
std::vector<ReplicaMetrics> run_replicas(const FleetSpec& fleet, const Policy& policy, int platform, std::uint64_t seed,
                                         int replicas, double horizon_days = -1);

}  // namespace drwatson
