#pragma once
// Bases for curves on [0, 1] and the per-curve coefficients that every model of the plugin shares.
//
// Cubic B-splines (de Boor): M functions phi_1..phi_M on M - 3 equally spaced knot intervals of
// [0, 1] (clamped knot vector), sum_m phi_m(t) = 1 on [0, 1]. Roughness R_mm' = int phi_m'' phi_m''' dt and
// Gram matrices G_mm' = int phi_m psi_m' dt are computed by Gauss-Legendre quadrature on every knot
// interval (exact: the integrands are piecewise polynomials of degree <= 6 with 4 nodes, <= 7).
//
// Coefficients of curve i with its own points (t_ij, x_ij), j = 1..m_i (the paper's "basis
// coefficients computed from the observed trajectories"):
//     c_i = (Phi_i^T Phi_i + lambda R)^-1 Phi_i^T x_i,      Phi_i[j, m] = phi_m(t_ij).
// Inner products with beta = sum_m b_m phi_m: <beta, x_i> = int beta x_i dt = c_i^T G b, G the B-spline
// Gram matrix. Fourier basis (for FuncNN's weight functions and the simulator): psi_1 = 1,
// psi_2k = sqrt 2 cos(2 pi k t), psi_2k+1 = sqrt 2 sin(2 pi k t), orthonormal on [0, 1].
//
// The decompositions (LDLT, the symmetric eigensolver, the small inverses) come from nexp/linalg.hpp,
// compiled once in libnexp_core: the plugin's files include <Eigen/Core> alone (compile time).
#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace functional_reg {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;

// One observed curve: its own points t (sorted, in [0, 1]) and values x.
struct Curve {
  std::vector<double> t, x;
};

class BSplineBasis {
 public:
  explicit BSplineBasis(int size);  // size >= 4 cubic B-splines on [0, 1]
  int size() const { return size_; }
  // Row j: phi_1..phi_M (derivative order 0, 1 or 2) at t[j]; t outside [0, 1] is clamped.
  Matrix evaluate(const std::vector<double>& t, int derivative = 0) const;
  Matrix roughness() const;  // R = int phi'' phi''^T
  Matrix gram() const;       // int phi phi^T
  // int phi_m(t) f_k(t) dt for functions f_1..f_K given by `values` (t -> row of K values).
  Matrix gram_with(const std::function<Vector(double)>& values, int k) const;
  const std::vector<double>& knots() const { return knots_; }  // full clamped knot vector

 private:
  // Quadrature nodes and weights covering [0, 1] interval by interval.
  void quadrature(std::vector<double>& t, std::vector<double>& w, int subdivisions = 1) const;
  int size_;
  std::vector<double> knots_;
};

// Fourier basis psi_1..psi_K at t (row per point).
Matrix fourier(const std::vector<double>& t, int k);

// Penalised least-squares coefficients of one curve. Throws nexp::DataError naming `curve` when the
// system is singular (fewer distinct points than basis functions with lambda = 0, or < 2 points).
Vector fit_curve(const BSplineBasis& basis, const Matrix& roughness, double lambda, const std::vector<double>& t,
                 const std::vector<double>& x, const std::string& curve);

// Functional PCA in the basis (Ramsay and Silverman, ch. 8.4): with centred coefficients C (n x M)
// and Gram W, the covariance operator's eigenfunctions are phi^T u_k with
// W^1/2 (C^T C / n) W^1/2 v_k = mu_k v_k, u_k = W^-1/2 v_k. Scores s_ik = (c_i - mean)^T W u_k.
struct Fpca {
  Vector mean;         // M
  Matrix directions;   // M x K: coefficient vectors u_k of the eigenfunctions (orthonormal in L2)
  Vector eigenvalues;  // K, decreasing
  Matrix scores(const Matrix& coefficients, const Matrix& gram) const;  // n x K
};
Fpca fit_fpca(const Matrix& coefficients, const Matrix& gram, int components);

// PACE (Yao, Mueller and Wang 2005, "Functional data analysis for sparse longitudinal data"): FPC
// scores of sparse, noisy curves as conditional expectations, borrowing strength across curves.
//   1. mean mu(t): local linear smoother (Epanechnikov kernel) of all pooled (t_ij, x_ij);
//   2. covariance C(s, t): two-dimensional local linear smoother of the raw covariances
//      (x_ij - mu(t_ij)) (x_il - mu(t_il)), j != l (the diagonal j = l carries the noise variance);
//   3. noise variance sigma^2: V(t) - C(t, t) averaged over the middle half of [0, 1], V the smooth of
//      the diagonal raw terms (x_ij - mu)^2; both V and C(t, t) there by local quadratic fits (Yao et
//      al. fit the diagonal by a local quadratic across it: a local linear surface is biased on the
//      diagonal); floored at 1e-6 of the mean variance;
//   4. eigenfunctions: eigen-decomposition of C discretised on a grid with trapezoid weights W,
//      W^1/2 C W^1/2 v_k = lambda_k v_k, phi_k = W^-1/2 v_k (orthonormal in L2), positive lambda only;
//   5. scores: the best linear predictor E[xi_i | x_i] = Lambda Phi_i^T Sigma_i^-1 (x_i - mu_i), with
//      Sigma_i = Phi_i Lambda Phi_i^T + rho I, computed as (Phi_i^T Phi_i + rho Lambda^-1)^-1
//      Phi_i^T (x_i - mu_i) (Woodbury: a K x K system per curve); rho = max(sigma^2, rho_cv), rho_cv
//      chosen by leave-one-point-out prediction of the training points (fdapace's rho = "cv"; the
//      diagonal estimate alone can be near 0 with few points per curve, and the scores of a curve with
//      about K points then interpolate its noise).
// Smoothing runs on the pooled points binned to the grid (bin counts as weights: the usual speed-up,
// exact up to the bin width 1 / (grid - 1)); each bandwidth is chosen by generalised cross-validation
// over a fixed list (0.03 to 0.4 of the domain).
struct Pace {
  std::vector<double> grid;  // G equally spaced points of [0, 1]
  Vector mean;               // mu on the grid
  Matrix covariance;         // C on the grid (G x G, symmetric)
  Matrix eigenfunctions;     // G x K, orthonormal in L2 (trapezoid rule)
  Vector eigenvalues;        // K, decreasing, positive
  double noise_variance = 0;  // sigma^2 from the diagonal
  double score_noise = 0;     // rho, the noise level the scores use (>= noise_variance)
  double bandwidth_mean = 0, bandwidth_covariance = 0;  // chosen by GCV
  // E[xi | the curve's points], K scores (zeros beyond the fitted components up to `columns`).
  Vector scores(const Curve& c, std::int64_t columns) const;
};
// Fits mean, covariance, noise and up to `components` eigenfunctions from the pooled training curves.
Pace fit_pace(const std::vector<Curve>& curves, int components, int grid_points = 51);

}  // namespace functional_reg
