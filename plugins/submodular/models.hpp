#pragma once
// Neural set functions in LibTorch, float64. Every model maps a batch of sets, given as 0/1 masks over a
// fixed ground set of N items with features X [N, d], to values [B]. Constrained models are monotone
// (alpha-)submodular for every value of their parameters, by construction:
//
// pairwise (the paper's network, Sec. 4, as nexp reads it)
//   item maps  u_h(z) = softplus(MLP_h(z)) in R^r_+,  rho_h(z) = softplus(MLP'_h(z)) >= 0
//   balance    a_h(z) = rho_h(z) + log(1 + sqrt(kappa) ||u_h(z)||) / kappa          (condition B')
//   pairwise   G_h(S) = sum_{i in S} a_h(z_i) + sum_{i<j in S} <u_h(z_i), u_h(z_j)>  (monotone supermodular)
//              computed as 1'a_S + (||sum_S u||^2 - sum_S ||u||^2) / 2
//   layer 1    F_1(S) = sum_h w_1h phi_1h(G_1h(S))                 (phi with relative rate >= kappa: Thm. 1)
//   layer k    F_k(S) = sum_h w_kh psi_kh(lambda_kh F_{k-1}(S) + phi_kh(G_kh(S)))   (psi concave increasing)
//   output     F(S) = sum_k omega_k F_k(S), all weights softplus >= 0
//   phi (learned)  phi(y) = sum_m c_m (1 - exp(-r_m y)) / r_m,  r_m = kappa + softplus(beta_m), c_m >= 0:
//                  phi' = sum c_m exp(-r_m y) has -phi''/phi' >= min r_m >= kappa  (fixed: one term, r = kappa)
//   psi            the same family with r_m = softplus(beta_m) (no rate floor) plus a linear term.
// pairwise_alpha: F(S) = F_pairwise(S) + G(S), G pairwise with a_e = alpha/(1-alpha) B_e + rho_e,
//   B_e = sum_{j != e} b_ej over the ground set: alpha-submodular with the stated alpha (set_functions.hpp).
// dsf (Bilmes and Bai 2017): F(S) = w' log1p(W_2 log1p(W_1 sum_{i in S} m(z_i))), m, W, w >= 0.
// flexsubnet (De and Chakrabarti 2022): F^k(S) = phi_k(lambda W_k F^{k-1}(S) + (1 - lambda) m_k(S)),
//   F(S) = w' F^K(S); phi_k learned as the integral of a positive decreasing network
//   h(t) = c_0 + sum_j c_j sigmoid(b_j - w_j t) (c, w >= 0), integrated in closed form
//   (softplus(b_j) - softplus(b_j - w_j y)) / w_j rather than by quadrature (see README, deviations).
// mixture: w_1 FL_learned(S) + w_2 sum_c min(sum_{i in S} C_ic, 1) + w_3 sum_{i in S} m_i (shells).
// deepsets (Zaheer et al. 2017): rho(sum_{i in S} phi(z_i)); no guarantee.
// set_transformer (Lee et al. 2019): one masked self-attention block and attention pooling (PMA) over
//   the set's items plus a learned always-present token (so the empty set has a value); no guarantee.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <string>

#include <nexp/options.hpp>

namespace submodular {

enum class ModelKind { Pairwise, PairwiseAlpha, Dsf, FlexSubNet, Mixture, DeepSets, SetTransformer };
const char* model_name(ModelKind kind);
bool is_constrained(ModelKind kind);

struct ModelOptions {
  int hidden = 32;    // width of the item MLPs
  int rank = 8;       // dimension r of u (pairwise) and of the other item embeddings
  int heads = 4;      // parallel pairwise terms (or units) per layer
  int layers = 2;     // pairwise cross layers, DSF / FLEXSUBNET depth
  double kappa = 1.0;  // rate floor of phi (pairwise)
  bool learn_phi = true;  // pairwise: learned rate-controlled phi, else the fixed phi_kappa
  int phi_terms = 4;   // terms of a learned concave function
  double alpha = 0.5;  // pairwise_alpha: the guaranteed alpha
  static void declare(nexp::Options<ModelOptions>& o);
};

class SetModel : public torch::nn::Module {
 public:
  SetModel();
  // mask: [B, N] float64 0/1 over the ground set; returns [B]: exp(s) raw(mask), s a learned output scale
  // (a positive factor keeps every guarantee).
  at::Tensor forward(const at::Tensor& mask);
  // Sets s so that the mean |F| on these sets equals the mean |y| (every model starts at the targets' scale).
  void calibrate(const at::Tensor& masks, const at::Tensor& y);

 protected:
  virtual at::Tensor raw(const at::Tensor& mask) = 0;

 private:
  at::Tensor log_scale_;
};

std::shared_ptr<SetModel> make_model(ModelKind kind, const ModelOptions& o, const at::Tensor& features);

// Learned concave increasing functions, one per unit, of the form sum_m c_m (1 - exp(-r_m y)) / r_m (+ c_lin y),
// r_m = floor + softplus(beta_m); fixed: one term, r = floor, c = 1. Exposed for the tests.
class RateConcave : public torch::nn::Module {
 public:
  RateConcave(int units, int terms, double floor, bool linear, bool learned);
  at::Tensor forward(const at::Tensor& y);  // y [..., units] >= 0 -> [..., units]
  at::Tensor rates();

 private:
  at::Tensor beta_, c_, lin_;
  double floor_;
  bool linear_;
};

// Masks [B, N] from sets.
at::Tensor masks_of(const std::vector<std::vector<int>>& sets, int n);

}  // namespace submodular
