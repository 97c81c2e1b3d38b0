#pragma once
// The ranks of a multi-process run and what they say to each other (a config's `distributed:` section).
//
// RunContext::comm() is the run's communicator: rank(), size(), and collectives on LibTorch tensors
// (CPU tensors with Gloo). Every rank must call a collective in the same order with tensors of the same
// shape and dtype. In a one-process run comm() is a world of size 1: collectives leave their tensor as
// it is, all_gather returns a copy, and send/recv (which have no peer) throw.
//
// A collective that waits longer than the config's `distributed.timeout` throws (the rendezvous waits
// at least 2 minutes for the last rank to start); the run then fails
// and core stops the other ranks. Implemented on c10d's ProcessGroupGloo in libnexp_torch.so.
#include <cstdint>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace at {
class Tensor;
}

namespace nexp {

enum class ReduceOp { Sum, Min, Max, Avg };

// Who talks to whom in a decentralised method: the neighbours of each rank (no self-loops).
struct NEXP_API Graph {
  std::vector<std::vector<int>> neighbours;

  int size() const { return static_cast<int>(neighbours.size()); }
  int degree(int rank) const { return static_cast<int>(neighbours.at(static_cast<size_t>(rank)).size()); }

  static Graph ring(int n);                 // k talks to k-1 and k+1 (mod n)
  static Graph torus(int rows, int cols);   // a 2-D grid wrapped at both ends; rank = row * cols + col
  // A random d-regular graph on n nodes (n * d even, d < n), drawn from `seed` (the same on every rank).
  static Graph random_regular(int n, int d, std::uint64_t seed);
  // Any undirected graph; throws Error when a list names a rank out of range, itself, or is not symmetric.
  static Graph adjacency(std::vector<std::vector<int>> neighbours);
  // The Metropolis-Hastings mixing weights W[i][j] = 1 / (1 + max(deg i, deg j)) for each edge, and
  // W[i][i] = 1 - sum of the row: symmetric and doubly stochastic, the usual gossip matrix.
  std::vector<std::vector<double>> metropolis_weights() const;
};

class NEXP_API Comm {
 public:
  virtual ~Comm();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "gloo", or "none" in a one-process run

  virtual void barrier() = 0;
  // Whether `flag` is true on any rank (a collective). Ranks agree on when to stop with it:
  // `if (comm.any(ctx.stop_requested())) { save a checkpoint; return; }`, since a stop signal reaches
  // each rank at its own moment.
  virtual bool any(bool flag) = 0;
  // In place on every rank. Avg divides the sum by size() (floating-point tensors only).
  virtual void all_reduce(at::Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  virtual void broadcast(at::Tensor& tensor, int root = 0) = 0;  // root's values on every rank
  virtual std::vector<at::Tensor> all_gather(const at::Tensor& tensor) = 0;  // one per rank, in rank order
  // Point to point; `tensor` of recv must have the sent shape and dtype. A send returns when the data
  // is handed over; pairs with the same tag match in order.
  virtual void send(const at::Tensor& tensor, int to, int tag = 0) = 0;
  virtual void recv(at::Tensor& tensor, int from, int tag = 0) = 0;
  // Sends `tensor` to each neighbour of this rank in `graph` and returns what each neighbour sent, in
  // the order of graph.neighbours[rank()]. Every rank calls it with the same graph (size() nodes).
  virtual std::vector<at::Tensor> exchange(const Graph& graph, const at::Tensor& tensor) = 0;
  // The same with a tensor of its own for each neighbour: to_each[i] goes to graph.neighbours[rank()][i],
  // and from_each[i], allocated with the shape and dtype that neighbour sends, is filled from it. All
  // sends and receives are posted at once, so no order of ranks deadlocks.
  virtual void exchange(const Graph& graph, const std::vector<at::Tensor>& to_each, std::vector<at::Tensor>& from_each) = 0;
};

}  // namespace nexp
