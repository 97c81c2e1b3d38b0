#include "activations.hpp"

#include <fmt/format.h>
#include <nexp/error.hpp>
#include <torch/autograd.h>

namespace htaf {

double Activation::logistic_k() const {
  switch (kind) {
    case Kind::Sigmoid4: return 4.0;
    case Kind::Sigmoid10: return 10.0;
    default: return a * b / std::tanh(a / 2.0);  // HTAF's slope at 0 is k / 4
  }
}

const std::vector<std::pair<std::string, Kind>>& kind_names() {
  static const std::vector<std::pair<std::string, Kind>> names = {
      {"htaf", Kind::Htaf},         {"ste", Kind::Ste},           {"sigmoid4", Kind::Sigmoid4},
      {"sigmoid10", Kind::Sigmoid10}, {"sigmoid_matched", Kind::SigmoidMatched}, {"arctan", Kind::Arctan},
      {"fast_sigmoid", Kind::FastSigmoid}, {"triangle", Kind::Triangle}, {"approxsign", Kind::ApproxSign},
      {"relu", Kind::Relu}};
  return names;
}

std::string kind_name(Kind k) {
  for (const auto& [name, kind] : kind_names())
    if (kind == k) return name;
  return "?";
}

std::vector<Kind> step_kinds() {
  std::vector<Kind> out;
  for (const auto& [name, kind] : kind_names())
    if (kind != Kind::Relu) out.push_back(kind);
  return out;
}

void validate(const Activation& act) {
  const std::pair<const char*, double> checks[] = {
      {"a", act.a}, {"b", act.b}, {"alpha", act.alpha}, {"beta", act.beta}, {"triangle_width", act.width}};
  for (const auto& [name, v] : checks)
    if (!(v > 0) || !std::isfinite(v))
      throw nexp::ConfigError(fmt::format("params.{} = {}: every activation parameter must be a finite number > 0 "
                                          "(defaults: a 4, b 1, alpha 2, beta 10, triangle_width 1)",
                                          name, v));
}

namespace {

// H (or h) forward, analytic h' backward.
struct StepFunction : torch::autograd::Function<StepFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const Activation& act,
                            bool hard) {
    ctx->save_for_backward({x});
    ctx->saved_data["kind"] = static_cast<std::int64_t>(act.kind);
    ctx->saved_data["a"] = act.a, ctx->saved_data["b"] = act.b, ctx->saved_data["alpha"] = act.alpha;
    ctx->saved_data["beta"] = act.beta, ctx->saved_data["width"] = act.width;
    if (act.kind == Kind::Relu) return at::relu(x);
    return hard ? math::step(x) : value(act, x);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const at::Tensor x = ctx->get_saved_variables()[0];
    Activation act;
    act.kind = static_cast<Kind>(ctx->saved_data["kind"].toInt());
    act.a = ctx->saved_data["a"].toDouble(), act.b = ctx->saved_data["b"].toDouble();
    act.alpha = ctx->saved_data["alpha"].toDouble(), act.beta = ctx->saved_data["beta"].toDouble();
    act.width = ctx->saved_data["width"].toDouble();
    return {grad[0] * derivative(act, x), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor activate(const at::Tensor& x, const Activation& act, Mode mode, bool training) {
  const bool hard = mode == Mode::Surrogate || !training;
  return StepFunction::apply(x, act, hard);
}

namespace {
// Composite Simpson's rule on [lo, hi] with `n` (even) intervals; the ends are evaluated just inside, so a
// jump of h' at a breakpoint (STE's at |x| = 1) falls between two pieces instead of inside one.
double simpson(const Activation& act, double lo, double hi, std::int64_t n) {
  const double h = (hi - lo) / static_cast<double>(n), inset = 1e-12 * (hi - lo);
  double sum = derivative(act, lo + inset) + derivative(act, hi - inset);
  for (std::int64_t i = 1; i < n; ++i) sum += (i % 2 ? 4.0 : 2.0) * derivative(act, lo + h * static_cast<double>(i));
  return sum * h / 3.0;
}
}  // namespace

double integrate_derivative(const Activation& act, double lo, double hi, std::int64_t intervals) {
  // Split at the kinks of the piecewise kinds (|x| = 1, |x| = width, 0), intervals shared by length.
  std::vector<double> cuts = {lo};
  for (double c : {-std::max(1.0, act.width), -std::min(1.0, act.width), 0.0, std::min(1.0, act.width),
                   std::max(1.0, act.width)})
    if (c > cuts.back() && c < hi) cuts.push_back(c);
  cuts.push_back(hi);
  double total = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const auto n = std::max<std::int64_t>(2, static_cast<std::int64_t>(static_cast<double>(intervals) * (cuts[i + 1] - cuts[i]) / (hi - lo)));
    total += simpson(act, cuts[i], cuts[i + 1], n + n % 2);
  }
  return total;
}

Profile profile(const Activation& act) {
  Profile p;
  p.slope0 = derivative(act, 0.0);
  const double k = 4.0 * p.slope0;                    // the logistic s(kx) has slope k / 4 at 0
  const double delta = 2.0 * std::atanh(0.9) / k;     // s(k delta) - s(-k delta) = tanh(k delta / 2) = 0.9
  const auto s_prime = [k](double x) { const double s = math::sigmoid(k * x); return k * s * (1.0 - s); };
  p.mass_unit = integrate_derivative(act, -1.0, 1.0, 20000);
  p.band_mass = integrate_derivative(act, -delta, delta, 20000);
  p.tail3 = derivative(act, 3.0) / p.slope0;
  p.tail5 = derivative(act, 5.0) / p.slope0;
  p.ratio3 = derivative(act, 3.0) / s_prime(3.0);
  p.ratio5 = derivative(act, 5.0) / s_prime(5.0);
  p.total_mass = integrate_derivative(act, -60.0, 60.0, 400000);
  return p;
}

}  // namespace htaf
