#pragma once
// Decentralized minimax problems  min_x max_y f(x, y) = (1/M) sum_k f_k(x, y), node k holding f_k.
//
// NC-PL family (dsminimax.ncpl), dx primal and dy dual coordinates:
//   f_k(x, y) = lam sum_j a x_j^2 / (1 + a x_j^2) - c_k^T x + x^T B_k^T y - 1/2 y^T A y
//   A = U diag(s) U^T, s: `rank` values log-spaced in [1/kappa, 1], the rest 0 (PL in y with constant
//   1/kappa, not strongly concave). Two couplings, both inside range(A) (so B_k x - A y stays in range(A)
//   and y's null-space part never moves):
//     range:    B_k = P C_k, P the projector on range(A), C_k Gaussian (dy x dx): every x direction sees
//               the whole spectrum of A; Phi's curvature grows with kappa
//     aligned:  B_k = U_r diag(sqrt(s)) C_k, C_k Gaussian (rank x dx): Bbar^T A^+ Bbar = Cbar^T Cbar does not
//               depend on kappa, and x directions coupled to small eigenvalues of A meet a dual curvature
//               s << the nonconvex term's negative curvature: there equal-step GDA is unstable (the
//               linearised GDA field has trace -h_x - s > 0 when h_x < -s) and only a large eta_y / eta_x
//               or smoothing restores it
//   y*(x) = A^+ Bbar x (+ the null-space part of y0)
//   Phi(x) = max_y f(x, y) = lam sum_j a x_j^2/(1 + a x_j^2) - cbar^T x + 1/2 x^T Bbar^T A^+ Bbar x
//   grad Phi(x) = lam 2 a x / (1 + a x^2)^2 - cbar + Bbar^T A^+ Bbar x     (elementwise first term)
//   Phi is bounded below iff Bbar^T A^+ Bbar is positive definite (checked when built; needs dx <= rank).
// Stochastic oracle: the exact gradient plus N(0, sigma^2 I) noise; one Sample is one noise draw, so
// a variance-reduced estimator that evaluates two points at one sample sees the same noise twice.
#include <cstdint>
#include <memory>
#include <string>

#include <Eigen/Core>
#include <nexp/random.hpp>

namespace dsminimax {

using Vector = Eigen::VectorXd;
using Matrix = Eigen::MatrixXd;

// One draw of node k's stochastic oracle (noise for NC-PL, a minibatch for logistic regression).
struct Sample {
  Vector noise_x, noise_y;
  std::vector<int> batch;
};

class Problem {
 public:
  virtual ~Problem() = default;
  virtual int nodes() const = 0;
  virtual int dim_x() const = 0;
  virtual int dim_y() const = 0;
  virtual std::string describe() const = 0;
  // Constants the theory rules need, computed from the instance data (not from a solution):
  // L, the Lipschitz constant of grad f_k, and the PL constant mu of -f(x, .).
  virtual double smoothness() const = 0;
  virtual double pl_constant() const = 0;
  virtual bool stochastic() const = 0;
  virtual Sample draw(int node, nexp::Random& rng) const = 0;
  // grad_x f_k(x, y; sample) and grad_y f_k(x, y; sample); a null sample: the exact local gradient.
  virtual void gradient(int node, const Vector& x, const Vector& y, const Sample* sample, Vector& gx,
                        Vector& gy) const = 0;
  // What an exact local gradient costs, in stochastic oracle calls (a finite sum: its minibatches).
  virtual std::int64_t exact_gradient_cost(int /*node*/) const { return 1; }
  virtual void project_y(Vector& /*y*/) const {}
  virtual double phi(const Vector& x) const = 0;
  virtual Vector grad_phi(const Vector& x) const = 0;
  virtual Vector best_response(const Vector& x) const = 0;  // y*(x)
  // A starting point (the same on every node).
  virtual Vector initial_x(nexp::Random& rng) const = 0;
  virtual Vector initial_y() const = 0;
};

enum class Coupling { Range, Aligned };

struct NcplSpec {
  Coupling coupling_mode = Coupling::Aligned;
  int nodes = 8, dim_x = 10, dim_y = 20, rank = 15;
  double kappa = 10, lam = 0.5, a = 1.0, coupling = 1.0, heterogeneity = 0.5, noise = 0.0;
  std::uint64_t instance = 0;
};

class Ncpl : public Problem {
 public:
  explicit Ncpl(const NcplSpec& spec);
  int nodes() const override { return spec_.nodes; }
  int dim_x() const override { return spec_.dim_x; }
  int dim_y() const override { return spec_.dim_y; }
  std::string describe() const override;
  double smoothness() const override { return smoothness_; }
  double pl_constant() const override { return pl_; }
  bool stochastic() const override { return spec_.noise > 0; }
  Sample draw(int node, nexp::Random& rng) const override;
  void gradient(int node, const Vector& x, const Vector& y, const Sample* sample, Vector& gx,
                Vector& gy) const override;
  double phi(const Vector& x) const override;
  Vector grad_phi(const Vector& x) const override;
  Vector best_response(const Vector& x) const override;
  Vector initial_x(nexp::Random& rng) const override;
  Vector initial_y() const override { return Vector::Zero(spec_.dim_y); }
  const Matrix& a_matrix() const { return a_; }
  double phi_lower_bound() const { return lower_bound_; }

 private:
  NcplSpec spec_;
  Matrix a_, a_pinv_, q_;             // A, A^+, Q = Bbar^T A^+ Bbar
  std::vector<Matrix> b_;             // B_k, dy x dx
  std::vector<Vector> c_;             // c_k
  Matrix b_bar_;
  Vector c_bar_;
  double smoothness_ = 1, pl_ = 1, lower_bound_ = 0;
};

// Distributionally robust logistic regression with a nonconvex regulariser (the DM-HSGD protocol):
//   min_x max_{y in simplex} sum_i y_i l_i(x) - rho/2 ||y - 1/n||^2 + lam2 sum_j alpha x_j^2 / (1 + alpha x_j^2)
//   l_i(x) = log(1 + exp(-b_i a_i^T x)); node k holds the rows S_k and
//   f_k(x, y) = M sum_{i in S_k} y_i l_i(x) - rho/2 ||y - 1/n||^2 + reg(x), so (1/M) sum_k f_k = f.
// rho = 1 (the notes' form) puts y* on the few largest losses; rho = n keeps y* near uniform.
// f is rho-strongly concave in y (NC-SC, a case of NC-PL with mu = rho). Exact Phi: y*(x) = Proj_simplex(
// 1/n + l(x) / rho), grad Phi(x) = sum_i y*_i grad l_i(x) + reg'(x). A sample is a minibatch of `batch` local rows:
// the x-gradient and the batch's y-coordinates are scaled by |S_k| / batch (unbiased).
struct LogregData {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> a;  // n x d features, a row per sample
  Vector b;                          // labels in {-1, +1}
  std::vector<std::vector<int>> rows;  // S_k
};

class RobustLogreg : public Problem {
 public:
  RobustLogreg(LogregData data, int batch, double rho = 1, double lam2 = 1e-3, double alpha = 10);
  int nodes() const override { return static_cast<int>(d_.rows.size()); }
  int dim_x() const override { return static_cast<int>(d_.a.cols()); }
  int dim_y() const override { return static_cast<int>(d_.a.rows()); }
  std::string describe() const override;
  double smoothness() const override { return smoothness_; }
  double pl_constant() const override { return rho_; }
  bool stochastic() const override { return batch_ > 0; }
  Sample draw(int node, nexp::Random& rng) const override;
  void gradient(int node, const Vector& x, const Vector& y, const Sample* sample, Vector& gx,
                Vector& gy) const override;
  std::int64_t exact_gradient_cost(int node) const override {
    const auto rows = static_cast<std::int64_t>(d_.rows[static_cast<size_t>(node)].size());
    return batch_ > 0 ? (rows + batch_ - 1) / batch_ : 1;
  }
  void project_y(Vector& y) const override;
  double phi(const Vector& x) const override;
  Vector grad_phi(const Vector& x) const override;
  Vector best_response(const Vector& x) const override;
  Vector initial_x(nexp::Random&) const override { return Vector::Zero(dim_x()); }
  Vector initial_y() const override { return Vector::Constant(dim_y(), 1.0 / dim_y()); }

 private:
  Vector losses(const Vector& x) const;
  LogregData d_;
  int batch_;
  double rho_, lam2_, alpha_, smoothness_ = 1;
};

// Euclidean projection onto the probability simplex (sort-based, O(n log n)).
void project_simplex(Vector& y);

// The eigenvalues of a symmetric matrix, ascending (nexp::linalg::symmetric_eigen: Eigen's solver,
// compiled once in core).
Vector symmetric_eigenvalues(const Matrix& m);

}  // namespace dsminimax
