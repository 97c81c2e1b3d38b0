// core/src/comm_graph.cpp: the communication graphs of nexp/comm.hpp against their definitions, and
// the duration syntax of `distributed.timeout` (core/src/experiment.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nexp/comm.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/sections.hpp"

using namespace nexp;

namespace {

void expect_symmetric_simple(const Graph& g) {
  for (int k = 0; k < g.size(); ++k)
    for (int j : g.neighbours[static_cast<size_t>(k)]) {
      EXPECT_NE(j, k);
      const auto& back = g.neighbours[static_cast<size_t>(j)];
      EXPECT_NE(std::find(back.begin(), back.end(), k), back.end()) << k << " -> " << j;
    }
}

TEST(CommGraph, RingAndTorusNeighbours) {
  const Graph r = Graph::ring(5);
  EXPECT_EQ(r.neighbours[0], (std::vector<int>{1, 4}));
  EXPECT_EQ(r.neighbours[3], (std::vector<int>{2, 4}));
  EXPECT_EQ(Graph::ring(2).neighbours[0], (std::vector<int>{1}));  // both sides are the same rank
  EXPECT_TRUE(Graph::ring(1).neighbours[0].empty());
  const Graph t = Graph::torus(3, 4);  // rank = row * 4 + col
  EXPECT_EQ(t.neighbours[5], (std::vector<int>{1, 4, 6, 9}));
  EXPECT_EQ(t.neighbours[0], (std::vector<int>{1, 3, 4, 8}));
  expect_symmetric_simple(r);
  expect_symmetric_simple(t);
}

TEST(CommGraph, RandomRegularIsRegularSimpleAndSeeded) {
  const Graph g = Graph::random_regular(10, 3, 7);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(g.degree(k), 3);
  expect_symmetric_simple(g);
  EXPECT_EQ(Graph::random_regular(10, 3, 7).neighbours, g.neighbours);
  EXPECT_NE(Graph::random_regular(10, 3, 8).neighbours, g.neighbours);
  EXPECT_THROW(Graph::random_regular(5, 3, 1), Error);  // n * d odd
  EXPECT_THROW(Graph::random_regular(4, 4, 1), Error);  // d >= n
}

TEST(CommGraph, AdjacencyIsChecked) {
  EXPECT_EQ(Graph::adjacency({{2, 1}, {0}, {0}}).neighbours[0], (std::vector<int>{1, 2}));
  EXPECT_THROW(Graph::adjacency({{1}, {}}), Error);      // not symmetric
  EXPECT_THROW(Graph::adjacency({{0}}), Error);          // a self-loop
  EXPECT_THROW(Graph::adjacency({{3}, {}, {}}), Error);  // out of range
}

TEST(CommGraph, MetropolisWeightsAreDoublyStochastic) {
  const Graph g = Graph::adjacency({{1, 2, 3}, {0}, {0, 3}, {0, 2}});  // a star with one extra edge
  const auto w = g.metropolis_weights();
  EXPECT_DOUBLE_EQ(w[0][1], 1.0 / 4);  // 1 / (1 + max(3, 1))
  EXPECT_DOUBLE_EQ(w[2][3], 1.0 / 3);  // 1 / (1 + max(2, 2))
  EXPECT_DOUBLE_EQ(w[1][1], 3.0 / 4);
  for (size_t i = 0; i < 4; ++i) {
    double row = 0, col = 0;
    for (size_t j = 0; j < 4; ++j) {
      row += w[i][j];
      col += w[j][i];
      EXPECT_DOUBLE_EQ(w[i][j], w[j][i]);
    }
    EXPECT_NEAR(row, 1, 1e-15);
    EXPECT_NEAR(col, 1, 1e-15);
  }
  EXPECT_DOUBLE_EQ(Graph::ring(6).metropolis_weights()[2][3], 1.0 / 3);
}

TEST(CommGraph, DurationsOfTheTimeout) {
  EXPECT_DOUBLE_EQ(parse_duration_seconds("60s"), 60);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("5m"), 300);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1h"), 3600);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("12.5"), 12.5);
  for (const char* bad : {"", "s", "soon", "-1s", "0", "5 m", "1d", "nan"}) EXPECT_LT(parse_duration_seconds(bad), 0) << bad;
}

}  // namespace
