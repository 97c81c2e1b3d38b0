#pragma once
// The three algorithms, as plain functions of (problem, settings, seed) that tests and the nexp
// methods call alike. Each counts every evaluated offspring (initial points included), stops at the
// budget or when its population first holds the whole Pareto front, and reports the same RunResult.
//
//   GSEMO (Giel 2003): population = the non-dominated points found; a uniformly chosen parent is
//     mutated; the offspring enters unless strictly dominated and evicts what it weakly dominates.
//   Classic MOEA/D (Zhang and Li 2007; mutation-only form analysed by Li et al. 2016 and Huang et al.
//     2021): N subproblems with uniform weights and a WS, Tchebycheff or PBI scalarisation, z = the
//     best value seen per objective; each generation mutates every subproblem's solution once and the
//     offspring replaces the solution of every subproblem in the parent's neighbourhood it is no worse
//     for (g(y) <= g(x)).
//   Self-adjusting MOEA/D: the same loop (Tchebycheff, replacement over all subproblems) with the
//     decomposition adjusted after every `adjust_every` generations by adjust_decomposition() in
//     algorithms.cpp. The rule, and why it covers every monotonically distorted front:
//       - keep: for every distinct non-dominated objective vector in the population, one subproblem
//         holding it is re-aimed along the ray through it (weights 1/(z - f), the WS-transformation of
//         MOEA/D-AWA). Such a point is the unique optimum of its subproblem, so a Pareto-optimal point
//         once found is never lost, whatever the distortion;
//       - explore: every other subproblem (holding a duplicate or a dominated point) is re-aimed at a
//         gap: the corner (f1 of the left, f2 of the right) of two neighbouring non-dominated vectors,
//         or past either end of the front along an axis; it restarts from one of the gap's endpoints.
//         A corner subproblem prefers every point strictly inside its gap to both endpoints, so an
//         offspring landing in the gap is kept, and becomes a kept point at the next adjustment.
//       Gaps are drawn afresh (shuffled, round-robin) at every adjustment, since an empty gap (two
//       adjacent Pareto points) cannot be told from a hard one.
//     On LOTZ with N = n+1: while a front point is missing, some non-dominated point next to it is
//     kept, at least one subproblem is free, and its gap is drawn with probability >= 1/(n+2) per
//     adjustment; the keeper then produces the missing neighbour with probability >= 1/(en) in the
//     generation. O(n^2) generations per front point, n+1 points, n+1 evaluations per generation:
//     O(n^4) evaluations, for every monotone distortion (the argument uses only the order of f).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "front.hpp"

namespace moead {

enum class Algorithm { Gsemo, Classic, SelfAdjusting };

// Variation and archive, the options every algorithm and study shares.
struct OperatorOptions {
  MutationKind mutation = MutationKind::Standard;
  double power_law_beta = 1.5;
  bool archive = true;  // keep an external archive of every non-dominated point evaluated

  static void declare(nexp::Options<OperatorOptions>& o) {
    o.add("mutation", &OperatorOptions::mutation,
          "standard: each bit flips with prob. 1/n; power_law: flip k uniform bits, P(k) ~ k^-beta on 1..n",
          {{"standard", MutationKind::Standard}, {"power_law", MutationKind::PowerLaw}});
    o.add("power_law_beta", &OperatorOptions::power_law_beta, "exponent beta of power-law mutation").range(1.01, 4);
    o.add("archive", &OperatorOptions::archive, "keep an external archive of all non-dominated points evaluated");
  }
};

// One run of an algorithm: tests and the studies fill it directly, the methods from their options.
struct Settings : OperatorOptions {
  std::int64_t budget = 100000;  // evaluations
  // MOEA/D
  int subproblems = 0;            // N; 0: n + 1
  Scalarizer scalarizer = Scalarizer::Tchebycheff;  // classic only; the self-adjusting one is Tchebycheff
  double pbi_theta = 5.0;
  int neighborhood = 0;           // classic: replacement neighbourhood T; 0: all subproblems
  int adjust_every = 1;           // self-adjusting: generations between adjustments
};

struct RunResult {
  std::int64_t evaluations = 0;             // spent
  std::int64_t evals_to_front = -1;         // population first held the whole front; -1: not in budget
  std::int64_t evals_to_front_archive = -1; // archive first held the whole front; -1: not (or no archive)
  double coverage = 0;                      // distinct front points in the final population / front size
  double archive_coverage = -1;             // the same for the archive; -1 without archive
  double hypervolume = 0;                   // of the final population, normalised by the front's
  int population = 0;                       // distinct objective vectors in the final population
  int subproblems = 0;                      // N for MOEA/D, final population size for GSEMO
  double seconds = 0;
  bool success() const { return evals_to_front >= 0; }
};

// Called every `every` evaluations with (evaluations, population covered, archive covered).
struct Trace {
  std::int64_t every = 0;
  std::function<void(std::int64_t, int, int)> record;
};

RunResult run_gsemo(const Problem& problem, const Settings& s, std::uint64_t seed, const Trace* trace = nullptr,
                    const BitString* start = nullptr);
RunResult run_moead_classic(const Problem& problem, const Settings& s, std::uint64_t seed,
                            const Trace* trace = nullptr);
RunResult run_moead_self_adjusting(const Problem& problem, const Settings& s, std::uint64_t seed,
                                   const Trace* trace = nullptr);
RunResult run_algorithm(Algorithm a, const Problem& problem, const Settings& s, std::uint64_t seed,
                        const Trace* trace = nullptr);

}  // namespace moead
