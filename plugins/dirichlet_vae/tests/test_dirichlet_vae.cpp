// dirichlet_vae's own tests: the Dirichlet mathematics and the closed-form threshold against things
// computed independently (Monte Carlo, finite differences, the exact ELBO's Hessian).
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data.hpp"
#include "dirichlet.hpp"
#include "experiments.hpp"
#include "model.hpp"

using namespace dirichlet_vae;

namespace {

constexpr double kPi = 3.14159265358979323846;

at::Generator gen(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

// Mean and standard error of the rows of per-batch estimates [B, ...].
std::pair<at::Tensor, at::Tensor> mean_and_se(const at::Tensor& batches) {
  const double b = static_cast<double>(batches.size(0));
  return {batches.mean(0), batches.std(0) / std::sqrt(b)};
}

// Exact E_{Dir(alpha)} ||x - E^T z||^2 for one alpha [K]: ||x - E^T m||^2 + tr(E^T Sigma E).
double expected_squared_error(const at::Tensor& alpha, const at::Tensor& e, const at::Tensor& x) {
  const at::Tensor m = dirichlet_mean(alpha), cov = dirichlet_covariance(alpha);
  return ((x - m.matmul(e)).pow(2).sum() + (e.t().matmul(cov).matmul(e)).trace()).item<double>();
}

}  // namespace

// ---- The distribution

TEST(DirichletKL, AnalyticMatchesMonteCarlo) {
  const at::Tensor alpha = at::tensor({0.7, 2.0, 1.3, 3.0, 4.0, 5.0, 0.6, 0.6, 0.6}, at::kDouble).reshape({3, 3});
  for (double alpha0 : {0.5, 1.5}) {
    const at::Tensor kl = kl_to_symmetric(alpha, alpha0);
    // 20 batches of 20k draws: log q(z) - log p(z) averaged, with its standard error.
    std::vector<at::Tensor> batches;
    auto g = gen(7);
    for (int b = 0; b < 20; ++b) {
      const at::Tensor z = rsample(alpha, 20000, g);
      const at::Tensor prior = at::full_like(alpha, alpha0);
      batches.push_back((log_density(alpha, z) - log_density(prior, z)).mean(0));
    }
    auto [mc, se] = mean_and_se(at::stack(batches));
    for (int i = 0; i < 3; ++i) {
      const double a = kl[i].item<double>(), m = mc[i].item<double>(), s = se[i].item<double>();
      EXPECT_GT(a, 0);
      EXPECT_LT(std::abs(a - m), 5 * s + 1e-4) << "row " << i << " alpha0 " << alpha0 << ": analytic " << a << ", MC " << m
                                               << " +- " << s;
    }
  }
  // The closed-form gradient of the KL against central differences.
  at::Tensor a = alpha.clone().set_requires_grad(true);
  const at::Tensor grad = torch::autograd::grad({kl_to_symmetric(a, 1.5).sum()}, {a})[0];
  at::NoGradGuard no_grad;
  for (std::int64_t i = 0; i < 9; ++i) {
    at::Tensor up = alpha.clone(), down = alpha.clone();
    up.view(-1)[i] += 1e-6, down.view(-1)[i] -= 1e-6;
    const double fd = (kl_to_symmetric(up, 1.5).sum() - kl_to_symmetric(down, 1.5).sum()).item<double>() / 2e-6;
    EXPECT_NEAR(grad.view(-1)[i].item<double>(), fd, 1e-6 * (1 + std::abs(fd))) << "element " << i;
  }
  // Zero exactly at the prior, whatever K.
  for (std::int64_t K : {2, 3, 7})
    EXPECT_NEAR(kl_to_symmetric(at::full({1, K}, 0.8, at::kDouble), 0.8).item<double>(), 0.0, 1e-12);
}

TEST(DirichletSample, MomentsMatchTheDistribution) {
  const at::Tensor alpha = at::tensor({0.4, 1.0, 2.5}, at::kDouble).reshape({1, 3});
  auto g = gen(3);
  const at::Tensor z = rsample(alpha, 200000, g).squeeze(1);  // [S, K]
  const at::Tensor mean = dirichlet_mean(alpha[0]), cov = dirichlet_covariance(alpha[0]);
  EXPECT_LT((z.mean(0) - mean).abs().max().item<double>(), 3e-3);
  const at::Tensor c = z - z.mean(0);
  EXPECT_LT((c.t().matmul(c) / 200000.0 - cov).abs().max().item<double>(), 2e-3);
  EXPECT_LT((z.sum(1) - 1).abs().max().item<double>(), 1e-12);
}

// The reparameterised gradient of E_q ||x - E^T z||^2 (Gamma-then-normalise samples, implicit gradient
// of _standard_gamma) against a central finite difference of the closed form.
TEST(DirichletSample, ReparameterisedGradientMatchesFiniteDifference) {
  const at::Tensor e = at::tensor({1.0, -0.5, 2.0, 0.3, -1.2, 0.8, 0.1, 1.5, -0.7}, at::kDouble).reshape({3, 3});
  const at::Tensor x = at::tensor({0.2, 0.4, -0.3}, at::kDouble);
  const at::Tensor alpha0 = at::tensor({0.8, 1.7, 3.1}, at::kDouble);

  at::Tensor fd = at::zeros({3}, at::kDouble);
  const double h = 1e-5;
  for (int k = 0; k < 3; ++k) {
    at::Tensor up = alpha0.clone(), down = alpha0.clone();
    up[k] += h, down[k] -= h;
    fd[k] = (expected_squared_error(up, e, x) - expected_squared_error(down, e, x)) / (2 * h);
  }
  std::vector<at::Tensor> batches;
  auto g = gen(11);
  for (int b = 0; b < 20; ++b) {
    at::Tensor alpha = alpha0.clone().reshape({1, 3}).set_requires_grad(true);
    const at::Tensor z = rsample(alpha, 20000, g).squeeze(1);
    const at::Tensor f = (x - z.matmul(e)).pow(2).sum(1).mean();
    batches.push_back(torch::autograd::grad({f}, {alpha})[0].reshape({3}));
  }
  auto [mc, se] = mean_and_se(at::stack(batches));
  for (int k = 0; k < 3; ++k) {
    const double a = fd[k].item<double>(), m = mc[k].item<double>(), s = se[k].item<double>();
    EXPECT_LT(std::abs(a - m), 5 * s + 1e-4) << "d/dalpha_" << k << ": finite difference " << a << ", reparameterised " << m
                                             << " +- " << s;
    EXPECT_LT(s, 0.05 * std::abs(a) + 1e-3) << "the estimate is too noisy to test anything";
  }
}

// ---- The model's two ELBOs

TEST(Model, MonteCarloElboMatchesExactElboAndItsGradient) {
  const MixtureData data = synthetic_mixture(64, 5, 3, 1.0, 0.2, gen(1));
  ModelOptions o;
  o.K = 3;
  o.alpha0 = 1.0;
  o.sigma2 = 0.5;
  DirichletVAE vae(o, data.x, {gen(2)});
  const at::Tensor alpha = vae.concentrations(data.x);
  const double exact = vae.expected_nll_exact(data.x, alpha).mean().item<double>();
  auto g = gen(5);
  std::vector<double> estimates;
  for (int b = 0; b < 10; ++b) estimates.push_back(vae.expected_nll_mc(data.x, alpha, 2000, g).mean().item<double>());
  const double mean = std::accumulate(estimates.begin(), estimates.end(), 0.0) / 10;
  double var = 0;
  for (double v : estimates) var += (v - mean) * (v - mean) / 9;
  EXPECT_LT(std::abs(mean - exact), 5 * std::sqrt(var / 10) + 1e-6) << "exact " << exact << ", MC " << mean;

  // The gradient of the exact ELBO with respect to the decoder's endmembers, by autograd and by
  // central differences.
  const at::Tensor e = vae.parameters()[4];
  ASSERT_EQ(e.sizes(), (at::IntArrayRef{1, 3, 5}));
  auto loss = [&]() { return negative_elbo(vae, data.x, {0.7}, ElboKind::Exact, 1, g).loss; };
  const at::Tensor grad = torch::autograd::grad({loss()}, {e})[0];
  at::NoGradGuard no_grad;
  for (std::int64_t i : {0, 7, 14}) {
    const double h = 1e-6, keep = e.view(-1)[i].item<double>();
    e.view(-1)[i] = keep + h;
    const double up = loss().item<double>();
    e.view(-1)[i] = keep - h;
    const double down = loss().item<double>();
    e.view(-1)[i] = keep;
    EXPECT_NEAR(grad.view(-1)[i].item<double>(), (up - down) / (2 * h), 1e-6);
  }
}

// ---- The threshold

TEST(Threshold, TrigammaKnownValues) {
  EXPECT_NEAR(trigamma(1.0), kPi * kPi / 6, 1e-13);
  EXPECT_NEAR(trigamma(0.5), kPi * kPi / 2, 1e-13);
  EXPECT_NEAR(trigamma(0.25), kPi * kPi + 8 * 0.915965594177219015, 1e-12);  // pi^2 + 8 Catalan
  for (double x : {0.05, 0.3, 1.7, 9.5, 12.0}) EXPECT_NEAR(trigamma(x + 1), trigamma(x) - 1 / (x * x), 1e-13 * trigamma(x));
  const double x = 1e3;  // 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + ...
  EXPECT_NEAR(trigamma(x), 1 / x + 1 / (2 * x * x) + 1 / (6 * x * x * x) - 1 / (30 * std::pow(x, 5)), 1e-18);
  EXPECT_NEAR(trigamma(1e-6), 1e12, 2);  // 1/x^2 + pi^2/6 + O(x)
  // LibTorch's polygamma(1, .), which autograd uses for the Hessian of the KL, agrees to ~1e-9.
  for (double y : {0.01, 0.3, 1.0, 5.0, 50.0})
    EXPECT_NEAR(at::polygamma(1, at::scalar_tensor(y, at::kDouble)).item<double>() / trigamma(y), 1.0, 1e-8) << y;
}

TEST(Threshold, ClosedFormLimits) {
  const double lambda = 3.7, sigma2 = 0.4;
  for (std::int64_t K : {2, 3, 5, 10}) {
    // alpha0 -> infinity: the Gaussian linear-VAE threshold lambda_max / sigma^2.
    EXPECT_NEAR(critical_beta(lambda, sigma2, 1e6, K) / (lambda / sigma2), 1.0, 1e-5) << "K " << K;
    // alpha0 -> 0: 1/K of it.
    EXPECT_NEAR(critical_beta(lambda, sigma2, 1e-6, K) / (lambda / sigma2), 1.0 / static_cast<double>(K), 1e-5) << "K " << K;
    // In between kappa decreases monotonically from 1 to 1/K.
    double previous = 1.0 + 1e-12;
    for (double a = 1e3; a > 1e-3; a /= 1.5) {
      const double kappa = curvature_factor(a, K);
      EXPECT_LT(kappa, previous) << "alpha0 " << a;
      EXPECT_GT(kappa, 1.0 / static_cast<double>(K));
      previous = kappa;
    }
  }
  EXPECT_EQ(predicted_active({4.0, 2.0, 1.0, 0.1}, 0.4, 5), 2);
  EXPECT_EQ(predicted_active({4.0, 2.0, 1.0, 0.1}, 0.1, 3), 2);  // capped at K - 1
  EXPECT_EQ(predicted_active({4.0, 2.0, 1.0, 0.1}, 1.0, 5), 0);
}

// The collapsed point (alpha(x) = alpha0 1, every endmember at the data mean) is a stationary point of
// the exact ELBO, for fixed and learned sigma^2, whatever beta.
TEST(Threshold, CollapsedPointIsStationary) {
  const MixtureData data = synthetic_mixture(300, 6, 4, 0.7, 0.1, gen(4));
  for (bool learn : {false, true})
    for (auto decoder : {DecoderKind::Linear, DecoderKind::Archetypal}) {
      ModelOptions o;
      o.K = 4;
      o.alpha0 = 0.7;
      o.learn_sigma2 = learn;
      o.decoder = decoder;
      DirichletVAE vae(o, data.x, {gen(9)});
      vae.collapse();
      auto g = gen(1);
      for (double beta : {0.3, 3.0}) {
        const Objective obj = negative_elbo(vae, data.x, {beta}, ElboKind::Exact, 1, g);
        EXPECT_NEAR(obj.kl.item<double>(), 0.0, 1e-12);
        const auto grads = torch::autograd::grad({obj.loss}, vae.parameters());
        for (std::size_t i = 0; i < grads.size(); ++i)
          EXPECT_LT(grads[i].abs().max().item<double>(), 1e-10) << "parameter " << i << " learn_sigma2 " << learn;
      }
      // Not trivially so: away from it the gradient is large.
      DirichletVAE moved(o, data.x, {gen(9)});
      const Objective obj = negative_elbo(moved, data.x, {1.0}, ElboKind::Exact, 1, g);
      const auto grads = torch::autograd::grad({obj.loss}, moved.parameters());
      double largest = 0;
      for (const auto& gr : grads) largest = std::max(largest, gr.abs().max().item<double>());
      EXPECT_GT(largest, 1e-3);
    }
}

// The heart of the closed form: the Hessian of the exact negative ELBO at the collapsed point, for an
// encoder alpha(x) = alpha0 1 + V (x - mean) and endmembers E = 1 mean^T + U, loses positive
// definiteness exactly at beta_c, and below it has (K - 1) negative directions per data eigenvalue
// lambda_i > (beta / beta_c) lambda_max.
TEST(Threshold, ExactElboHessianChangesSignAtBetaC) {
  const std::int64_t K = 3, d = 4, n = 400;
  for (double alpha0 : {0.3, 1.0, 5.0}) {
    const MixtureData data = synthetic_mixture(n, d, K, alpha0, 0.3, gen(21));
    const double sigma2 = 0.8;
    const ThresholdReport t = threshold_of(data.x, K, alpha0, sigma2);
    const at::Tensor mean = data.x.mean(0), centred = data.x - mean;
    const at::Tensor log_sigma2 = at::scalar_tensor(std::log(sigma2), at::kDouble);

    // Hessians of the two terms with respect to theta = (V, U), both [K, d], at theta = 0.
    auto hessian = [&](bool kl_term) {
      at::Tensor theta = at::zeros({2 * K * d}, at::kDouble).set_requires_grad(true);
      const at::Tensor v = theta.narrow(0, 0, K * d).view({K, d}), u = theta.narrow(0, K * d, K * d).view({K, d});
      const at::Tensor alpha = alpha0 + centred.matmul(v.t());
      const at::Tensor loss = kl_term ? kl_to_symmetric(alpha, alpha0).mean()
                                      : linear_expected_nll(data.x, alpha, mean + u, log_sigma2, mean).mean();
      const at::Tensor grad = torch::autograd::grad({loss}, {theta}, {}, true, true)[0];
      std::vector<at::Tensor> rows;
      for (std::int64_t i = 0; i < grad.size(0); ++i)
        rows.push_back(torch::autograd::grad({grad[i]}, {theta}, {}, true)[0]);
      return at::stack(rows).detach();
    };
    const at::Tensor h_nll = hessian(false), h_kl = hessian(true);
    auto min_eig = [&](double beta) { return at::linalg_eigvalsh(h_nll + beta * h_kl).min().item<double>(); };
    auto negatives = [&](double beta) { return (at::linalg_eigvalsh(h_nll + beta * h_kl) < -1e-12).sum().item<std::int64_t>(); };

    ASSERT_LT(min_eig(0.5 * t.beta_c), 0);
    ASSERT_GT(min_eig(2.0 * t.beta_c), 0);
    double lo = 0.5 * t.beta_c, hi = 2.0 * t.beta_c;
    for (int i = 0; i < 60; ++i) (min_eig(0.5 * (lo + hi)) < 0 ? lo : hi) = 0.5 * (lo + hi);
    EXPECT_NEAR(0.5 * (lo + hi) / t.beta_c, 1.0, 1e-6) << "alpha0 " << alpha0;

    for (double ratio : {0.97, 0.6, 0.3, 0.1, 0.02}) {
      std::int64_t unstable_data_directions = 0;
      for (double l : t.spectrum) unstable_data_directions += l > ratio * t.lambda_max;
      EXPECT_EQ(negatives(ratio * t.beta_c), (K - 1) * unstable_data_directions) << "alpha0 " << alpha0 << " ratio " << ratio;
    }
  }
}

// ---- Training and scoring

TEST(Train, CollapsesAboveBetaCAndNotBelow) {
  const MixtureData data = synthetic_mixture(300, 8, 3, 1.0, 0.1, gen(8));
  ModelOptions o;
  o.K = 3;
  o.alpha0 = 1.0;
  o.hidden = 16;
  o.precision = Precision::Float32;
  const ThresholdReport t = threshold_of(data.x, o.K, o.alpha0, o.sigma2);
  // Two replicas from the same initialisation, at 0.6 beta_c and 1.5 beta_c.
  DirichletVAE vae(o, data.x, {gen(12), gen(12)});
  TrainOptions options;
  options.betas = {0.6 * t.beta_c, 1.5 * t.beta_c};
  options.steps = 1000;
  auto g = gen(13);
  Trainer(vae, data.x, options, g).run();
  const auto ev = evaluate(vae, data.x, options.betas, 0.01, ElboKind::Exact, 1, g);
  EXPECT_GT(ev[0].kl, 0.05);
  EXPECT_GE(ev[0].active_dims, 1);
  EXPECT_LT(ev[1].kl, 1e-4);
  EXPECT_EQ(ev[1].active_dims, 0);
}

// Replicas are independent: training two together gives what training each alone gives.
TEST(Train, ReplicasTrainAsIfAlone) {
  const MixtureData data = synthetic_mixture(200, 5, 3, 0.5, 0.1, gen(3));
  ModelOptions o;
  o.K = 3;
  o.alpha0 = 0.5;
  o.learn_sigma2 = true;
  TrainOptions both;
  both.betas = {0.2, 3.0};
  both.steps = 100;
  DirichletVAE pair(o, data.x, {gen(1), gen(2)});
  auto g = gen(0);
  Trainer(pair, data.x, both, g).run();
  for (int r = 0; r < 2; ++r) {
    DirichletVAE alone(o, data.x, {gen(r + 1)});
    TrainOptions one = both;
    one.betas = {both.betas[r]};
    Trainer(alone, data.x, one, g).run();
    const auto a = pair.parameters(), b = alone.parameters();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_LT((a[i][r] - b[i][0]).abs().max().item<double>(), 1e-9) << "replica " << r << " parameter " << i;
  }
}

TEST(Unmixing, ScoreIsZeroForPermutedScaledTruth) {
  auto g = gen(2);
  const at::Tensor e = at::rand({4, 10}, g, at::kDouble) + 0.1;
  const at::Tensor a = rsample(at::ones({50, 4}, at::kDouble), 1, g).squeeze(0);
  const at::Tensor perm = at::tensor({2, 0, 3, 1}, at::kLong);
  const at::Tensor est_e = 3.0 * e.index_select(0, perm), est_a = a.index_select(1, perm);
  const UnmixingScore s = score_unmixing(est_e, est_a, e, a);
  EXPECT_NEAR(s.sad, 0.0, 1e-6);
  EXPECT_NEAR(s.abundance_rmse, 0.0, 1e-12);
  EXPECT_EQ(s.match, (std::vector<std::int64_t>{1, 3, 0, 2}));
  // Known angles: a permuted basis (0), and (1, 1) against the basis vectors (45 degrees).
  const at::Tensor eye = at::eye(2, at::kDouble);
  EXPECT_NEAR(score_unmixing(eye.flip(1), at::eye(2, at::kDouble), eye, at::eye(2, at::kDouble)).sad, 0.0, 1e-7);
  EXPECT_NEAR(score_unmixing(at::tensor({1.0, 1.0, 1.0, 1.0}, at::kDouble).reshape({2, 2}), at::eye(2, at::kDouble), eye,
                             at::eye(2, at::kDouble)).sad, kPi / 4, 1e-7);
}

TEST(Unmixing, SuccessiveProjectionsFindTheVertices) {
  auto g = gen(6);
  const at::Tensor vertices = at::randn({3, 20}, g, at::kDouble);
  const at::Tensor inside = rsample(at::full({40, 3}, 2.0, at::kDouble), 1, g).squeeze(0).matmul(vertices);
  const at::Tensor library = at::cat({inside.narrow(0, 0, 17), vertices[0].unsqueeze(0), inside.narrow(0, 17, 10),
                                      vertices[1].unsqueeze(0), inside.narrow(0, 27, 13), vertices[2].unsqueeze(0)});
  auto picks = successive_projections(library, 3);
  std::sort(picks.begin(), picks.end());
  EXPECT_EQ(picks, (std::vector<std::int64_t>{17, 28, 42}));
}

TEST(Unmixing, RealSpectraLoadWhenInstalled) {
  for (const std::string source : {"gasoline", "tecator"}) {
    try {
      const at::Tensor s = load_spectra(source, nexp::data_dir());
      EXPECT_EQ(s.size(0), source == "gasoline" ? 60 : 215);
      EXPECT_EQ(s.size(1), source == "gasoline" ? 401 : 100);
      EXPECT_TRUE(at::isfinite(s).all().item<bool>());
    } catch (const nexp::DataError& e) {
      GTEST_SKIP() << source << " spectra not installed (run plugins/dirichlet_vae/data.sh): " << e.what();
    }
  }
}

TEST(Onset, LinearKlCurveGivesItsZero) {
  const std::vector<double> ratios = {0.5, 0.7, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.5};
  std::vector<double> kl;
  for (double r : ratios) kl.push_back(r < 1.02 ? 0.3 * (1.02 - r) : 1e-9);
  const Onset o = empirical_onset(ratios, kl, 1e-3);
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.lower, 1.0);
  EXPECT_EQ(o.upper, 1.05);
  EXPECT_NEAR(o.estimate, 1.02, 1e-9);
  // Never collapsed, and collapsed everywhere: no onset inside the grid.
  EXPECT_FALSE(empirical_onset(ratios, std::vector<double>(ratios.size(), 1.0), 1e-3).found);
  EXPECT_FALSE(empirical_onset(ratios, std::vector<double>(ratios.size(), 0.0), 1e-3).found);
}

