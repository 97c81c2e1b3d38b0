#pragma once
// fisher_select.compare: paired comparison of one selector against the others over the seeds of a
// finished sweep (its trials.csv). For each metric, the difference method - other on the seeds both
// completed, with Student's paired t interval (nexp::stats::paired_t_interval), written to
// artifacts/paired.csv; the summary `<metric>_vs_best` (with _ci_low, _ci_high) is the difference to
// the baseline of the highest mean.
#include <nexp/nexp.hpp>

#include <string>
#include <vector>

namespace fisher_select {

struct CompareOptions {
  std::string trials;
  std::string method = "gfv";
  std::vector<std::string> baselines = {"uniform", "loss", "gradnorm", "entropy", "margin", "rholoss", "badge", "greats"};
  std::vector<std::string> metrics = {"test_accuracy", "test_accuracy_auc"};
  double level = 0.95;
  static void declare(nexp::Options<CompareOptions>& o);
};

void run_compare(nexp::RunContext& ctx);

}  // namespace fisher_select
