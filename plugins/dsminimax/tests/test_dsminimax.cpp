// dsminimax tests: closed forms (ring spectrum, Phi and y* of the NC-PL family, a quadratic saddle),
// invariants (gradient tracking's mean), and step-for-step identities with independent references
// (centralized DS-GDA, GT-GDA).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <Eigen/LU>
#include <nexp/error.hpp>

#include "../algorithms.hpp"
#include "../graph.hpp"
#include "../methods.hpp"
#include "../problems.hpp"

using namespace dsminimax;

namespace {

NcplSpec small_spec(int nodes, double kappa, double noise = 0) {
  NcplSpec s;
  s.nodes = nodes, s.kappa = kappa, s.noise = noise, s.instance = 3;
  return s;
}

double max_abs(const Matrix& m) { return m.cwiseAbs().maxCoeff(); }

// f_k(x, y) = a/2 ||x||^2 + x^T C_k y - b/2 ||y||^2 - c_k^T x + d_k^T y: strongly convex-concave; the
// saddle solves [a I, Cbar; Cbar^T, -b I] [x; y] = [cbar; -dbar].
class Quadratic : public Problem {
 public:
  Quadratic(int nodes, int dx, int dy) : m_(nodes), dx_(dx), dy_(dy) {
    auto rng = nexp::Random::stream(7, "quadratic");
    for (int k = 0; k < nodes; ++k) {
      Matrix c(dx, dy);
      for (int i = 0; i < dx; ++i)
        for (int j = 0; j < dy; ++j) c(i, j) = 0.3 * rng.normal();
      Vector l(dx), d(dy);
      for (int i = 0; i < dx; ++i) l(i) = rng.normal();
      for (int j = 0; j < dy; ++j) d(j) = rng.normal();
      c_.push_back(c), l_.push_back(l), d_.push_back(d);
    }
  }
  int nodes() const override { return m_; }
  int dim_x() const override { return dx_; }
  int dim_y() const override { return dy_; }
  std::string describe() const override { return "quadratic"; }
  double smoothness() const override { return 2.0; }
  double pl_constant() const override { return 1.0; }
  bool stochastic() const override { return false; }
  Sample draw(int, nexp::Random&) const override { return {}; }
  void gradient(int k, const Vector& x, const Vector& y, const Sample*, Vector& gx, Vector& gy) const override {
    gx = x + c_[k] * y - l_[k];
    gy = c_[k].transpose() * x - y + d_[k];
  }
  double phi(const Vector&) const override { return 0; }
  Vector grad_phi(const Vector& x) const override {
    Vector gx, gy, sx = Vector::Zero(dx_);
    for (int k = 0; k < m_; ++k) gradient(k, x, best_response(x), nullptr, gx, gy), sx += gx / m_;
    return sx;
  }
  Vector best_response(const Vector& x) const override {
    Vector y = Vector::Zero(dy_);
    for (int k = 0; k < m_; ++k) y += (c_[k].transpose() * x + d_[k]) / m_;
    return y;
  }
  Vector initial_x(nexp::Random&) const override { return Vector::Ones(dx_); }
  Vector initial_y() const override { return Vector::Zero(dy_); }
  std::pair<Vector, Vector> saddle() const {
    Matrix c = Matrix::Zero(dx_, dy_);
    Vector l = Vector::Zero(dx_), d = Vector::Zero(dy_);
    for (int k = 0; k < m_; ++k) c += c_[k] / m_, l += l_[k] / m_, d += d_[k] / m_;
    Matrix kkt(dx_ + dy_, dx_ + dy_);
    kkt << Matrix::Identity(dx_, dx_), c, c.transpose(), -Matrix::Identity(dy_, dy_);
    Vector rhs(dx_ + dy_);
    rhs << l, -d;
    const Vector s = kkt.fullPivLu().solve(rhs);
    return {s.head(dx_), s.tail(dy_)};
  }

 private:
  int m_, dx_, dy_;
  std::vector<Matrix> c_;
  std::vector<Vector> l_, d_;
};

}  // namespace

// ---------------------------------------------------------------- graphs

TEST(DsminimaxGraph, RingSecondEigenvalueIsClosedForm) {
  for (int m : {3, 5, 8, 16, 32}) {
    const Mixing w = ring_mixing(m);
    EXPECT_NEAR(w.lambda, 1.0 / 3 + 2.0 / 3 * std::cos(2 * M_PI / m), 1e-12) << "M = " << m;
  }
}

TEST(DsminimaxGraph, MetropolisIsSymmetricDoublyStochastic) {
  auto rng = nexp::Random::stream(1, "test");
  const Mixing w = erdos_renyi_mixing(16, 0.3, rng);
  const auto d = w.dense();
  for (int i = 0; i < 16; ++i) {
    double row = 0;
    for (int j = 0; j < 16; ++j) {
      row += d[i][j];
      EXPECT_DOUBLE_EQ(d[i][j], d[j][i]);
    }
    EXPECT_NEAR(row, 1.0, 1e-15);
    EXPECT_GT(d[i][i], 0.0);
  }
  EXPECT_LT(w.lambda, 1.0);
  EXPECT_TRUE(connected(w.neighbours));
}

TEST(DsminimaxGraph, DisconnectedAndTwoNodeRingAreClearErrors) {
  auto rng = nexp::Random::stream(1, "test");
  EXPECT_THROW(erdos_renyi_mixing(32, 0.01, rng), nexp::ConfigError);
  EXPECT_THROW(ring_mixing(2), nexp::ConfigError);
  EXPECT_FALSE(connected({{1}, {0}, {}}));
}

// ---------------------------------------------------------------- the NC-PL family

TEST(DsminimaxNcpl, GradPhiMatchesFiniteDifferences) {
  const Ncpl p(small_spec(4, 30));
  auto rng = nexp::Random::stream(2, "x");
  const Vector x = p.initial_x(rng);
  const Vector g = p.grad_phi(x);
  const double h = 1e-6;
  for (int j = 0; j < p.dim_x(); ++j) {
    Vector e = Vector::Zero(p.dim_x());
    e(j) = h;
    EXPECT_NEAR((p.phi(x + e) - p.phi(x - e)) / (2 * h), g(j), 1e-6 * (1 + std::abs(g(j))));
  }
}

TEST(DsminimaxNcpl, BestResponseEqualsLongInnerAscentAndDanskin) {
  const Ncpl p(small_spec(4, 10));
  auto rng = nexp::Random::stream(2, "x");
  const Vector x = p.initial_x(rng);
  Vector y = Vector::Zero(p.dim_y()), gx, gy, sx, sy;
  for (int t = 0; t < 3000; ++t) {  // gradient ascent on f(x, .) = mean_k f_k, step 1/||A|| = 1
    sy = Vector::Zero(p.dim_y());
    for (int k = 0; k < p.nodes(); ++k) p.gradient(k, x, y, nullptr, gx, gy), sy += gy / p.nodes();
    y += sy;
  }
  EXPECT_LT((y - p.best_response(x)).norm(), 1e-9 * p.best_response(x).norm());
  sx = Vector::Zero(p.dim_x());  // Danskin: grad Phi(x) = grad_x f(x, y*(x))
  for (int k = 0; k < p.nodes(); ++k) p.gradient(k, x, p.best_response(x), nullptr, gx, gy), sx += gx / p.nodes();
  EXPECT_LT((sx - p.grad_phi(x)).norm(), 1e-9 * sx.norm());
  EXPECT_GE(p.phi(x), p.phi_lower_bound());
}

TEST(DsminimaxNcpl, UnboundedPhiIsRefused) {
  NcplSpec s = small_spec(2, 10);
  s.dim_x = 18;  // more primal directions than rank(A) = 15
  EXPECT_THROW(Ncpl{s}, nexp::ConfigError);
}

// ---------------------------------------------------------------- the iteration

TEST(DsminimaxIteration, TrackerMeanEqualsMeanLocalEstimateEveryStep) {
  const Ncpl p(small_spec(8, 30, 0.1));
  for (Algorithm a : {Algorithm::DsGda, Algorithm::GtGda, Algorithm::DmHsgd, Algorithm::Dream, Algorithm::DmGda}) {
    SimNetwork net(ring_mixing(8));
    StepSizes s = ds_gda_rule(p.smoothness(), p.pl_constant(), net.mixing().spectral_gap());
    s.hybrid = 0.2, s.refresh = 7, s.momentum = 0.5;
    Decentralized run(p, net, a, s, 5, Vector::Ones(p.dim_x()));
    for (int t = 0; t < 200; ++t) {
      run.step();
      const Vector dsx = run.tracker_x().colwise().mean() - run.estimate_x().colwise().mean();
      const Vector dsy = run.tracker_y().colwise().mean() - run.estimate_y().colwise().mean();
      ASSERT_LT(dsx.cwiseAbs().maxCoeff() + dsy.cwiseAbs().maxCoeff(), 1e-12) << "step " << t;
    }
  }
}

// Under additive noise g(x; xi) = grad f_k(x) + n(xi), DREAM's recursive estimator
// d+ = g(x+; xi) - g(x; xi) + d cancels the noise: once an exact refresh has set d, d is the exact local
// gradient at every later step (to rounding). Before the first refresh it carries the first draw's noise.
TEST(DsminimaxIteration, DreamEstimateIsExactAfterARefreshUnderAdditiveNoise) {
  const Ncpl p(small_spec(8, 30, 0.5));
  SimNetwork net(ring_mixing(8));
  StepSizes s = gt_gda_rule(p.smoothness(), p.pl_constant(), net.mixing().spectral_gap(), 1);
  s.refresh = 10;
  Decentralized run(p, net, Algorithm::Dream, s, 2, Vector::Ones(p.dim_x()));
  Vector gx, gy;
  for (int t = 1; t <= 60; ++t) {
    run.step();
    double worst = 0;
    for (int k = 0; k < 8; ++k) {
      p.gradient(k, run.x().row(k).transpose(), Vector(run.y().row(k).transpose()), nullptr, gx, gy);
      worst = std::max(worst, (run.estimate_x().row(k).transpose() - gx).cwiseAbs().maxCoeff());
    }
    if (t < 10) EXPECT_GT(worst, 1e-3) << "step " << t;  // the first draw's noise (sigma 0.5)
    else EXPECT_LT(worst, 1e-10) << "step " << t;
  }
}

TEST(DsminimaxIteration, OneNodeIsCentralizedDsGdaStepForStep) {
  const Ncpl p(small_spec(1, 100));
  SimNetwork net(ring_mixing(1));
  const StepSizes s = ds_gda_rule(p.smoothness(), p.pl_constant(), 1.0);
  const Vector x0 = Vector::LinSpaced(p.dim_x(), -1, 1);
  Decentralized run(p, net, Algorithm::DsGda, s, 0, x0);
  CentralState c{x0, p.initial_y(), x0, p.initial_y()};
  for (int t = 0; t < 500; ++t) {
    run.step();
    central_ds_gda_step(p, s, c);
    ASSERT_LT((run.x().row(0).transpose() - c.x).cwiseAbs().maxCoeff(), 1e-12) << "step " << t;
  }
  EXPECT_GT((c.x - x0).norm(), 1e-3);  // it moved
}

TEST(DsminimaxIteration, NoSmoothingIsGtGdaAtRatioOne) {
  const Ncpl p(small_spec(8, 30));
  SimNetwork a(ring_mixing(8)), b(ring_mixing(8));
  StepSizes s = ds_gda_rule(p.smoothness(), p.pl_constant(), a.mixing().spectral_gap());
  s.r1 = s.r2 = 0;
  StepSizes g;
  g.eta_x = g.eta_y = s.eta_x;
  const Vector x0 = Vector::Ones(p.dim_x());
  Decentralized ds(p, a, Algorithm::DsGda, s, 0, x0), gt(p, b, Algorithm::GtGda, g, 0, x0);
  for (int t = 0; t < 300; ++t) ds.step(), gt.step();
  EXPECT_EQ(max_abs(ds.x() - gt.x()), 0.0);
}

TEST(DsminimaxIteration, EveryMethodReachesTheQuadraticSaddle) {
  const Quadratic p(6, 4, 3);
  const auto [xs, ys] = p.saddle();
  for (Algorithm a : {Algorithm::DsGda, Algorithm::GtGda, Algorithm::DmHsgd, Algorithm::Dream, Algorithm::DmGda}) {
    SimNetwork net(ring_mixing(6));
    StepSizes s = a == Algorithm::DsGda ? ds_gda_rule(2, 1, net.mixing().spectral_gap())
                                        : gt_gda_rule(2, 1, net.mixing().spectral_gap(), 1);
    s.momentum = a == Algorithm::DmGda ? 0.5 : 1;
    Decentralized run(p, net, a, s, 0, Vector::Ones(4));
    for (int t = 0; t < 20000; ++t) run.step();
    EXPECT_LT((run.mean_x() - xs).norm(), 1e-8) << static_cast<int>(a);
    EXPECT_LT(run.consensus_error(), 1e-16);
  }
}

TEST(DsminimaxIteration, DsGdaReachesEpsOnNcpl) {
  NcplSpec spec = small_spec(8, 10);
  spec.instance = 4;
  const Ncpl p(spec);
  const Mixing w = ring_mixing(8);
  RunOptions o;
  o.steps = 50000;
  const Trace tr = run_to_eps(p, w, Algorithm::DsGda, steps_for(Algorithm::DsGda, o, p, w.spectral_gap()), o, 0);
  EXPECT_GT(tr.iterations_to_eps, 0);
  EXPECT_LE(tr.grad_phi_norm, o.eps);
  EXPECT_EQ(tr.rounds, tr.iterations_to_eps);
}

// ---------------------------------------------------------------- robust logistic regression

namespace {

LogregData tiny_logreg(int n, int d, int nodes) {
  auto rng = nexp::Random::stream(11, "logreg");
  LogregData data;
  data.a.resize(n, d);
  data.b.resize(n);
  data.rows.resize(static_cast<size_t>(nodes));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) data.a(i, j) = rng.normal();
    data.b(i) = rng.bernoulli(0.5) ? 1 : -1;
    data.rows[static_cast<size_t>(i * nodes / n)].push_back(i);
  }
  return data;
}

}  // namespace

TEST(DsminimaxLogreg, SimplexProjectionIsTheClosestPointOfTheSimplex) {
  auto rng = nexp::Random::stream(3, "simplex");
  Vector v(7);
  for (int i = 0; i < 7; ++i) v(i) = 2 * rng.normal();
  Vector y = v;
  project_simplex(y);
  EXPECT_NEAR(y.sum(), 1.0, 1e-14);
  EXPECT_GE(y.minCoeff(), 0.0);
  // Brute force: no random point of the simplex is closer to v.
  for (int t = 0; t < 2000; ++t) {
    Vector p(7);
    for (int i = 0; i < 7; ++i) p(i) = rng.exponential(1.0);
    p /= p.sum();
    EXPECT_LE((y - v).norm(), (p - v).norm() + 1e-12);
  }
}

TEST(DsminimaxLogreg, GradPhiMatchesFiniteDifferencesAndDanskin) {
  const RobustLogreg p(tiny_logreg(12, 3, 4), 0, 5.0);
  const Vector x = Vector::LinSpaced(3, -0.4, 0.7);
  const Vector g = p.grad_phi(x);
  const double h = 1e-6;
  for (int j = 0; j < 3; ++j) {
    Vector e = Vector::Zero(3);
    e(j) = h;
    EXPECT_NEAR((p.phi(x + e) - p.phi(x - e)) / (2 * h), g(j), 1e-6);
  }
  Vector sx = Vector::Zero(3), gx, gy;
  for (int k = 0; k < 4; ++k) p.gradient(k, x, p.best_response(x), nullptr, gx, gy), sx += gx / 4;
  EXPECT_LT((sx - g).norm(), 1e-12);
}

TEST(DsminimaxLogreg, LibsvmReaderNamesTheBadToken) {
  const auto file = std::filesystem::temp_directory_path() / "dsminimax_bad.libsvm";
  {
    std::ofstream out(file);
    out << "+1 1:1 3:1 \r\n-1 2:1 9:1\n";
  }
  EXPECT_THROW(read_libsvm(file, 4), nexp::DataError);
  const LogregData d = read_libsvm(file, 9);
  EXPECT_EQ(d.a.rows(), 2);
  EXPECT_EQ(d.a(1, 8), 1.0);
  EXPECT_EQ(d.b(0), 1.0);
  std::filesystem::remove(file);
}

TEST(DsminimaxLogreg, CsvReaderTakesTheLabelColumnAndEveryOtherAsAFeature) {
  const auto file = std::filesystem::temp_directory_path() / "dsminimax_table.csv";
  {
    std::ofstream out(file);
    out << "f1,label,f2\n0.5,1,-2\n1.5,0,3\n2.5,-1,4e-1\n";
  }
  const LogregData d = read_csv_logreg(file, "label");
  ASSERT_EQ(d.a.rows(), 3);
  ASSERT_EQ(d.a.cols(), 2);
  EXPECT_EQ(d.a(0, 0), 0.5);
  EXPECT_EQ(d.a(2, 1), 0.4);
  EXPECT_EQ(d.b(0), 1.0);
  EXPECT_EQ(d.b(1), -1.0);
  EXPECT_EQ(d.b(2), -1.0);
  EXPECT_THROW(read_csv_logreg(file, "y"), nexp::DataError);  // no such column: the error lists them
  std::filesystem::remove(file);
}
