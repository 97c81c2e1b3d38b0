// The barrier interior-point method of socp.hpp.
#include "socp.hpp"

#include <algorithm>
#include <cmath>

namespace stable_fairness {
namespace {

// f(x) = x^T Q x / 2 + q^T x + r  (Q empty: linear).
struct Constraint {
  Eigen::MatrixXd Q;
  Eigen::VectorXd q;
  double r = 0;
  double value(const Eigen::VectorXd& x) const { return (Q.size() ? 0.5 * x.dot(Q * x) : 0.0) + q.dot(x) + r; }
  Eigen::VectorXd grad(const Eigen::VectorXd& x) const { return Q.size() ? Eigen::VectorXd(Q * x + q) : q; }
};

struct Barrier {
  Eigen::VectorXd c, e;  // objective, equality row (e^T x = 1)
  std::vector<Constraint> f;

  Eigen::MatrixXd null_basis() const {
    const Eigen::Index n = e.size();
    Eigen::Index p = n - 1;
    while (e(p) == 0) --p;
    Eigen::MatrixXd Z = Eigen::MatrixXd::Zero(n, n - 1);
    for (Eigen::Index j = 0, col = 0; j < n; ++j) {
      if (j == p) continue;
      Z(j, col) = 1;
      if (e(j) != 0) Z(p, col) = -1;
      ++col;
    }
    return Z;
  }
  bool strictly_feasible(const Eigen::VectorXd& x) const {
    return std::all_of(f.begin(), f.end(), [&](const Constraint& k) { return k.value(x) < 0; });
  }
  double objective(const Eigen::VectorXd& x, double t) const {
    double v = t * c.dot(x);
    for (const auto& k : f) v -= std::log(-k.value(x));
    return v;
  }
  // Newton's method for min t c^T x + phi(x) s.t. e^T x = 1 from a strictly feasible x. Returns the
  // equality's multiplier of the last KKT solve; counts steps into *steps.
  double center(Eigen::VectorXd& x, double t, int max_steps, int* steps) const {
    const Eigen::Index n = x.size();
    double w = 0;
    for (int it = 0; it < max_steps; ++it) {
      Eigen::VectorXd g = t * c;
      Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
      for (const auto& k : f) {
        const double v = k.value(x);
        const Eigen::VectorXd gi = k.grad(x);
        g -= gi / v;
        H += gi * gi.transpose() / (v * v);
        if (k.Q.size()) H -= k.Q / v;
      }
      // The equality is eliminated: dx = Z dy with Z a basis of {d : e^T d = 0} whose columns are
      // e_j - e_p (e_j = 1) or e_j (e_j = 0). Solving the bordered KKT matrix directly loses e^T dx = 0 to
      // rounding once H grows like t^2.
      const Eigen::MatrixXd Z = null_basis();
      const Eigen::MatrixXd Hz = Z.transpose() * H * Z;
      const Eigen::VectorXd dx = Z * Hz.ldlt().solve(-Z.transpose() * g);
      w = -e.dot(g + H * dx) / e.squaredNorm();
      ++*steps;
      const double decrement = dx.dot(H * dx);
      if (!(decrement > 1e-9)) break;  // centred to within decrement / 2 (rounding stalls near 1e-12)
      double s = 1;
      while (!strictly_feasible(x + s * dx) && s > 1e-16) s /= 2;
      // Backtracking (Armijo) only outside the region of quadratic convergence: near the centre the
      // decrease is below the objective's rounding error at large t, and a full Newton step is taken.
      const double f0 = objective(x, t), slope = g.dot(dx);
      if (decrement > 0.25)
        while (s > 1e-16 && objective(x + s * dx, t) > f0 + 0.25 * s * slope) s /= 2;
      if (s <= 1e-16) break;
      x += s * dx;
    }
    return w;
  }
  // The central path from t = 1 until m / t < gap. Returns the final t and the multiplier.
  std::pair<double, double> path(Eigen::VectorXd& x, const SolverOptions& o, int* steps,
                                 const std::function<bool(const Eigen::VectorXd&)>& done = nullptr) const {
    double t = 1, w = 0;
    const double m = static_cast<double>(f.size());
    for (;;) {
      w = center(x, t, o.max_newton, steps);
      if (m / t < o.gap || (done && done(x))) break;
      t *= o.mu;
    }
    return {t, w};
  }
};

Constraint nonneg(Eigen::Index n, Eigen::Index k) {
  Constraint c;
  c.q = Eigen::VectorXd::Zero(n);
  c.q(k) = -1;
  return c;
}

// The program's own constraints over n >= K variables (phase I adds the slack s as variable K with
// coefficient -1).
std::vector<Constraint> program_constraints(const ConeProgram& p, Eigen::Index n, bool slack) {
  const Eigen::Index K = p.c.size();
  std::vector<Constraint> out;
  for (std::size_t j = 0; j < p.cones.size(); ++j) {
    Constraint c;
    c.Q = Eigen::MatrixXd::Zero(n, n);
    c.Q.topLeftCorner(K, K) = 2 * p.cones[j].transpose() * p.cones[j];
    c.q = Eigen::VectorXd::Zero(n);
    if (slack) c.q(K) = -1;
    c.r = -p.tau[j] * p.tau[j];
    out.push_back(c);
  }
  for (Eigen::Index i = 0; i < p.a.rows(); ++i) {
    Constraint c;
    c.q = Eigen::VectorXd::Zero(n);
    c.q.head(K) = p.a.row(i).transpose();
    if (slack) c.q(K) = -1;
    c.r = -p.b(i);
    out.push_back(c);
  }
  return out;
}

}  // namespace

ConeSolution solve_cone_program(const ConeProgram& p, const SolverOptions& o) {
  const Eigen::Index K = p.c.size();
  ConeSolution out;
  Eigen::VectorXd alpha = Eigen::VectorXd::Constant(K, 1.0 / static_cast<double>(K));
  const auto own = program_constraints(p, K, false);
  // Phase I: min s  s.t.  f_i(alpha) <= s, alpha > 0, s >= -1, 1^T alpha = 1.
  if (!own.empty()) {
    Barrier b1;
    b1.c = Eigen::VectorXd::Zero(K + 1);
    b1.c(K) = 1;
    b1.e = Eigen::VectorXd::Ones(K + 1);
    b1.e(K) = 0;
    b1.f = program_constraints(p, K + 1, true);
    for (Eigen::Index k = 0; k < K; ++k) b1.f.push_back(nonneg(K + 1, k));
    Constraint lower;  // -s - 1 <= 0
    lower.q = Eigen::VectorXd::Zero(K + 1);
    lower.q(K) = -1;
    lower.r = -1;
    b1.f.push_back(lower);
    Eigen::VectorXd x(K + 1);
    x.head(K) = alpha;
    double worst = -INFINITY;
    for (const auto& c : own) worst = std::max(worst, c.value(alpha));
    x(K) = std::max(worst, -0.5) + 1;
    b1.path(x, o, &out.newton_steps);
    out.phase1 = x(K);
    alpha = x.head(K);
    if (!(x(K) < 0) || !std::all_of(own.begin(), own.end(), [&](const Constraint& c) { return c.value(alpha) < 0; })) {
      out.feasible = false;
      out.alpha = alpha;
      return out;
    }
  }
  // Phase II.
  Barrier b2;
  b2.c = p.c;
  b2.e = Eigen::VectorXd::Ones(K);
  b2.f = own;
  for (Eigen::Index k = 0; k < K; ++k) b2.f.push_back(nonneg(K, k));
  const auto [t, w] = b2.path(alpha, o, &out.newton_steps);
  out.feasible = true;
  out.alpha = alpha;
  out.objective = p.c.dot(alpha);
  // Duals. The central path's lambda_i = -1 / (t f_i) leave a stationarity residual of order
  // sqrt(decrement) lambda (the Newton residual cannot fall below rounding once H grows like t^2), so the
  // multipliers of the active constraints (lambda_i above 1e-6) and nu are refitted by least squares on
  // c + sum_i lambda_i grad f_i + nu 1 = 0 at the returned alpha; the path's values are kept if a refitted
  // multiplier comes out negative.
  std::vector<double> lambda(b2.f.size());
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < b2.f.size(); ++i) {
    lambda[i] = -1 / (t * b2.f[i].value(alpha));
    if (lambda[i] > 1e-6) active.push_back(i);
  }
  out.nu = w / t;
  {
    Eigen::MatrixXd J(K, static_cast<Eigen::Index>(active.size()) + 1);
    Eigen::VectorXd rhs = -p.c;
    for (std::size_t i = 0, j = 0; i < b2.f.size(); ++i) {
      if (j < active.size() && active[j] == i) J.col(static_cast<Eigen::Index>(j++)) = b2.f[i].grad(alpha);
      else rhs -= lambda[i] * b2.f[i].grad(alpha);
    }
    J.col(J.cols() - 1) = Eigen::VectorXd::Ones(K);
    const Eigen::VectorXd fit = J.colPivHouseholderQr().solve(rhs);
    if (fit.head(fit.size() - 1).minCoeff() >= 0 || active.empty()) {
      for (std::size_t j = 0; j < active.size(); ++j) lambda[active[j]] = fit(static_cast<Eigen::Index>(j));
      out.nu = fit(fit.size() - 1);
    }
  }
  Eigen::VectorXd stat = p.c + out.nu * Eigen::VectorXd::Ones(K);
  out.lambda_nonneg.resize(K);
  out.lambda_linear.resize(p.a.rows());
  for (std::size_t i = 0; i < b2.f.size(); ++i) {
    const double v = b2.f[i].value(alpha);
    stat += lambda[i] * b2.f[i].grad(alpha);
    out.primal = std::max(out.primal, v);
    out.complementarity = std::max(out.complementarity, std::abs(lambda[i] * v));
    if (i < p.cones.size()) out.lambda_cone.push_back(lambda[i]);
    else if (i < own.size()) out.lambda_linear(static_cast<Eigen::Index>(i - p.cones.size())) = lambda[i];
    else out.lambda_nonneg(static_cast<Eigen::Index>(i - own.size())) = lambda[i];
  }
  out.stationarity = stat.lpNorm<Eigen::Infinity>();
  return out;
}

}  // namespace stable_fairness
