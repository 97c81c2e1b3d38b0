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
#include <Eigen/Dense>

#include <functional>
#include <string>
#include <vector>

namespace functional_reg {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;

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

}  // namespace functional_reg
