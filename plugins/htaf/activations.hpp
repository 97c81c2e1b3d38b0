#pragma once
// Smooth approximations h of the Heaviside step H(x) = 1[x >= 0], and the one activation op every htaf
// model uses.
//
// HTAF (a sigmoid-tanh composite; the paper's equation is not available offline, see README.md):
//   h(x)  = (s(a tanh(b x)) - s(-a)) / (s(a) - s(-a)),       s the logistic, a > 0 core sharpness, b > 0 tail width
//   h'(x) = a b s'(a tanh(b x)) (1 - tanh^2(b x)) / tanh(a/2)   (s(a) - s(-a) = tanh(a/2))
//   h'(0) = a b / (4 tanh(a/2));  h'(x) ~ exp(-2 b |x|) in the tails, while the logistic with the same
//   slope at 0, s(k x) with k = a b / tanh(a/2) > 2 b, decays like exp(-k |x|): the heavier tail.
// Only htaf_value / htaf_derivative below encode the formula: the paper's equation replaces them.
//
// Baselines (each written as an approximation of H, i.e. of (sign + 1) / 2):
//   ste           h = clamp((x + 1) / 2, 0, 1),    h' = 1/2 on |x| <= 1 (hardtanh', Hubara et al. 2016)
//   sigmoid4/10   h = s(k x), k = 4, 10            h' = k s (1 - s)
//   sigmoid_matched  s(k x), k = a b / tanh(a/2): HTAF's slope at 0, so only the tail differs
//   arctan        h = 1/2 + atan(pi/2 alpha x) / pi, h' = alpha / 2 / (1 + (pi/2 alpha x)^2)  (spikingjelly ATan)
//   fast_sigmoid  h = 1/2 + (beta/2) x / (1 + beta |x|), h' = (beta/2) / (1 + beta |x|)^2   (SuperSpike)
//   triangle      h' = max(0, 1 - |x| / w) / w                                         (Esser et al. 2016)
//   approxsign    Bi-Real's ApproxSign (2x +- x^2) halved: the triangle with w = 1, allowed in htaf.bnn only
//   relu          the standard model's unit, max(0, x); not a step, no mode
// Every h' integrates to 1 over the real line (h goes from 0 to 1), so all surrogates carry the same mass.
#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace htaf {

enum class Kind { Htaf, Ste, Sigmoid4, Sigmoid10, SigmoidMatched, Arctan, FastSigmoid, Triangle, ApproxSign, Relu };

// smooth: h forward while training, H at test. surrogate: H forward always, h' backward.
enum class Mode { Smooth, Surrogate };

struct Activation {
  Kind kind = Kind::Htaf;
  double a = 4.0, b = 1.0;   // HTAF
  double alpha = 2.0;        // arctan: h'(0) = alpha / 2
  double beta = 10.0;        // fast sigmoid: h'(0) = beta / 2
  double width = 1.0;        // triangle: h'(0) = 1 / width
  double logistic_k() const;  // the logistic's rate (sigmoid kinds), a b / tanh(a/2) when matched
};

const std::vector<std::pair<std::string, Kind>>& kind_names();
std::string kind_name(Kind k);
std::vector<Kind> step_kinds();  // every kind that approximates H (all but relu), in table order

// Throws nexp::ConfigError when a parameter is out of range (a, b, alpha, beta, triangle_width <= 0).
void validate(const Activation& act);

// ---- the maths, once, for doubles (tests, profile) and tensors (training)
namespace math {
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline at::Tensor sigmoid(const at::Tensor& x) { return at::sigmoid(x); }
inline double tanh(double x) { return std::tanh(x); }
inline at::Tensor tanh(const at::Tensor& x) { return at::tanh(x); }
inline double abs(double x) { return std::fabs(x); }
inline at::Tensor abs(const at::Tensor& x) { return at::abs(x); }
inline double cosh(double x) { return std::cosh(x); }
inline at::Tensor cosh(const at::Tensor& x) { return at::cosh(x); }
inline double atan(double x) { return std::atan(x); }
inline at::Tensor atan(const at::Tensor& x) { return at::atan(x); }
inline double clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }
inline at::Tensor clamp(const at::Tensor& x, double lo, double hi) { return at::clamp(x, lo, hi); }
inline double relu(double x) { return x > 0 ? x : 0.0; }
inline at::Tensor relu(const at::Tensor& x) { return at::relu(x); }
inline double step(double x) { return x >= 0 ? 1.0 : 0.0; }
inline at::Tensor step(const at::Tensor& x) { return x.ge(0).to(x.scalar_type()); }
inline double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
inline at::Tensor sign_of(const at::Tensor& x) { return at::sign(x); }
}  // namespace math

template <class T>
T htaf_value(const T& x, double a, double b) {
  return (math::sigmoid(math::tanh(x * b) * a) - math::sigmoid(-a)) / std::tanh(a / 2.0);
}
template <class T>
T htaf_derivative(const T& x, double a, double b) {
  // s'(z) = s(z) s(-z) and 1 - tanh^2 = 1 / cosh^2: no cancellation deep in the tails
  const T z = math::tanh(x * b) * a, c = math::cosh(x * b);
  return math::sigmoid(z) * math::sigmoid(-z) / (c * c) * (a * b / std::tanh(a / 2.0));
}

// h(x) of a step kind (relu: max(0, x)).
template <class T>
T value(const Activation& act, const T& x) {
  constexpr double pi = 3.14159265358979323846;
  switch (act.kind) {
    case Kind::Htaf: return htaf_value(x, act.a, act.b);
    case Kind::Ste: return math::clamp((x + 1.0) * 0.5, 0.0, 1.0);
    case Kind::Sigmoid4: case Kind::Sigmoid10: case Kind::SigmoidMatched: return math::sigmoid(x * act.logistic_k());
    case Kind::Arctan: return math::atan(x * (pi / 2.0 * act.alpha)) * (1.0 / pi) + 0.5;
    case Kind::FastSigmoid: return x * (act.beta / 2.0) / (math::abs(x) * act.beta + 1.0) + 0.5;
    case Kind::Triangle: case Kind::ApproxSign: {
      const double w = act.kind == Kind::Triangle ? act.width : 1.0;
      const T u = math::clamp(x * (1.0 / w), -1.0, 1.0);  // h = 1/2 + (u - u|u|/2)
      return u - u * math::abs(u) * 0.5 + 0.5;
    }
    case Kind::Relu: return math::relu(x);
  }
  return x;
}

// h'(x), analytic.
template <class T>
T derivative(const Activation& act, const T& x) {
  constexpr double pi = 3.14159265358979323846;
  switch (act.kind) {
    case Kind::Htaf: return htaf_derivative(x, act.a, act.b);
    case Kind::Ste: return math::step(1.0 - math::abs(x)) * 0.5;
    case Kind::Sigmoid4: case Kind::Sigmoid10: case Kind::SigmoidMatched: {
      const double k = act.logistic_k();
      return math::sigmoid(x * k) * math::sigmoid(x * (-k)) * k;
    }
    case Kind::Arctan: {
      const T z = x * (pi / 2.0 * act.alpha);
      return 1.0 / (z * z + 1.0) * (act.alpha / 2.0);
    }
    case Kind::FastSigmoid: {
      const T d = math::abs(x) * act.beta + 1.0;
      return 1.0 / (d * d) * (act.beta / 2.0);
    }
    case Kind::Triangle: case Kind::ApproxSign: {
      const double w = act.kind == Kind::Triangle ? act.width : 1.0;
      return math::relu(1.0 - math::abs(x) * (1.0 / w)) * (1.0 / w);
    }
    case Kind::Relu: return math::step(x);
  }
  return x;
}

// The activation op of every model: with mode Surrogate, or Smooth at test (training = false), the
// forward is H(x) (exactly 0 / 1); with Smooth while training it is h(x). The backward is always the
// analytic h'(x) (relu: max(0, x) forward, 1[x >= 0] backward, in both modes).
at::Tensor activate(const at::Tensor& x, const Activation& act, Mode mode, bool training);

// ---- the profile of one activation (htaf.profile and the tests), by quadrature on a fine grid
struct Profile {
  double slope0 = 0;          // h'(0)
  double mass_unit = 0;       // mass of h' within |x| < 1
  double band_mass = 0;       // mass of h' in the band |x| < delta holding 90% of the mass of the logistic
                              // with the same slope at 0
  double tail3 = 0, tail5 = 0;   // h'(x) / h'(0) at x = 3 and 5
  double ratio3 = 0, ratio5 = 0;  // h'(x) / s'(x) at x = 3, 5, s the logistic with the same h'(0)
  double total_mass = 0;      // integral of h' over [-60, 60] (1 up to the tails beyond)
};
Profile profile(const Activation& act);
double integrate_derivative(const Activation& act, double lo, double hi, std::int64_t intervals = 200000);

}  // namespace htaf
