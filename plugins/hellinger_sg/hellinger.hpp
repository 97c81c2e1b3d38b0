#pragma once
// Contextual Hellinger Triplet Geometry: the graph-level distance between a predicted scene graph and
// its target, read from the predictor's classifier outputs. Index of the mathematics:
//
//   Probabilistic scene-graph field: node posteriors p_i over C classes (softmax head), edge posteriors
//   p_ij over R predicates (R independent Bernoullis for 3DSSG's multi-label predicates: the sigmoid
//   head; or one categorical over R).
//   Bhattacharyya coefficient   BC(p, q) = sum_k sqrt(p_k q_k);   H^2(p, q) = 1 - BC(p, q)       in [0, 1]
//   Bernoulli product           BC(p_ij, q_ij) = prod_r [sqrt(p_r q_r) + sqrt((1 - p_r)(1 - q_r))]
//   Contextual fact of edge ij  T_ij = p_i (x) p_ij (x) p_j  on  C x R x C  (x 2^R for Bernoullis)
//   Factorised triplet term     H^2(T_ij, T*_ij) = 1 - BC(p_i, q_i) BC(p_ij, q_ij) BC(p_j, q_j)
//                               O(C + R) per edge instead of O(C^2 R): triplet_terms()
//   Node term                   H^2(p_i, q_i): node_terms()
//   Graph distance              D(G, G*) = sqrt( mean_edges H^2(T_ij, T*_ij) + w mean_nodes H^2(p_i, q_i) )
//                               a metric on fields over the same graph (an l2 sum of Hellinger metrics):
//                               graph_distance()
//   With one-hot targets        H^2(T_ij, T*_ij) = 1 - sqrt(p_i[y_i] p_ij[r] p_j[y_j])  (categorical r)
//   Contextual targets          q_i, q_ij smoothed by the class hierarchy or by training predicate
//                               frequencies given (subject class, object class): context.hpp.
//
// Everything works on square roots of probabilities ("root fields"): from logits they are
// exp(log_softmax / 2) and exp(logsigmoid(+-z) / 2), finite with finite gradients everywhere, which the
// square root of a probability is not at 0.
#include <ATen/core/Tensor.h>

#include <vector>

namespace hellinger_sg {

enum class PredicateModel { Bernoulli, Categorical };

struct RootField {
  at::Tensor node;      // [N, C]  sqrt p_i
  at::Tensor on;        // [E, R]  sqrt p_ij,r  (Categorical: sqrt of the categorical)
  at::Tensor off;       // [E, R]  sqrt(1 - p_ij,r); undefined for Categorical
  at::Tensor edges;     // [E, 2]  long, (subject, object) node indices
  PredicateModel model = PredicateModel::Bernoulli;
};

// From the predictor's logits (differentiable, stable).
RootField root_from_logits(const at::Tensor& node_logits, const at::Tensor& predicate_logits, const at::Tensor& edges,
                           PredicateModel model = PredicateModel::Bernoulli);
// From probabilities (targets, stored fields): node [N, C] rows on the simplex, predicates [E, R] in [0, 1].
RootField root_from_probs(const at::Tensor& node_probs, const at::Tensor& predicate_probs, const at::Tensor& edges,
                          PredicateModel model = PredicateModel::Bernoulli);

at::Tensor node_bc(const RootField& p, const RootField& q);       // [N]
at::Tensor predicate_bc(const RootField& p, const RootField& q);  // [E]
at::Tensor node_terms(const RootField& p, const RootField& q);    // [N] H^2(p_i, q_i)
at::Tensor triplet_terms(const RootField& p, const RootField& q);  // [E] 1 - BC_i BC_ij BC_j

struct GraphDistance {
  at::Tensor node_term;     // mean_i H^2(p_i, q_i)            (0-dim)
  at::Tensor triplet_term;  // mean_ij H^2(T_ij, T*_ij)        (0-dim)
  at::Tensor squared;       // triplet_term + w node_term       (0-dim)
  at::Tensor distance;      // sqrt(squared)                    (0-dim)
};
// p and q must share the graph (same N, same edges). A graph without edges has triplet term 0.
GraphDistance graph_distance(const RootField& p, const RootField& q, double node_weight);

// ---------------------------------------------------------------- contextual targets
// `none`: one-hot classes and the 0/1 predicate labels. `hierarchy`: the class target keeps 1 - eps on
// the true class and spreads eps over its siblings in the two-level hierarchy (a class without siblings
// stays one-hot). `cooccurrence`: each predicate target becomes (1 - eps) y_r + eps P(r | subject class,
// object class), the frequency on training edges (add-one smoothed towards the overall frequency).
// `both`: hierarchy for classes, co-occurrence for predicates.
enum class Context { None, Hierarchy, Cooccurrence, Both };

// [C, C]: row y is the class target of a node of true class y.
at::Tensor hierarchy_kernel(const std::vector<int>& group_of_class, double eps, bool smooth);
// [C, C, R]: P(r | c_s, c_o) from the training edges' (subject, object, label bits).
at::Tensor cooccurrence_prior(const at::Tensor& subject_class, const at::Tensor& object_class, const at::Tensor& labels,
                              std::int64_t num_classes);
// The target field of one batch: class labels [N] long, predicate labels [E, R] float (0/1).
RootField contextual_targets(const at::Tensor& classes, const at::Tensor& labels, const at::Tensor& edges,
                             const at::Tensor& kernel, const at::Tensor& prior, double eps, Context context);

// The same triplet term with T_ij and T*_ij materialised (C x R x C, or C x 2^R x C for Bernoullis):
// the O(C^2 R) reference of tests and benchmarks. Edges are processed in chunks of `chunk`.
at::Tensor triplet_terms_materialised(const RootField& p, const RootField& q, std::int64_t chunk = 256);

}  // namespace hellinger_sg
