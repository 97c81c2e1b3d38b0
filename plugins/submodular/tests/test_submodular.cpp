// submodular's own tests: the pairwise class against brute force (supermodular; phi o G submodular under the
// rate and balance conditions, violated without them), the a_e = 0 counter-example, every constrained model
// (random and trained) against brute force and random triples, the alpha variant's ratio, the targets against
// hand computations, greedy against the brute-force optimum and lazy greedy, the learned phi's shape and
// gradient.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <cmath>

#include "../experiments.hpp"
#include "../models.hpp"
#include "../set_functions.hpp"

using namespace submodular;

namespace {

Matrix random_matrix(int r, int c, nexp::Random& rng, double lo = 0, double hi = 1) {
  Matrix m(r, c);
  for (double& v : m.v) v = rng.uniform(lo, hi);
  return m;
}

// A random pairwise G on n items satisfying (B') for kappa.
Pairwise balanced_pairwise(int n, double kappa, nexp::Random& rng) {
  Pairwise g;
  g.u = random_matrix(n, 3, rng, 0, rng.uniform(0.1, 3.0));
  g.a.resize(n);
  for (int i = 0; i < n; ++i) {
    double sq = 0;
    for (int k = 0; k < 3; ++k) sq += g.u(i, k) * g.u(i, k);
    g.a[i] = std::log1p(std::sqrt(kappa * sq)) / kappa + (rng.bernoulli(0.5) ? 0.0 : rng.uniform(0, 0.2));
  }
  return g;
}

std::function<double(const Set&)> of(const SetFunction& f) {
  return [&f](const Set& s) { return f.value(s); };
}

const std::vector<ModelKind> kConstrained = {ModelKind::Pairwise, ModelKind::PairwiseAlpha, ModelKind::Dsf,
                                             ModelKind::FlexSubNet, ModelKind::Mixture};

std::function<double(const Set&)> single(const BatchFunction& f) {
  return [f](const Set& s) { return f({s})[0]; };
}

}  // namespace

// ---------------------------------------------------------------- the pairwise class

TEST(submodular, PairwiseIsMonotoneSupermodularByBruteForce) {
  nexp::Random rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 4 + static_cast<int>(rng.below(7));  // 4..10
    Pairwise g;
    g.u = random_matrix(n, 2, rng);
    g.a = std::vector<double>(n);
    for (double& a : g.a) a = rng.uniform(0, 1);
    const ExhaustiveReport r = check_exhaustive([&](const Set& s) { return g.value(s); }, n, 1e-12);
    EXPECT_EQ(r.monotonicity_violations, 0);
    EXPECT_EQ(r.supermodularity_violations, 0) << "n = " << n;
    EXPECT_GT(r.submodularity_violations, 0);  // strictly supermodular with b > 0
  }
}

TEST(submodular, RateControlledPhiOfBalancedPairwiseIsSubmodularOnAThousandInstances) {
  nexp::Random rng(2);
  std::int64_t checks = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const int n = 5 + static_cast<int>(rng.below(4));  // 5..8 (12 in the next test)
    const double kappa = std::exp(rng.uniform(std::log(0.05), std::log(20.0)));
    const Pairwise g = balanced_pairwise(n, kappa, rng);
    ASSERT_GE(g.balance_margin(kappa), -1e-12);
    const PlantedPairwise f(g, kappa, 1.0);
    const ExhaustiveReport r = check_exhaustive(of(f), n, 1e-9);
    ASSERT_EQ(r.submodularity_violations, 0) << "trial " << trial << " kappa " << kappa << " worst "
                                             << r.worst_submodularity;
    ASSERT_EQ(r.monotonicity_violations, 0);
    checks += r.checks;
  }
  EXPECT_GT(checks, 1000 * 50);
}

TEST(submodular, TheConditionHoldsOnTwelveItems) {
  nexp::Random rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    const double kappa = rng.uniform(0.2, 5);
    const PlantedPairwise f(balanced_pairwise(12, kappa, rng), kappa, 1.0);
    const ExhaustiveReport r = check_exhaustive(of(f), 12, 1e-9);
    EXPECT_EQ(r.checks, 4096 / 4 * 66);  // sum over S of pairs outside S = C(12,2) 2^10
    EXPECT_EQ(r.submodularity_violations, 0);
    EXPECT_EQ(r.monotonicity_violations, 0);
  }
}

TEST(submodular, ABoundedConcavePhiThatBreaksTheRateConditionViolates) {
  // phi = sqrt is concave and increasing but its relative rate 1/(2y) falls below any kappa for large y:
  // on a balanced G (kappa = 1) it is not submodular.
  nexp::Random rng(4);
  int violating = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Pairwise g = balanced_pairwise(8, 1.0, rng);
    const auto r = check_exhaustive([&](const Set& s) { return std::sqrt(g.value(s)); }, 8, 1e-9);
    violating += r.submodularity_violations > 0;
  }
  EXPECT_GT(violating, 25);
  // The exponential phi with a rate below what the balance asks for (kappa' = kappa / 20) also violates.
  violating = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Pairwise g = balanced_pairwise(8, 1.0, rng);
    violating += check_exhaustive(of(PlantedPairwise(g, 0.05, 1.0)), 8, 1e-9).submodularity_violations > 0;
  }
  EXPECT_GT(violating, 25);
}

TEST(submodular, NoPhiRescuesAZeroModularTerm) {
  // a_0 = 0, b_01 = 1: F(0 | {}) = phi(0) - phi(0) = 0 < phi(a_1 + 1) - phi(a_1) = F(0 | {1}).
  Pairwise g;
  g.u = Matrix(3, 1, 1.0);
  g.a = {0.0, 0.5, 0.5};
  for (double kappa : {0.1, 1.0, 10.0}) {
    const PlantedPairwise f(g, kappa, 1.0);
    EXPECT_GT(check_exhaustive(of(f), 3, 1e-12).submodularity_violations, 0) << kappa;
    EXPECT_LT(f.value({0}) - f.value({}), f.value({0, 1}) - f.value({1}));
  }
  EXPECT_GT(check_exhaustive([&](const Set& s) { return std::log1p(g.value(s)); }, 3, 1e-12).submodularity_violations, 0);
}

TEST(submodular, AlphaBoundIsClosedFormAndTightEnough) {
  nexp::Random rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 6 + static_cast<int>(rng.below(3));
    const double alpha = rng.uniform(0.2, 0.9);
    std::vector<double> rho(n);
    for (double& r : rho) r = rng.uniform(0, 0.01);
    Pairwise g = with_alpha(balanced_pairwise(n, 1.0, rng), alpha, rho);
    EXPECT_GE(g.alpha_bound(), alpha - 1e-12);
    EXPECT_LE(g.alpha_bound(), alpha + 0.01);
    const FacilityLocation fl(gaussian_similarity(random_matrix(n, 2, rng)));
    const AlphaSum f(std::make_shared<FacilityLocation>(fl), g);
    const ExhaustiveReport r = check_exhaustive(of(f), n, 1e-12, true);
    EXPECT_GE(r.min_alpha, f.alpha_bound() - 1e-9);
    EXPECT_LT(r.min_alpha, 1.0);  // not submodular
    EXPECT_EQ(r.monotonicity_violations, 0);
  }
}

// ---------------------------------------------------------------- targets

TEST(submodular, TargetsMatchHandComputations) {
  Matrix sim(3, 3);
  sim.v = {1, 0.5, 0.2, 0.5, 1, 0.1, 0.2, 0.1, 1};
  const FacilityLocation fl(sim);
  EXPECT_DOUBLE_EQ(fl.value({}), 0);
  EXPECT_DOUBLE_EQ(fl.value({0}), 1 + 0.5 + 0.2);
  EXPECT_DOUBLE_EQ(fl.value({0, 2}), 1 + 0.5 + 1);
  const SaturatedCoverage cov(sim, 0.5);  // caps 0.85, 0.8, 0.65
  EXPECT_DOUBLE_EQ(cov.value({0}), 0.85 + 0.5 + 0.2);
  EXPECT_DOUBLE_EQ(cov.value({0, 1}), 0.85 + 0.8 + 0.3);
  Matrix z(2, 2);
  z.v = {1, 0, 1, 1};
  const LogDet ld(z);
  EXPECT_NEAR(ld.value({0}), std::log(2.0), 1e-14);
  // I + [[1, 1], [1, 2]] = [[2, 1], [1, 3]]: det 5.
  EXPECT_NEAR(ld.value({0, 1}), std::log(5.0), 1e-14);
  EXPECT_DOUBLE_EQ(ld.value({}), 0);
  Pairwise g;
  g.u = Matrix(3, 1);
  g.u.v = {1, 2, 3};
  g.a = {1, 1, 1};
  EXPECT_DOUBLE_EQ(g.value({0, 1, 2}), 3 + 2 + 3 + 6);
  EXPECT_DOUBLE_EQ(g.gain(2, {0, 1}), 1 + 3 + 6);
  EXPECT_NEAR(phi_exp(2.0, 0.5), (1 - std::exp(-1.0)) / 0.5, 1e-15);
  // Gaussian similarity: median squared distance h; s = exp(-d^2/h).
  Matrix pts(3, 1);
  pts.v = {0, 1, 3};  // squared distances 1, 9, 4: h = 4
  const Matrix s = gaussian_similarity(pts);
  EXPECT_NEAR(s(0, 1), std::exp(-0.25), 1e-15);
  EXPECT_NEAR(s(0, 2), std::exp(-9.0 / 4), 1e-15);
}

TEST(submodular, TargetsAreMonotoneSubmodularByBruteForce) {
  nexp::Random rng(6);
  const Matrix z = random_matrix(10, 3, rng, -1, 1);
  const Matrix sim = gaussian_similarity(z);
  for (const SetFunction* f : std::initializer_list<const SetFunction*>{
           new FacilityLocation(sim), new LogDet(z), new SaturatedCoverage(sim, 0.2)}) {
    const ExhaustiveReport r = check_exhaustive(of(*f), 10, 1e-9);
    EXPECT_EQ(r.submodularity_violations, 0);
    EXPECT_EQ(r.monotonicity_violations, 0);
    delete f;
  }
}

// ---------------------------------------------------------------- greedy

TEST(submodular, GreedyIsWithinOneMinusOneOverEOfTheOptimumAndLazyGreedyAgrees) {
  nexp::Random rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 10 + static_cast<int>(rng.below(3)), k = 2 + static_cast<int>(rng.below(4));
    const Matrix z = random_matrix(n, 3, rng, -1, 1);
    const FacilityLocation fl(gaussian_similarity(z));
    const LogDet ld(z);
    const double kappa = 0.5;
    const PlantedPairwise pw(balanced_pairwise(n, kappa, rng), kappa, 1.0);
    for (const SetFunction* f : {static_cast<const SetFunction*>(&fl), static_cast<const SetFunction*>(&ld),
                                 static_cast<const SetFunction*>(&pw)}) {
      const Set g = greedy(f->batch(), n, k);
      EXPECT_EQ(lazy_greedy(of(*f), n, k), g);
      EXPECT_GE(f->value(g), (1 - std::exp(-1.0)) * brute_force_max(of(*f), n, k) - 1e-12);
    }
  }
}

// ---------------------------------------------------------------- models

TEST(submodular, RandomConstrainedModelsHaveNoViolationsOnTenItems) {
  nexp::Random rng(8);
  const at::Tensor x = at::randn({10, 5}, at::kDouble);
  for (ModelKind kind : kConstrained)
    for (int init = 0; init < 3; ++init) {
      at::manual_seed(100 + init);
      ModelOptions o;
      o.heads = 2;
      o.kappa = init == 0 ? 0.1 : 1.0;
      auto model = make_model(kind, o, x);
      const ExhaustiveReport r = check_exhaustive(single(model_function(*model, 10)), 10, 1e-9,
                                                  kind == ModelKind::PairwiseAlpha);
      EXPECT_EQ(r.submodularity_violations, kind == ModelKind::PairwiseAlpha ? r.submodularity_violations : 0)
          << model_name(kind);
      EXPECT_EQ(r.monotonicity_violations, 0) << model_name(kind);
      if (kind == ModelKind::PairwiseAlpha) {
        EXPECT_GE(r.min_alpha, o.alpha - 1e-9);
      }
    }
}

TEST(submodular, TrainedConstrainedModelsHaveNoViolationsAtOneHundredItems) {
  // Train each constrained model briefly on log det over 100 digits-like random items, then check 10^4
  // random triples at N = 100 and every S, i, j on the first 10 items (the model restricted to them).
  nexp::Random rng(9);
  Matrix z = random_matrix(100, 8, rng, -1, 1);
  const LogDet target(z);
  const std::vector<Set> sets = random_sets(100, 256, 1, 30, rng);
  std::vector<double> y = target.values(sets);
  for (double& v : y) v /= 5.0;
  const std::vector<Triple> triples = random_triples(100, 10000, 30, rng);
  at::Tensor x = at::from_blob(z.v.data(), {100, 8}, at::kDouble).clone();
  for (ModelKind kind : kConstrained) {
    at::manual_seed(3);
    ModelOptions mo;
    mo.heads = 2;
    auto model = make_model(kind, mo, x);
    RunOptions o;
    o.epochs = 2;
    o.lr = 1e-2;
    nexp::Random batch_rng(1);
    const double loss = train_regression(*model, sets, y, 100, o, batch_rng);
    EXPECT_TRUE(std::isfinite(loss));
    const TripleReport r = check_triples(model_function(*model, 100), triples, 1e-9);
    EXPECT_EQ(r.monotonicity_violations, 0) << model_name(kind);
    if (kind == ModelKind::PairwiseAlpha) {
      EXPECT_GE(r.min_ratio, mo.alpha - 1e-9);
    } else {
      EXPECT_EQ(r.violations, 0) << model_name(kind);
    }
    const BatchFunction f = model_function(*model, 100);
    const ExhaustiveReport ex = check_exhaustive(single(f), 10, 1e-9);
    if (kind != ModelKind::PairwiseAlpha) {
      EXPECT_EQ(ex.submodularity_violations, 0) << model_name(kind);
    }
  }
}

TEST(submodular, DeepSetsViolatesDiminishingReturns) {
  at::manual_seed(4);
  nexp::Random rng(10);
  const at::Tensor x = at::randn({30, 5}, at::kDouble);
  auto model = make_model(ModelKind::DeepSets, ModelOptions{}, x);
  const TripleReport r = check_triples(model_function(*model, 30), random_triples(30, 2000, 10, rng), 1e-9);
  EXPECT_GT(r.violation_rate, 0.01);
}

TEST(submodular, TheCheckerFlagsDeepSetsAndARateBreakingPhiButNotThePairwiseNetwork) {
  // check_set_function, what submodular.check runs: every S, i, j on the first 12 of N = 100 items and 10^4
  // random triples at N = 100, tolerance 1e-9.
  nexp::Random rng(11);
  Matrix z = random_matrix(100, 6, rng, -1, 1);
  const at::Tensor x = at::from_blob(z.v.data(), {100, 6}, at::kDouble).clone();
  const std::vector<Triple> triples = random_triples(100, 10000, 30, rng);
  const auto clean = [](const CheckReport& r) {
    return r.exhaustive.submodularity_violations == 0 && r.exhaustive.monotonicity_violations == 0 &&
           r.triples.violations == 0 && r.triples.monotonicity_violations == 0;
  };
  at::manual_seed(6);
  ModelOptions mo;
  mo.heads = 2;
  auto pairwise = make_model(ModelKind::Pairwise, mo, x);
  const CheckReport pw = check_set_function(model_function(*pairwise, 100), 12, triples, 1e-9);
  EXPECT_EQ(pw.exhaustive.checks, 4096 / 4 * 66);
  EXPECT_EQ(pw.triples.triples, 10000);
  EXPECT_TRUE(clean(pw));
  EXPECT_GT(pw.triples.min_ratio, 0.999);
  EXPECT_GT(pw.exhaustive.min_alpha, 0.999);

  auto deepsets = make_model(ModelKind::DeepSets, mo, x);
  const CheckReport ds = check_set_function(model_function(*deepsets, 100), 12, triples, 1e-9);
  EXPECT_GT(ds.triples.violation_rate, 0.01);
  EXPECT_GT(ds.exhaustive.submodularity_violations, 0);
  EXPECT_LT(ds.triples.min_ratio, 1.0);

  // One G balanced for kappa = 1 with equality in (B'), large pairwise scores (u uniform in [0, 3]^3): under
  // phi_1 (the rate condition holds) and under sqrt (its relative rate 1/(2y) falls below 1 for y > 1/2).
  Pairwise g;
  g.u = random_matrix(100, 3, rng, 0, 3);
  g.a.resize(100);
  for (int i = 0; i < 100; ++i)
    g.a[i] = std::log1p(std::sqrt(g.u(i, 0) * g.u(i, 0) + g.u(i, 1) * g.u(i, 1) + g.u(i, 2) * g.u(i, 2)));
  ASSERT_GE(g.balance_margin(1.0), -1e-12);
  const PlantedPairwise planted(g, 1.0, 1.0);
  EXPECT_TRUE(clean(check_set_function(planted.batch(), 12, triples, 1e-9)));
  const BatchFunction sqrt_g = [&g](const std::vector<Set>& sets) {
    std::vector<double> v;
    for (const Set& s : sets) v.push_back(std::sqrt(g.value(s)));
    return v;
  };
  const CheckReport broken = check_set_function(sqrt_g, 12, triples, 1e-9);
  EXPECT_GT(broken.exhaustive.submodularity_violations, 0);
  EXPECT_GT(broken.triples.violations, 0);
  EXPECT_EQ(broken.exhaustive.monotonicity_violations, 0);
}

TEST(submodular, LearnedPhiIsIncreasingConcaveWithRateFloorAndItsGradientMatchesFiniteDifferences) {
  at::manual_seed(5);
  RateConcave phi(1, 4, 0.7, false, true);
  phi.to(at::kDouble);
  const at::Tensor y = at::linspace(0, 20, 401, at::kDouble).unsqueeze(-1);
  const at::Tensor v = phi.forward(y);
  const at::Tensor d1 = v.narrow(0, 1, 400) - v.narrow(0, 0, 400);
  EXPECT_GT(d1.min().item<double>(), 0);
  EXPECT_LE((d1.narrow(0, 1, 399) - d1.narrow(0, 0, 399)).max().item<double>(), 1e-15);
  EXPECT_GE(phi.rates().min().item<double>(), 0.7);
  // d phi / dy by autograd against central differences, and relative rate -phi''/phi' >= 0.7.
  at::Tensor yy = at::linspace(0.1, 10, 50, at::kDouble).unsqueeze(-1).set_requires_grad(true);
  const at::Tensor grad = torch::autograd::grad({phi.forward(yy).sum()}, {yy})[0];
  const double h = 1e-6;
  const at::Tensor fd = (phi.forward(yy.detach() + h) - phi.forward(yy.detach() - h)) / (2 * h);
  EXPECT_LT((grad - fd).abs().max().item<double>(), 1e-8);
  const at::Tensor grad_h = torch::autograd::grad({phi.forward(yy + 0.5).sum()}, {yy})[0];
  EXPECT_LE((grad_h - grad * std::exp(-0.7 * 0.5)).max().item<double>(), 1e-12);
  // The gradient with respect to the parameters, too: one parameter against a finite difference.
  at::Tensor p = phi.parameters()[0];
  const at::Tensor gp = torch::autograd::grad({phi.forward(y).sum()}, {p})[0];
  const double g0 = gp.flatten()[0].item<double>();
  {
    at::NoGradGuard guard;
    at::Tensor first = p.view({-1}).narrow(0, 0, 1);
    first.add_(h);
    const double up = phi.forward(y).sum().item<double>();
    first.sub_(2 * h);
    const double down = phi.forward(y).sum().item<double>();
    first.add_(h);
    EXPECT_NEAR(g0, (up - down) / (2 * h), 1e-5 * std::max(1.0, std::abs(g0)));
  }
}

TEST(submodular, JaccardOfSets) {
  EXPECT_DOUBLE_EQ(jaccard({1, 2}, {2, 3}), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(jaccard({3, 1}, {1, 3}), 1.0);
  EXPECT_DOUBLE_EQ(jaccard({1}, {2}), 0.0);
}
