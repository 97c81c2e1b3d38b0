#pragma once
// Numeric identification: the rational maps behind the criteria, applied to a covariance matrix.
//
// Each IdStep (criteria.hpp) is one linear system (FDD 2012, proof of Theorem 1; Weihs et al. 2018):
//   for each source a:  row_a = Sigma[a, .] - sum_{u in removed(a)} lambda_ua Sigma[u, .]
//   row_a[node] - sum_{k in known} row_a[k] lambda_k,node = sum_{w in targets} row_a[w] lambda_w,node
// solved in the order the criterion found the steps. Omega = (I - Lambda)^T Sigma (I - Lambda) is then
// identified in the entries (i, j) whose columns i and j of Lambda are fully known. For a generic
// Sigma of the model the systems are nonsingular and the answer is exact; for a sample covariance the
// error is O_p(N^{-1/2}).
#include <Eigen/Dense>

#include <random>

#include "criteria.hpp"
#include "mixed_graph.hpp"

namespace htc {

struct Estimate {
  Eigen::MatrixXd lambda, omega;  // n x n; NaN where not identified (0 off the graph's edges for lambda)
};

// Throws std::invalid_argument when `id` carries no steps for its identified edges (a Tian result).
// all_equations: least squares over the equations of every node allowed for each step (found again by
// replaying the steps), not only the certified sources' square system: the same answer for an exact
// Sigma, and for a sample covariance far fewer weak-instrument blow-ups. Costs O(n (n + |D| + |B|)) per
// step (and n^2 memory for edgewise) on top of the solves.
Estimate identify(const MixedGraph& g, const Identification& id, const Eigen::MatrixXd& sigma,
                  bool all_equations = false);

// A linear SEM on g: lambda_ij = +-U(0.3, 0.8) on the edges; Omega with siblings' entries
// +-U(0.2, 0.5) and the diagonal 1 + sum of absolute off-diagonals (diagonally dominant, so positive
// definite). Magnitudes are bounded away from 0: a near-zero weight is a weak instrument, and the
// sample error of the identification formulas then has no useful bound.
struct Sem {
  Eigen::MatrixXd lambda, omega;
};
Sem random_sem(const MixedGraph& g, std::mt19937_64& rng);
Eigen::MatrixXd covariance(const Sem& sem);  // (I - Lambda)^{-T} Omega (I - Lambda)^{-1}
// (1/N) sum x x^T over N draws of X = (I - Lambda)^{-T} eps, eps ~ N(0, Omega) (the mean is known: 0).
Eigen::MatrixXd sample_covariance(const Sem& sem, long long samples, std::mt19937_64& rng);

// Absolute errors over the identified parameters: lambda on identified edges, Omega on the pairs of
// solved nodes.
struct Errors {
  double max = 0, median = 0;
  int entries = 0;
};
Errors errors(const MixedGraph& g, const Estimate& estimate, const Sem& truth);
inline double max_error(const MixedGraph& g, const Estimate& estimate, const Sem& truth) {
  return errors(g, estimate, truth).max;
}

}  // namespace htc
