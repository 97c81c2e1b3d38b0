#pragma once
// The networks: an SGFN-style scene-graph predictor (the architecture the loss is applied to, unchanged)
// and the layout branch of a graph-conditioned scene generator (the downstream consumer of its graphs).
//
//   Batch             several scenes as one graph: points [N, 128, 3] (world coordinates), edges [E, 2]
//                     (global node indices), classes [N], labels [E, R] (0/1), clean labels [E, R], boxes
//                     [N, 6] (centre, size), scene of each node [N]; built by make_batch().
//   edge_descriptor   SGFN (Wu et al. 2021): [mu_i - mu_j, sigma_i - sigma_j, b_i - b_j, ln(l_i / l_j),
//                     ln(v_i / v_j)] from the points' centroid mu, spread sigma, extents b, longest side l
//                     and box volume v: 11 numbers per edge
//   PointNetLite      shared MLP 3-32-64-128 on points centred in x, y (height kept), max-pooled
//   TripletGcn        SGPN's triplet message passing: MLP([h_i, e_ij, h_j]) -> (m_i, e'_ij, m_j); node
//                     h_i += MLP(mean of the messages at i); edge e_ij = e'_ij
//   Predictor         PointNetLite + edge MLP + 2 TripletGcn rounds + object head (C logits) + predicate
//                     head (R logits, independent sigmoids)
//   LayoutGenerator   Graph-to-3D's layout branch without the VAE: class embedding + predicate embedding,
//                     2 TripletGcn rounds, a box head (centre, log size)
#include <torch/nn.h>

#include <cstdint>
#include <vector>

#include "rooms.hpp"

namespace hellinger_sg {

struct Batch {
  at::Tensor points, edges, classes, labels, clean, boxes, scene;
  std::int64_t scenes = 0;
};
Batch make_batch(const std::vector<Scene>& scenes, const std::vector<std::size_t>& which, int num_predicates);
at::Tensor edge_descriptor(const at::Tensor& points, const at::Tensor& edges);  // [E, 11]

struct TripletGcnImpl : torch::nn::Module {
  TripletGcnImpl(std::int64_t node_dim, std::int64_t edge_dim, std::int64_t hidden);
  // Returns (nodes, edges) after one round.
  std::pair<at::Tensor, at::Tensor> forward(const at::Tensor& h, const at::Tensor& e, const at::Tensor& edges);
  torch::nn::Sequential message{nullptr}, update{nullptr};
  std::int64_t node_dim, edge_dim;
};
TORCH_MODULE(TripletGcn);

struct PredictorImpl : torch::nn::Module {
  PredictorImpl(std::int64_t classes, std::int64_t predicates, std::int64_t width = 128);
  // (node logits [N, C], predicate logits [E, R])
  std::pair<at::Tensor, at::Tensor> forward(const Batch& b);
  torch::nn::Sequential point{nullptr}, edge{nullptr}, object_head{nullptr}, predicate_head{nullptr};
  TripletGcn gcn1{nullptr}, gcn2{nullptr};
};
TORCH_MODULE(Predictor);

struct LayoutGeneratorImpl : torch::nn::Module {
  LayoutGeneratorImpl(std::int64_t classes, std::int64_t predicates, std::int64_t width = 64);
  // classes [N] long, predicate bits [E, R] float, edges [E, 2] -> boxes [N, 6]: centre, size
  at::Tensor forward(const at::Tensor& classes, const at::Tensor& predicates, const at::Tensor& edges);
  torch::nn::Embedding embed{nullptr};
  torch::nn::Linear relation{nullptr};
  TripletGcn gcn1{nullptr}, gcn2{nullptr};
  torch::nn::Sequential head{nullptr};
};
TORCH_MODULE(LayoutGenerator);

}  // namespace hellinger_sg
