#include "model.hpp"

#include <torch/torch.h>

namespace hellinger_sg {

namespace nn = torch::nn;

namespace {

nn::Sequential mlp(std::vector<std::int64_t> widths, bool last_relu = false) {
  nn::Sequential s;
  for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
    s->push_back(nn::Linear(widths[k], widths[k + 1]));
    if (k + 2 < widths.size() || last_relu) s->push_back(nn::ReLU());
  }
  return s;
}

// Mean of per-edge messages at each node ([E, D] scattered to [N, D]); nodes without edges get 0.
at::Tensor mean_at_nodes(const at::Tensor& to_subject, const at::Tensor& to_object, const at::Tensor& edges,
                         std::int64_t n) {
  at::Tensor sum = at::zeros({n, to_subject.size(1)}, to_subject.options());
  at::Tensor count = at::zeros({n, 1}, to_subject.options());
  if (edges.size(0) == 0) return sum;
  const at::Tensor s = edges.select(1, 0), o = edges.select(1, 1);
  sum = sum.index_add(0, s, to_subject).index_add(0, o, to_object);
  const at::Tensor ones = at::ones({edges.size(0), 1}, to_subject.options());
  count = count.index_add(0, s, ones).index_add(0, o, ones);
  return sum / count.clamp_min(1);
}

}  // namespace

Batch make_batch(const std::vector<Scene>& scenes, const std::vector<std::size_t>& which, int num_predicates) {
  std::int64_t n = 0, e = 0;
  for (auto k : which) n += scenes[k].nodes(), e += scenes[k].num_edges();
  Batch b;
  b.scenes = static_cast<std::int64_t>(which.size());
  b.points = at::empty({n, kPoints, 3}, at::kFloat);
  b.edges = at::empty({e, 2}, at::kLong);
  b.classes = at::empty({n}, at::kLong);
  b.scene = at::empty({n}, at::kLong);
  b.boxes = at::empty({n, 6}, at::kFloat);
  b.labels = at::zeros({e, num_predicates}, at::kFloat);
  b.clean = at::zeros({e, num_predicates}, at::kFloat);
  float* pts = b.points.data_ptr<float>();
  auto* ed = b.edges.data_ptr<std::int64_t>();
  auto* cl = b.classes.data_ptr<std::int64_t>();
  auto* sc = b.scene.data_ptr<std::int64_t>();
  float* bx = b.boxes.data_ptr<float>();
  float* lb = b.labels.data_ptr<float>();
  float* cn = b.clean.data_ptr<float>();
  std::int64_t node = 0, edge = 0, scene_index = 0;
  for (auto k : which) {
    const Scene& s = scenes[k];
    std::copy(s.points.begin(), s.points.end(), pts + node * kPoints * 3);
    for (int i = 0; i < s.nodes(); ++i) {
      cl[node + i] = s.classes[i], sc[node + i] = scene_index;
      for (int a = 0; a < 3; ++a)
        bx[(node + i) * 6 + a] = static_cast<float>(s.boxes[i].center[a]),
                         bx[(node + i) * 6 + 3 + a] = static_cast<float>(s.boxes[i].size[a]);
    }
    for (int j = 0; j < s.num_edges(); ++j, ++edge) {
      ed[edge * 2] = node + s.edges[j][0], ed[edge * 2 + 1] = node + s.edges[j][1];
      for (int r = 0; r < num_predicates; ++r) {
        lb[edge * num_predicates + r] = static_cast<float>(s.labels[j] >> r & 1u);
        cn[edge * num_predicates + r] = static_cast<float>(s.clean[j] >> r & 1u);
      }
    }
    node += s.nodes(), ++scene_index;
  }
  return b;
}

at::Tensor edge_descriptor(const at::Tensor& points, const at::Tensor& edges) {
  const at::Tensor mu = points.mean(1), sigma = points.std(1);
  const at::Tensor extent = std::get<0>(points.max(1)) - std::get<0>(points.min(1));
  const at::Tensor size = extent.clamp_min(1e-3);
  const at::Tensor longest = std::get<0>(size.max(1)), volume = size.prod(1);
  const at::Tensor s = edges.select(1, 0), o = edges.select(1, 1);
  auto diff = [&](const at::Tensor& x) { return x.index_select(0, s) - x.index_select(0, o); };
  return at::cat({diff(mu), diff(sigma), diff(extent), diff(longest.log()).unsqueeze(1), diff(volume.log()).unsqueeze(1)},
                 1);
}

TripletGcnImpl::TripletGcnImpl(std::int64_t nd, std::int64_t ed, std::int64_t hidden) : node_dim(nd), edge_dim(ed) {
  message = register_module("message", mlp({2 * nd + ed, hidden, 2 * nd + ed}, true));
  update = register_module("update", mlp({nd, hidden, nd}));
}

std::pair<at::Tensor, at::Tensor> TripletGcnImpl::forward(const at::Tensor& h, const at::Tensor& e,
                                                          const at::Tensor& edges) {
  if (edges.size(0) == 0) return {h, e};
  const at::Tensor t = message->forward(
      at::cat({h.index_select(0, edges.select(1, 0)), e, h.index_select(0, edges.select(1, 1))}, 1));
  const at::Tensor to_s = t.slice(1, 0, node_dim), e_new = t.slice(1, node_dim, node_dim + edge_dim),
                   to_o = t.slice(1, node_dim + edge_dim);
  return {h + update->forward(mean_at_nodes(to_s, to_o, edges, h.size(0))), e_new};
}

PredictorImpl::PredictorImpl(std::int64_t classes, std::int64_t predicates, std::int64_t width) {
  point = register_module("point", mlp({3, 32, 64, width}));
  edge = register_module("edge", mlp({11, 64, width}));
  gcn1 = register_module("gcn1", TripletGcn(width, width, 2 * width));
  gcn2 = register_module("gcn2", TripletGcn(width, width, 2 * width));
  object_head = register_module("object_head", mlp({width, width / 2, classes}));
  predicate_head = register_module("predicate_head", mlp({width, width / 2, predicates}));
}

std::pair<at::Tensor, at::Tensor> PredictorImpl::forward(const Batch& b) {
  // Centre each object in x and y; its height above the floor stays visible (as in world-frame scans).
  at::Tensor local = b.points.clone();
  local.slice(2, 0, 2) -= b.points.slice(2, 0, 2).mean(1, true);
  at::Tensor h = std::get<0>(point->forward(local).max(1));
  at::Tensor e = edge->forward(edge_descriptor(b.points, b.edges));
  std::tie(h, e) = gcn1->forward(at::relu(h), at::relu(e), b.edges);
  std::tie(h, e) = gcn2->forward(h, at::relu(e), b.edges);
  return {object_head->forward(h), predicate_head->forward(at::relu(e))};
}

LayoutGeneratorImpl::LayoutGeneratorImpl(std::int64_t classes, std::int64_t predicates, std::int64_t width) {
  embed = register_module("embed", nn::Embedding(classes, width));
  relation = register_module("relation", nn::Linear(predicates, width));
  gcn1 = register_module("gcn1", TripletGcn(width, width, 2 * width));
  gcn2 = register_module("gcn2", TripletGcn(width, width, 2 * width));
  head = register_module("head", mlp({width, width, 6}));
}

at::Tensor LayoutGeneratorImpl::forward(const at::Tensor& classes, const at::Tensor& predicates, const at::Tensor& edges) {
  at::Tensor h = embed->forward(classes), e = relation->forward(predicates);
  std::tie(h, e) = gcn1->forward(h, at::relu(e), edges);
  std::tie(h, e) = gcn2->forward(h, at::relu(e), edges);
  const at::Tensor out = head->forward(h);
  return at::cat({out.slice(1, 0, 3), out.slice(1, 3, 6).exp()}, 1);
}

}  // namespace hellinger_sg
