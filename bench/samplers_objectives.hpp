#pragma once
// The standard objectives of bench/samplers (the same formulas as bench/samplers_optuna.py), each a
// search space and a function to minimise.
//   branin        2-D, [-5,10] x [0,15], minimum 0.397887 (three global minima)
//   hartmann6     6-D, [0,1]^6, minimum -3.32237
//   rosenbrock10  10-D, [-5,10]^10, minimum 0 at (1, ..., 1)
//   noisy_hartmann6  hartmann6 plus Gaussian noise (sd 0.1) drawn from (seed, trial), so both sides
//                 see the same noise
//   mixed         a categorical (3 choices), an integer 1..10 and two reals in [-3,3]; minimum 0
// And the two-objective problems (pareto_problems(), NSGA-II), both objectives minimised, each with a
// closed-form Pareto front and a reference point for the hypervolume: the largest value each objective
// takes on the box, plus 10%.
//   zdt1  5-D, [0,1]^5 (Zitzler, Deb and Thiele 2000): f1 = x0, g = 1 + 9/4 (x1 + ... + x4),
//         f2 = g (1 - sqrt(f1 / g)); front g = 1: f2 = 1 - sqrt(f1), f1 in [0,1] (convex). Reference (1.1, 11).
//   zdt2  as zdt1 with f2 = g (1 - (f1 / g)^2); front f2 = 1 - f1^2 (concave). Reference (1.1, 11).
//   fonseca_fleming  3-D, [-4,4]^3 (Fonseca and Fleming 1995; FON in Deb et al. 2002):
//         f1 = 1 - exp(-sum (x_i - 1/sqrt 3)^2), f2 = 1 - exp(-sum (x_i + 1/sqrt 3)^2); front
//         x0 = x1 = x2 = t, t in [-1/sqrt 3, 1/sqrt 3] (concave). Reference (1.1, 1.1).
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "nexp/random.hpp"
#include "samplers/sampler.hpp"

namespace nexp::bench {

struct Objective {
  std::string name;
  samplers::Space space;
  double optimum;
  double (*f)(const samplers::Point& x, std::uint64_t seed, int trial);
};

inline samplers::Dimension real(const std::string& key, double lo, double hi) {
  samplers::Dimension d;
  d.key = key, d.lo = lo, d.hi = hi;
  return d;
}

inline double branin(const samplers::Point& x, std::uint64_t, int) {
  const double a = 1, b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, r = 6, s = 10, t = 1 / (8 * M_PI);
  const double u = x[1] - b * x[0] * x[0] + c * x[0] - r;
  return a * u * u + s * (1 - t) * std::cos(x[0]) + s;
}

inline double hartmann6_value(const samplers::Point& x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double A[4][6] = {{10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14}, {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double P[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                 {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                 {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                 {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) inner += A[i][j] * (x[j] - P[i][j]) * (x[j] - P[i][j]);
    sum += alpha[i] * std::exp(-inner);
  }
  return -sum;
}

inline double hartmann6(const samplers::Point& x, std::uint64_t, int) { return hartmann6_value(x); }

// A standard normal draw from (seed, trial) by SplitMix64 and Box-Muller, reproduced in Python.
inline double shared_noise(std::uint64_t seed, int trial) {
  const std::uint64_t base = seed * 1000003ull + static_cast<std::uint64_t>(trial) * 2ull;
  const double u1 = static_cast<double>(mix64(base) >> 11) * 0x1.0p-53;
  const double u2 = static_cast<double>(mix64(base + 1) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * M_PI * u2);
}

inline double noisy_hartmann6(const samplers::Point& x, std::uint64_t seed, int trial) {
  return hartmann6_value(x) + 0.1 * shared_noise(seed, trial);
}

inline double rosenbrock10(const samplers::Point& x, std::uint64_t, int) {
  double s = 0;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) s += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
  return s;
}

inline double mixed(const samplers::Point& x, std::uint64_t, int) {
  static const double cx[3] = {1, -1, 0}, cy[3] = {0.5, 2, -1}, offset[3] = {0.5, 0, 1};
  const int c = static_cast<int>(x[0]);
  return std::pow(x[2] - cx[c], 2) + std::pow(x[3] - cy[c], 2) + offset[c] + 0.1 * std::pow(x[1] - 7, 2);
}

struct ParetoProblem {
  std::string name;
  samplers::Space space;
  std::array<double, 2> reference;  // for the hypervolume
  std::array<double, 2> (*f)(const samplers::Point& x);
};

// ZDT's g: 1 + 9 times the mean of x1..x(n-1) (1 on the front).
inline double zdt_g(const samplers::Point& x) {
  double s = 0;
  for (std::size_t i = 1; i < x.size(); ++i) s += x[i];
  return 1 + 9 * s / static_cast<double>(x.size() - 1);
}

inline std::array<double, 2> zdt1(const samplers::Point& x) {
  const double g = zdt_g(x);
  return {x[0], g * (1 - std::sqrt(x[0] / g))};
}

inline std::array<double, 2> zdt2(const samplers::Point& x) {
  const double g = zdt_g(x);
  return {x[0], g * (1 - (x[0] / g) * (x[0] / g))};
}

inline std::array<double, 2> fonseca_fleming(const samplers::Point& x) {
  const double c = 1 / std::sqrt(static_cast<double>(x.size()));
  double a = 0, b = 0;
  for (double v : x) a += (v - c) * (v - c), b += (v + c) * (v + c);
  return {1 - std::exp(-a), 1 - std::exp(-b)};
}

inline std::vector<ParetoProblem> pareto_problems() {
  samplers::Space unit5, box3;
  for (int i = 0; i < 5; ++i) unit5.push_back(real("x" + std::to_string(i), 0, 1));
  for (int i = 0; i < 3; ++i) box3.push_back(real("x" + std::to_string(i), -4, 4));
  return {{"zdt1", unit5, {1.1, 11}, zdt1}, {"zdt2", unit5, {1.1, 11}, zdt2}, {"fonseca_fleming", box3, {1.1, 1.1}, fonseca_fleming}};
}

inline std::vector<Objective> objectives() {
  std::vector<Objective> out;
  out.push_back({"branin", {real("x1", -5, 10), real("x2", 0, 15)}, 0.397887, branin});
  samplers::Space unit6;
  for (int i = 0; i < 6; ++i) unit6.push_back(real("x" + std::to_string(i), 0, 1));
  out.push_back({"hartmann6", unit6, -3.32237, hartmann6});
  samplers::Space r10;
  for (int i = 0; i < 10; ++i) r10.push_back(real("x" + std::to_string(i), -5, 10));
  out.push_back({"rosenbrock10", r10, 0, rosenbrock10});
  out.push_back({"noisy_hartmann6", unit6, -3.32237, noisy_hartmann6});
  samplers::Dimension choice;
  choice.key = "c", choice.kind = samplers::Dimension::Kind::Categorical, choice.choices = {"a", "b", "c"};
  samplers::Dimension k = real("k", 1, 10);
  k.kind = samplers::Dimension::Kind::Int;
  out.push_back({"mixed", {choice, k, real("x", -3, 3), real("y", -3, 3)}, 0, mixed});
  return out;
}

}  // namespace nexp::bench
