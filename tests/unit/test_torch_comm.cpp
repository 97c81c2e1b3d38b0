// core/src/torch/comm.cpp (libnexp_torch): the one-process world, and Gloo between ranks on threads of
// this process (a c10d FileStore in a scratch folder), each collective against its closed form.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <chrono>
#include <functional>
#include <thread>

#include "nexp/comm.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/torch_runtime.hpp"

using namespace nexp;

namespace {

// Runs `body` on `n` ranks, one thread each; an exception on any rank fails the test.
void on_ranks(int n, const std::function<void(Comm&)>& body, double timeout = 30) {
  const auto errors = run_local_ranks(n, body, timeout);
  for (int k = 0; k < n; ++k) EXPECT_EQ(errors[static_cast<size_t>(k)], "") << "rank " << k;
}

at::Tensor filled(double v, int len = 4) { return at::full({len}, v, at::kDouble); }

TEST(TorchComm, OneProcessWorldIsTheIdentity) {
  auto comm = require_torch_runtime().make_comm(CommSetup{});
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  at::Tensor t = filled(3);
  comm->all_reduce(t, ReduceOp::Avg);
  comm->broadcast(t, 0);
  EXPECT_TRUE(at::equal(t, filled(3)));
  EXPECT_TRUE(at::equal(comm->all_gather(t).at(0), t));
  EXPECT_TRUE(comm->any(true));
  EXPECT_TRUE(comm->exchange(Graph::ring(1), t).empty());
  std::vector<at::Tensor> none;
  comm->exchange(Graph::ring(1), none, none);
  std::vector<at::Tensor> one{t};
  EXPECT_THROW(comm->exchange(Graph::ring(1), one, none), Error);
  EXPECT_THROW(comm->send(t, 1), Error);
  EXPECT_THROW(comm->broadcast(t, 1), Error);
}

TEST(TorchComm, CollectivesOnThreeRanks) {
  on_ranks(3, [](Comm& c) {
    const double mine = c.rank() + 1;
    const std::pair<ReduceOp, double> cases[] = {{ReduceOp::Sum, 6}, {ReduceOp::Min, 1}, {ReduceOp::Max, 3}, {ReduceOp::Avg, 2}};
    for (const auto& [op, want] : cases) {
      at::Tensor t = filled(mine);
      c.all_reduce(t, op);
      if (!at::equal(t, filled(want))) throw Error("all_reduce");
    }
    at::Tensor strided = at::arange(8, at::kDouble).reshape({2, 4}).t() * mine;  // not contiguous
    c.all_reduce(strided);
    if (!at::equal(strided, at::arange(8, at::kDouble).reshape({2, 4}).t() * 6)) throw Error("strided all_reduce");
    at::Tensor b = filled(mine);
    c.broadcast(b, 2);
    if (!at::equal(b, filled(3))) throw Error("broadcast");
    const auto all = c.all_gather(filled(mine, 2));
    for (int r = 0; r < 3; ++r)
      if (!at::equal(all.at(static_cast<size_t>(r)), filled(r + 1, 2))) throw Error("all_gather");
    if (c.any(c.rank() == 1) != true || c.any(false) != false) throw Error("any");
    c.barrier();
  });
}

TEST(TorchComm, PointToPointAndNeighbourExchange) {
  on_ranks(4, [](Comm& c) {
    const int k = c.rank();
    if (k == 0) c.send(filled(42), 3, 5);
    if (k == 3) {
      at::Tensor got = filled(0);
      c.recv(got, 0, 5);
      if (!at::equal(got, filled(42))) throw Error("send/recv");
    }
    for (const Graph& g : {Graph::ring(4), Graph::torus(2, 2), Graph::adjacency({{1, 2, 3}, {0}, {0}, {0}})}) {
      const auto got = c.exchange(g, filled(k + 1));
      const auto& peers = g.neighbours[static_cast<size_t>(k)];
      if (got.size() != peers.size()) throw Error("exchange size");
      for (size_t i = 0; i < peers.size(); ++i)
        if (!at::equal(got[i], filled(peers[i] + 1))) throw Error("exchange values");
      // One tensor per neighbour, of a length set by the pair: k sends 10 k + peer, (k + peer + 1) long.
      std::vector<at::Tensor> to, from;
      for (int p : peers) {
        to.push_back(filled(10 * k + p, k + p + 1));
        from.push_back(filled(0, k + p + 1));
      }
      c.exchange(g, to, from);
      for (size_t i = 0; i < peers.size(); ++i)
        if (!at::equal(from[i], filled(10 * peers[i] + k, k + peers[i] + 1))) throw Error("per-neighbour exchange");
    }
  });
}

TEST(TorchComm, ACollectiveAPeerNeverJoinsTimesOut) {
  double waited = -1;
  std::string error;
  on_ranks(
      2,
      [&](Comm& c) {
        if (c.rank() == 1) return std::this_thread::sleep_for(std::chrono::seconds(3));  // never all-reduces
        const auto start = std::chrono::steady_clock::now();
        at::Tensor t = filled(1);
        try {
          c.all_reduce(t);
        } catch (const std::exception& e) {
          error = e.what();
        }
        waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      },
      /*timeout=*/0.5);
  EXPECT_NE(error, "");
  EXPECT_GE(waited, 0.4);
  EXPECT_LT(waited, 2.5);  // the timeout, not rank 1 going away after 3 s
}

}  // namespace
