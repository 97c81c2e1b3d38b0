// The `comm` back end of Network (network.hpp): the M nodes spread over the ranks of a multi-process
// run, node k on rank k / (M / P). One gossip round sends, to each neighbouring rank, only the rows of
// the local nodes that have an edge to it (ctx.comm()'s per-neighbour exchange over Gloo); the metrics
// gather X from all ranks once per iteration, not counted as a round.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nexp/comm.hpp>
#include <nexp/error.hpp>

#include "network.hpp"

namespace dsminimax {

namespace {

at::Tensor rows_to_tensor(const Matrix& in, const std::vector<int>& rows) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(in.cols())}, at::kDouble);
  double* p = t.data_ptr<double>();
  for (int r : rows)
    for (Eigen::Index c = 0; c < in.cols(); ++c) *p++ = in(r, c);
  return t;
}

class CommNetwork final : public Network {
 public:
  CommNetwork(Mixing m, nexp::Comm& comm) : Network(std::move(m)), comm_(comm) {
    const int ranks = comm.size(), total = mixing_.nodes;
    if (total % ranks != 0)
      throw nexp::ConfigError(fmt::format("params.backend = comm: {} nodes cannot be split evenly over {} processes; "
                                          "choose dataset.nodes as a multiple of distributed.processes",
                                          total, ranks));
    local_ = total / ranks;
    first_ = comm.rank() * local_;
    // For each neighbouring rank: the local nodes it needs (sent) and its nodes this rank needs
    // (received), both in ascending node order, so the two ends agree on the layout.
    std::map<int, std::vector<int>> send, recv;
    for (int k = first_; k < first_ + local_; ++k)
      for (int j : mixing_.neighbours[k]) {
        const int peer = j / local_;
        if (peer == comm.rank()) continue;
        auto& s = send[peer];
        if (s.empty() || s.back() != k - first_) s.push_back(k - first_);
        recv[peer].push_back(j);
      }
    std::vector<std::vector<int>> ranks_graph(static_cast<size_t>(ranks));
    for (auto& [peer, nodes_of_peer] : recv) {
      std::sort(nodes_of_peer.begin(), nodes_of_peer.end());
      nodes_of_peer.erase(std::unique(nodes_of_peer.begin(), nodes_of_peer.end()), nodes_of_peer.end());
      ranks_graph[static_cast<size_t>(comm.rank())].push_back(peer);
      send_rows_.push_back(send[peer]);
      recv_nodes_.push_back(nodes_of_peer);
    }
    // The graph of ranks is symmetric (W is); each rank fills only its own list, which is all exchange reads.
    peers_ = nexp::Graph{std::move(ranks_graph)};
    for (int i = 0; i < local_; ++i) local_rows_.push_back(i);
  }
  int nodes() const override { return mixing_.nodes; }
  int first() const override { return first_; }
  int local() const override { return local_; }

  void mix(const Matrix& in, Matrix& out) override {
    std::vector<at::Tensor> to, from;
    for (size_t i = 0; i < send_rows_.size(); ++i) {
      to.push_back(rows_to_tensor(in, send_rows_[i]));
      from.push_back(at::empty({static_cast<std::int64_t>(recv_nodes_[i].size()), static_cast<std::int64_t>(in.cols())}, at::kDouble));
      floats_sent_ += static_cast<std::int64_t>(send_rows_[i].size()) * in.cols();
    }
    comm_.exchange(peers_, to, from);
    halo_.resize(static_cast<Eigen::Index>(mixing_.nodes), in.cols());  // rows of other ranks' nodes, by node
    for (size_t i = 0; i < recv_nodes_.size(); ++i) {
      const double* p = from[i].data_ptr<double>();
      for (int j : recv_nodes_[i])
        for (Eigen::Index c = 0; c < in.cols(); ++c) halo_(j, c) = *p++;
    }
    out.resize(in.rows(), in.cols());
    const Matrix& halo = halo_;
    combine(
        [&](int j) {
          const int i = j - first_;
          return i >= 0 && i < local_ ? in.row(i) : halo.row(j);
        },
        out);
    ++rounds_;
  }

  const Matrix& gather(const Matrix& in) override {
    gathered_.resize(mixing_.nodes, in.cols());
    Eigen::Index k = 0;
    for (const at::Tensor& part : comm_.all_gather(rows_to_tensor(in, local_rows_))) {
      const double* p = part.data_ptr<double>();
      for (int i = 0; i < local_; ++i, ++k)
        for (Eigen::Index c = 0; c < in.cols(); ++c) gathered_(k, c) = *p++;
    }
    return gathered_;
  }

 private:
  nexp::Comm& comm_;
  int first_ = 0, local_ = 0;
  nexp::Graph peers_;
  std::vector<std::vector<int>> send_rows_;   // per neighbouring rank: local row indices sent
  std::vector<std::vector<int>> recv_nodes_;  // per neighbouring rank: global nodes received
  std::vector<int> local_rows_;               // 0, 1, ..., local - 1
  Matrix halo_, gathered_;
};

}  // namespace

std::unique_ptr<Network> make_comm_network(Mixing m, nexp::Comm& comm) {
  return std::make_unique<CommNetwork>(std::move(m), comm);
}

}  // namespace dsminimax
