#pragma once
// Communication graphs and their gossip matrices W (symmetric, doubly stochastic).
//
//   ring           W_kk = W_k,k+1 = W_k,k-1 = 1/3; eigenvalues 1/3 + 2/3 cos(2 pi j / M)
//   erdos_renyi    each pair an edge with probability p; Metropolis weights
//                  W_ij = 1 / (1 + max(d_i, d_j)), W_ii = 1 - sum_j W_ij; redrawn until connected
//
// lambda = max(|lambda_2(W)|, |lambda_M(W)|) is the contraction of one gossip step on the disagreement
// X - 1 xbar^T; the spectral gap 1 - lambda enters every decentralized rate.
#include <string>
#include <vector>

#include <nexp/random.hpp>

namespace dsminimax {

struct Mixing {
  int nodes = 0;
  std::vector<double> self;                    // W_kk
  std::vector<std::vector<int>> neighbours;    // sorted ascending: the fixed summation order
  std::vector<std::vector<double>> weights;    // W_kj for j = neighbours[k][i]
  double lambda = 0;                           // second largest |eigenvalue|
  double spectral_gap() const { return 1.0 - lambda; }
  std::vector<std::vector<double>> dense() const;  // W as M x M (tests, eigenvalues)
};

Mixing ring_mixing(int nodes);
// Throws nexp::ConfigError when no connected draw appears in 1000 tries (p too small for M).
Mixing erdos_renyi_mixing(int nodes, double p, nexp::Random& rng);
// The second largest eigenvalue modulus of the dense W (Eigen's symmetric solver).
double second_eigenvalue_modulus(const std::vector<std::vector<double>>& w);
bool connected(const std::vector<std::vector<int>>& neighbours);

}  // namespace dsminimax
