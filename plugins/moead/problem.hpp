#pragma once
// The bi-objective benchmarks (both objectives maximised) and their monotone distortions.
//
//   LOTZ  (Laumanns, Thiele, Zitzler 2004): u = LeadingOnes(x), v = TrailingZeros(x).
//         Pareto set {1^i 0^(n-i)}, front {(i, n-i)}: n+1 points, u + v = n.
//   OneMinMax (Giel, Lehre 2010): u = |x|_0, v = |x|_1. Every string is Pareto-optimal; n+1 points.
//   COCZ  (Laumanns et al. 2004), n even: u = |x|_1, v = |x[1..n/2]|_1 + |x[n/2+1..n]|_0.
//         Pareto set: first half all ones; front {(n/2+k, n-k)}: n/2+1 points, u + v = 3n/2.
//
// A monotone distortion maps the base values to f = (g1(u), g2(v)) with g1, g2 strictly increasing
// on {0..n}. Dominance, the Pareto set and the front's order are unchanged; the front's shape (and with
// it which points optimise which scalarised subproblem) is not. Because g1, g2 are strictly
// increasing, dominance is decided exactly on the integer base values; only scalarisation uses f.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nexp/nexp.hpp>

#include "bits.hpp"

namespace moead {

enum class ProblemKind { Lotz, OneMinMax, Cocz };
enum class DistortionKind { Identity, Square, Exp2, NSqrt, Log1p, Table };

// The names configs use: lotz, oneminmax, cocz; identity, square, exp2, nsqrt, log1p, table.
const std::vector<std::pair<std::string, ProblemKind>>& problem_kinds();
const std::vector<std::pair<std::string, DistortionKind>>& distortion_kinds();
DistortionKind parse_distortion(const std::string& name);
const char* problem_name(ProblemKind kind);
const char* distortion_name(DistortionKind kind);

// log(1 + x) for x > -1 from +, *, / alone, so that the same bits come out on every CPU; accurate
// to the last bits where 1 + x is exact (the integers t of the distortion tables).
long double log1p_portable(long double x);

// g(t) on t = 0..n: identity t; square t^2; exp2 2^t - 1; nsqrt n*sqrt(t); log1p log(1+t); table
// values[t] (n+1 strictly increasing values given by the user). Throws nexp::ConfigError when the
// table is not n+1 strictly increasing finite values, or 2^t - 1 would lose integer exactness (n > 64).
std::vector<long double> distortion_table(DistortionKind kind, int n, const std::vector<double>& table);

// An evaluated search point: base values (u, v) and distorted objectives (f1, f2).
struct Point {
  long double f1 = 0, f2 = 0;
  int u = 0, v = 0;
};

// Pareto dominance on base values (equivalent to dominance on f, the distortions being increasing).
inline bool weakly_dominates(const Point& a, const Point& b) { return a.u >= b.u && a.v >= b.v; }
inline bool strictly_dominates(const Point& a, const Point& b) {
  return weakly_dominates(a, b) && (a.u > b.u || a.v > b.v);
}

class Problem {
 public:
  Problem(ProblemKind kind, int n, DistortionKind d1, DistortionKind d2, const std::vector<double>& table1 = {},
          const std::vector<double>& table2 = {});

  ProblemKind kind() const { return kind_; }
  DistortionKind distortion1() const { return d1_; }
  DistortionKind distortion2() const { return d2_; }
  int n() const { return n_; }

  // Base values of x. Branch-light word operations, no allocation.
  std::pair<int, int> base(const BitString& x) const;
  Point evaluate(const BitString& x) const {
    const auto [u, v] = base(x);
    return point(u, v);
  }
  Point point(int u, int v) const { return {g1_[u], g2_[v], u, v}; }
  long double g1(int t) const { return g1_[t]; }
  long double g2(int t) const { return g2_[t]; }

  // The front: u + v == pareto_sum(), u in [u_min(), u_min() + front_size() - 1].
  int front_size() const { return front_size_; }
  int u_min() const { return u_min_; }
  int pareto_sum() const { return pareto_sum_; }
  bool is_pareto(int u, int v) const { return u + v == pareto_sum_; }
  bool is_pareto(const Point& p) const { return is_pareto(p.u, p.v); }
  int front_index(const Point& p) const { return p.u - u_min_; }  // valid when is_pareto(p)
  Point front_point(int k) const { return point(u_min_ + k, pareto_sum_ - u_min_ - k); }
  // A Pareto-optimal string whose objective vector is front_point(k).
  BitString pareto_string(int k) const;

  // Every (u, v) some string attains, each once: the objective space that subproblem optima are
  // taken over when enumerating a decomposition (O(n^2) points instead of 2^n strings).
  std::vector<std::pair<int, int>> attainable() const;

  // Hypervolume of the whole front with respect to reference_point(), the normaliser of hypervolume().
  long double front_hypervolume() const { return front_hv_; }
  // One distorted step below the front's worst value in each objective.
  std::pair<long double, long double> reference_point() const { return ref_; }

  std::string describe() const;

 private:
  ProblemKind kind_;
  DistortionKind d1_, d2_;
  int n_;
  int front_size_ = 0, u_min_ = 0, pareto_sum_ = 0;
  std::vector<long double> g1_, g2_;
  std::pair<long double, long double> ref_;
  long double front_hv_ = 0;
  std::uint64_t top_mask_ = 0;  // valid bits of the top word
  int top_word_ = 0, top_bits_ = 0;
  BitString first_half_;        // COCZ: mask of positions 0..n/2-1
};

// The options of the dataset `moead.problem`.
struct ProblemOptions {
  ProblemKind problem = ProblemKind::Lotz;
  int n = 16;
  DistortionKind distortion = DistortionKind::Identity;
  DistortionKind distortion2 = DistortionKind::Identity;
  std::optional<std::vector<double>> table, table2;

  static void declare(nexp::Options<ProblemOptions>& o) {
    o.add("problem", &ProblemOptions::problem, "benchmark", problem_kinds());
    o.add("n", &ProblemOptions::n, "bit-string length").range(2, kMaxBits);
    o.add("distortion", &ProblemOptions::distortion,
          "g1 applied to the first objective: t, t^2, 2^t-1, n*sqrt(t), log(1+t) or `table`", distortion_kinds());
    o.add("distortion2", &ProblemOptions::distortion2, "g2 applied to the second objective (same choices)",
          distortion_kinds());
    o.add("table", &ProblemOptions::table, "g1(0..n) when distortion = table: n+1 strictly increasing values");
    o.add("table2", &ProblemOptions::table2, "g2(0..n) when distortion2 = table");
  }
};

// The registered dataset `moead.problem`: a Problem built from the config.
struct ProblemData : nexp::Dataset {
  std::shared_ptr<const Problem> problem;
  std::string describe() const override { return problem->describe(); }
};

std::shared_ptr<nexp::Dataset> make_problem_dataset(const ProblemOptions& o, nexp::RunContext& ctx);

}  // namespace moead
