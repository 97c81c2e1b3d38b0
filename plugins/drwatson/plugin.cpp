// drwatson: DrWatson, AI-driven hardware diagnosis. A foundation model over fleet event tokens,
// pretrained across three accelerator platforms and fine-tuned with few labels, with a cost-aware
// decision layer and QA planning, against a rule-based incumbent on a simulated AI fleet.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;

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
  for (const char* who : {"logistic", "logistic_decision", "drwatson_no_decision", "drwatson_oracle_costs", "oracle"})
    for (const char* what : {"downtime", "qa_time"}) {
      const std::string name = std::string(who) + "_" + what + "_reduction";
      r.metric(name, Direction::Maximize, std::string(what) + " reduction of the " + who + " policy vs the incumbent");
      r.metric(name + "_ci_low", Direction::Maximize, "2.5% bound of " + name + " (paired bootstrap over replicas)");
      r.metric(name + "_ci_high", Direction::Maximize, "97.5% bound of " + name + " (paired bootstrap over replicas)");
    }
  // What each part of DrWatson adds: 1 - sum(DrWatson) / sum(the arm without that part), same fleets.
  for (const char* part : {"classifier", "decision"})
    for (const char* what : {"downtime", "qa_time"}) {
      const std::string name = std::string(part) + "_" + what + "_gain";
      r.metric(name, Direction::Maximize,
               std::string(what) + " of DrWatson relative to " +
                   (std::string(part) == "classifier" ? "the logistic classifier with the same decision layer"
                                                      : "the same transformer with argmax decisions"));
      r.metric(name + "_ci_low", Direction::Maximize, "2.5% bound of " + name + " (paired bootstrap over replicas)");
      r.metric(name + "_ci_high", Direction::Maximize, "97.5% bound of " + name + " (paired bootstrap over replicas)");
    }
  for (const char* who : {"incumbent", "logistic", "logistic_decision", "drwatson_no_decision", "drwatson_oracle_costs", "fm", "oracle"}) {
    r.metric(std::string(who) + "_accuracy", Direction::Maximize, std::string("diagnosis accuracy (right node and root cause) of ") + who);
    r.metric(std::string(who) + "_ettr", Direction::Maximize, std::string("effective training time ratio of the job under ") + who);
    r.metric(std::string(who) + "_repeat_rate", Direction::Minimize, std::string("share of interruptions caused by faults left unfixed under ") + who);
    r.metric(std::string(who) + "_escape_rate", Direction::Minimize, std::string("share of pulled nodes returned with their fault under ") + who);
  }
  r.metric("training_days", Direction::None, "days of the incumbent's repair tickets the cost model was estimated from");
  r.metric("training_incidents", Direction::None, "interruptions in the training period");
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
      .options<drwatson::CalibrateOptions>()
      .produces({"incumbent_accuracy", "incumbent_fix_rate", "incumbent_ettr", "interruption_rate", "target_rate",
                 "first_fault_rate", "seeded_rate", "repeat_rate", "mix_tv", "calibrated_rate"});

  r.method("drwatson.pretrain", "self-supervised masked-event pretraining of the event transformer across platforms",
           drwatson::run_pretrain)
      .options<drwatson::PretrainOptions>()
      .produces({"pretrain_loss", "masked_accuracy"})
      .supports_resume();

  r.method("drwatson.finetune", "few-label fine-tuning of the event transformer (and the logistic baseline)",
           drwatson::run_finetune)
      .options<drwatson::FinetuneOptions>()
      .produces({"finetune_loss", "majority_accuracy", "logistic_test_accuracy", "temperature"})
      .scores_predictions()
      .supports_resume();

  r.method("drwatson.headline",
           "downtime and QA time of each diagnosis policy on one platform's simulated fleet, vs the incumbent",
           drwatson::run_headline)
      .options<drwatson::HeadlineOptions>()
      .produces({"downtime_reduction", "downtime_reduction_ci_low", "downtime_reduction_ci_high", "qa_time_reduction",
                 "qa_time_reduction_ci_low", "qa_time_reduction_ci_high", "job_downtime_reduction",
                 "job_downtime_reduction_ci_low", "job_downtime_reduction_ci_high", "logistic_downtime_reduction",
                 "logistic_qa_time_reduction", "oracle_downtime_reduction", "oracle_qa_time_reduction",
                 "incumbent_accuracy", "logistic_accuracy", "fm_accuracy", "oracle_accuracy", "incumbent_ettr",
                 "logistic_ettr", "fm_ettr", "oracle_ettr", "fm_repeat_rate", "incumbent_repeat_rate",
                 "logistic_test_accuracy", "logistic_decision_downtime_reduction", "logistic_decision_qa_time_reduction",
                 "drwatson_no_decision_downtime_reduction", "drwatson_no_decision_qa_time_reduction",
                 "logistic_decision_accuracy", "drwatson_no_decision_accuracy", "classifier_downtime_gain",
                 "classifier_downtime_gain_ci_low", "classifier_downtime_gain_ci_high", "classifier_qa_time_gain",
                 "decision_downtime_gain", "decision_downtime_gain_ci_low", "decision_downtime_gain_ci_high",
                 "decision_qa_time_gain", "drwatson_oracle_costs_downtime_reduction",
                 "drwatson_oracle_costs_qa_time_reduction", "training_days", "training_incidents"})
      .supports_resume();

  r.method("drwatson.diagnose",
           "diagnose this machine's device (HAL telemetry around a known-answer probe) and/or a log file",
           drwatson::run_diagnose)
      .options<drwatson::DiagnoseOptions>()
      .produces({"events", "fault_probability", "probe_seconds", "fm_pull", "incumbent_pull"})
      .supports_resume();
}

}  // namespace

NEXP_PLUGIN(drwatson, "0.1.0",
            "DrWatson: foundation-model hardware diagnosis cuts fleet downtime and QA time vs rule-based diagnosis",
            "DrWatson: AI-driven hardware diagnosis. NeurIPS 2026.", register_components)
