#pragma once
// Network: the one thing a decentralized method may do with its neighbours. A method holds the rows
// of its local nodes ([local, d] blocks) and calls mix() once per communication round; the `sim` back
// end holds all M nodes in one process, the `comm` back end M/P nodes per rank (comm_network.cpp).
//
// mix() computes (W X)_k = W_kk x_k + sum_{j in N(k), ascending} W_kj x_j for each local node k: one fixed
// summation order, so both back ends give bit-identical results.
#include <cstdint>
#include <memory>

#include "graph.hpp"
#include "problems.hpp"

namespace nexp {
class Comm;
}

namespace dsminimax {

class Network {
 public:
  virtual ~Network() = default;
  virtual int nodes() const = 0;  // M, all ranks together
  virtual int first() const = 0;  // global index of this process's first node
  virtual int local() const = 0;  // nodes held here: rows of every block
  // One gossip round on the local rows of `in` (any number of columns): out = (W in)_local.
  virtual void mix(const Matrix& in, Matrix& out) = 0;
  // All M rows of a block, in node order, on every process (metrics only: not a counted round).
  virtual const Matrix& gather(const Matrix& in) = 0;
  const Mixing& mixing() const { return mixing_; }
  std::int64_t rounds() const { return rounds_; }
  std::int64_t floats_sent() const { return floats_sent_; }

 protected:
  explicit Network(Mixing m) : mixing_(std::move(m)) {}
  // Rows [first, first + local) of W X, with the full X's rows looked up through `row(j)`.
  template <class RowOf>
  void combine(const RowOf& row, Matrix& out) const {
    for (int i = 0; i < local(); ++i) {
      const int k = first() + i;
      out.row(i) = mixing_.self[k] * row(k);
      for (size_t n = 0; n < mixing_.neighbours[k].size(); ++n)
        out.row(i) += mixing_.weights[k][n] * row(mixing_.neighbours[k][n]);
    }
  }
  Mixing mixing_;
  std::int64_t rounds_ = 0, floats_sent_ = 0;
};

class SimNetwork final : public Network {
 public:
  explicit SimNetwork(Mixing m) : Network(std::move(m)) {}
  int nodes() const override { return mixing_.nodes; }
  int first() const override { return 0; }
  int local() const override { return mixing_.nodes; }
  void mix(const Matrix& in, Matrix& out) override;
  const Matrix& gather(const Matrix& in) override { return in; }
};

// The `comm` back end (comm_network.cpp): this rank's M / P nodes of a run over `comm`'s P ranks. Throws
// nexp::ConfigError when P does not divide M.
std::unique_ptr<Network> make_comm_network(Mixing m, nexp::Comm& comm);

}  // namespace dsminimax
