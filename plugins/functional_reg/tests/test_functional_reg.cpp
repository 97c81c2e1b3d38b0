// functional_reg: each test checks a closed form, an invariant or a brute-force reference.
#include <gtest/gtest.h>

#include <nexp/error.hpp>
#include <nexp/random.hpp>

#include <algorithm>
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

namespace {
// Curves x = mean(t) + sum_k xi_k psi_k(t) with psi_1 = sqrt2 sin 2 pi t (variance 4) and
// psi_2 = sqrt2 cos 2 pi t (variance 1), seen at `m` random points (m = 0: the 101-point grid) with noise.
struct Planted {
  std::vector<Curve> curves;
  Matrix scores;  // n x 2, the true xi
};
double zero(double) { return 0.0; }
Planted planted(int n, int m, double noise, std::uint64_t seed, double (*mean)(double) = zero) {
  nexp::Random rng(seed);
  Planted out;
  out.scores.resize(n, 2);
  for (int i = 0; i < n; ++i) {
    const double a = 2 * rng.normal(), b = rng.normal();
    out.scores(i, 0) = a, out.scores(i, 1) = b;
    Curve c;
    if (m == 0) c.t = grid(101);
    for (int j = 0; j < m; ++j) c.t.push_back(rng.uniform());
    std::sort(c.t.begin(), c.t.end());
    for (double t : c.t)
      c.x.push_back(mean(t) + std::sqrt(2.0) * (a * std::sin(2 * kPi * t) + b * std::cos(2 * kPi * t)) + noise * rng.normal());
    out.curves.push_back(std::move(c));
  }
  return out;
}
// 1 - |<phi_hat_k, psi_k>| (trapezoid rule on the PACE grid), worst over the two components.
double eigen_error(const Pace& p) {
  double worst = 0;
  const auto g = static_cast<Eigen::Index>(p.grid.size());
  for (int k = 0; k < 2; ++k) {
    double ip = 0;
    for (Eigen::Index j = 0; j < g; ++j) {
      const double t = p.grid[static_cast<std::size_t>(j)], w = (j == 0 || j == g - 1 ? 0.5 : 1.0) / (g - 1);
      ip += w * p.eigenfunctions(j, k) * std::sqrt(2.0) * (k == 0 ? std::sin(2 * kPi * t) : std::cos(2 * kPi * t));
    }
    worst = std::max(worst, 1 - std::abs(ip));
  }
  return worst;
}
// Mean squared error of estimated scores against the truth, each column's sign aligned with the truth.
double score_error(Matrix s, const Matrix& truth) {
  for (Eigen::Index k = 0; k < truth.cols(); ++k)
    if (s.col(k).dot(truth.col(k)) < 0) s.col(k) *= -1;
  return (s - truth).squaredNorm() / static_cast<double>(truth.size());
}
}  // namespace

TEST(Pace, DenseNoiselessScoresEqualTheIntegralProjections) {
  const Planted d = planted(300, 0, 0.0, 4, [](double t) { return t * t; });
  const Pace p = fit_pace(d.curves, 2);
  ASSERT_EQ(p.eigenvalues.size(), 2);
  EXPECT_LT(p.noise_variance, 0.02);  // no noise: only smoothing bias (the curves have variance 5)
  const auto g = static_cast<Eigen::Index>(p.grid.size());  // 51: every second point of the curves' grid
  for (int i = 0; i < 20; ++i) {
    const Vector s = p.scores(d.curves[static_cast<std::size_t>(i)], 2);
    for (int k = 0; k < 2; ++k) {
      double integral = 0;  // int (x - mu_hat) phi_k by the trapezoid rule
      for (Eigen::Index j = 0; j < g; ++j)
        integral += (j == 0 || j == g - 1 ? 0.5 : 1.0) / (g - 1) *
                    (d.curves[static_cast<std::size_t>(i)].x[static_cast<std::size_t>(2 * j)] - p.mean(j)) *
                    p.eigenfunctions(j, k);
      EXPECT_NEAR(s(k), integral, 0.02 * std::sqrt(p.eigenvalues(k))) << "curve " << i << ", component " << k;
    }
  }
}

TEST(Pace, RecoversPlantedEigenfunctionsFromSparseCurvesAsNGrows) {
  const double small = eigen_error(fit_pace(planted(60, 6, 0.3, 8).curves, 2));
  const Pace large = fit_pace(planted(3000, 6, 0.3, 8).curves, 2);
  EXPECT_LT(eigen_error(large), 0.01);
  EXPECT_LT(eigen_error(large), small);
  EXPECT_NEAR(large.eigenvalues(0), 4.0, 0.5);
  EXPECT_NEAR(large.eigenvalues(1), 1.0, 0.25);
  EXPECT_NEAR(large.noise_variance, 0.09, 0.03);
}

TEST(Pace, BeatsPerCurveSplineScoresWithFivePointsPerCurve) {
  const Planted d = planted(500, 5, 0.3, 21);
  Matrix pace(500, 2);
  const Pace p = fit_pace(d.curves, 2);
  for (int i = 0; i < 500; ++i) pace.row(i) = p.scores(d.curves[static_cast<std::size_t>(i)], 2).transpose();
  // The spline route at its best penalty (chosen against the truth: an upper bound on what it can do).
  const BSplineBasis basis(10);
  double spline = INFINITY;
  for (double lambda : {1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0}) {
    Matrix c(500, 10);
    for (int i = 0; i < 500; ++i)
      c.row(i) = fit_curve(basis, basis.roughness(), lambda, d.curves[static_cast<std::size_t>(i)].t,
                           d.curves[static_cast<std::size_t>(i)].x, "c")
                     .transpose();
    const Fpca f = fit_fpca(c, basis.gram(), 2);
    spline = std::min(spline, score_error(f.scores(c, basis.gram()), d.scores));
  }
  const double ours = score_error(pace, d.scores);
  EXPECT_LT(ours, 0.7 * spline) << "PACE " << ours << ", best spline " << spline;
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
  o.width = 5, o.depth = 2, o.J = 2, o.neurons = 3, o.weight_functions = 3;
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

TEST(Data, CrossValidationFoldsPartitionTheSamples) {
  // 93 samples (Berkeley growth), 5 folds, validation share 19 / (55 + 19) of the non-test part.
  std::vector<std::size_t> order(93);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = (i * 37) % 93;  // some permutation
  std::vector<int> tested(93, 0);
  for (int f = 0; f < 5; ++f) {
    std::vector<std::int64_t> sizes;
    const auto out = cv_fold(order, 5, f, {55, 19, 19}, 3, sizes);
    ASSERT_EQ(sizes.size(), 3u);
    EXPECT_EQ(sizes[0] + sizes[1] + sizes[2], 93);
    EXPECT_TRUE(sizes[2] == 18 || sizes[2] == 19);
    EXPECT_NEAR(static_cast<double>(sizes[1]) / (sizes[0] + sizes[1]), 19.0 / 74.0, 0.01);
    std::vector<std::size_t> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);  // a permutation: disjoint parts
    for (std::size_t i = static_cast<std::size_t>(sizes[0] + sizes[1]); i < out.size(); ++i) ++tested[out[i]];
  }
  for (int c : tested) EXPECT_EQ(c, 1);  // every sample is tested exactly once
}

TEST(Data, RawGridNetworkRefusesIrregularCurves) {
  Problem p;
  p.predictors = {"x"};
  p.regular = false;
  EXPECT_THROW(raw_design(p, "functional_reg.raw_mlp"), nexp::ConfigError);
}
