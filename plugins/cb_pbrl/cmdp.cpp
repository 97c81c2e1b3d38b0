#include "cmdp.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include <nexp/error.hpp>

#include "lp.hpp"

namespace cb_pbrl {

void Cmdp::validate() const {
  if (S < 1 || A < 1 || P.size() != static_cast<std::size_t>(S * A) || r.size() != S || c.size() != S ||
      mu0.size() != S)
    throw nexp::Error(fmt::format("CMDP: sizes do not match S = {}, A = {}", S, A));
  if (!(gamma > 0 && gamma < 1)) throw nexp::Error(fmt::format("CMDP: discount {} outside (0, 1)", gamma));
  for (std::size_t i = 0; i < P.size(); ++i) {
    double total = 0;
    for (const auto& t : P[i]) total += t.p;
    if (std::abs(total - 1.0) > 1e-9)
      throw nexp::Error(fmt::format("CMDP: transition row {} sums to {}, expected 1", i, total));
  }
}

MatrixXd policy_transition(const Cmdp& m, const MatrixXd& pi) {
  MatrixXd Ppi = MatrixXd::Zero(m.S, m.S);
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a)
      for (const auto& t : m.next(s, a)) Ppi(s, t.next) += pi(s, a) * t.p;
  return Ppi;
}

PolicyEval::PolicyEval(const Cmdp& m, const MatrixXd& pi)
    : lu_(MatrixXd::Identity(m.S, m.S) - m.gamma * policy_transition(m, pi)) {
  occupancy_ = lu_.transpose().solve(m.mu0);
}

VectorXd PolicyEval::values(const VectorXd& f) const { return lu_.solve(f); }
VectorXd PolicyEval::adjoint(const VectorXd& y) const { return lu_.transpose().solve(y); }

VectorXd soft_value(const MatrixXd& Q, double alpha) {
  VectorXd V(Q.rows());
  for (Eigen::Index s = 0; s < Q.rows(); ++s) {
    const double top = Q.row(s).maxCoeff();
    V(s) = alpha > 0 ? top + alpha * std::log((((Q.row(s).array() - top) / alpha).exp()).sum()) : top;
  }
  return V;
}

MatrixXd soft_policy(const MatrixXd& Q, double alpha) {
  MatrixXd pi = MatrixXd::Zero(Q.rows(), Q.cols());
  for (Eigen::Index s = 0; s < Q.rows(); ++s) {
    Eigen::Index best = 0;
    const double top = Q.row(s).maxCoeff(&best);
    if (alpha > 0) {
      pi.row(s) = ((Q.row(s).array() - top) / alpha).exp().matrix();
      pi.row(s) /= pi.row(s).sum();
    } else {
      pi(s, best) = 1.0;
    }
  }
  return pi;
}

namespace {

MatrixXd backup_from_values(const Cmdp& m, const VectorXd& u, const VectorXd& V) {
  MatrixXd Q(m.S, m.A);
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a) {
      double next = 0;
      for (const auto& t : m.next(s, a)) next += t.p * V(t.next);
      Q(s, a) = u(s) + m.gamma * next;
    }
  return Q;
}

// Soft (alpha > 0) or plain (alpha = 0) value of a policy: V = (I - gamma P_pi)^{-1} (u + alpha H_pi).
VectorXd policy_soft_value(const Cmdp& m, const VectorXd& u, const MatrixXd& pi, double alpha) {
  VectorXd f = u;
  if (alpha > 0)
    for (int s = 0; s < m.S; ++s)
      for (int a = 0; a < m.A; ++a)
        if (pi(s, a) > 0) f(s) -= alpha * pi(s, a) * std::log(pi(s, a));
  return PolicyEval(m, pi).values(f);
}

}  // namespace

MatrixXd soft_backup(const Cmdp& m, const VectorXd& u, const MatrixXd& Q, double alpha) {
  return backup_from_values(m, u, soft_value(Q, alpha));
}

double bellman_residual(const Cmdp& m, const VectorXd& u, const MatrixXd& Q, double alpha) {
  return (soft_backup(m, u, Q, alpha) - Q).cwiseAbs().maxCoeff();
}

MatrixXd solve_soft_q(const Cmdp& m, const VectorXd& u, double alpha, double tol, MatrixXd Q) {
  if (Q.rows() != m.S || Q.cols() != m.A) Q = MatrixXd::Zero(m.S, m.A);
  // Policy iteration converges in few steps; each is one exact linear solve.
  for (int it = 0; it < 100; ++it) {
    const MatrixXd next = backup_from_values(m, u, policy_soft_value(m, u, soft_policy(Q, alpha), alpha));
    const double change = (next - Q).cwiseAbs().maxCoeff();
    Q = next;
    if (change <= tol * (1.0 + Q.cwiseAbs().maxCoeff())) break;
  }
  // The tolerance is relative to the values' scale (a large multiplier scales u).
  const double scale = 1.0 + Q.cwiseAbs().maxCoeff();
  for (int it = 0; it < 2000 && bellman_residual(m, u, Q, alpha) > tol * scale; ++it) Q = soft_backup(m, u, Q, alpha);
  return Q;
}

namespace {

double cost_at(const Cmdp& m, const VectorXd& r, const VectorXd& c, double lam, double alpha, double tol,
               MatrixXd& Q) {
  Q = solve_soft_q(m, r - lam * c, alpha, tol, Q);
  return PolicyEval(m, soft_policy(Q, alpha)).value(c);
}

}  // namespace

LowerSolution solve_lower(const Cmdp& m, const VectorXd& r, const VectorXd& c, double d, double alpha, double tol,
                          const LowerSolution* warm) {
  LowerSolution out;
  MatrixXd Q = warm ? warm->Q : MatrixXd();
  const double qtol = tol * 1e-2;
  double lo = 0, f_lo = cost_at(m, r, c, 0.0, alpha, qtol, Q) - d;
  if (f_lo <= 0) {
    out.Q = Q;
    out.lam = 0;
  } else {
    MatrixXd Qhi = Q;
    double hi = warm && warm->lam > 0 ? 2 * warm->lam : 1.0, f_hi = cost_at(m, r, c, hi, alpha, qtol, Qhi) - d;
    while (f_hi > 0) {
      if (hi > 1e8) {  // the budget is below the least cost under c: the least-cost soft policy
        out.Q = Qhi, out.lam = hi, out.pi = soft_policy(out.Q, alpha);
        out.Jc = PolicyEval(m, out.pi).value(c);
        return out;
      }
      lo = hi, f_lo = f_hi;
      hi *= 4;
      f_hi = cost_at(m, r, c, hi, alpha, qtol, Qhi) - d;
    }
    // Illinois regula falsi, with bisection when it stalls.
    int side = 0;
    double lam = hi;
    for (int it = 0; it < 200; ++it) {
      lam = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
      if (!(lam > lo && lam < hi)) lam = 0.5 * (lo + hi);
      const double f = cost_at(m, r, c, lam, alpha, qtol, Q) - d;
      if (std::abs(f) <= tol || hi - lo < 1e-15 * (1 + hi)) break;
      if (f > 0) {
        lo = lam, f_lo = f;
        if (side == -1) f_hi *= 0.5;
        side = -1;
      } else {
        hi = lam, f_hi = f;
        if (side == 1) f_lo *= 0.5;
        side = 1;
      }
    }
    out.Q = Q;
    out.lam = lam;
  }
  out.pi = soft_policy(out.Q, alpha);
  out.Jc = PolicyEval(m, out.pi).value(c);
  return out;
}

MatrixXd mixture_occupancy(const Cmdp& m, double d) {
  auto occupancy = [&](double lam) {
    const MatrixXd pi = soft_policy(solve_soft_q(m, m.r - lam * m.c, 0.0, 1e-13), 0.0);
    const PolicyEval eval(m, pi);
    MatrixXd x = pi;
    for (int s = 0; s < m.S; ++s) x.row(s) *= eval.occupancy()(s);
    return std::pair<MatrixXd, double>(x, eval.value(m.c));
  };
  auto [x_lo, c_lo] = occupancy(0.0);
  if (c_lo <= d) return x_lo;
  double lo = 0, hi = 1.0;
  while (occupancy(hi).second > d) {
    if (hi > 1e8) throw nexp::Error(fmt::format("occupancy LP: no policy has discounted cost <= {}", d));
    lo = hi, hi *= 4;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-13 * (1 + hi); ++it) {
    const double mid = 0.5 * (lo + hi);
    (occupancy(mid).second > d ? lo : hi) = mid;
  }
  std::tie(x_lo, c_lo) = occupancy(lo);
  const auto [x_hi, c_hi] = occupancy(hi);
  const double q = c_lo > c_hi ? (d - c_hi) / (c_lo - c_hi) : 0.0;
  return q * x_lo + (1 - q) * x_hi;
}

CmdpOptimum solve_occupancy_lp(const Cmdp& m, double d) {
  const int n = m.S * m.A;
  MatrixXd A = MatrixXd::Zero(m.S + 1, n + 1);  // flow rows, then the cost row with its slack
  VectorXd b(m.S + 1), obj = VectorXd::Zero(n + 1);
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a) {
      const int j = s * m.A + a;
      A(s, j) += 1.0;
      for (const auto& t : m.next(s, a)) A(t.next, j) -= m.gamma * t.p;
      A(m.S, j) = m.c(s);
      obj(j) = m.r(s);
    }
  A(m.S, n) = 1.0;
  b.head(m.S) = m.mu0;
  b(m.S) = d;
  CmdpOptimum out;
  out.x = MatrixXd(m.S, m.A);
  try {
    const LpResult lp = simplex_max(A, b, obj);
    if (lp.status != LpResult::Status::Optimal)
      throw nexp::Error(fmt::format("occupancy LP: no policy has discounted cost <= {}", d));
    for (int s = 0; s < m.S; ++s)
      for (int a = 0; a < m.A; ++a) out.x(s, a) = std::max(0.0, lp.x(s * m.A + a));
  } catch (const nexp::Error&) {
    out.x = mixture_occupancy(m, d);  // the simplex cycled numerically on a degenerate LP
  }
  out.pi = MatrixXd::Constant(m.S, m.A, 1.0 / m.A);
  for (int s = 0; s < m.S; ++s) {
    const double total = out.x.row(s).sum();
    if (total > 1e-12) out.pi.row(s) = out.x.row(s) / total;
  }
  const PolicyEval eval(m, out.pi);
  out.Jr = eval.value(m.r);
  out.Jc = eval.value(m.c);
  return out;
}

std::string occupancy_lp_text(const Cmdp& m, double d) {
  std::string out = "\\ cb_pbrl occupancy LP\nMaximize\n obj:";
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a) out += fmt::format(" {:+.17g} x_{}_{}", m.r(s), s, a);
  out += "\nSubject To\n";
  std::vector<std::map<int, double>> rows(static_cast<std::size_t>(m.S));  // merged coefficients per row
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a) {
      rows[s][s * m.A + a] += 1.0;
      for (const auto& t : m.next(s, a)) rows[t.next][s * m.A + a] -= m.gamma * t.p;
    }
  for (int s = 0; s < m.S; ++s) {
    out += fmt::format(" flow_{}:", s);
    for (const auto& [j, v] : rows[s]) out += fmt::format(" {:+.17g} x_{}_{}", v, j / m.A, j % m.A);
    out += fmt::format(" = {:.17g}\n", m.mu0(s));
  }
  out += " cost:";
  for (int s = 0; s < m.S; ++s)
    for (int a = 0; a < m.A; ++a) out += fmt::format(" {:+.17g} x_{}_{}", m.c(s), s, a);
  out += fmt::format(" <= {:.17g}\nEnd\n", d);
  return out;
}

DualOptimum solve_dual_bisection(const Cmdp& m, double d, double lam_max, int iterations) {
  MatrixXd Q;
  auto g = [&](double lam, double& slope) {  // g(lam) of (6) and its subgradient J_c(pi_lam) - d
    Q = solve_soft_q(m, m.r - lam * m.c, 0.0, 1e-13, Q);
    const PolicyEval eval(m, soft_policy(Q, 0.0));
    slope = eval.value(m.c) - d;
    return m.mu0.dot(soft_value(Q, 0.0)) + lam * d;
  };
  double slope = 0;
  DualOptimum out;
  out.value = g(0.0, slope);
  if (slope <= 0) return out;  // the unconstrained optimum is feasible
  double lo = 0, hi = lam_max;
  for (int it = 0; it < iterations && hi - lo > 1e-14 * (1 + hi); ++it) {
    const double mid = 0.5 * (lo + hi);
    g(mid, slope);
    (slope > 0 ? lo : hi) = mid;
  }
  out.lam = 0.5 * (lo + hi);
  out.value = g(out.lam, slope);
  return out;
}

double least_cost(const Cmdp& m) {
  const MatrixXd Q = solve_soft_q(m, -m.c, 0.0, 1e-12);
  return -m.mu0.dot(soft_value(Q, 0.0));
}

// ---- The dense simplex of lp.hpp (one translation unit with its only user).
namespace {

// The tableau T (rows 0..m-1 constraints, row m the reduced costs of the objective to maximise;
// last column the right-hand side) with basis[i] the variable of row i.
struct Tableau {
  Eigen::MatrixXd T;
  std::vector<int> basis;
  int m = 0, n = 0;  // constraints, variables (the right-hand side is column n)

  void pivot(int row, int col) {
    const double p = T(row, col);
    T.row(row) /= p;
    const Eigen::RowVectorXd pivot_row = T.row(row);
    for (int i = 0; i <= m; ++i) {
      const double f = T(i, col);
      if (i != row && f != 0.0) T.row(i) -= f * pivot_row;
    }
    basis[static_cast<std::size_t>(row)] = col;
  }

  // Maximises the objective row over columns < allowed; false when unbounded. Dantzig's rule (the most
  // negative reduced cost) with the largest pivot among near-tied ratios; after many pivots without
  // progress it switches to Bland's rule (the first improving column, the smallest basic index), which
  // cannot cycle.
  bool optimise(int allowed, double tol) {
    int stalled = 0;
    bool bland = false;
    for (int iteration = 0;; ++iteration) {
      if (iteration > 100000) throw nexp::Error("simplex: no optimum after 100000 pivots (numerical cycling)");
      bland = bland || stalled > 50;  // once degenerate, Bland's rule to the end
      int col = -1;
      double most = -tol;
      for (int j = 0; j < allowed; ++j)
        if (T(m, j) < most) {
          col = j;
          most = T(m, j);
          if (bland) break;
        }
      if (col < 0) return true;
      int row = -1;
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < m; ++i) {
        if (T(i, col) <= tol) continue;
        const double ratio = std::max(0.0, T(i, n)) / T(i, col);
        const bool tie = row >= 0 && ratio <= best + 1e-12;
        if (ratio < best - 1e-12 || (tie && (bland ? basis[i] < basis[row] : T(i, col) > T(row, col)))) {
          best = std::min(best, ratio);
          row = i;
        }
      }
      if (row < 0) return false;
      stalled = best > 1e-12 ? 0 : stalled + 1;
      pivot(row, col);
    }
  }
};

}  // namespace

LpResult simplex_max(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& c, double tol) {
  const int m = static_cast<int>(A.rows()), nx = static_cast<int>(A.cols());
  Tableau t;
  t.m = m;
  t.n = nx + m;
  t.T = Eigen::MatrixXd::Zero(m + 1, t.n + 1);
  t.basis.resize(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    const double sign = b(i) < 0 ? -1.0 : 1.0;
    t.T.row(i).head(nx) = sign * A.row(i);
    t.T(i, nx + i) = 1.0;
    t.T(i, t.n) = sign * b(i);
    t.basis[static_cast<std::size_t>(i)] = nx + i;
  }
  // Phase 1: maximise -sum(artificials); its reduced costs are minus the column sums.
  for (int i = 0; i < m; ++i) t.T.row(m) -= t.T.row(i);
  for (int i = 0; i < m; ++i) t.T(m, nx + i) = 0.0;
  t.optimise(t.n, tol);
  LpResult out;
  if (std::abs(t.T(m, t.n)) > 1e-8) return out;  // the artificials could not reach zero
  // Drive artificials out of the basis where a real column can replace them (else the row is redundant).
  for (int i = 0; i < m; ++i) {
    if (t.basis[static_cast<std::size_t>(i)] < nx) continue;
    Eigen::Index j = 0;
    if (nx > 0 && t.T.row(i).head(nx).cwiseAbs().maxCoeff(&j) > 1e-9) t.pivot(i, static_cast<int>(j));
  }
  // Phase 2 over the real columns: reduced costs -c, made zero on the basis.
  t.T.row(m).setZero();
  t.T.row(m).head(nx) = -c.transpose();
  for (int i = 0; i < m; ++i) {
    const int j = t.basis[static_cast<std::size_t>(i)];
    if (j < nx && t.T(m, j) != 0.0) t.T.row(m) -= t.T(m, j) * t.T.row(i);
  }
  if (!t.optimise(nx, tol)) {
    out.status = LpResult::Status::Unbounded;
    return out;
  }
  out.status = LpResult::Status::Optimal;
  out.x = Eigen::VectorXd::Zero(nx);
  for (int i = 0; i < m; ++i)
    if (t.basis[static_cast<std::size_t>(i)] < nx) out.x(t.basis[static_cast<std::size_t>(i)]) = t.T(i, t.n);
  out.objective = c.dot(out.x);
  return out;
}

}  // namespace cb_pbrl
