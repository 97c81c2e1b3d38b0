#include "compare.hpp"

#include <nexp/stats.hpp>
#include <nexp/table.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>

namespace fisher_select {

void CompareOptions::declare(nexp::Options<CompareOptions>& o) {
  o.add("trials", &CompareOptions::trials, "trials.csv of a finished fisher_select.train sweep over selector and seed")
      .required();
  o.add("method", &CompareOptions::method, "the selector compared (the `a` of a - b)");
  o.add("baselines", &CompareOptions::baselines, "the selectors it is compared with; the best by mean is `best`");
  o.add("metrics", &CompareOptions::metrics, "summary metrics compared");
  o.add("level", &CompareOptions::level, "coverage of the paired intervals").range(0.5, 0.999);
}

namespace {

using BySeed = std::map<std::string, double>;                    // seed -> value
using Table = std::map<std::string, std::map<std::string, BySeed>>;  // metric -> selector -> seed -> value

Table read_trials(const CompareOptions& o) {
  namespace fs = std::filesystem;
  const std::string where = "fisher_select.compare: params.trials = '" + o.trials + "'";
  if (!fs::is_regular_file(o.trials))
    throw nexp::ConfigError(where + " is not a file; run the sweep first (e.g. nexp run "
                            "configs/fisher_select/images_short.yaml --jobs 2) and name its sweep/trials.csv");
  const auto csv = nexp::CsvTable::read(o.trials);
  for (const std::string col : {"status", "params.selector", "seed"})
    if (!csv.has_column(col))
      throw nexp::ConfigError(fmt::format("{} has no column '{}': expected the trials.csv of a sweep over "
                                          "params.selector and seed", where, col));
  for (const auto& m : o.metrics)
    if (!csv.has_column(m))
      throw nexp::ConfigError(fmt::format("{} has no metric column '{}'; its columns: {}", where, m,
                                          fmt::join(csv.header(), ", ")));
  Table t;
  for (std::size_t r = 0; r < csv.size(); ++r) {
    if (csv.text(r, "status") != "completed") continue;
    for (const auto& m : o.metrics) t[m][csv.text(r, "params.selector")][csv.text(r, "seed")] = csv.real(r, m);
  }
  return t;
}

}  // namespace

void run_compare(nexp::RunContext& ctx) {
  const auto o = ctx.options<CompareOptions>();
  const Table table = read_trials(o);
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "paired.csv",
                      {C::text("metric"), C::text("other"), C::integer("seeds"), C::real("mean_method"),
                       C::real("mean_other"), C::real("diff"), C::real("ci_low"), C::real("ci_high")});
  for (const auto& metric : o.metrics) {
    const auto& by = table.at(metric);
    if (!by.count(o.method))
      throw nexp::ConfigError(fmt::format("fisher_select.compare: no completed trial of '{}' in {}", o.method, o.trials));
    std::string best;
    double best_mean = -1e300;
    nexp::stats::Interval best_interval;
    for (const auto& [other, values] : by) {
      if (other == o.method) continue;
      std::vector<double> a, b;
      for (const auto& [seed, v] : values)
        if (by.at(o.method).count(seed)) a.push_back(by.at(o.method).at(seed)), b.push_back(v);
      const auto interval = nexp::stats::paired_t_interval(a, b, o.level);
      out.row(metric, other, a.size(), nexp::stats::mean(a), nexp::stats::mean(b), interval.estimate, interval.low,
              interval.high);
      const bool baseline = std::find(o.baselines.begin(), o.baselines.end(), other) != o.baselines.end();
      if (baseline && nexp::stats::mean(b) > best_mean) best = other, best_mean = nexp::stats::mean(b), best_interval = interval;
    }
    ctx.log().info("{}: {} - best baseline {} = {:.4f} [{:.4f}, {:.4f}]", metric, o.method, best, best_interval.estimate,
                   best_interval.low, best_interval.high);
    ctx.summary_interval(metric + "_vs_best", best_interval);
  }
}

}  // namespace fisher_select
