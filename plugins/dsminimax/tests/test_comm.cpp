// The comm back end (comm_network.cpp) against the sim back end, on ranks of a Gloo world in this
// process. Its own executable: it links LibTorch (core's Comm), which the other tests do not load.
#include <gtest/gtest.h>

#include <functional>

#include <nexp/comm.hpp>
#include <nexp/error.hpp>
#include <nexp/runtime/torch_runtime.hpp>

#include "../algorithms.hpp"
#include "../graph.hpp"
#include "../problems.hpp"

using namespace dsminimax;

namespace {

NcplSpec small_spec(int nodes, double kappa, double noise) {
  NcplSpec s;
  s.nodes = nodes, s.kappa = kappa, s.noise = noise, s.instance = 3;
  return s;
}

double max_abs(const Matrix& m) { return m.cwiseAbs().maxCoeff(); }

// Runs `body` on `n` ranks of a Gloo world in this process; an exception on any rank fails the test.
void on_ranks(int n, const std::function<void(nexp::Comm&)>& body) {
  const auto errors = nexp::run_local_ranks(n, body);
  for (int k = 0; k < n; ++k) EXPECT_EQ(errors[static_cast<size_t>(k)], "") << "rank " << k;
}

// The comm back end (M / P nodes per rank, rows sent only along edges that cross ranks) follows the
// sim back end's trajectory: every node's x to the last bit (one summation order) and xbar to 1e-12,
// on a ring and an Erdos-Renyi graph, with stochastic gradients.
TEST(DsminimaxComm, CommBackEndFollowsTheSimTrajectory) {
  const Ncpl p(small_spec(8, 30, 0.05));
  auto graph_rng = nexp::Random::stream(1, "graph");
  for (const Mixing& w : {ring_mixing(8), erdos_renyi_mixing(8, 0.4, graph_rng)})
    for (int ranks : {2, 4}) {
      const StepSizes s = ds_gda_rule(p.smoothness(), p.pl_constant(), w.spectral_gap());
      SimNetwork sim_net(w);
      Decentralized sim(p, sim_net, Algorithm::DsGda, s, 9, Vector::Ones(p.dim_x()));
      std::vector<Matrix> sim_x;
      std::vector<Vector> sim_mean;
      for (int t = 0; t < 200; ++t) sim.step(), sim_x.push_back(sim.x()), sim_mean.push_back(sim.mean_x());
      std::vector<double> worst(static_cast<size_t>(ranks), -1);
      std::vector<std::int64_t> sent(static_cast<size_t>(ranks));
      on_ranks(ranks, [&](nexp::Comm& comm) {
        auto net = make_comm_network(w, comm);
        Decentralized run(p, *net, Algorithm::DsGda, s, 9, Vector::Ones(p.dim_x()));
        double& err = worst[static_cast<size_t>(comm.rank())];
        for (int t = 0; t < 200; ++t) {
          run.step();
          const Vector xbar = run.mean_x();
          err = std::max(err, (xbar - sim_mean[static_cast<size_t>(t)]).cwiseAbs().maxCoeff());
          err = std::max(err, max_abs(run.x() - sim_x[static_cast<size_t>(t)].middleRows(net->first(), net->local())));
        }
        sent[static_cast<size_t>(comm.rank())] = net->floats_sent();
      });
      for (int r = 0; r < ranks; ++r) {
        EXPECT_GE(worst[static_cast<size_t>(r)], 0.0);
        EXPECT_LE(worst[static_cast<size_t>(r)], 1e-12) << "rank " << r << " of " << ranks;
      }
      // Ring: a block of M / P consecutive nodes has two boundary nodes, each sending one packed row of
      // 2 (dim_x + dim_y) floats per round to the one neighbouring rank across its boundary.
      if (w.neighbours[0].size() == 2) {
        for (int r = 0; r < ranks; ++r)
          EXPECT_EQ(sent[static_cast<size_t>(r)], 200 * 2 * 2 * (p.dim_x() + p.dim_y())) << "rank " << r;
      }
    }
}

TEST(DsminimaxComm, NodesNotDivisibleByRanksIsAClearError) {
  on_ranks(4, [](nexp::Comm& comm) {
    try {
      make_comm_network(ring_mixing(6), comm);
      throw std::runtime_error("no error for 6 nodes over 4 ranks");
    } catch (const nexp::ConfigError& e) {
      if (std::string(e.what()).find("multiple of distributed.processes") == std::string::npos) throw;
    }
  });
}

}  // namespace
