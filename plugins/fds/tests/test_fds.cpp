// fds's tests: every value against a closed form, a hand computation or an independent reference.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <cmath>
#include <filesystem>

#include <nexp/error.hpp>
#include <unistd.h>

#include "drivers.hpp"
#include "metrics.hpp"
#include "mixture.hpp"
#include "mlp_denoiser.hpp"
#include "sampler.hpp"

using namespace fds;

namespace {

// Data N(0, sd^2 I): D(x; sigma) = sd^2 / (sd^2 + sigma^2) x.
class GaussianDenoiser : public Denoiser {
 public:
  explicit GaussianDenoiser(double sd) : v_(sd * sd) {}
  void denoise(const Mat& x, double sigma, Mat& out) const override { out = (v_ / (v_ + sigma * sigma)) * x; }

 private:
  double v_;
};

Mat column(std::initializer_list<double> v) {
  Mat m(static_cast<Eigen::Index>(v.size()), 1);
  Eigen::Index i = 0;
  for (double x : v) m(i++, 0) = x;
  return m;
}

Mat normals(Eigen::Index n, Eigen::Index d, std::uint64_t seed, double sd = 1.0, double shift = 0.0) {
  nexp::Random r(seed);
  Mat x(n, d);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = shift + sd * r.normal();
  return x;
}

}  // namespace

TEST(Schedule, MatchesEdmEquation5ByHand) {
  const auto t = edm_schedule(4, 0.002, 80.0, 7.0);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_NEAR(t[0], 80.0, 1e-12);
  EXPECT_NEAR(t[3], 0.002, 1e-15);
  EXPECT_EQ(t[4], 0.0);
  const double a = std::pow(80.0, 1 / 7.0), b = std::pow(0.002, 1 / 7.0);
  EXPECT_NEAR(t[1], std::pow(a + (b - a) / 3, 7), 1e-12);
  EXPECT_NEAR(t[1], 9.7232, 1e-3);  // (80^(1/7) - (80^(1/7) - 0.002^(1/7)) / 3)^7
}

TEST(Steps, EulerHeunAndDpmSolverMatchHandComputedValues) {
  GaussianDenoiser d(1.0);  // D = x / (1 + sigma^2)
  const Mat x = column({2.0});
  int nfe = 0;
  // Euler from 2 to 1: D = 2/5 = 0.4, slope = (2 - 0.4) / 2 = 0.8, x' = 2 - 0.8 = 1.2.
  EXPECT_NEAR(euler_step(d, x, 2.0, 1.0, nfe)(0, 0), 1.2, 1e-15);
  // Heun: at 1, D = 1.2 / 2 = 0.6, slope2 = 0.6; x' = 2 - (0.8 + 0.6) / 2 = 1.3.
  EXPECT_NEAR(heun_step(d, x, 2.0, 1.0, nfe)(0, 0), 1.3, 1e-15);
  EXPECT_EQ(nfe, 3);
  // DPM-Solver++(2M): first order x' = (1/2) 2 - expm1(-ln 2) 0.4 = 1 + 0.5 * 0.4 = 1.2 (= Euler here).
  const Mat den = column({0.4});
  EXPECT_NEAR(dpmpp_2m_step(x, den, Mat(), 2.0, 1.0, 0.0)(0, 0), 1.2, 1e-15);
  // Second order with D_prev = 0.3, h_last = h = ln 2 (r = 1): D' = 1.5 * 0.4 - 0.5 * 0.3 = 0.45,
  // x' = 1 + 0.5 * 0.45 = 1.225.
  EXPECT_NEAR(dpmpp_2m_step(x, den, column({0.3}), 2.0, 1.0, std::log(2.0))(0, 0), 1.225, 1e-15);
  EXPECT_EQ(dpmpp_2m_step(x, den, column({0.3}), 2.0, 0.0, std::log(2.0))(0, 0), 0.4);  // last step: D
}

// The probability-flow ODE on N(0, s^2) data: x(sigma) = x(sigma0) sqrt(s^2 + sigma^2) / sqrt(s^2 + sigma0^2).
TEST(Steps, HeunErrorFallsFourfoldPerHalvedStep) {
  GaussianDenoiser d(0.5);
  auto error = [&](int n) {
    Mat x = column({1.0});
    int nfe = 0;
    for (int i = 0; i < n; ++i) x = heun_step(d, x, 3.0 - 2.5 * i / n, 3.0 - 2.5 * (i + 1) / n, nfe);
    return std::abs(x(0, 0) - std::sqrt(0.25 + 0.25) / std::sqrt(0.25 + 9.0));
  };
  const double e10 = error(10), e20 = error(20), e40 = error(40);
  EXPECT_NEAR(e10 / e20, 4.0, 0.4);
  EXPECT_NEAR(e20 / e40, 4.0, 0.2);
}

TEST(Samplers, StrengthZeroIsEulerBitwise) {
  nexp::Random rng(3);
  MixtureSpec spec;
  const MixtureDenoiser d(make_mixture(spec, rng));
  const Mat z = normals(500, 2, 11);
  SamplerConfig c;
  c.kind = SamplerKind::Euler, c.nfe = 6;
  const auto euler = sample(c, d, z, nullptr);
  GaussianNoise g(nexp::Random(5));
  c.kind = SamplerKind::Sde, c.strength = 0.0;
  const auto sde = sample(c, d, z, &g);
  EXPECT_EQ(euler.nfe, 6);
  EXPECT_EQ(sde.nfe, 6);
  EXPECT_TRUE((euler.x.array() == sde.x.array()).all());
  int n1 = 0;
  Mat den(z.rows(), 2);
  d.denoise(z, 3.0, den);
  const Mat a = euler_step(d, z, 3.0, 2.0, n1), b = langevin_step(z, den, normals(500, 2, 12), 3.0, 2.0, 0.0);
  EXPECT_TRUE((a.array() == b.array()).all());
}

TEST(Samplers, NfeIsCountedExactly) {
  GaussianDenoiser d(1.0);
  const Mat z = normals(10, 1, 1);
  GaussianNoise g(nexp::Random(1));
  for (auto [kind, nfe, expected] : std::vector<std::tuple<SamplerKind, int, int>>{
           {SamplerKind::Euler, 6, 6}, {SamplerKind::Heun, 6, 5}, {SamplerKind::DpmSolver2M, 4, 4},
           {SamplerKind::EdmChurn, 10, 9}, {SamplerKind::Sde, 8, 8}}) {
    SamplerConfig c;
    c.kind = kind, c.nfe = nfe, c.strength = 0.5;
    EXPECT_EQ(sample(c, d, z, &g).nfe, expected);
  }
}

// Reverse SDE (strength 1) on N(0, s^2): x' = a x + b eta with a = 1 - 2 h (1 - c) / t, b^2 = 2 t h,
// c = s^2 / (s^2 + t^2); the last step x = c x. The sampler's variance follows v' = a^2 v + b^2, and with
// fine steps the recursion ends at s^2.
TEST(Samplers, SdeEndpointKeepsTheGaussianMarginalVariance) {
  const double s2 = 0.25;
  auto recursion = [&](int steps) {
    const auto t = edm_schedule(steps, 0.002, 10.0);
    double v = 100.0;
    for (int i = 0; i < steps; ++i) {
      const double ti = t[i], tn = t[i + 1], c = s2 / (s2 + ti * ti);
      if (tn == 0) return c * c * v;
      const double h = ti - tn, a = 1 - 2 * h * (1 - c) / ti;
      v = a * a * v + 2 * ti * h;
    }
    return v;
  };
  EXPECT_NEAR(recursion(4000), s2, 0.01 * s2);
  GaussianDenoiser d(0.5);
  const Mat z = normals(100000, 1, 7);
  GaussianNoise g(nexp::Random(8));
  SamplerConfig c;
  c.kind = SamplerKind::Sde, c.nfe = 8, c.strength = 1.0, c.sigma_max = 10.0;
  const Mat x = sample(c, d, z, &g).x;
  const double var = x.squaredNorm() / static_cast<double>(x.rows());
  EXPECT_NEAR(var, recursion(8), 0.02 * recursion(8));
}

TEST(Mixture, ExactDenoiserIsTweediesPosteriorMean) {
  nexp::Random rng(4);
  MixtureSpec spec;
  spec.kind = "gmm", spec.dim = 3, spec.components = 4, spec.scale = 1.0, spec.sd = 0.3;
  const Mixture m = make_mixture(spec, rng);
  const MixtureDenoiser d(m);
  const double sigma = 0.7;
  // log p_sigma(x) from the density with full covariances, its gradient by central differences.
  auto log_p = [&](const Eigen::VectorXd& x) {
    double p = 0;
    for (const auto& c : m.components) {
      const Eigen::MatrixXd cov = c.basis * c.lambda.asDiagonal() * c.basis.transpose() +
                                  sigma * sigma * Eigen::MatrixXd::Identity(3, 3);
      const Eigen::LDLT<Eigen::MatrixXd> l(cov);
      const Eigen::VectorXd r = x - c.mean;
      p += c.weight * std::exp(-0.5 * r.dot(l.solve(r))) / std::sqrt(std::pow(2 * M_PI, 3) * cov.determinant());
    }
    return std::log(p);
  };
  const Mat x = normals(5, 3, 9, 1.0);
  Mat out(5, 3);
  d.denoise(x, sigma, out);
  for (Eigen::Index i = 0; i < 5; ++i) {
    const Eigen::VectorXd xi = x.row(i).transpose();
    for (int j = 0; j < 3; ++j) {
      Eigen::VectorXd e = Eigen::VectorXd::Zero(3);
      e(j) = 1e-5;
      const double grad = (log_p(xi + e) - log_p(xi - e)) / 2e-5;
      EXPECT_NEAR(out(i, j), xi(j) + sigma * sigma * grad, 1e-6);
    }
  }
}

TEST(Mixture, BiasedDenoiserErrorScalesWithTheSetting) {
  nexp::Random r1(2), r2(2);
  const Mixture m = make_mixture(MixtureSpec{}, r1);
  nexp::Random e1(5), e0(5);
  const BiasedMixtureDenoiser zero(m, 0.0, e0), some(m, 0.1, e1);
  const MixtureDenoiser exact(m);
  const Mat x = normals(200, 2, 1, 2.0);
  Mat a(200, 2), b(200, 2), c(200, 2);
  exact.denoise(x, 1.0, a), zero.denoise(x, 1.0, b), some.denoise(x, 1.0, c);
  EXPECT_LT((a - b).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT((a - c).cwiseAbs().maxCoeff(), 1e-3);
  some.denoise(x, 1e-4, c), exact.denoise(x, 1e-4, a);  // c_out -> 0 and the posterior is sharp
  EXPECT_LT((a - c).cwiseAbs().maxCoeff(), 1e-3);
}

TEST(Drivers, OuQAndPoissonSolutionMatchClosedForms) {
  DriverParams p;
  p.kind = DriverKind::Ou, p.rate = 2.0, p.dt = 0.01;
  nexp::Random init(1), rng(2);
  auto d = make_driver(p, 20000, init);
  const auto q = estimate_q(*d, p.dt, 1200, 250, 2048, rng);  // T = 12 = 24 correlation times
  EXPECT_NEAR(q.variance, 1.0, 0.05);                    // Q = 2 / theta
  EXPECT_NEAR(q.green_kubo, 1.0, 0.05);
  // chi(x) = x / theta (1 - e^{-theta T}) at each sampled state.
  const auto few = estimate_poisson(*d, p, 4, 20000, 1.5, 0.0, rng);
  for (std::size_t i = 0; i < few.chi.size(); ++i)
    EXPECT_NEAR(few.chi[i], few.state[i] / 2.0 * (1 - std::exp(-3.0)), 0.05 * std::max(0.6, std::abs(few.state[i]) / 2));
  // Unbounded: the largest |chi| grows with the states sampled (like sqrt(2 ln n) / theta).
  const auto many = estimate_poisson(*d, p, 200, 200, 1.5, 0.0, rng);
  EXPECT_GT(many.c_chi, few.c_chi);
  EXPECT_GT(many.c_chi, 0.95);  // sqrt(2 ln 200) / 2 * 0.95 = 1.55; 200 states with all |x| < 2 has chance 1e-4
  EXPECT_TRUE(std::isinf(c_chi_closed_form(p)));
}

TEST(Drivers, TelegraphQAndCChiWithinFivePercent) {
  DriverParams p;
  p.kind = DriverKind::Telegraph, p.rate = 2.0, p.amplitude = 1.5, p.dt = 0.01;
  nexp::Random init(3), rng(4);
  auto d = make_driver(p, 20000, init);
  const auto q = estimate_q(*d, p.dt, 1200, 150, 2048, rng);
  EXPECT_NEAR(q.variance / q_closed_form(p), 1.0, 0.05);  // a^2 / r = 1.125
  EXPECT_NEAR(q.green_kubo / q_closed_form(p), 1.0, 0.05);
  const auto chi = estimate_poisson(*d, p, 4, 30000, 1.5, 0.0, rng);  // truncation e^{-6}
  EXPECT_NEAR(chi.c_chi / c_chi_closed_form(p), 1.0, 0.05);          // a / (2r) = 0.375
  for (double s : chi.state) EXPECT_EQ(std::abs(s), 1.5);
}

TEST(Drivers, LorenzIsBoundedAndItsTwoQEstimatesAgree) {
  DriverParams p;
  p.kind = DriverKind::Lorenz;
  nexp::Random init(5), rng(6);
  auto d = make_driver(p, 3000, init);
  EXPECT_LT(sup_abs(*d, p.dt, 300, rng), 4.0);  // the attractor is compact: standardised |xi| < ~3
  const auto q = estimate_q(*d, p.dt, 4000, 500, 256, rng);
  EXPECT_GT(q.variance, 0.05);
  EXPECT_NEAR(q.green_kubo / q.variance, 1.0, 0.15);
  const auto m = lorenz_moments();
  EXPECT_NEAR(m.mean[2], 23.5, 0.5);  // the z mean on the attractor
  EXPECT_NEAR(m.sd[0], 7.9, 0.3);
}

TEST(Drivers, FastTelegraphIncrementsHaveUnitVariance) {
  DriverParams p;
  p.kind = DriverKind::Telegraph, p.rate = 40.0, p.dt = 0.01;
  nexp::Random init(7);
  auto d = make_driver(p, 20000, init);
  auto q = slot_q(p, *d, {});
  DriverNoise noise(std::move(d), q, 100, 0.01, nexp::Random(8));  // T = 1 = 80 correlation times
  Mat eta(10000, 2);
  noise.next(eta);
  const double var = eta.squaredNorm() / static_cast<double>(eta.size());
  // Var I(T) = Q T - Q / (2r) (1 - e^{-2rT}): the ratio is 1 - 1/80.
  EXPECT_NEAR(var, 1.0 - 1.0 / 80, 0.03);
}

TEST(Metrics, MmdMatchesTheGaussianClosedForm) {
  const auto bw = mmd_bandwidths(1.0);
  const Mat x = normals(1500, 2, 1, 1.0), y = normals(1500, 2, 2, 1.5, 0.5);
  // |m1 - m2| = 0.5 sqrt 2; V-statistic expectation; sd of the estimate ~ 0.005 here.
  const double expected = mmd2_expected_gaussian(0.5 * std::sqrt(2.0), 1.0, 2.25, 2, 1500, 1500, bw);
  EXPECT_NEAR(mmd2(x, y, bw), expected, 0.1 * expected);
  const Mat y2 = normals(1500, 2, 3, 1.0);
  const double same = mmd2_expected_gaussian(0, 1.0, 1.0, 2, 1500, 1500, bw);
  EXPECT_NEAR(mmd2(x, y2, bw), same, 0.5 * same);
}

TEST(Metrics, SlicedW2MatchesTheGaussianClosedForm) {
  const Mat x = normals(5000, 3, 1, 1.0), y = normals(5000, 3, 2, 2.0, 1.0);
  nexp::Random rng(3);
  // |m1 - m2|^2 / d + (s1 - s2)^2 = 3/3 + 1 = 2.
  EXPECT_NEAR(sliced_w2(x, y, 200, rng), std::sqrt(2.0), 0.06);
}

TEST(Metrics, FrechetMatchesTheGaussianClosedForm) {
  const Mat x = normals(50000, 2, 1, 1.0), y = normals(50000, 2, 2, 2.0, 1.0);
  // |dm|^2 + tr(I + 4I - 2 * 2I) = 2 + 2 = 4.
  EXPECT_NEAR(frechet(x, y), 4.0, 0.08);
  Eigen::MatrixXd s1(2, 2), s2(2, 2);
  s1 << 2, 0.5, 0.5, 1;
  s2 << 1, 0, 0, 3;
  Eigen::VectorXd m = Eigen::VectorXd::Zero(2);
  EXPECT_NEAR(frechet_gaussian(m, s1, m, s1), 0.0, 1e-10);
  // Diagonal case: sum (sqrt a - sqrt b)^2.
  Eigen::MatrixXd d1 = Eigen::Vector2d(4, 1).asDiagonal(), d2 = Eigen::Vector2d(1, 9).asDiagonal();
  EXPECT_NEAR(frechet_gaussian(m, d1, m, d2), 1.0 + 4.0, 1e-10);
}

TEST(Metrics, ModeStatsAndKnnOnTrueSamples) {
  nexp::Random rng(1);
  const Mixture m = make_mixture(MixtureSpec{}, rng);
  const Mat x = m.sample(20000, rng);
  const auto s = mode_stats(x, m);
  EXPECT_NEAR(s.precision, 1 - std::exp(-4.5), 0.005);  // P(chi^2_2 <= 9)
  EXPECT_EQ(s.coverage, 1.0);
  const Mat a = x.topRows(500);
  const auto same = knn_precision_recall(a, a);
  EXPECT_EQ(same.precision, 1.0);
  EXPECT_EQ(same.recall, 1.0);
  const Mat far = (a.array() + 100.0).matrix();
  const auto none = knn_precision_recall(far, a);
  EXPECT_EQ(none.precision, 0.0);
  EXPECT_EQ(none.recall, 0.0);
}

// ------------------------------------------------------------------ trained denoisers

namespace {

// Central differences of L(theta) = sum(F .* r) against Mlp::backward.
double backprop_relative_error(int emb, int depth) {
  nexp::Random rng(11);
  Mlp net(3, emb, 5, depth, 2, rng);
  for (Eigen::Index i = 0; i < net.theta.size(); ++i) net.theta(i) += 0.1 * rng.normal();  // nonzero biases
  const Mat x = normals(4, 3, 12);
  Eigen::VectorXd c(4);
  c << -1.3, 0.2, 0.7, 1.1;
  const Mat r = normals(4, 2, 13);
  Mlp::Cache cache;
  net.forward(x, c, &cache);
  const Eigen::VectorXd g = net.backward(cache, r);
  Eigen::VectorXd fd(net.theta.size());
  const double h = 1e-5;
  for (Eigen::Index i = 0; i < net.theta.size(); ++i) {
    const double keep = net.theta(i);
    net.theta(i) = keep + h;
    const double up = net.forward(x, c).cwiseProduct(r).sum();
    net.theta(i) = keep - h;
    const double down = net.forward(x, c).cwiseProduct(r).sum();
    net.theta(i) = keep;
    fd(i) = (up - down) / (2 * h);
  }
  return (g - fd).norm() / fd.norm();
}

// N(m, diag(v)) data: D_j(x; s) = m_j + v_j / (v_j + s^2) (x_j - m_j); the RMS error of `d` over
// x ~ p_s, relative to the RMS size of the exact D's deviation from the mean.
double gaussian_denoiser_error(const Denoiser& d, const Eigen::RowVectorXd& m, const Eigen::RowVectorXd& v, double s) {
  Mat x = normals(2000, m.size(), 21);
  for (Eigen::Index j = 0; j < m.size(); ++j) x.col(j) = (m(j) + std::sqrt(v(j) + s * s) * x.col(j).array()).matrix();
  Mat exact = x, out;
  for (Eigen::Index j = 0; j < m.size(); ++j) exact.col(j) = (m(j) + v(j) / (v(j) + s * s) * (x.col(j).array() - m(j))).matrix();
  d.denoise(x, s, out);
  return std::sqrt((out - exact).squaredNorm() / static_cast<double>(x.size())) / std::sqrt(v.mean());
}

}  // namespace

TEST(Mlp, BackpropMatchesCentralDifferences) {
  EXPECT_LT(backprop_relative_error(Mlp::kEmbedding, 2), 1e-5);
  EXPECT_LT(backprop_relative_error(0, 1), 1e-5);
}

TEST(Mlp, EdmCoefficientsMatchTable1) {
  const double sd = 0.5;
  for (double s : {0.002, 0.3, 0.5, 2.0, 80.0}) {
    const auto k = edm_coefficients(s, sd);
    EXPECT_NEAR(k.c_skip, sd * sd / (s * s + sd * sd), 1e-15);
    EXPECT_NEAR(k.c_out * k.c_out, s * s * sd * sd / (s * s + sd * sd), 1e-12 * s * s);
    EXPECT_NEAR(k.c_in, 1 / std::sqrt(s * s + sd * sd), 1e-12);
    EXPECT_NEAR(k.c_noise, 0.25 * std::log(s), 1e-15);
    EXPECT_NEAR(k.weight * k.c_out * k.c_out, 1.0, 1e-12);  // lambda = 1 / c_out^2
    EXPECT_NEAR(k.c_skip + k.c_out * k.c_out / (sd * sd), 1.0, 1e-12);
  }
  const auto k = edm_coefficients(0.5, 0.5);  // by hand: 1/2, 0.25 / sqrt(0.5), sqrt 2, ln(0.5) / 4
  EXPECT_NEAR(k.c_skip, 0.5, 1e-15);
  EXPECT_NEAR(k.c_out, 0.3535533905932738, 1e-15);
  EXPECT_NEAR(k.c_in, 1.4142135623730951, 1e-15);
  EXPECT_NEAR(k.c_noise, -0.17328679513998632, 1e-15);
}

TEST(Mlp, EdmDenoiserIsSkipPlusScaledNetwork) {
  const Mat data = normals(50, 3, 31, 0.7);
  nexp::Random rng(32);
  MlpTraining t;
  t.width = 8, t.depth = 1, t.steps = 1, t.batch = 4;
  MlpDenoiser d(MlpDenoiser::Family::Edm, data, t, rng);
  d.net().theta.setZero();
  d.net().theta.tail(3).setConstant(1.0);  // the output bias: F = 1
  const Mat x = normals(5, 3, 33);
  Mat out;
  for (double s : {0.01, 1.0, 40.0}) {
    const auto k = edm_coefficients(s, d.sigma_data());
    d.denoise(x, s, out);
    EXPECT_LT((out - (k.c_skip * x.array() + k.c_out).matrix()).cwiseAbs().maxCoeff(), 1e-12) << s;
  }
}

TEST(Mlp, VpScheduleIsDdpmLinearBeta) {
  const VpSchedule v;
  double abar = 1;
  for (int t = 0; t < 1000; ++t) abar *= 1 - (1e-4 + (0.02 - 1e-4) * t / 999.0);
  EXPECT_NEAR(v.alpha_bar(999), abar, 1e-12);
  EXPECT_NEAR(v.alpha_bar(999), 4.0358e-5, 1e-8);  // DDPM's abar_T
  EXPECT_NEAR(v.sigma(0), std::sqrt(1e-4 / (1 - 1e-4)), 1e-15);
  for (int t : {0, 1, 17, 500, 998}) EXPECT_NEAR(v.timestep(v.sigma(t)), t, 1e-9);
  EXPECT_NEAR(v.timestep(v.sigma_at(123.4)), 123.4, 1e-9);
  EXPECT_EQ(v.timestep(1e-3), 0.0);    // below sigma_0: clamped
  EXPECT_EQ(v.timestep(1e3), 999.0);   // above sigma_999 ~ 157: clamped
}

TEST(Mlp, VpWrapOfTheExactEpsPredictorIsTheGaussianDenoiser) {
  // 1-D N(m, v): x_vp = sqrt(a) y + sqrt(1 - a) e, E[e | x_vp] = sqrt(1 - a) (x_vp - sqrt(a) m) / (a v + 1 - a).
  const double m = 0.3, v = 0.49;
  const VpSchedule schedule;
  const VpDenoiser d(
      [&](const Mat& xv, double t, Mat& eps) {
        const double s = schedule.sigma_at(t), a = 1 / (1 + s * s);
        eps = (std::sqrt(1 - a) / (a * v + 1 - a)) * (xv.array() - std::sqrt(a) * m).matrix();
      },
      schedule);
  const Mat x = column({-3.0, -0.4, 0.0, 0.8, 5.0});
  Mat out;
  for (double s : {0.05, 0.7, 5.0, 50.0}) {
    d.denoise(x, s, out);
    for (Eigen::Index i = 0; i < x.rows(); ++i) EXPECT_NEAR(out(i, 0), m + v / (v + s * s) * (x(i, 0) - m), 1e-10) << s;
  }
}

TEST(Mlp, TrainingOnAGaussianApproachesTheExactDenoiser) {
  // 2-D N((0.5, -1), diag(0.25, 1)), 20000 samples; 600 Adam steps of a 2 x 64 MLP per family.
  Eigen::RowVectorXd m(2), v(2);
  m << 0.5, -1.0;
  v << 0.25, 1.0;
  Mat data = normals(20000, 2, 41);
  for (Eigen::Index j = 0; j < 2; ++j) data.col(j) = (m(j) + std::sqrt(v(j)) * data.col(j).array()).matrix();
  MlpTraining t;
  t.width = 64, t.depth = 2, t.steps = 600, t.batch = 128, t.lr = 3e-3;
  for (auto family : {MlpDenoiser::Family::Edm, MlpDenoiser::Family::Vp}) {
    nexp::Random rng(42);
    const MlpDenoiser d(family, data, t, rng);
    // Measured (this seed): edm 0.003 / 0.016 / 0.047, vp 0.005 / 0.021 / 0.086 at sigma 0.05 / 0.5 / 2. The
    // error grows at large sigma, rare under ln sigma ~ N(-1.2, 1.2^2) and, for vp, multiplied by sigma in
    // D = x - sigma eps (sigma 20: edm 0.25, vp 0.84); the samplers' first steps see it.
    for (double s : {0.05, 0.5, 2.0})
      EXPECT_LT(gaussian_denoiser_error(d, m, v, s), 0.15) << (family == MlpDenoiser::Family::Edm ? "edm" : "vp") << " sigma " << s;
  }
}

TEST(Mlp, CheckpointLoadsTheSameDenoiserAndRefusesOtherData) {
  const Mat data = normals(200, 3, 51, 0.7);
  MlpTraining t;
  t.width = 16, t.depth = 2, t.steps = 20, t.batch = 8;
  nexp::Random rng(52);
  const MlpDenoiser trained(MlpDenoiser::Family::Vp, data, t, rng);
  const auto dir = std::filesystem::temp_directory_path() / ("nexp-fds-ckpt-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "gmm_mlp_vp.bin";
  trained.save(file);

  const auto loaded = MlpDenoiser::load(file, MlpDenoiser::Family::Vp, data);
  EXPECT_EQ(loaded->sigma_data(), trained.sigma_data());
  EXPECT_EQ(loaded->final_loss(), trained.final_loss());
  EXPECT_EQ(loaded->training().steps, 20);
  EXPECT_EQ(loaded->training().width, 16);
  const Mat x = normals(7, 3, 53, 2.0);
  Mat a, b;
  for (double s : {0.01, 0.5, 30.0}) {
    trained.denoise(x, s, a), loaded->denoise(x, s, b);
    EXPECT_EQ(a, b) << s;  // bit for bit
  }
  auto refusal = [&](const std::filesystem::path& f, MlpDenoiser::Family family, const Mat& d) -> std::string {
    try {
      MlpDenoiser::load(f, family, d);
    } catch (const nexp::DataError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_NE(refusal(file, MlpDenoiser::Family::Edm, data).find("holds an mlp_vp denoiser"), std::string::npos);
  Mat other = data;
  other(0, 0) += 1e-12;  // one value differs: other training data
  EXPECT_NE(refusal(file, MlpDenoiser::Family::Vp, other).find("trained on other data"), std::string::npos);
  // Cut short: the network's parameters end early.
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size - 8);
  EXPECT_NE(refusal(file, MlpDenoiser::Family::Vp, data).find("truncated"), std::string::npos);
  std::filesystem::remove_all(dir);
}
