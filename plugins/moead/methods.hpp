#pragma once
// The nexp side: parameters in, replicas in parallel with oneTBB, metrics and artifacts out.
#include <cstdint>
#include <string>
#include <vector>

#include <nexp/nexp.hpp>

#include "algorithms.hpp"

namespace moead {

// ---- Single-algorithm methods (moead.gsemo, moead.classic, moead.self_adjusting)

// The options of moead.gsemo, which the other two share, so that switching `method=` keeps a config valid.
struct AlgorithmOptions : OperatorOptions {
  std::int64_t budget = 0;  // 0: default_budget(n)
  int replicas = 1;
  std::int64_t log_every = 0;  // 0: budget / 100

  static void declare(nexp::Options<AlgorithmOptions>& o) {
    o.add("budget", &AlgorithmOptions::budget, "evaluations per run, initial population included; 0: n^4").min(0);
    o.inherit<OperatorOptions>();
    o.add("replicas", &AlgorithmOptions::replicas,
          "independent runs (seeds derived from `seed`), in parallel with oneTBB")
        .range(1, 100000);
    o.add("log_every", &AlgorithmOptions::log_every,
          "evaluations between coverage lines in metrics.jsonl (first replica); 0: budget/100")
        .min(0);
  }
};

struct ClassicOptions : AlgorithmOptions {
  Scalarizer decomposition = Scalarizer::Tchebycheff;
  double pbi_theta = 5.0;
  int subproblems = 0;   // 0: n + 1
  int neighborhood = 0;  // 0: all subproblems

  static void declare(nexp::Options<ClassicOptions>& o) {
    o.inherit<AlgorithmOptions>();
    o.add("decomposition", &ClassicOptions::decomposition, "scalarisation: weighted sum, Tchebycheff, or PBI",
          scalarizer_kinds());
    o.add("pbi_theta", &ClassicOptions::pbi_theta, "PBI penalty theta").min(0);
    o.add("subproblems", &ClassicOptions::subproblems, "number N of uniform weights; 0: n + 1").min(0);
    o.add("neighborhood", &ClassicOptions::neighborhood, "replacement neighbourhood size T; 0: all subproblems")
        .min(0);
  }
};

struct SelfAdjustingOptions : AlgorithmOptions {
  int subproblems = 0;  // 0: n + 1
  int adjust_every = 1;

  static void declare(nexp::Options<SelfAdjustingOptions>& o) {
    o.inherit<AlgorithmOptions>();
    o.add("subproblems", &SelfAdjustingOptions::subproblems, "number N of subproblems; 0: n + 1").min(0);
    o.add("adjust_every", &SelfAdjustingOptions::adjust_every, "generations (N evaluations each) between adjustments")
        .min(1);
  }
};

// The metrics those methods produce.
std::vector<std::string> run_metrics();

void run_gsemo_method(nexp::RunContext& ctx);
void run_classic_method(nexp::RunContext& ctx);
void run_self_adjusting_method(nexp::RunContext& ctx);

// Default budget when `budget: 0`: n^4 evaluations (the paper's bound, constant 1).
std::int64_t default_budget(int n);

// ---- Studies: one run loops over (algorithm x distortion x n x seed) with oneTBB

// Algorithm labels used by the studies: gsemo, classic_ws, classic_tch, classic_pbi, self_adjusting.
const std::vector<std::string>& study_algorithm_names();
Algorithm parse_study_algorithm(const std::string& label, Settings& s);

// The options of both studies. They differ only in the defaults of `algorithms` and `ns`, which
// `Defaults` gives (a struct inheriting options would keep its base's defaults).
template <class Defaults>
struct StudyOptions : OperatorOptions {
  ProblemKind problem = ProblemKind::Lotz;
  std::vector<std::string> algorithms = Defaults::algorithms();
  std::vector<std::string> distortions = {"identity", "square", "exp2", "nsqrt", "log1p"};
  std::vector<int> ns = Defaults::ns();
  int seeds = 10;
  std::int64_t budget = 0;  // 0: default_budget(n)

  static void declare(nexp::Options<StudyOptions>& o) {
    o.add("problem", &StudyOptions::problem, "benchmark", problem_kinds());
    o.add("algorithms", &StudyOptions::algorithms, "algorithms to compare").choices(study_algorithm_names());
    o.add("distortions", &StudyOptions::distortions, "distortions of the first objective")
        .choices({"identity", "square", "exp2", "nsqrt", "log1p"});
    o.add("ns", &StudyOptions::ns, "bit-string lengths").range(2, kMaxBits);
    o.add("seeds", &StudyOptions::seeds, "independent runs per cell").range(1, 100000);
    o.add("budget", &StudyOptions::budget, "evaluations per run; 0: n^4").min(0);
    o.template inherit<OperatorOptions>();
  }
};

struct CoverageTableDefaults {
  static std::vector<std::string> algorithms() { return study_algorithm_names(); }
  static std::vector<int> ns() { return {16, 32}; }
};
using CoverageTableOptions = StudyOptions<CoverageTableDefaults>;

struct RuntimeScalingDefaults {
  static std::vector<std::string> algorithms() { return {"gsemo", "self_adjusting"}; }
  static std::vector<int> ns() { return {8, 12, 16, 24, 32, 48, 64}; }
};
struct RuntimeScalingOptions : StudyOptions<RuntimeScalingDefaults> {
  int bootstrap = 2000;

  static void declare(nexp::Options<RuntimeScalingOptions>& o) {
    o.inherit<StudyOptions<RuntimeScalingDefaults>>();
    o.add("bootstrap", &RuntimeScalingOptions::bootstrap, "bootstrap resamples for the slope intervals")
        .range(10, 1000000);
  }
};

void run_coverage_table(nexp::RunContext& ctx);
void run_runtime_scaling(nexp::RunContext& ctx);

}  // namespace moead
