#pragma once
// Set functions in plain C++ (double precision, no LibTorch): the targets, the pairwise class of the
// paper with its rate-controlled concave transform, greedy maximisation and the brute-force checkers.
//
// Notation. V = {0..n-1}, a set S is a list of distinct item indices, F(e | S) = F(S + e) - F(S).
//   monotone:    F(e | S) >= 0                          for all S, e not in S
//   submodular:  F(e | S) >= F(e | T)                   for all S subset T, e not in T
//                equivalently (local form) F(S+i) + F(S+j) >= F(S+i+j) + F(S) for all S, i != j not in S
//   alpha-submodular (FLEXSUBNET's sense): F(e | S) >= alpha F(e | T) for all S subset T, e not in T.
//
// The pairwise class (paper, Sec. 3): G(S) = sum_{i in S} a_i + sum_{i<j in S} b_ij with a, b >= 0.
// G(e | S) = a_e + sum_{j in S} b_ej grows with S: G is monotone supermodular (Prop. 1).
//
// The rate condition (paper, Thm. 1 as nexp states and proves it, README "The condition"): let phi be
// increasing and concave with a relative decay rate of at least kappa,
//     phi'(y + s) <= exp(-kappa s) phi'(y)   for all y, s >= 0   (i.e. -phi''/phi' >= kappa),
// and let the pairwise scores be balanced by the modular term,
//     (exp(kappa a_i) - 1)(exp(kappa a_j) - 1) >= kappa b_ij          for all i != j.          (B)
// Then F = phi o G is monotone submodular. With b_ij = <u_i, u_j>, u_i >= 0, (B) holds whenever
//     a_i >= log(1 + sqrt(kappa) ||u_i||) / kappa                                              (B')
// because <u_i, u_j> <= ||u_i|| ||u_j||. With a_e = 0 and b_ej > 0 no strictly increasing phi works:
// F(e | {}) = 0 < phi(a_j + b_ej) - phi(a_j) = F(e | {j}).
//
// alpha variant (paper, Sec. 3.3, as nexp builds it): F = F_sub + G with F_sub monotone submodular and G
// pairwise; then F(e|S) / F(e|T) >= min(1, min_e a_e / (a_e + B_e)), B_e = sum_{j != e} b_ej over V
// (closed form: G(e|S) >= a_e and G(e|T) <= a_e + B_e).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nexp/random.hpp>

namespace submodular {

using Set = std::vector<int>;
// A set function on V = {0..n-1}, evaluated on many sets at once (models batch their evaluations).
using BatchFunction = std::function<std::vector<double>(const std::vector<Set>& sets)>;

// A dense row-major matrix of doubles.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> v;
  Matrix() = default;
  Matrix(int r, int c, double fill = 0.0) : rows(r), cols(c), v(static_cast<std::size_t>(r) * c, fill) {}
  double& operator()(int i, int j) { return v[static_cast<std::size_t>(i) * cols + j]; }
  double operator()(int i, int j) const { return v[static_cast<std::size_t>(i) * cols + j]; }
};

// ---------------------------------------------------------------- targets

class SetFunction {
 public:
  virtual ~SetFunction() = default;
  virtual int ground_size() const = 0;
  virtual double value(const Set& s) const = 0;
  std::vector<double> values(const std::vector<Set>& sets) const;
  BatchFunction batch() const;
};

// Gaussian similarities s_ij = exp(-||z_i - z_j||^2 / h), h the median squared distance over pairs.
Matrix gaussian_similarity(const Matrix& z);

// Facility location: F(S) = sum_v max_{s in S} sim_vs (0 on the empty set).
class FacilityLocation : public SetFunction {
 public:
  explicit FacilityLocation(Matrix sim) : sim_(std::move(sim)) {}
  int ground_size() const override { return sim_.rows; }
  double value(const Set& s) const override;

 private:
  Matrix sim_;
};

// log det(I + Z_S Z_S^T), by a Cholesky factorisation of the |S| x |S| Gram matrix.
class LogDet : public SetFunction {
 public:
  explicit LogDet(Matrix z) : z_(std::move(z)) {}
  int ground_size() const override { return z_.rows; }
  double value(const Set& s) const override;

 private:
  Matrix z_;
};

// Saturated coverage (Lin and Bilmes 2011): F(S) = sum_v min(sum_{s in S} sim_vs, c_v),
// c_v = fraction * sum_{s in V} sim_vs.
class SaturatedCoverage : public SetFunction {
 public:
  SaturatedCoverage(Matrix sim, double fraction);
  int ground_size() const override { return sim_.rows; }
  double value(const Set& s) const override;

 private:
  Matrix sim_;
  std::vector<double> cap_;
};

// The pairwise class: G(S) = sum a_i + sum_{i<j} b_ij, b_ij = <u_i, u_j>.
struct Pairwise {
  std::vector<double> a;  // [n], >= 0
  Matrix u;               // [n, r], >= 0
  int size() const { return static_cast<int>(a.size()); }
  double b(int i, int j) const;
  double value(const Set& s) const;
  double gain(int e, const Set& s) const;  // G(e | S) = a_e + sum_{j in S} b_ej
  // min over pairs of (exp(kappa a_i) - 1)(exp(kappa a_j) - 1) - kappa b_ij: >= 0 is condition (B).
  double balance_margin(double kappa) const;
  // min_e a_e / (a_e + sum_{j != e} b_ej): the closed-form alpha of G alone.
  double alpha_bound() const;
};

// phi_kappa(y) = (1 - exp(-kappa y)) / kappa: concave, increasing, phi'(0) = 1, relative rate exactly kappa.
double phi_exp(double y, double kappa);

// F(S) = scale * phi_kappa(G(S)): monotone submodular when (B) holds (the planted target of the paper's class).
class PlantedPairwise : public SetFunction {
 public:
  PlantedPairwise(Pairwise g, double kappa, double scale) : g_(std::move(g)), kappa_(kappa), scale_(scale) {}
  int ground_size() const override { return g_.size(); }
  double value(const Set& s) const override { return scale_ * phi_exp(g_.value(s), kappa_); }
  const Pairwise& pairwise() const { return g_; }

 private:
  Pairwise g_;
  double kappa_, scale_;
};

// F(S) = F_sub(S) + G(S) with G pairwise: alpha-submodular with alpha >= min(1, G.alpha_bound()).
class AlphaSum : public SetFunction {
 public:
  AlphaSum(std::shared_ptr<const SetFunction> sub, Pairwise g) : sub_(std::move(sub)), g_(std::move(g)) {}
  int ground_size() const override { return g_.size(); }
  double value(const Set& s) const override { return sub_->value(s) + g_.value(s); }
  double alpha_bound() const { return std::min(1.0, g_.alpha_bound()); }

 private:
  std::shared_ptr<const SetFunction> sub_;
  Pairwise g_;
};

// Rescales a pairwise G so that its closed-form alpha is `alpha` exactly: a_e = alpha/(1-alpha) B_e + rho_e.
Pairwise with_alpha(Pairwise g, double alpha, const std::vector<double>& rho);

// ---------------------------------------------------------------- greedy

// Plain greedy: k steps, each adds the item of largest F(S + e) (ties: smallest index).
Set greedy(const BatchFunction& f, int n, int k);
Set greedy_within(const BatchFunction& f, const Set& ground, int k);
// Lazy greedy (Minoux 1978): stale upper bounds in a max-heap; equal to plain greedy for submodular F.
Set lazy_greedy(const std::function<double(const Set&)>& f, int n, int k);
// Brute-force maximum of F over sets of size k (n choose k sets).
double brute_force_max(const std::function<double(const Set&)>& f, int n, int k);

double jaccard(Set a, Set b);

// ---------------------------------------------------------------- checkers

// Every S and i < j not in S on a ground set of n <= 20 items (F evaluated once per subset).
struct ExhaustiveReport {
  std::int64_t checks = 0;
  std::int64_t submodularity_violations = 0;  // F(S+i) + F(S+j) < F(S+i+j) + F(S) - tol
  std::int64_t supermodularity_violations = 0;  // the reverse inequality
  std::int64_t monotonicity_violations = 0;  // F(S+i) < F(S) - tol
  double worst_submodularity = 0;  // the largest F(S+i+j) + F(S) - F(S+i) - F(S+j)
  double min_alpha = 1e300;  // min over S subset T, e not in T of F(e|S) / F(e|T) (when asked)
};
ExhaustiveReport check_exhaustive(const std::function<double(const Set&)>& f, int n, double tol, bool alpha = false);

// Random (S subset T, e not in T) triples: |T| uniform in 1..max_size, S keeps each item of T with
// probability 1/2, e uniform outside T.
struct Triple {
  Set s, t;
  int e;
};
std::vector<Triple> random_triples(int n, int count, int max_size, nexp::Random& rng);

struct TripleReport {
  std::int64_t triples = 0;
  std::int64_t violations = 0;  // F(e|S) < F(e|T) - tol
  std::int64_t monotonicity_violations = 0;  // F(e|S) < -tol or F(e|T) < -tol
  double violation_rate = 0;
  double min_ratio = 1e300;  // min F(e|S) / F(e|T) over triples with F(e|T) > tol
};
TripleReport check_triples(const BatchFunction& f, const std::vector<Triple>& triples, double tol);

// The brute-force checker of any set function (submodular.check): every S and i < j on the first
// `exhaustive_n` items (their 2^n subsets evaluated in one batch; min_alpha over every S subset T, e not
// in T), and the random triples on the whole ground set.
struct CheckReport {
  ExhaustiveReport exhaustive;
  TripleReport triples;
};
CheckReport check_set_function(const BatchFunction& f, int exhaustive_n, const std::vector<Triple>& triples, double tol);

// Uniform random sets of size uniform in lo..hi.
std::vector<Set> random_sets(int n, int count, int lo, int hi, nexp::Random& rng);
Set random_subset(int n, int size, nexp::Random& rng);

}  // namespace submodular
