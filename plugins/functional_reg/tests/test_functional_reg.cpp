// functional_reg: each test checks a closed form, an invariant or a brute-force reference.
#include <gtest/gtest.h>

#include <nexp/error.hpp>
#include <nexp/random.hpp>

#include <cmath>

#include "basis.hpp"
#include "data.hpp"
#include "methods.hpp"
#include "models.hpp"
#include "nets.hpp"

using namespace functional_reg;

namespace {
constexpr double kPi = 3.14159265358979323846;

std::vector<double> grid(int n) {
  std::vector<double> t;
  for (int j = 0; j < n; ++j) t.push_back(static_cast<double>(j) / (n - 1));
  return t;
}
std::vector<double> apply(const std::vector<double>& t, double (*f)(double)) {
  std::vector<double> x;
  for (double s : t) x.push_back(f(s));
  return x;
}
// Exact B-spline coefficients of a function in the spline space: interpolating least squares on many points.
Vector coef(const BSplineBasis& b, double (*f)(double)) {
  const auto t = grid(400);
  return fit_curve(b, b.roughness(), 0.0, t, apply(t, f), "reference");
}
}  // namespace

TEST(BSpline, PartitionOfUnityAndNonNegative) {
  for (int M : {4, 7, 15}) {
    const BSplineBasis b(M);
    const Matrix phi = b.evaluate(grid(101));
    for (Eigen::Index i = 0; i < phi.rows(); ++i) EXPECT_NEAR(phi.row(i).sum(), 1.0, 1e-12);
    EXPECT_GE(phi.minCoeff(), 0.0);
  }
}

TEST(BSpline, RecoversACubicSplineExactlyFromItsOwnPoints) {
  const BSplineBasis b(9);
  const Vector truth = (Vector(9) << 1, -2, 0.5, 3, 0, -1, 2, 2.5, -0.5).finished();
  nexp::Random rng(3);
  std::vector<double> t;
  for (int j = 0; j < 40; ++j) t.push_back(rng.uniform());
  const Vector x = b.evaluate(t) * truth;
  const Vector c = fit_curve(b, b.roughness(), 0.0, t, std::vector<double>(x.data(), x.data() + x.size()), "c");
  EXPECT_LT((c - truth).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(BSpline, RoughnessOfPolynomialsIsTheClosedFormIntegral) {
  const BSplineBasis b(8);
  const Matrix r = b.roughness();
  // t^3: int (6t)^2 = 12; t^2: int 2^2 = 4; a line has no roughness.
  const Vector c3 = coef(b, [](double t) { return t * t * t; });
  const Vector c2 = coef(b, [](double t) { return t * t; });
  const Vector c1 = coef(b, [](double t) { return 1 - 2 * t; });
  EXPECT_NEAR(c3.dot(r * c3), 12.0, 1e-8);
  EXPECT_NEAR(c2.dot(r * c2), 4.0, 1e-8);
  EXPECT_NEAR(c1.dot(r * c1), 0.0, 1e-8);
  EXPECT_NEAR(c2.dot(r * c3), 6.0, 1e-8);  // int 2 * 6t = 6
}

TEST(BSpline, InnerProductsMatchClosedForms) {
  const BSplineBasis b(8);
  const Matrix g = b.gram();
  const Vector ct = coef(b, [](double t) { return t; });
  const Vector ct2 = coef(b, [](double t) { return t * t; });
  EXPECT_NEAR(ct.dot(g * ct2), 0.25, 1e-10);  // int t^3
  EXPECT_NEAR(ct2.dot(g * ct2), 0.2, 1e-10);  // int t^4
  // sin/cos: a smooth curve in a rich basis against the Fourier functions.
  const BSplineBasis fine(40);
  const Vector cs = coef(fine, [](double t) { return std::sin(2 * kPi * t) + std::cos(4 * kPi * t); });
  const Matrix gf = fine.gram_with([](double t) { return Vector(fourier({t}, 5).row(0).transpose()); }, 5);
  const Vector ip = gf.transpose() * cs;  // <x, psi_q>
  EXPECT_NEAR(ip(0), 0.0, 1e-5);
  EXPECT_NEAR(ip(1), 0.0, 1e-5);                // cos 2 pi t
  EXPECT_NEAR(ip(2), 1 / std::sqrt(2.0), 1e-5);  // sin 2 pi t
  EXPECT_NEAR(ip(3), 1 / std::sqrt(2.0), 1e-5);  // cos 4 pi t
  EXPECT_NEAR(ip(4), 0.0, 1e-5);
}

TEST(BSpline, TooFewPointsWithoutPenaltyIsAnErrorNamingTheCurve) {
  const BSplineBasis b(10);
  const std::vector<double> t = {0.1, 0.4, 0.6, 0.9}, x = {1, 2, 3, 4};
  try {
    fit_curve(b, b.roughness(), 0.0, t, x, "'patient-17'");
    FAIL() << "expected a DataError";
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("patient-17"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 distinct points"), std::string::npos) << e.what();
  }
  // With a penalty the same curve has a (smooth) fit.
  EXPECT_NO_THROW(fit_curve(b, b.roughness(), 1e-4, t, x, "c"));
}

TEST(Fpca, RecoversPlantedEigenfunctionsAsNGrows) {
  // x = 2 a sqrt2 sin(2 pi t) + b sqrt2 cos(2 pi t) + small noise; eigenfunctions sin (var 4) and cos (var 1).
  const BSplineBasis basis(20);
  const Matrix g = basis.gram();
  const auto t = grid(60);
  const Matrix psi = fourier(t, 3);
  auto error = [&](int n) {
    nexp::Random rng(11);
    Matrix c(n, 20);
    for (int i = 0; i < n; ++i) {
      const Vector x = 2 * rng.normal() * psi.col(2) + rng.normal() * psi.col(1);
      std::vector<double> xv(x.data(), x.data() + x.size());
      c.row(i) = fit_curve(basis, basis.roughness(), 1e-8, t, xv, "c").transpose();
    }
    const Fpca f = fit_fpca(c, g, 2);
    const Matrix gf = basis.gram_with([](double s) { return Vector(fourier({s}, 3).row(0).transpose()); }, 3);
    // |<u_1, sin>| and |<u_2, cos>| tend to 1.
    const double a = std::abs(f.directions.col(0).dot(gf.col(2))), b = std::abs(f.directions.col(1).dot(gf.col(1)));
    return std::max(1 - a, 1 - b);
  };
  const double small = error(20), large = error(2000);
  EXPECT_LT(large, 2e-3);
  EXPECT_LT(large, small);
}

TEST(Flm, RecoversAPlantedBetaFromNoiselessData) {
  const BSplineBasis basis(10);
  const Matrix g = basis.gram(), r = basis.roughness();
  nexp::Random rng(5);
  const int n = 300;
  Matrix c(n, 10);
  for (int i = 0; i < n; ++i)
    for (int m = 0; m < 10; ++m) c(i, m) = rng.normal();
  const Vector b = coef(basis, [](double t) { return std::sin(3 * t) + t * t; });
  const Vector y = (c * g * b).array() + 0.7;
  const LinearFit f = fit_flm(c, y, g, r, 1, {1e-10});
  const auto t = grid(50);
  const Vector beta = flm_beta(f, basis, 0, t);
  const Vector planted = basis.evaluate(t) * b;  // the spline beta the data were made with
  EXPECT_LT((beta - planted).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_NEAR(beta(10), std::sin(3 * t[10]) + t[10] * t[10], 1e-4);  // and it is close to the function itself
  EXPECT_NEAR(f.intercept, 0.7, 1e-8);
}

TEST(Simulator, SignalsHaveAboutUnitVarianceAndTheLinearTruthIsAnInnerProduct) {
  SimulatedOptions o;
  for (Truth truth : {Truth::Linear, Truth::Index2, Truth::General}) {
    o.truth = truth;
    const Simulator s = make_simulator(o);
    const Sample x = s.sample(4000, 1, 9, 5);
    double m = 0, v = 0;
    for (double f : x.truth) m += f;
    m /= x.truth.size();
    for (double f : x.truth) v += (f - m) * (f - m);
    v /= x.truth.size();
    EXPECT_GT(v, 0.6);
    EXPECT_LT(v, 1.4);
  }
  // The linear truth is <beta_1, x> with unit variance by construction.
  o.truth = Truth::Linear;
  const Simulator s = make_simulator(o);
  double var = 0;
  for (std::int64_t k = 0; k < o.terms; ++k) var += std::pow(s.beta[0][k] * s.sd(k), 2);
  EXPECT_NEAR(var, 1.0, 1e-12);
}

TEST(Networks, GradientsMatchFiniteDifferences) {
  NetOptions o;
  o.width = 5, o.depth = 2, o.J = 2, o.neurons = 3, o.fourier = 3;
  for (Architecture a : {Architecture::EqualWidth, Architecture::Bottleneck, Architecture::FuncNN})
    EXPECT_LT(gradient_check(a, o, 6, 7), 1e-5);
}

TEST(Networks, SizingRule) {
  NetOptions o;
  EXPECT_EQ(net_shape(Architecture::EqualWidth, o, 1000).width, 32);  // sqrt(1000) = 31.6
  EXPECT_EQ(net_shape(Architecture::EqualWidth, o, 1000).depth, 3);
  o.J = 2;
  EXPECT_EQ(net_shape(Architecture::Bottleneck, o, 4000).width, 63);  // 4000^(1/2)
  o.J = 1;
  EXPECT_EQ(net_shape(Architecture::Bottleneck, o, 1000).width, 10);  // 1000^(1/3)
}

TEST(Networks, BottleneckWithOneIndexAndLinearLinkMatchesFlmOnALinearTruth) {
  SimulatedOptions so;
  so.truth = Truth::Linear;
  so.n = 600, so.m = 30, so.noise = 0.1, so.n_test = 500;
  const Simulator sim = make_simulator(so);
  Problem p;
  p.predictors = {"x"};
  p.regular = false;
  p.train = sim.sample(so.n, 2, 1, so.m), p.validation = sim.sample(150, 2, 2, so.m), p.test = sim.sample(so.n_test, 2, 3, so.m);
  FitOptions o;
  o.M = 10;
  o.J = 1;
  o.linear_link = true;
  o.lr = 1e-2;
  o.max_epochs = 200;
  const ArmResult flm = fit_arm(Kind::Flm, o, p, true, 1, "flm");
  const ArmResult net = fit_arm(Kind::Bottleneck, o, p, true, 1, "bottleneck");
  const double rms_gap = rmse(flm.test_predictions, net.test_predictions);
  EXPECT_LT(rms_gap, 0.05) << "flm excess " << flm.excess_risk << ", linear bottleneck " << net.excess_risk;
  EXPECT_LT(flm.excess_risk, 0.03);
}

TEST(Data, SecondDerivativeOfACubicIsExactOnAnyGrid) {
  Curve c;
  for (double t : {0.0, 0.1, 0.25, 0.3, 0.5, 0.8, 1.0}) c.t.push_back(t), c.x.push_back(t * t * t - t * t);
  const Curve d = second_derivative(c);
  for (std::size_t j = 1; j + 1 < c.t.size(); ++j) {
    // Central differences on an uneven grid err by (h2 - h1) x''' / 3 for a cubic.
    const double h1 = c.t[j] - c.t[j - 1], h2 = c.t[j + 1] - c.t[j];
    EXPECT_NEAR(d.x[j], 6 * c.t[j] - 2 + (h2 - h1) * 6 / 3, 1e-9);
  }
}

TEST(Data, RawGridNetworkRefusesIrregularCurves) {
  Problem p;
  p.predictors = {"x"};
  p.regular = false;
  EXPECT_THROW(raw_design(p, "functional_reg.raw_mlp"), nexp::ConfigError);
}
