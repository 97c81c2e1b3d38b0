#include "hellinger.hpp"

#include <ATen/ATen.h>
#include <nexp/error.hpp>

#include <string>

namespace hellinger_sg {

namespace {

void check_same_graph(const RootField& p, const RootField& q) {
  if (p.node.sizes() != q.node.sizes() || p.on.sizes() != q.on.sizes() || p.model != q.model)
    throw nexp::Error("hellinger_sg: the two scene-graph fields differ in shape or predicate model (nodes [" +
                      std::to_string(p.node.size(0)) + ", " + std::to_string(p.node.size(1)) + "] vs [" +
                      std::to_string(q.node.size(0)) + ", " + std::to_string(q.node.size(1)) + "], edges " +
                      std::to_string(p.on.size(0)) + " vs " + std::to_string(q.on.size(0)) +
                      "); a distance needs both fields over the same nodes and edges");
}

}  // namespace

RootField root_from_logits(const at::Tensor& node_logits, const at::Tensor& predicate_logits, const at::Tensor& edges,
                           PredicateModel model) {
  RootField f;
  f.node = at::exp(0.5 * at::log_softmax(node_logits, 1));
  if (model == PredicateModel::Bernoulli) {
    f.on = at::exp(0.5 * at::log_sigmoid(predicate_logits));
    f.off = at::exp(0.5 * at::log_sigmoid(-predicate_logits));
  } else {
    f.on = at::exp(0.5 * at::log_softmax(predicate_logits, 1));
  }
  f.edges = edges;
  f.model = model;
  return f;
}

RootField root_from_probs(const at::Tensor& node_probs, const at::Tensor& predicate_probs, const at::Tensor& edges,
                          PredicateModel model) {
  RootField f;
  f.node = node_probs.clamp_min(0).sqrt();
  f.on = predicate_probs.clamp(0, 1).sqrt();
  if (model == PredicateModel::Bernoulli) f.off = (1 - predicate_probs.clamp(0, 1)).sqrt();
  f.edges = edges;
  f.model = model;
  return f;
}

at::Tensor node_bc(const RootField& p, const RootField& q) { return (p.node * q.node).sum(1); }

at::Tensor predicate_bc(const RootField& p, const RootField& q) {
  if (p.model == PredicateModel::Categorical) return (p.on * q.on).sum(1);
  return (p.on * q.on + p.off * q.off).prod(1);
}

at::Tensor node_terms(const RootField& p, const RootField& q) {
  check_same_graph(p, q);
  return 1 - node_bc(p, q);
}

at::Tensor triplet_terms(const RootField& p, const RootField& q) {
  check_same_graph(p, q);
  if (p.edges.size(0) == 0) return at::zeros({0}, p.node.options());
  const at::Tensor bc = node_bc(p, q);
  const at::Tensor s = p.edges.select(1, 0), o = p.edges.select(1, 1);
  return 1 - bc.index_select(0, s) * predicate_bc(p, q) * bc.index_select(0, o);
}

GraphDistance graph_distance(const RootField& p, const RootField& q, double node_weight) {
  GraphDistance g;
  g.node_term = p.node.size(0) ? node_terms(p, q).mean() : at::zeros({}, p.node.options());
  g.triplet_term = p.edges.size(0) ? triplet_terms(p, q).mean() : at::zeros({}, p.node.options());
  g.squared = g.triplet_term + node_weight * g.node_term;
  g.distance = g.squared.clamp_min(0).sqrt();
  return g;
}

// sqrt of the joint distribution over the predicate slot: [E, R] for a categorical, [E, 2^R] for
// independent Bernoullis (outcome bit r set: predicate r holds).
static at::Tensor predicate_joint_root(const RootField& f) {
  if (f.model == PredicateModel::Categorical) return f.on;
  const std::int64_t R = f.on.size(1);
  if (R > 16) throw nexp::Error("triplet_terms_materialised: 2^R outcomes for R = " + std::to_string(R) + " Bernoullis");
  at::Tensor joint = at::ones({f.on.size(0), 1}, f.on.options());
  for (std::int64_t r = 0; r < R; ++r) {
    // Outcomes so far [E, 2^r]; appending predicate r doubles them: bit r off, then on.
    const at::Tensor off = joint * f.off.select(1, r).unsqueeze(1), on = joint * f.on.select(1, r).unsqueeze(1);
    joint = at::cat({off, on}, 1);
  }
  return joint;
}

at::Tensor triplet_terms_materialised(const RootField& p, const RootField& q, std::int64_t chunk) {
  check_same_graph(p, q);
  const at::Tensor jp = predicate_joint_root(p), jq = predicate_joint_root(q);
  const at::Tensor s = p.edges.select(1, 0), o = p.edges.select(1, 1);
  std::vector<at::Tensor> out;
  for (std::int64_t a = 0; a < p.edges.size(0); a += chunk) {
    const std::int64_t b = std::min(p.edges.size(0), a + chunk);
    auto cube = [&](const RootField& f, const at::Tensor& j) {  // sqrt T_ij = sqrt p_i (x) sqrt p_ij (x) sqrt p_j
      const at::Tensor si = f.node.index_select(0, s.slice(0, a, b)), sj = f.node.index_select(0, o.slice(0, a, b));
      return si.unsqueeze(2).unsqueeze(3) * j.slice(0, a, b).unsqueeze(1).unsqueeze(3) * sj.unsqueeze(1).unsqueeze(2);
    };
    out.push_back(1 - (cube(p, jp) * cube(q, jq)).sum({1, 2, 3}));
  }
  return out.empty() ? at::zeros({0}, p.node.options()) : at::cat(out);
}

at::Tensor hierarchy_kernel(const std::vector<int>& group_of_class, double eps, bool smooth) {
  const auto C = static_cast<std::int64_t>(group_of_class.size());
  at::Tensor k = at::eye(C, at::kFloat);
  if (!smooth) return k;
  for (std::int64_t y = 0; y < C; ++y) {
    std::vector<std::int64_t> siblings;
    for (std::int64_t c = 0; c < C; ++c)
      if (c != y && group_of_class[c] == group_of_class[y]) siblings.push_back(c);
    if (siblings.empty()) continue;
    k[y][y] = 1 - eps;
    for (auto c : siblings) k[y][c] = eps / static_cast<double>(siblings.size());
  }
  return k;
}

at::Tensor cooccurrence_prior(const at::Tensor& subject_class, const at::Tensor& object_class, const at::Tensor& labels,
                              std::int64_t num_classes) {
  const std::int64_t R = labels.size(1);
  const at::Tensor pair = subject_class * num_classes + object_class;  // [E]
  at::Tensor positives = at::zeros({num_classes * num_classes, R}, at::kFloat);
  positives.index_add_(0, pair, labels.to(at::kFloat));
  at::Tensor edges = at::zeros({num_classes * num_classes}, at::kFloat);
  edges.index_add_(0, pair, at::ones({pair.size(0)}, at::kFloat));
  const at::Tensor overall = labels.to(at::kFloat).mean(0);  // [R]
  return ((positives + overall) / (edges.unsqueeze(1) + 1)).view({num_classes, num_classes, R});
}

RootField contextual_targets(const at::Tensor& classes, const at::Tensor& labels, const at::Tensor& edges,
                             const at::Tensor& kernel, const at::Tensor& prior, double eps, Context context) {
  const bool nodes = context == Context::Hierarchy || context == Context::Both;
  const bool predicates = context == Context::Cooccurrence || context == Context::Both;
  const std::int64_t C = kernel.size(0);
  at::Tensor q_node = nodes ? kernel.index_select(0, classes) : at::one_hot(classes, C).to(at::kFloat);
  at::Tensor q_pred = labels.to(at::kFloat);
  if (predicates && edges.size(0) > 0) {
    const at::Tensor cs = classes.index_select(0, edges.select(1, 0)), co = classes.index_select(0, edges.select(1, 1));
    q_pred = (1 - eps) * q_pred + eps * prior.view({C * C, -1}).index_select(0, cs * C + co);
  }
  return root_from_probs(q_node, q_pred, edges, PredicateModel::Bernoulli);
}

}  // namespace hellinger_sg
