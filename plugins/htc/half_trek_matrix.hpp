#pragma once
// The half-trek matrix at a random point: M = Omega (I - Lambda)^{-1} = (I - Lambda)^T Sigma, with the
// edge weights lambda_ij (i -> j), omega_ij (i <-> j) and omega_ii drawn uniformly from F_p.
//
// Entry M[y, w] sums, over the half-treks from y to w (y -> ... -> w, or y <-> z -> ... -> w), the
// product of their weights. By the Lindstrom-Gessel-Viennot argument of Foygel, Draisma and Drton
// (2012, Lemma 2), a minor det M[Y, P] is a nonzero polynomial in the weights iff a system of
// half-treks with no sided intersection from Y to P exists. Its value at a random point is therefore
// nonzero only if such a system exists (one-sided: a nonzero value is a proof), and zero by accident
// with probability at most deg / p (Schwartz-Zippel), deg <= |P| * n.
//
// Rows are computed one at a time, row(y) = e_y^T Omega (I - Lambda)^{-1}, by solving
// r (I - Lambda) = Omega[y, .] along the strongly connected components in topological order: O(n + |D|)
// per row on a DAG, plus O(sum |C|^2) for the dense inverses of the cyclic components C. Memory is
// O(n + |D| + |B| + sum |C|^2): linear in the edges for acyclic graphs, no n x n matrix is stored.
#include <random>
#include <vector>

#include "field.hpp"
#include "mixed_graph.hpp"

namespace htc {

class HalfTrekMatrix {
 public:
  // Draws the weights; redraws (at most 16 times) when I - Lambda is singular at the drawn point,
  // which happens with probability at most n / p.
  HalfTrekMatrix(const MixedGraph& g, const PrimeField& f, std::mt19937_64& rng);

  // out[w] = M[y, w] for every node w (out is resized to n).
  void row(int y, std::vector<u64>& out) const;

  u64 lambda(int from, int to) const;  // 0 when from -> to is not an edge
  u64 omega(int a, int b) const;       // 0 when a != b are not siblings
  const PrimeField& field() const { return f_; }
  std::size_t bytes() const;  // the weights and the components' inverses

 private:
  bool draw(std::mt19937_64& rng);
  const MixedGraph& g_;
  const PrimeField& f_;
  std::vector<std::vector<u64>> lam_;  // lam_[w][k]: weight of parents(w)[k] -> w
  std::vector<std::vector<u64>> om_;   // om_[y][k]: weight of y <-> siblings(y)[k]
  std::vector<u64> om_diag_;
  struct Block {
    std::vector<int> nodes;
    std::vector<u64> inverse;  // (I - Lambda_CC)^{-1}, |C| x |C|, empty for a single node
  };
  std::vector<Block> blocks_;    // topological order
  std::vector<int> block_pos_;   // node -> position inside its block
  std::vector<int> block_of_;    // node -> block index
};

}  // namespace htc
