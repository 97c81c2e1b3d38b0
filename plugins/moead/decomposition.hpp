#pragma once
// Decompositions of a bi-objective maximisation problem into scalar subproblems (all minimised).
//
// Classic (Zhang and Li 2007), weight vector lambda = (l1, l2), reference point z (the ideal point):
//   weighted sum  g_ws (x | l, z) = l1 (z1 - f1) + l2 (z2 - f2)
//   Tchebycheff   g_tch(x | l, z) = max{ l1 (z1 - f1), l2 (z2 - f2) }
//   PBI           g_pbi(x | l, z) = d1 + theta d2,  d = z - f,  d1 = <d, l>/|l|,  d2 = |d - d1 l/|l||
// with N uniform weights l_j = (j/(N-1), 1 - j/(N-1)), j = 0..N-1.
//
// Self-adjusted subproblems (see algorithms.hpp) aim a Tchebycheff subproblem along the ray from z
// through an anchor a: g(x | a, z) = max{ (z1 - f1)/(z1 - a1), (z2 - f2)/(z2 - a2) }, i.e. weights
// 1/(z - a) (the "WS-transformation" of MOEA/D-AWA, Qi et al. 2014). Two facts make it the tool for
// distorted fronts; both use only the order of the f values, so they hold for every monotone
// distortion:
//   (1) a Pareto-optimal anchor p is the unique optimum (among objective vectors) of its ray;
//   (2) for non-dominated p (left, larger f2) and q (right, larger f1) and the corner anchor
//       c = (p1, q2), g(x) < 1 = min(g(p), g(q)) exactly when f1(x) > p1 and f2(x) > q2: every point
//       strictly between p and q beats both, so that subproblem searches exactly the gap.
#include <array>
#include <string>
#include <vector>

#include "problem.hpp"

namespace moead {

enum class Scalarizer { WeightedSum, Tchebycheff, Pbi };
const std::vector<std::pair<std::string, Scalarizer>>& scalarizer_kinds();  // ws, tch, pbi
Scalarizer parse_scalarizer(const std::string& name);
const char* scalarizer_name(Scalarizer s);

using Weight = std::array<long double, 2>;
std::vector<Weight> uniform_weights(int count);

struct RefPoint {
  long double z1 = 0, z2 = 0;
};

inline long double scalarize(Scalarizer s, const Weight& l, const RefPoint& z, long double f1, long double f2,
                             long double theta) {
  const long double d1 = z.z1 - f1, d2 = z.z2 - f2;
  switch (s) {
    case Scalarizer::WeightedSum:
      return l[0] * d1 + l[1] * d2;
    case Scalarizer::Tchebycheff: {
      const long double a = l[0] * d1, b = l[1] * d2;
      return a > b ? a : b;
    }
    case Scalarizer::Pbi: {
      const long double norm = sqrtl(l[0] * l[0] + l[1] * l[1]);
      const long double along = (d1 * l[0] + d2 * l[1]) / norm;
      const long double p1 = d1 - along * l[0] / norm, p2 = d2 - along * l[1] / norm;
      return along + theta * sqrtl(p1 * p1 + p2 * p2);
    }
  }
  return 0;
}

// The ideal point of the problem: the best value of each objective over {0,1}^n.
RefPoint ideal_point(const Problem& problem);

// Which points optimise which subproblem of a classic decomposition with `count` uniform weights
// and z = the ideal point, by enumeration of every attainable objective vector (the converged state
// a MOEA/D with this decomposition is drawn to). A front point that is an optimum of no subproblem is
// a hole: no subproblem's selection pressure keeps it in the population.
struct OptimaReport {
  std::vector<std::vector<int>> optima;  // per subproblem: front indices in its argmin
  std::vector<int> off_front;            // per subproblem: attainable non-Pareto vectors in its argmin
  std::vector<int> optimal_for;          // per front point: subproblems it is an optimum of
  std::vector<int> unique_for;           // per front point: subproblems it is the unique optimum of
  int reachable() const;                 // front points that are an optimum of some subproblem
  int unique() const;                    // front points that are the unique optimum of some subproblem
  std::vector<int> holes() const;        // front points that are an optimum of none
};
OptimaReport enumerate_optima(const Problem& problem, Scalarizer s, int count, long double theta);

// ---- Self-adjusted subproblems

// A subproblem's aim: uniform Tchebycheff weights (the start), a ray through an anchor given by base
// values (au, av) (a found point, or the corner (u of the left point, v of the right point) of a gap),
// or an axis: lexicographic max f1 then f2 (Axis1), max f2 then f1 (Axis2).
struct Aim {
  enum class Kind { Weights, Ray, Axis1, Axis2 };
  Kind kind = Kind::Weights;
  Weight weight{};  // Weights
  int au = 0, av = 0;  // Ray anchor (base values)
  // Ray denominators z - a for the current z; refresh() after z or the anchor changes.
  long double q1 = 1, q2 = 1;

  static Aim weights(const Weight& l) { return {Kind::Weights, l, 0, 0, 1, 1}; }
  static Aim ray(int u, int v) { return {Kind::Ray, {}, u, v, 1, 1}; }
  static Aim axis1() { return {Kind::Axis1, {}, 0, 0, 1, 1}; }
  static Aim axis2() { return {Kind::Axis2, {}, 0, 0, 1, 1}; }
  bool is_ray_at(int u, int v) const { return kind == Kind::Ray && au == u && av == v; }
  void refresh(const Problem& problem, const RefPoint& z) {
    if (kind == Kind::Ray) q1 = z.z1 - problem.g1(au), q2 = z.z2 - problem.g2(av);
  }
};

// Position of a point relative to the box of a ray aimed through (au, av): 0 strictly inside
// (u > au and v > av, g < 1), 1 on its boundary (g = 1 exactly), 2 outside (g > 1). Decided on the
// integer base values, so it is exact whatever the distortion's magnitude.
inline int ray_class(const Aim& aim, const Point& p) {
  if (p.u < aim.au || p.v < aim.av) return 2;
  return p.u > aim.au && p.v > aim.av ? 0 : 1;
}
// g of a ray aim; z must lie strictly above every point (the self-adjusting MOEA/D uses the best
// values seen plus one). Only needed to rank two points of the same class 0 (or 2).
inline long double ray_value(const Aim& aim, const RefPoint& z, const Point& p) {
  const long double a = (z.z1 - p.f1) / aim.q1, b = (z.z2 - p.f2) / aim.q2;
  return a > b ? a : b;
}
inline long double weights_value(const Aim& aim, const RefPoint& z, const Point& p) {
  return scalarize(Scalarizer::Tchebycheff, aim.weight, z, p.f1, p.f2, 0);
}

// Whether `a` is at least as good as `b` for the subproblem (g(a) <= g(b)). Axes compare
// lexicographically on base values; rays by class first, then by g within class 0 or 2.
inline bool aim_prefers(const Aim& aim, const RefPoint& z, const Point& a, const Point& b) {
  switch (aim.kind) {
    case Aim::Kind::Weights:
      return weights_value(aim, z, a) <= weights_value(aim, z, b);
    case Aim::Kind::Axis1:
      return a.u > b.u || (a.u == b.u && a.v >= b.v);
    case Aim::Kind::Axis2:
      return a.v > b.v || (a.v == b.v && a.u >= b.u);
    case Aim::Kind::Ray: {
      const int ca = ray_class(aim, a), cb = ray_class(aim, b);
      if (ca != cb) return ca < cb;
      return ca == 1 || ray_value(aim, z, a) <= ray_value(aim, z, b);
    }
  }
  return false;
}

// The attainable objective vectors (base values) that minimise `aim` with reference z: used by the
// tests to check facts (1) and (2) above by enumeration.
std::vector<std::pair<int, int>> aim_optima(const Problem& problem, Aim aim, const RefPoint& z);

}  // namespace moead
