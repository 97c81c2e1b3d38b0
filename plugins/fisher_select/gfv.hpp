#pragma once
// The Gated Fisher Volume: the score of a candidate's update and its batch extension.
//
// Notation (the paper's symbols where the abstract names them; equation tags (G1)-(G7) are nexp's, the
// paper's own numbering is not public). A network whose last layer is linear, logits = W h~ with
// h~ = [h; 1] (bias folded in), C classes, H features, softmax probabilities p.
//
//   (G1) update     g_i = (p_i - e_{y_i}) (x) h~_i                   last-layer cross-entropy gradient,
//                   exact (vec of the C x (H+1) matrix, row-major); optionally projected, g_i <- P^T g_i
//                   with a fixed Gaussian P [C(H+1), D], entries N(0, 1/D) (Johnson-Lindenstrauss)
//   (G2) Fisher     F_i = E_{y ~ p_i}[g_iy g_iy^T] = Q_i^T (diag p_i - p_i p_i^T) Q_i,  Q_i[c] = P_c^T h~_i
//                   (the model's Fisher, labels drawn from the model, in closed form); the running
//                   estimate F_t = (1 - rho) F_{t-1} + rho mean_i F_i, used as F_t + lambda I
//   (G3) movement   s_i = log(1 + g_i^T F^-1 g_i) = log det(I + F^-1/2 g_i g_i^T F^-1/2)
//   (G4) gate       a_i = <g_i, gbar>_{F^-1} / (|g_i|_{F^-1} |gbar|_{F^-1}),  w_i = sigmoid(tau a_i),
//                   gbar the reference gradient (mean of the pool, or of a clean held-out batch)
//   (G5) volume     Phi(S) = log det(I + sum_{i in S} w_i F^-1/2 g_i g_i^T F^-1/2);
//                   Phi({i}) = log(1 + w_i g_i^T F^-1 g_i): the gate sits inside the log-det
//   (G6) greedy     gain_i(S) = log(1 + w_i z_i^T M_S^-1 z_i), M_S = I + sum_S w_j z_j z_j^T, z = L^-1 g
//                   with F = L L^T; M^-1 kept as I - sum_t e_t e_t^T (Sherman-Morrison, e_t the rows of
//                   the inverse Cholesky factor of M), O(k n D) for k picks of n
//   (G7) guarantee  for w >= 0, Phi is monotone submodular with Phi(empty) = 0, so greedy reaches
//                   (1 - 1/e) of the best k-subset (Nemhauser, Wolsey and Fisher 1978)
//
// A candidate of several supervised tokens t (a response under teacher forcing) has the sum of their
// updates, g_i = sum_t (p_t - e_{y_t}) (x) h~_t, and, the tokens' labels being independent given the
// teacher-forced inputs, the sum of their Fishers, F_i = sum_t Q_t^T (diag p_t - p_t p_t^T) Q_t; an
// image is a candidate of one token.
//
// Whitening uses the Cholesky factor L instead of the symmetric root F^1/2: z_i^T z_j is the same F^-1
// inner product and det(I + L^-1 A L^-T) = det(I + F^-1 A), so (G3)-(G6) are unchanged.
//
// All tensors are float64 on the CPU. Shapes: probs [n, C], labels [n] int64, h [n, H],
// projection [C(H+1), D], q [n, C, D], gradients and whitened updates [n, D].
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace fisher_select {

// h~ = [h; 1]: [n, H] -> [n, H+1].
at::Tensor with_bias(const at::Tensor& h);

// (G1) the exact last-layer gradients, unprojected: [n, C(H+1)].
at::Tensor last_layer_gradients(const at::Tensor& probs, const at::Tensor& labels, const at::Tensor& h);

// A fixed Gaussian projection [C(H+1), D], entries N(0, 1/D); D = 0 gives the identity (no projection).
at::Tensor gaussian_projection(std::int64_t classes, std::int64_t features, std::int64_t dim, std::uint64_t seed);

// Q_i[c] = P_c^T h~_i, P_c the rows of P that multiply class c: [n, C, D]. The projected gradient for
// label y is Q_i^T (p_i - e_y), so every projected quantity below is computed from q without forming
// the C(H+1)-wide gradients.
at::Tensor class_embeddings(const at::Tensor& h, const at::Tensor& projection, std::int64_t classes);

// (G1) projected: Q_i^T (p_i - e_{y_i}): [n, D].
at::Tensor projected_gradients(const at::Tensor& q, const at::Tensor& probs, const at::Tensor& labels);

// Rows of x [T, ...] summed into the n candidates that own them (owner [T] in [0, n)): [n, ...].
at::Tensor per_candidate(const at::Tensor& x, const at::Tensor& owner, std::int64_t n);

// (G2) the mean of the closed-form per-sample Fisher over the batch: [D, D].
at::Tensor model_fisher(const at::Tensor& q, const at::Tensor& probs);

// (G2) the running estimate. The first update sets F to the batch Fisher.
class FisherEma {
 public:
  FisherEma(double rho, double lambda) : rho_(rho), lambda_(lambda) {}
  void update(const at::Tensor& batch_fisher);
  bool empty() const { return !fisher_.defined(); }
  at::Tensor regularised() const;  // F + lambda I
  const at::Tensor& fisher() const { return fisher_; }
  void set(const at::Tensor& f) { fisher_ = f; }

 private:
  double rho_, lambda_;
  at::Tensor fisher_;
};

// z = L^-1 g for F = L L^T: rows of g [n, D] whitened by the positive definite F [D, D].
at::Tensor whiten(const at::Tensor& g, const at::Tensor& f);

// (G4) the alignment a_i = cos(z_i, zbar) of whitened updates with a whitened reference [D], and the gate.
at::Tensor alignment(const at::Tensor& z, const at::Tensor& zbar);
at::Tensor descent_gate(const at::Tensor& a, double tau);

// (G3) with the gate: log(1 + w_i |z_i|^2), the singleton value of (G5).
at::Tensor gated_scores(const at::Tensor& z, const at::Tensor& w);

// (G5) Phi(S) by a direct D x D log-determinant (the reference the greedy is tested against).
double gated_fisher_volume(const at::Tensor& z, const at::Tensor& w, const std::vector<std::int64_t>& subset);

// (G6) greedy maximisation of (G5): k distinct indices in pick order, and the gain of each pick.
struct Greedy {
  std::vector<std::int64_t> picked;
  std::vector<double> gains;  // gains[t] = Phi(first t+1 picks) - Phi(first t picks)
};
Greedy greedy_volume(const at::Tensor& z, const at::Tensor& w, std::int64_t k);

// The effective rank of the rows of x (Roy and Vetterli 2007): exp of the entropy of the normalised
// singular values. 1 for rows on one line, min(n, D) for orthogonal rows of equal norm.
double effective_rank(const at::Tensor& x);

}  // namespace fisher_select
