#pragma once
// The selectors: which k of the n candidates of a step get trained on. Each sees one forward pass over
// the candidates (Pool) and never the corruption flags.
//
//   gfv           greedy Gated Fisher Volume (gfv.hpp (G1)-(G6)): whitened, gated, batch log-det
//   gfv_nowhiten  the same with F = I (raw Gram of the projected updates)
//   gfv_nogate    the same with w = 1 (the ungated Fisher volume)
//   gated_topk    the k best per-sample gated scores log(1 + w_i |z_i|^2) (G3): no batch term
//   uniform       k of n uniformly without replacement
//   loss          the k largest losses (Loshchilov and Hutter 2015; deterministic top-k, as in
//                 Selective-Backprop's limit)
//   gradnorm      the k largest last-layer gradient norms |sum_t (p_t - e_y_t) (x) h~_t|, |p - e_y| |h~| for an
//                 image (Katharopoulos and Fleuret 2018's upper bound, exact for the last layer; top-k rather
//                 than importance sampling)
//   entropy       the k largest predictive entropies
//   margin        the k smallest margins between the two most probable classes
//   rholoss       the k largest reducible losses, loss - irreducible loss of a model trained on the
//                 held-out split (Mindermann et al. 2022)
//   badge         k-means++ seeding on gradient embeddings with the predicted label (Ash et al. 2020)
//   greats        greedy first-order validation gain with the second-order interaction term,
//                 eta <g_i, g_val> - eta^2 <g_i, sum_S g_j> (Wang et al. 2024, Hessian taken as I)
#include <ATen/ATen.h>

#include <nexp/random.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fisher_select {

enum class Selector { Gfv, GfvNoWhiten, GfvNoGate, GatedTopk, Uniform, Loss, GradNorm, Entropy, Margin, RhoLoss, Badge, Greats };

const std::vector<std::pair<std::string, Selector>>& selector_names();
const std::string& selector_name(Selector s);
bool uses_fisher(Selector s);           // whitens by the running Fisher (its upkeep counts in select_ms)
bool uses_reference(Selector s);        // reads Pool::reference
bool needs_irreducible_loss(Selector s);

// What one forward pass over the n candidates gives (float64), per supervised token: one per image,
// the response tokens of an SFT pair. Per-candidate quantities sum over the candidate's tokens (the
// loss, the gradient) or average them (entropy, margin).
struct Pool {
  at::Tensor probs;      // [T, C]
  at::Tensor labels;     // [T], the observed labels
  at::Tensor q;          // [T, C, D] class embeddings (gfv.hpp)
  at::Tensor h;          // [T, H] features under the last layer
  at::Tensor owner;      // [T] the candidate of each token, in [0, n)
  std::int64_t n = 0;    // candidates
  at::Tensor reference;  // [D] the projected reference gradient gbar (G4); greats: the held-out mean
  at::Tensor irreducible_loss;  // [n] (rholoss only)
};

// The candidates' projected last-layer gradients (G1) at the given token labels: [n, D].
at::Tensor candidate_gradients(const Pool& pool, const at::Tensor& labels);

struct SelectorSettings {
  double tau = 10;    // gate sharpness (G4)
  double eta = 0.05;  // greats' step size
};

struct Selection {
  std::vector<std::int64_t> picked;  // k distinct indices into the pool
  at::Tensor gate;                   // [n] w_i for the gated selectors, undefined otherwise
};

// `fisher` is the regularised running Fisher F + lambda I [D, D] (read by the selectors that whiten).
Selection select(Selector s, const Pool& pool, const at::Tensor& fisher, std::int64_t k, const SelectorSettings& settings,
                 nexp::Random& rng);

// The k largest entries of a score vector, as indices.
std::vector<std::int64_t> top_k(const at::Tensor& scores, std::int64_t k);
// k-means++ seeding (Arthur and Vassilvitskii 2007): the largest-norm row first, then D^2 sampling.
std::vector<std::int64_t> kmeans_pp(const at::Tensor& x, std::int64_t k, nexp::Random& rng);
// GREATS' greedy: k picks maximising eta <g_i, g_val> - eta^2 <g_i, sum_S g_j>.
std::vector<std::int64_t> greats_greedy(const at::Tensor& g, const at::Tensor& g_val, std::int64_t k, double eta);
// Per-token cross-entropy of probs [T, C] at labels [T].
at::Tensor cross_entropy(const at::Tensor& probs, const at::Tensor& labels);

}  // namespace fisher_select
