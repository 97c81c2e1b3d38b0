// drwatson: DrWatson, AI-driven hardware diagnosis. A foundation model over fleet event tokens,
// pretrained across three accelerator platforms and fine-tuned with few labels, with a cost-aware
// decision layer and QA planning, against a rule-based incumbent on a simulated AI fleet.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;
using nexp::Param;

const char* kFleetHelp = "the fleet description (YAML): platforms, causes, repairs, QA tests, job; see configs/drwatson/fleet.yaml";

// The model and its training, shared by every method that trains one.
void training_params(nexp::MethodSpec& m, std::int64_t pretrain_steps, std::int64_t finetune_steps) {
  m.param(Param::integer("dim", 64, "transformer width").range(8, 512))
      .param(Param::integer("heads", 4, "attention heads").range(1, 16))
      .param(Param::integer("layers", 2, "transformer layers").range(1, 8))
      .param(Param::integer("max_len", 40, "tokens per node sequence ([CLS], history, events)").range(4, 256))
      .param(Param::real("dropout", 0.1, "dropout in the transformer layers").range(0, 0.9))
      .param(Param::strings("pretrain_platforms", {"gpu", "acc_t", "acc_n"}, "platforms whose unlabelled incidents pretrain the encoder"))
      .param(Param::ints("pretrain_incidents", {3000, 1000, 1000}, "unlabelled incidents per pretraining platform (same order)").min(1))
      .param(Param::strings("label_platforms", {"gpu", "acc_t", "acc_n"}, "platforms that contribute labelled incidents"))
      .param(Param::integer("labels_per_platform", 150, "labelled incidents per platform for fine-tuning (few labels)").range(5, 100000))
      .param(Param::integer("test_per_platform", 300, "held-out labelled incidents per platform for test accuracy").range(1, 100000))
      .param(Param::integer("pretrain_steps", pretrain_steps, "masked-event pretraining steps (0: none)").min(0))
      .param(Param::integer("finetune_steps", finetune_steps, "fine-tuning steps").min(0))
      .param(Param::integer("batch", 64, "sequences per optimisation step").range(1, 4096))
      .param(Param::real("pretrain_lr", 1e-3, "Adam learning rate for pretraining").range(1e-6, 1))
      .param(Param::real("finetune_lr", 5e-4, "Adam learning rate for fine-tuning").range(1e-6, 1))
      .param(Param::integer("checkpoint_every", 100, "steps between metrics and checkpoints").min(1));
}

void register_components(nexp::Registrar& r) {
  // ---- metrics
  r.metric("downtime_reduction", Direction::Maximize, "production downtime of DrWatson relative to the incumbent: 1 - ratio of sums over replicas");
  r.metric("downtime_reduction_ci_low", Direction::Maximize, "2.5% bound of downtime_reduction (paired bootstrap over replicas)");
  r.metric("downtime_reduction_ci_high", Direction::Maximize, "97.5% bound of downtime_reduction (paired bootstrap over replicas)");
  r.metric("qa_time_reduction", Direction::Maximize, "QA node-hours of DrWatson relative to the incumbent: 1 - ratio of sums");
  r.metric("qa_time_reduction_ci_low", Direction::Maximize, "2.5% bound of qa_time_reduction");
  r.metric("qa_time_reduction_ci_high", Direction::Maximize, "97.5% bound of qa_time_reduction");
  r.metric("job_downtime_reduction", Direction::Maximize, "hours the job stands still or redoes work, DrWatson vs the incumbent");
  r.metric("job_downtime_reduction_ci_low", Direction::Maximize, "2.5% bound of job_downtime_reduction");
  r.metric("job_downtime_reduction_ci_high", Direction::Maximize, "97.5% bound of job_downtime_reduction");
  for (const char* who : {"logistic", "oracle"}) {
    r.metric(std::string(who) + "_downtime_reduction", Direction::Maximize, std::string("downtime reduction of the ") + who + " policy vs the incumbent");
    r.metric(std::string(who) + "_qa_time_reduction", Direction::Maximize, std::string("QA time reduction of the ") + who + " policy vs the incumbent");
  }
  for (const char* who : {"incumbent", "logistic", "fm", "oracle"}) {
    r.metric(std::string(who) + "_accuracy", Direction::Maximize, std::string("diagnosis accuracy (right node and root cause) of ") + who);
    r.metric(std::string(who) + "_ettr", Direction::Maximize, std::string("effective training time ratio of the job under ") + who);
  }
  r.metric("fm_repeat_rate", Direction::Minimize, "share of interruptions caused by faults DrWatson left unfixed");
  r.metric("incumbent_repeat_rate", Direction::Minimize, "share of interruptions caused by faults the incumbent left unfixed");
  r.metric("fm_test_accuracy", Direction::Maximize, "node-level class accuracy of the fine-tuned model on held-out incidents");
  r.metric("logistic_test_accuracy", Direction::Maximize, "node-level class accuracy of the logistic baseline on held-out incidents");
  r.metric("majority_accuracy", Direction::Maximize, "accuracy of always predicting the most frequent training class");
  r.metric("temperature", Direction::None, "softmax temperature fitted on held-out labels");
  r.metric("pretrain_loss", Direction::Minimize, "masked-event loss (raw code + 0.5 value bucket cross-entropy)");
  r.metric("masked_accuracy", Direction::Maximize, "held-out accuracy of predicting masked raw codes");
  r.metric("finetune_loss", Direction::Minimize, "fine-tuning cross-entropy");
  r.metric("incumbent_fix_rate", Direction::Maximize, "share of interruptions whose first repair fixes the fault (incumbent)");
  r.metric("interruption_rate", Direction::None, "job interruptions per node-day under the incumbent");
  r.metric("target_rate", Direction::None, "the published interruption rate per node-day the calibration aims at");
  r.metric("first_fault_rate", Direction::None, "first manifestations of faults per node-day");
  r.metric("seeded_rate", Direction::None, "the fleet file's first-fault hazard per node-day");
  r.metric("calibrated_rate", Direction::None, "the hazard at which the incumbent's interruption rate would meet the target");
  r.metric("repeat_rate", Direction::Minimize, "share of interruptions caused by faults left unfixed (incumbent)");
  r.metric("mix_tv", Direction::Minimize, "total variation distance between simulated and seeded root-cause mix");
  r.metric("events", Direction::None, "events the diagnosis saw");
  r.metric("fault_probability", Direction::None, "DrWatson's probability that the machine has a fault");
  r.metric("probe_seconds", Direction::None, "median seconds per known-answer probe step").measures_time();
  r.metric("fm_pull", Direction::None, "1 when DrWatson takes the machine out of service");
  r.metric("incumbent_pull", Direction::None, "1 when the incumbent's rules take the machine out of service");

  // ---- methods
  r.method("drwatson.calibrate", "the rule-based incumbent against public fleet figures (ETTR, accuracy, rate, mix)",
           drwatson::run_calibrate)
      .param(Param::string("fleet", "configs/drwatson/fleet.yaml", kFleetHelp))
      .param(Param::string("platform", "gpu", "the platform whose fleet is simulated (a name in the fleet file)"))
      .param(Param::integer("seeds", 8, "simulated fleets (replicas) per setting").range(1, 10000))
      .param(Param::real("horizon_days", -1, "simulated days; -1: the fleet file's").range(-1, 3650))
      .param(Param::real("ambiguity", -1, "override the fleet file's noise.ambiguity; -1: keep it").range(-1, 10))
      .param(Param::reals("ambiguities", {0.25, 0.5, 0.75, 1.0}, "ambiguity levels to tabulate the incumbent at").range(0, 10))
      .produces({"incumbent_accuracy", "incumbent_fix_rate", "incumbent_ettr", "interruption_rate", "target_rate",
                 "first_fault_rate", "seeded_rate", "repeat_rate", "mix_tv", "calibrated_rate"});

  auto& pretrain = r.method("drwatson.pretrain", "self-supervised masked-event pretraining of the event transformer across platforms",
                            drwatson::run_pretrain)
                       .param(Param::string("fleet", "configs/drwatson/fleet.yaml", kFleetHelp))
                       .param(Param::real("ambiguity", -1, "override the fleet file's noise.ambiguity; -1: keep it").range(-1, 10))
                       .produces({"pretrain_loss", "masked_accuracy"})
                       .supports_resume();
  training_params(pretrain, 800, 0);

  auto& finetune = r.method("drwatson.finetune", "few-label fine-tuning of the event transformer (and the logistic baseline)",
                            drwatson::run_finetune)
                       .param(Param::string("fleet", "configs/drwatson/fleet.yaml", kFleetHelp))
                       .param(Param::real("ambiguity", -1, "override the fleet file's noise.ambiguity; -1: keep it").range(-1, 10))
                       .param(Param::string("pretrained", "", "encoder.pt of a drwatson.pretrain run; empty: train from scratch"))
                       .produces({"finetune_loss", "majority_accuracy", "logistic_test_accuracy", "temperature"})
                       .scores_predictions()
                       .supports_resume();
  training_params(finetune, 0, 400);

  auto& headline = r.method("drwatson.headline",
                            "downtime and QA time of each diagnosis policy on one platform's simulated fleet, vs the incumbent",
                            drwatson::run_headline)
                       .param(Param::string("fleet", "configs/drwatson/fleet.yaml", kFleetHelp))
                       .param(Param::string("platform", "gpu", "the platform whose fleet is simulated: gpu, acc_t or acc_n"))
                       .param(Param::string("variant", "full", "DrWatson as in the paper, or an ablation")
                                  .choices({"full", "no_pretrain", "single_platform", "no_decision", "zero_ambiguity"}))
                       .param(Param::integer("seeds", 16, "simulated fleets (replicas), shared by all policies").range(2, 10000))
                       .param(Param::real("horizon_days", -1, "simulated days; -1: the fleet file's").range(-1, 3650))
                       .param(Param::real("ambiguity", -1, "override the fleet file's noise.ambiguity; -1: keep it").range(-1, 10))
                       .param(Param::real("residual_risk", 0.04, "QA planning target: P(a node returns with its fault); 0.04 matches the incumbent's escapes").range(1e-4, 1))
                       .param(Param::string("model", "", "model.pt of a drwatson.finetune run; empty: pretrain and fine-tune here"))
                       .produces({"downtime_reduction", "downtime_reduction_ci_low", "downtime_reduction_ci_high", "qa_time_reduction",
                                  "qa_time_reduction_ci_low", "qa_time_reduction_ci_high", "job_downtime_reduction",
                                  "job_downtime_reduction_ci_low", "job_downtime_reduction_ci_high", "logistic_downtime_reduction",
                                  "logistic_qa_time_reduction", "oracle_downtime_reduction", "oracle_qa_time_reduction",
                                  "incumbent_accuracy", "logistic_accuracy", "fm_accuracy", "oracle_accuracy", "incumbent_ettr",
                                  "logistic_ettr", "fm_ettr", "oracle_ettr", "fm_repeat_rate", "incumbent_repeat_rate",
                                  "logistic_test_accuracy"})
                       .supports_resume();
  training_params(headline, 800, 400);

  auto& diagnose = r.method("drwatson.diagnose",
                            "diagnose this machine's device (HAL telemetry around a known-answer probe) and/or a log file",
                            drwatson::run_diagnose)
                       .param(Param::string("fleet", "configs/drwatson/fleet.yaml", kFleetHelp))
                       .param(Param::real("ambiguity", -1, "override the fleet file's noise.ambiguity; -1: keep it").range(-1, 10))
                       .param(Param::string("log", "", "a kernel log, dcgm-exporter scrape or nvidia-smi -q output; empty: none"))
                       .param(Param::string("format", "auto", "format of params.log").choices({"auto", "kernel", "dcgm", "nvidia_smi"}))
                       .param(Param::string("platform", "auto", "vocabulary to read the device in: auto (cuda/cpu: gpu, others: acc_t), "
                                                                "gpu, acc_t or acc_n"))
                       .param(Param::string("model", "", "model.pt of a drwatson.finetune run; empty: train a small one first"))
                       .param(Param::integer("probe_steps", 12, "known-answer matmul steps on the device (0: telemetry only)").range(0, 100000))
                       .param(Param::integer("probe_size", 128, "matrix size of the probe").range(2, 8192))
                       .param(Param::real("residual_risk", 0.04, "QA planning target: P(the machine returns with its fault)").range(1e-4, 1))
                       .param(Param::boolean("interrupted", false, "the machine's job has already stopped (the log shows an interruption)"))
                       .param(Param::real("fault_prior", 0.05, "P(fault) of a machine in production before looking (when not interrupted)")
                                  .range(1e-6, 0.999))
                       .produces({"events", "fault_probability", "probe_seconds", "fm_pull", "incumbent_pull"})
                       .supports_resume();
  training_params(diagnose, 300, 300);
}

}  // namespace

NEXP_PLUGIN(drwatson, "0.1.0",
            "DrWatson: foundation-model hardware diagnosis cuts fleet downtime and QA time vs rule-based diagnosis",
            "DrWatson: AI-driven hardware diagnosis. NeurIPS 2026.", register_components)
