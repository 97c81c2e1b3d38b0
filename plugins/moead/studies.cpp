// The two headline experiments as single runs that loop internally: every (algorithm, distortion, n,
// seed) is one independent job for oneTBB; the tables are written to the run's artifacts folder.
#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "methods.hpp"

namespace moead {

using nexp::stats::mean;
using nexp::stats::median;
using nexp::stats::stddev;

const std::vector<std::string>& study_algorithm_names() {
  static const std::vector<std::string> names = {"gsemo", "classic_ws", "classic_tch", "classic_pbi",
                                                 "self_adjusting"};
  return names;
}

Algorithm parse_study_algorithm(const std::string& label, Settings& s) {
  if (label == "gsemo") return Algorithm::Gsemo;
  if (label == "self_adjusting") return Algorithm::SelfAdjusting;
  if (label.rfind("classic_", 0) == 0) {
    s.scalarizer = parse_scalarizer(label.substr(8));
    return Algorithm::Classic;
  }
  throw nexp::ConfigError(fmt::format("unknown algorithm '{}': expected one of {{{}}}", label,
                                      fmt::join(study_algorithm_names(), ", ")));
}

namespace {

struct Job {
  std::string algorithm, distortion;
  int n = 0, seed_index = 0;
  RunResult result;
};

using Problems = std::map<std::pair<std::string, int>, std::shared_ptr<const Problem>>;

// The problem of every (distortion of the first objective, n), built once per study.
Problems study_problems(ProblemKind kind, const std::vector<std::string>& distortions, const std::vector<int>& ns) {
  Problems problems;
  for (const auto& d : distortions)
    for (int n : ns)
      problems[{d, n}] = std::make_shared<const Problem>(kind, n, parse_distortion(d), DistortionKind::Identity);
  return problems;
}

// Runs every job in parallel, longest budgets first so the tail of the schedule stays short.
// budget 0: default_budget(n).
void run_jobs(nexp::RunContext& ctx, const OperatorOptions& operators, std::int64_t budget, const Problems& problems,
              std::vector<Job>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.n > b.n; });
  auto bar = ctx.progress(static_cast<std::int64_t>(jobs.size()), "runs");
  tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t i) {
    Job& job = jobs[i];
    Settings s;
    static_cast<OperatorOptions&>(s) = operators;
    const Algorithm a = parse_study_algorithm(job.algorithm, s);
    s.budget = budget > 0 ? budget : default_budget(job.n);
    const auto cell = fmt::format("cell:{}/{}/{}", job.algorithm, job.distortion, job.n);
    job.result = run_algorithm(a, *problems.at({job.distortion, job.n}), s,
                               ctx.stream(cell, static_cast<std::uint64_t>(job.seed_index))());
    bar.advance();
  });
}

void write_jobs_csv(const std::filesystem::path& file, const std::vector<Job>& jobs) {
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(file, {C::text("algorithm"), C::text("distortion"), C::integer("n"), C::integer("seed"),
                             C::integer("evaluations"), C::integer("evaluations_to_front"),
                             C::integer("archive_evaluations_to_front"), C::real("coverage"),
                             C::real("archive_coverage"), C::real("hypervolume"), C::integer("population"),
                             C::real("seconds")});
  out.flush_every_row(false);
  for (const auto& j : jobs) {
    const auto& r = j.result;
    out.row(j.algorithm, j.distortion, j.n, j.seed_index, r.evaluations, r.evals_to_front, r.evals_to_front_archive,
            r.coverage, r.archive_coverage, r.hypervolume, r.population, r.seconds);
  }
}

using CellKey = std::tuple<std::string, std::string, int>;  // algorithm, distortion, n

std::map<CellKey, std::vector<const RunResult*>> by_cell(const std::vector<Job>& jobs) {
  std::map<CellKey, std::vector<const RunResult*>> cells;
  for (const auto& j : jobs) cells[{j.algorithm, j.distortion, j.n}].push_back(&j.result);
  return cells;
}

}  // namespace

// ---------------------------------------------------------------- coverage table

void run_coverage_table(nexp::RunContext& ctx) {
  const auto o = ctx.options<CoverageTableOptions>();
  const Problems problems = study_problems(o.problem, o.distortions, o.ns);
  std::vector<Job> jobs;
  for (const auto& a : o.algorithms)
    for (const auto& d : o.distortions)
      for (int n : o.ns)
        for (int s = 0; s < o.seeds; ++s) jobs.push_back({a, d, n, s, {}});
  ctx.log().info("coverage table on {}: {} algorithms x {} distortions x {} sizes x {} seeds = {} runs",
                 problem_name(o.problem), o.algorithms.size(), o.distortions.size(), o.ns.size(), o.seeds, jobs.size());
  run_jobs(ctx, o, o.budget, problems, jobs);
  write_jobs_csv(ctx.artifacts_dir() / "coverage_runs.csv", jobs);

  // Per cell: how often and how far the population covered the front; for classic decompositions also
  // the enumerated optima of the N = n+1 uniform subproblems (the holes as a computed fact).
  using C = nexp::CsvColumn;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "coverage_table.csv",
                      {C::text("algorithm"), C::text("distortion"), C::integer("n"), C::integer("runs"),
                       C::real("success_rate"), C::real("mean_coverage"), C::real("min_coverage"),
                       C::real("archive_success_rate"), C::real("mean_archive_coverage"),
                       C::real("median_evaluations_to_front"), C::real("mean_hypervolume"), C::integer("optima_unique"),
                       C::integer("optima_reachable"), C::integer("front_size")});
  std::map<CellKey, std::string> shown;
  double sa_min = 1, sa_success = 0, sa_runs = 0, classic_cov = 0, classic_runs = 0, tch_holes = 0;
  for (const auto& [key, runs] : by_cell(jobs)) {
    const auto& [alg, dist, n] = key;
    const Problem& problem = *problems.at({dist, n});
    std::vector<double> cov, acov, hv, t;
    double succ = 0, asucc = 0;
    for (const RunResult* r : runs) {
      cov.push_back(r->coverage), acov.push_back(r->archive_coverage), hv.push_back(r->hypervolume);
      succ += r->success(), asucc += r->evals_to_front_archive >= 0;
      if (r->success()) t.push_back(static_cast<double>(r->evals_to_front));
    }
    const double k = static_cast<double>(runs.size());
    std::optional<std::int64_t> unique, reachable;  // classic decompositions only
    if (alg.rfind("classic_", 0) == 0) {
      const auto optima = enumerate_optima(problem, parse_scalarizer(alg.substr(8)), n + 1, 5.0L);
      unique = optima.unique(), reachable = optima.reachable();
      if (alg == "classic_tch") tch_holes += static_cast<double>(optima.holes().size());
    }
    const double min_cov = *std::min_element(cov.begin(), cov.end());
    csv.row(alg, dist, n, runs.size(), succ / k, mean(cov), min_cov, asucc / k, o.archive ? mean(acov) : -1.0,
            t.empty() ? -1.0 : median(t), mean(hv), unique, reachable, problem.front_size());
    shown[key] = fmt::format("{:.2f} ({:.0f}%)", mean(cov), 100 * succ / k);
    if (alg == "self_adjusting") {
      sa_min = std::min(sa_min, min_cov), sa_success += succ, sa_runs += k;
    } else if (alg.rfind("classic_", 0) == 0) {
      for (double c : cov) classic_cov += c;
      classic_runs += k;
    }
  }

  // Markdown: rows algorithm x n, columns distortions; "mean coverage (share of runs that covered)".
  std::ofstream md(ctx.artifacts_dir() / "coverage_table.md");
  md << fmt::format("Final population coverage |front found|/|front| on {} (mean over {} seeds; in brackets the "
                    "share of runs whose population held the whole front within the budget).\n\n",
                    problem_name(o.problem), o.seeds);
  md << "| algorithm | n |";
  for (const auto& d : o.distortions) md << " " << d << " |";
  md << "\n|---|---|";
  for (std::size_t i = 0; i < o.distortions.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& a : o.algorithms)
    for (int n : o.ns) {
      md << "| " << a << " | " << n << " |";
      for (const auto& d : o.distortions) md << " " << shown[{a, d, n}] << " |";
      md << "\n";
    }
  md << "\nFront points that are the unique optimum / an optimum of some subproblem of the classic decomposition "
        "with n+1 uniform weights (enumerated over every attainable objective vector, z = ideal point):\n\n";
  md << "| decomposition | n |";
  for (const auto& d : o.distortions) md << " " << d << " |";
  md << "\n|---|---|";
  for (std::size_t i = 0; i < o.distortions.size(); ++i) md << "---|";
  md << "\n";
  for (const char* s : {"ws", "tch", "pbi"})
    for (int n : o.ns) {
      md << "| " << s << " | " << n << " |";
      for (const auto& d : o.distortions) {
        const Problem& problem = *problems.at({d, n});
        const auto optima = enumerate_optima(problem, parse_scalarizer(s), n + 1, 5.0L);
        md << fmt::format(" {}/{} of {} |", optima.unique(), optima.reachable(), problem.front_size());
      }
      md << "\n";
    }

  ctx.summary("sa_min_coverage", sa_runs > 0 ? sa_min : -1.0);
  ctx.summary("sa_success", sa_runs > 0 ? sa_success / sa_runs : -1.0);
  ctx.summary("classic_mean_coverage", classic_runs > 0 ? classic_cov / classic_runs : -1.0);
  ctx.summary("tch_holes", tch_holes);
  ctx.log().info("self-adjusting: min coverage {:.3f}, success {:.3f}; classic mean coverage {:.3f}", sa_min,
                 sa_runs > 0 ? sa_success / sa_runs : -1.0, classic_runs > 0 ? classic_cov / classic_runs : -1.0);
}

// ---------------------------------------------------------------- runtime scaling

void run_runtime_scaling(nexp::RunContext& ctx) {
  const auto o = ctx.options<RuntimeScalingOptions>();
  const Problems problems = study_problems(o.problem, o.distortions, o.ns);
  const int resamples = o.bootstrap;
  std::vector<Job> jobs;
  for (const auto& a : o.algorithms)
    for (const auto& d : o.distortions) {
      // GSEMO decides by dominance alone, which a monotone distortion does not change: one distortion
      // stands for all (the tests check the invariance run for run).
      if (a == "gsemo" && d != o.distortions.front()) continue;
      for (int n : o.ns)
        for (int s = 0; s < o.seeds; ++s) jobs.push_back({a, d, n, s, {}});
    }
  ctx.log().info("runtime scaling on {}: {} runs over n = {}", problem_name(o.problem), jobs.size(),
                 fmt::join(o.ns, ", "));
  run_jobs(ctx, o, o.budget, problems, jobs);
  write_jobs_csv(ctx.artifacts_dir() / "scaling_runs.csv", jobs);
  const auto cells = by_cell(jobs);

  using C = nexp::CsvColumn;
  nexp::CsvWriter cells_csv(ctx.artifacts_dir() / "scaling_cells.csv",
                            {C::text("algorithm"), C::text("distortion"), C::integer("n"), C::integer("runs"),
                             C::integer("successes"), C::real("mean_evaluations"), C::real("median_evaluations"),
                             C::real("sd_evaluations"), C::real("mean_over_n3"), C::real("mean_over_n4")});
  nexp::CsvWriter slopes_csv(ctx.artifacts_dir() / "scaling_slopes.csv",
                             {C::text("algorithm"), C::text("distortion"), C::real("slope"), C::real("ci_lo"),
                              C::real("ci_hi"), C::boolean("all_covered"), C::integer("largest_n"),
                              C::real("mean_over_n3_at_largest_n")});
  std::ofstream md(ctx.artifacts_dir() / "scaling.md");
  md << fmt::format("Evaluations until the population holds the whole front of {}, n = {} ({} seeds each). Slope: "
                    "least squares of log(mean) on log(n); 95% percentile bootstrap over seeds ({} resamples).\n\n",
                    problem_name(o.problem), fmt::join(o.ns, ", "), o.seeds, resamples);
  md << "| algorithm | distortion | mean evaluations at n = " << fmt::format("{}", fmt::join(o.ns, " / "))
     << " | slope [95% CI] | all runs covered |\n|---|---|---|---|---|\n";

  double gsemo_slope = NAN, sa_max = -INFINITY, sa_max_hi = -INFINITY;
  for (const auto& a : o.algorithms)
    for (const auto& d : o.distortions) {
      if (!cells.count({a, d, o.ns.front()})) continue;
      std::vector<double> xs;
      std::vector<std::vector<double>> samples;
      std::vector<std::string> means;
      bool all = true;
      for (int n : o.ns) {
        const auto& runs = cells.at({a, d, n});
        std::vector<double> t;
        int ok = 0;
        for (const RunResult* r : runs) {
          // A run that did not cover the front counts with its whole budget: a lower bound on its time.
          t.push_back(static_cast<double>(r->success() ? r->evals_to_front : r->evaluations));
          ok += r->success();
        }
        all = all && ok == static_cast<int>(runs.size());
        const double nn = n;
        cells_csv.row(a, d, n, runs.size(), ok, mean(t), median(t), stddev(t), mean(t) / (nn * nn * nn),
                      mean(t) / (nn * nn * nn * nn));
        xs.push_back(nn);
        samples.push_back(t);
        means.push_back(fmt::format("{:.3g}", mean(t)));
      }
      auto rng = ctx.stream("slope:" + a + "/" + d);
      const auto fit = nexp::stats::loglog_slope_of_means(xs, samples, rng, 0.95, resamples);
      const double nl = xs.back();
      slopes_csv.row(a, d, fit.estimate, fit.low, fit.high, all, o.ns.back(), mean(samples.back()) / (nl * nl * nl));
      md << fmt::format("| {} | {} | {} | {:.2f} [{:.2f}, {:.2f}] | {} |\n", a, a == "gsemo" ? "any (invariant)" : d,
                        fmt::join(means, " / "), fit.estimate, fit.low, fit.high, all ? "yes" : "no");
      if (a == "gsemo") gsemo_slope = fit.estimate;
      if (a == "self_adjusting") sa_max = std::max(sa_max, fit.estimate), sa_max_hi = std::max(sa_max_hi, fit.high);
      ctx.log().info("{} / {}: slope {:.2f} [{:.2f}, {:.2f}]{}", a, d, fit.estimate, fit.low, fit.high,
                     all ? "" : " (some runs did not cover the front)");
    }
  ctx.summary("gsemo_slope", std::isfinite(gsemo_slope) ? gsemo_slope : -1.0);
  ctx.summary("sa_max_slope", std::isfinite(sa_max) ? sa_max : -1.0);
  ctx.summary("sa_max_slope_hi", std::isfinite(sa_max_hi) ? sa_max_hi : -1.0);
}

}  // namespace moead
