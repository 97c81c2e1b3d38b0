#include "methods.hpp"

#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>


namespace moead {

using nexp::stats::mean;

std::int64_t default_budget(int n) {
  const auto m = static_cast<std::int64_t>(n);
  return m * m * m * m;
}

std::vector<std::string> run_metrics() {
  return {"coverage", "evaluations_to_front", "success", "archive_coverage", "archive_evaluations_to_front",
          "hypervolume", "evaluations", "population", "evals_per_second"};
}

namespace {

Settings shared_settings(const AlgorithmOptions& o, const Problem& problem) {
  Settings s;
  static_cast<OperatorOptions&>(s) = o;
  s.budget = o.budget > 0 ? o.budget : default_budget(problem.n());
  return s;
}

// Median of first-cover times with a failure counted as +infinity; -1 when the median run failed.
double median_time(const std::vector<std::int64_t>& t) {
  std::vector<double> x;
  for (auto v : t) x.push_back(v < 0 ? std::numeric_limits<double>::infinity() : static_cast<double>(v));
  const double m = nexp::stats::median(x);
  return std::isfinite(m) ? m : -1.0;
}

void write_runs_csv(const std::filesystem::path& file, const std::vector<RunResult>& results,
                    const std::vector<std::uint64_t>& seeds) {
  using C = nexp::CsvColumn;  // seeds are unsigned 64-bit words: written as text, so that none wraps negative
  nexp::CsvWriter out(file, {C::integer("replica"), C::text("seed"), C::integer("evaluations"),
                             C::integer("evaluations_to_front"), C::integer("archive_evaluations_to_front"),
                             C::real("coverage"), C::real("archive_coverage"), C::real("hypervolume"),
                             C::integer("population"), C::real("seconds")});
  for (std::size_t r = 0; r < results.size(); ++r) {
    const auto& x = results[r];
    out.row(r, std::to_string(seeds[r]), x.evaluations, x.evals_to_front, x.evals_to_front_archive, x.coverage,
            x.archive_coverage, x.hypervolume, x.population, x.seconds);
  }
}

void run_replicas(nexp::RunContext& ctx, const AlgorithmOptions& o, Algorithm algorithm, const Settings& s,
                  const std::string& label) {
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  const int replicas = o.replicas;
  ctx.log().info("{} on {}; budget {} evaluations, {} mutation, archive {}, {} replica(s)", label,
                 problem.describe(), s.budget, s.mutation == MutationKind::PowerLaw ? "power_law" : "standard",
                 s.archive ? "on" : "off", replicas);

  const double front = problem.front_size();
  std::int64_t last_step = 0;
  Trace trace;
  trace.every = o.log_every > 0 ? o.log_every : std::max<std::int64_t>(1, s.budget / 100);
  trace.record = [&](std::int64_t evals, int covered, int archive_covered) {
    if (evals <= last_step) return;
    last_step = evals;
    std::map<std::string, double> m = {{"coverage", covered / front}};
    if (s.archive) m["archive_coverage"] = archive_covered / front;
    ctx.log_metrics(evals, m);
  };

  std::vector<RunResult> results(replicas);
  std::vector<std::uint64_t> seeds(replicas);
  for (int r = 0; r < replicas; ++r) seeds[r] = ctx.stream("replica", static_cast<std::uint64_t>(r))();
  auto bar = ctx.progress(replicas, "runs");
  const auto t0 = std::chrono::steady_clock::now();
  tbb::parallel_for(0, replicas, [&](int r) {
    results[r] = run_algorithm(algorithm, problem, s, seeds[r], r == 0 ? &trace : nullptr);
    bar.advance();
  });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<std::int64_t> first, first_archive;
  std::vector<double> coverage, archive_coverage, hv, population;
  double evaluations = 0, successes = 0;
  for (const auto& x : results) {
    first.push_back(x.evals_to_front), first_archive.push_back(x.evals_to_front_archive);
    coverage.push_back(x.coverage), archive_coverage.push_back(x.archive_coverage);
    hv.push_back(x.hypervolume), population.push_back(x.population);
    evaluations += static_cast<double>(x.evaluations);
    successes += x.success();
  }
  write_runs_csv(ctx.artifacts_dir() / "runs.csv", results, seeds);
  ctx.summary("coverage", mean(coverage));
  ctx.summary("evaluations_to_front", median_time(first));
  ctx.summary("success", successes / replicas);
  ctx.summary("archive_coverage", mean(archive_coverage));
  ctx.summary("archive_evaluations_to_front", s.archive ? median_time(first_archive) : -1.0);
  ctx.summary("hypervolume", mean(hv));
  ctx.summary("evaluations", evaluations / replicas);
  ctx.summary("population", mean(population));
  ctx.summary("evals_per_second", wall > 0 ? evaluations / wall : 0.0);
  ctx.log().info("coverage {:.3f}, success {}/{}, median evaluations to front {}, {:.3g} evaluations/s", mean(coverage),
                 successes, replicas, median_time(first), wall > 0 ? evaluations / wall : 0.0);
}

}  // namespace

void run_gsemo_method(nexp::RunContext& ctx) {
  const auto o = ctx.options<AlgorithmOptions>();
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  run_replicas(ctx, o, Algorithm::Gsemo, shared_settings(o, problem), "GSEMO");
}

void run_classic_method(nexp::RunContext& ctx) {
  const auto o = ctx.options<ClassicOptions>();
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  Settings s = shared_settings(o, problem);
  s.scalarizer = o.decomposition;
  s.pbi_theta = o.pbi_theta;
  s.subproblems = o.subproblems;
  s.neighborhood = o.neighborhood;
  run_replicas(ctx, o, Algorithm::Classic, s,
               fmt::format("MOEA/D ({}, uniform weights)", scalarizer_name(s.scalarizer)));
}

void run_self_adjusting_method(nexp::RunContext& ctx) {
  const auto o = ctx.options<SelfAdjustingOptions>();
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  Settings s = shared_settings(o, problem);
  s.subproblems = o.subproblems;
  s.adjust_every = o.adjust_every;
  run_replicas(ctx, o, Algorithm::SelfAdjusting, s, "self-adjusting MOEA/D");
}

}  // namespace moead
