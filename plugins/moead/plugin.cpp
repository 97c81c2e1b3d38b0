// moead: a self-adjusting MOEA/D that covers the fronts of monotonically distorted LOTZ.
// Registers the benchmark problems, the three algorithms and the two studies with nexp; their options
// are declared in problem.hpp, algorithms.hpp and methods.hpp.
#include <nexp/nexp.hpp>

#include "methods.hpp"
#include "problem.hpp"

namespace {

using nexp::Direction;

void register_components(nexp::Registrar& r) {
  r.metric("coverage", Direction::Maximize, "distinct Pareto-front points in the final population / front size");
  r.metric("evaluations_to_front", Direction::None,
           "evaluations until the population first held the whole front (median over replicas); -1: not reached");
  r.metric("success", Direction::Maximize, "share of runs whose population held the whole front within the budget");
  r.metric("archive_coverage", Direction::Maximize,
           "distinct front points in the external archive / front size; -1 without archive");
  r.metric("archive_evaluations_to_front", Direction::None,
           "evaluations until the archive first held the whole front (median); -1: not reached or no archive");
  r.metric("hypervolume", Direction::Maximize,
           "hypervolume of the final population divided by that of the whole front (distorted objectives)");
  r.metric("evaluations", Direction::None, "evaluations spent per run (mean over replicas)");
  r.metric("population", Direction::None, "distinct objective vectors in the final population (mean)");
  r.metric("evals_per_second", Direction::Maximize, "objective evaluations per wall-clock second, all replicas")
      .measures_time();
  r.metric("sa_min_coverage", Direction::Maximize, "lowest final coverage of any self-adjusting MOEA/D run");
  r.metric("sa_success", Direction::Maximize, "share of self-adjusting MOEA/D runs that covered the front");
  r.metric("classic_mean_coverage", Direction::None, "mean final coverage of the classic MOEA/D runs");
  r.metric("tch_holes", Direction::None,
           "front points optimal for no subproblem of uniform Tchebycheff, summed over the table's problems");
  r.metric("gsemo_slope", Direction::None, "fitted log-log slope of GSEMO's evaluations to cover the front");
  r.metric("sa_max_slope", Direction::Minimize,
           "largest fitted log-log slope of the self-adjusting MOEA/D over the distortions");
  r.metric("sa_max_slope_hi", Direction::Minimize, "upper end of that slope's 95% bootstrap interval");

  r.dataset<moead::ProblemOptions>(
      "moead.problem", "bi-objective bit-string benchmark (LOTZ, OneMinMax, COCZ) with monotone distortions",
      moead::make_problem_dataset);

  r.method("moead.gsemo", "GSEMO: the global simple evolutionary multi-objective optimizer (baseline)",
           moead::run_gsemo_method)
      .options<moead::AlgorithmOptions>()
      .produces(moead::run_metrics())
      .accepts({"moead.problem"});
  r.method("moead.classic", "MOEA/D with uniform weights and a WS, Tchebycheff or PBI decomposition",
           moead::run_classic_method)
      .options<moead::ClassicOptions>()
      .produces(moead::run_metrics())
      .accepts({"moead.problem"});
  r.method("moead.self_adjusting", "MOEA/D whose Tchebycheff decomposition is adjusted on the fly to the front found",
           moead::run_self_adjusting_method)
      .options<moead::SelfAdjustingOptions>()
      .produces(moead::run_metrics())
      .accepts({"moead.problem"});

  r.method("moead.coverage_table",
           "front coverage of every algorithm x distortion x n over seeds, with the enumerated holes",
           moead::run_coverage_table)
      .options<moead::CoverageTableOptions>()
      .produces({"sa_min_coverage", "sa_success", "classic_mean_coverage", "tch_holes"});
  r.method("moead.runtime_scaling",
           "evaluations to cover the front against n, with log-log slopes and bootstrap intervals",
           moead::run_runtime_scaling)
      .options<moead::RuntimeScalingOptions>()
      .produces({"gsemo_slope", "sa_max_slope", "sa_max_slope_hi"});
}

}  // namespace

NEXP_PLUGIN(moead, "0.1.0",
            "MOEA/D with a decomposition adjusted on the fly covers every monotonically distorted LOTZ front in "
            "O(n^4) evaluations, where classic decompositions leave holes",
            "Self-adjusting MOEA/D: a dynamic decomposition with a proven O(n^4) runtime on monotonically "
            "distorted LOTZ (authors and venue not recorded with the abstract)",
            register_components)
