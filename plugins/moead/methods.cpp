#include "methods.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <mutex>

#include "stats.hpp"

namespace moead {

std::int64_t default_budget(int n) {
  const auto m = static_cast<std::int64_t>(n);
  return m * m * m * m;
}

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (index + 1) * 0xd1b54a32d192ed03ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void add_shared_params(nexp::MethodSpec& m) {
  using nexp::Param;
  m.param(Param::integer("budget", 0, "evaluations per run, initial population included; 0: n^4").min(0))
      .param(Param::string("mutation", "standard", "standard: each bit flips with prob. 1/n; power_law: flip k "
                                                   "uniform bits, P(k) ~ k^-beta on 1..n")
                 .choices({"standard", "power_law"}))
      .param(Param::real("power_law_beta", 1.5, "exponent beta of power-law mutation").range(1.01, 4))
      .param(Param::boolean("archive", true, "keep an external archive of all non-dominated points evaluated"))
      .param(Param::integer("replicas", 1, "independent runs (seeds derived from `seed`), in parallel with oneTBB")
                 .range(1, 100000))
      .param(Param::integer("log_every", 0, "evaluations between coverage lines in metrics.jsonl (first "
                                            "replica); 0: budget/100")
                 .min(0));
}

std::vector<std::string> run_metrics() {
  return {"coverage", "evaluations_to_front", "success", "archive_coverage", "archive_evaluations_to_front",
          "hypervolume", "evaluations", "population", "evals_per_second"};
}

namespace {

Settings shared_settings(const nexp::Params& p, const Problem& problem) {
  Settings s;
  s.budget = p.get_int("budget") > 0 ? p.get_int("budget") : default_budget(problem.n());
  s.mutation = p.get_string("mutation") == "power_law" ? MutationKind::PowerLaw : MutationKind::Standard;
  s.power_law_beta = p.get_float("power_law_beta");
  s.archive = p.get_bool("archive");
  return s;
}

// Median of first-cover times with a failure counted as +infinity; -1 when the median run failed.
double median_time(const std::vector<std::int64_t>& t) {
  std::vector<double> x;
  for (auto v : t) x.push_back(v < 0 ? std::numeric_limits<double>::infinity() : static_cast<double>(v));
  const double m = median(x);
  return std::isfinite(m) ? m : -1.0;
}

void write_runs_csv(const std::filesystem::path& file, const std::vector<RunResult>& results,
                    const std::vector<std::uint64_t>& seeds) {
  std::ofstream out(file);
  out << "replica,seed,evaluations,evaluations_to_front,archive_evaluations_to_front,coverage,archive_coverage,"
         "hypervolume,population,seconds\n";
  for (std::size_t r = 0; r < results.size(); ++r) {
    const auto& x = results[r];
    out << fmt::format("{},{},{},{},{},{:.6f},{:.6f},{:.6f},{},{:.4f}\n", r, seeds[r], x.evaluations,
                       x.evals_to_front, x.evals_to_front_archive, x.coverage, x.archive_coverage, x.hypervolume,
                       x.population, x.seconds);
  }
}

void run_replicas(nexp::RunContext& ctx, Algorithm algorithm, const Settings& s, const std::string& label) {
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  const auto& p = ctx.params();
  const int replicas = static_cast<int>(p.get_int("replicas"));
  ctx.log().info("{} on {}; budget {} evaluations, {} mutation, archive {}, {} replica(s)", label,
                 problem.describe(), s.budget, p.get_string("mutation"), s.archive ? "on" : "off", replicas);

  const double front = problem.front_size();
  std::int64_t last_step = 0;
  Trace trace;
  trace.every = p.get_int("log_every") > 0 ? p.get_int("log_every") : std::max<std::int64_t>(1, s.budget / 100);
  trace.record = [&](std::int64_t evals, int covered, int archive_covered) {
    if (evals <= last_step) return;
    last_step = evals;
    std::map<std::string, double> m = {{"coverage", covered / front}};
    if (s.archive) m["archive_coverage"] = archive_covered / front;
    ctx.log_metrics(evals, m);
  };

  std::vector<RunResult> results(replicas);
  std::vector<std::uint64_t> seeds(replicas);
  for (int r = 0; r < replicas; ++r) seeds[r] = derive_seed(ctx.seed(), static_cast<std::uint64_t>(r));
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
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  run_replicas(ctx, Algorithm::Gsemo, shared_settings(ctx.params(), problem), "GSEMO");
}

void run_classic_method(nexp::RunContext& ctx) {
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  const auto& p = ctx.params();
  Settings s = shared_settings(p, problem);
  s.scalarizer = parse_scalarizer(p.get_string("decomposition"));
  s.pbi_theta = p.get_float("pbi_theta");
  s.subproblems = static_cast<int>(p.get_int("subproblems"));
  s.neighborhood = static_cast<int>(p.get_int("neighborhood"));
  run_replicas(ctx, Algorithm::Classic, s, fmt::format("MOEA/D ({}, uniform weights)", p.get_string("decomposition")));
}

void run_self_adjusting_method(nexp::RunContext& ctx) {
  const Problem& problem = *ctx.dataset_as<ProblemData>().problem;
  const auto& p = ctx.params();
  Settings s = shared_settings(p, problem);
  s.subproblems = static_cast<int>(p.get_int("subproblems"));
  s.adjust_every = static_cast<int>(p.get_int("adjust_every"));
  run_replicas(ctx, Algorithm::SelfAdjusting, s, "self-adjusting MOEA/D");
}

}  // namespace moead
