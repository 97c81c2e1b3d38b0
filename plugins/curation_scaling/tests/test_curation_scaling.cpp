// curation_scaling's mathematics against independent references: enumeration of subsets, the
// order-statistics asymptote of random search, planted laws, planted duplicates, finite differences.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <nexp/error.hpp>
#include <nexp/random.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "../mlp.hpp"
#include "../pool.hpp"
#include "../recipe.hpp"
#include "../scaling.hpp"

namespace cs = curation_scaling;

namespace {

// Brute force: the mean over all k-subsets of the target loss of the subset's proxy-best member.
double enumerate_best_of_k(const std::vector<double>& proxy, const std::vector<double>& target, int k) {
  const int n = static_cast<int>(proxy.size());
  double sum = 0;
  long count = 0;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    int best = -1;
    for (int i = 0; i < n; ++i)
      if ((mask >> i & 1u) && (best < 0 || proxy[i] < proxy[best])) best = i;
    sum += target[best], ++count;
  }
  return sum / static_cast<double>(count);
}

}  // namespace

TEST(CurationScaling, BestOfKEqualsEnumeration) {
  nexp::Random rng(7);
  std::vector<double> proxy(10), target(10);
  for (int i = 0; i < 10; ++i) proxy[i] = rng.uniform(), target[i] = proxy[i] + 0.5 * rng.normal();
  proxy[3] = proxy[8];  // a tie: the lower index counts as better, as in the enumeration
  std::vector<std::int64_t> ks(10);
  std::iota(ks.begin(), ks.end(), 1);
  const auto exact = cs::best_of_k_exact(proxy, target, ks);
  for (int k = 1; k <= 10; ++k) EXPECT_NEAR(exact[k - 1], enumerate_best_of_k(proxy, target, k), 1e-12) << "k = " << k;
  EXPECT_THROW(cs::best_of_k_exact(proxy, target, {11}), nexp::Error);
}

// Random search on f(x) = ||x - x*||^2 over [0,1]^d, x* interior: E[min of k] -> Gamma(1 + 2/d) (k V_d)^(-2/d),
// so the best-of-k curve is a power law with g = 2/d.
TEST(CurationScaling, RandomSearchMatchesOrderStatistics) {
  for (int d : {2, 4}) {
    nexp::Random rng(100 + d);
    const int n = 200000;
    std::vector<double> f(n);
    for (double& v : f) {
      v = 0;
      for (int i = 0; i < d; ++i) v += std::pow(rng.uniform() - 0.5, 2);
    }
    const auto at1000 = cs::best_of_k_exact(f, f, {1000});
    EXPECT_NEAR(at1000[0] / cs::random_search_asymptote(d, 1000), 1.0, 0.05) << "d = " << d;
    std::vector<double> ks, curve;
    for (std::int64_t k : cs::half_octave_ks(1024))
      if (k >= 16) ks.push_back(static_cast<double>(k));
    for (double v : cs::best_of_k_exact(f, f, std::vector<std::int64_t>(ks.begin(), ks.end()))) curve.push_back(v);
    EXPECT_NEAR(cs::fit_law(cs::LawForm::PowerLaw, ks, curve).rate, 2.0 / d, 0.05) << "d = " << d;
  }
}

TEST(CurationScaling, FitterRecoversPlantedLaws) {
  nexp::Random rng(3);
  std::vector<double> k, power, expo, loglin;
  for (std::int64_t v : cs::half_octave_ks(256)) {
    const double x = static_cast<double>(v);
    k.push_back(x);
    power.push_back(0.3 + 0.5 * std::pow(x, -0.4) + 0.002 * rng.normal());
    expo.push_back(0.2 + 0.7 * std::exp(-0.05 * x));
    loglin.push_back(1.5 - 0.1 * std::log(x));
  }
  const cs::Law p = cs::fit_law(cs::LawForm::PowerLaw, k, power);
  EXPECT_NEAR(p.rate, 0.4, 0.05);
  EXPECT_NEAR(p.offset, 0.3, 0.02);
  EXPECT_NEAR(p.scale, 0.5, 0.03);
  const cs::Law e = cs::fit_law(cs::LawForm::Exponential, k, expo);
  EXPECT_NEAR(e.rate, 0.05, 1e-4);
  EXPECT_NEAR(e.offset, 0.2, 1e-4);
  const cs::Law l = cs::fit_law(cs::LawForm::LogLinear, k, loglin);
  EXPECT_NEAR(l.scale, 0.1, 1e-9);
  EXPECT_NEAR(l(1.0), 1.5, 1e-9);
  EXPECT_LT(p.sse, cs::fit_law(cs::LawForm::LogLinear, k, power).sse);
}

// Smooth blob images (digit-like strokes), each with later 1-pixel-shifted copies: the copies are found.
TEST(CurationScaling, DedupFindsPlantedDuplicates) {
  at::Generator gen = at::detail::createCPUGenerator(5);
  const int unique = 300, copies = 3;
  const at::Tensor grid = at::arange(28, at::kFloat);
  std::vector<at::Tensor> images;
  std::vector<int> truth;  // 1: a copy of an earlier image
  std::vector<at::Tensor> bases;
  for (int i = 0; i < unique; ++i) {
    at::Tensor img = at::zeros({28, 28});
    const at::Tensor c = at::rand({4, 2}, gen) * 16 + 6;
    for (int b = 0; b < 4; ++b) {
      const at::Tensor gy = (grid - c[b][0]).pow(2).unsqueeze(1), gx = (grid - c[b][1]).pow(2).unsqueeze(0);
      img += at::exp(-(gy + gx) / 4.0);
    }
    bases.push_back(img);
  }
  for (int i = 0; i < unique; ++i) images.push_back(bases[i].reshape({1, -1})), truth.push_back(0);
  const at::Tensor shifts = at::randint(-1, 2, {unique, copies, 2}, gen, at::kLong);
  for (int i = 0; i < unique; ++i)
    for (int c = 0; c < copies; ++c) {
      images.push_back(at::roll(bases[i], {shifts[i][c][0].item<std::int64_t>(), shifts[i][c][1].item<std::int64_t>()}, {0, 1}).reshape({1, -1}));
      truth.push_back(1);
    }
  const auto sim = cs::max_earlier_similarity(cs::dedup_signature(at::cat(images, 0)));
  int tp = 0, fp = 0, fn = 0;
  for (std::size_t i = 0; i < sim.size(); ++i) {
    const bool flagged = sim[i] > 0.9;  // the deduplication knob at 1 with dedup_range 0.1
    tp += flagged && truth[i], fp += flagged && !truth[i], fn += !flagged && truth[i];
  }
  EXPECT_GE(tp / static_cast<double>(tp + fp), 0.95);
  EXPECT_GE(tp / static_cast<double>(tp + fn), 0.95);
}

TEST(CurationScaling, FilterKeepsExactlyItsQuantile) {
  nexp::Random rng(11);
  const int n = 1000;
  std::vector<int> source(n);
  std::vector<double> score(n), dup(n, -1.0);
  for (int i = 0; i < n; ++i) source[i] = i % 5, score[i] = std::floor(rng.uniform() * 50);  // many ties
  const cs::PoolView view{&source, &score, &dup};
  for (double q : {0.05, 0.123, 0.5, 1.0}) {
    cs::Recipe r;
    r.quantile = q;
    const auto kept = cs::kept_examples(view, r);
    ASSERT_EQ(static_cast<long>(kept.size()), std::lround(q * n)) << "q = " << q;
    double worst_kept = -1, best_dropped = 1e9;
    std::vector<bool> in(n, false);
    for (auto i : kept) in[i] = true, worst_kept = std::max(worst_kept, score[i]);
    for (int i = 0; i < n; ++i)
      if (!in[i]) best_dropped = std::min(best_dropped, score[i]);
    EXPECT_LE(worst_kept, best_dropped);
  }
}

TEST(CurationScaling, TrainingSetSharesAndRepeats) {
  const int n = 500;
  std::vector<int> source(n);
  std::vector<double> score(n), dup(n, -1.0);
  for (int i = 0; i < n; ++i) source[i] = i % 5, score[i] = i;
  const cs::PoolView view{&source, &score, &dup};
  cs::Recipe r;
  r.mix = {0.5, 0.25, 0.25, 0.0, 0.0};
  r.quantile = 0.2;  // keeps examples 0..99: 20 per source
  nexp::Random rng(1);
  const auto set = cs::training_set(view, r, 1000, rng);
  ASSERT_EQ(set.size(), 1000u);
  std::vector<int> per_source(5, 0), per_example(n, 0);
  for (auto i : set) ++per_source[source[i]], ++per_example[i];
  EXPECT_EQ(per_source, (std::vector<int>{500, 250, 250, 0, 0}));
  for (int i = 0; i < 100; i += 5) EXPECT_EQ(per_example[i], 25);  // 500 drawn from 20 kept: 25 passes each
  r.mix = {0, 0, 0, 1, 0};
  r.dedup_threshold = 0.5;
  std::vector<double> all_dup(n, 0.99);
  const cs::PoolView dedup_all{&source, &score, &all_dup};
  EXPECT_THROW(cs::training_set(dedup_all, r, 10, rng), nexp::ConfigError);
  r.quantile = 0.0;
  EXPECT_THROW(cs::training_set(view, r, 10, rng), nexp::ConfigError);
}

TEST(CurationScaling, StickBreakingIsUniformOnTheSimplex) {
  const cs::Recipe neutral = cs::recipe_from_point(cs::neutral_coordinates(), 0.1);
  for (double w : neutral.mix) EXPECT_NEAR(w, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(neutral.quantile, 1.0);
  EXPECT_DOUBLE_EQ(neutral.dedup_threshold, 1.0);
  nexp::Random rng(2);
  const int draws = 40000;
  std::array<double, 5> m{}, m2{};
  for (int t = 0; t < draws; ++t) {
    const cs::Recipe r = cs::recipe_from_point(cs::random_point(6, rng), 0.1);
    EXPECT_NEAR(std::accumulate(r.mix.begin(), r.mix.end(), 0.0), 1.0, 1e-12);
    for (int i = 0; i < 5; ++i) m[i] += r.mix[i] / draws, m2[i] += r.mix[i] * r.mix[i] / draws;
  }
  for (int i = 0; i < 5; ++i) {  // Dirichlet(1,...,1): E w = 1/5, E w^2 = 2 / (5 * 6)
    EXPECT_NEAR(m[i], 0.2, 0.005) << i;
    EXPECT_NEAR(m2[i], 1.0 / 15.0, 0.003) << i;
  }
}

// The hand-written backward pass of each stage's objective against central finite differences.
TEST(CurationScaling, GradientsMatchFiniteDifferences) {
  const cs::Mlp m = cs::init_mlp(6, 5, 4, 9, at::kDouble);
  at::Generator gen = at::detail::createCPUGenerator(4);
  cs::Batch b;
  b.x = at::randn({7, 6}, gen, at::kDouble);
  b.label = at::randint(0, 4, {7}, gen, at::kLong);
  b.rejected = (b.label + 1) % 4;
  b.ref_logp = at::log_softmax(at::randn({7, 4}, gen, at::kDouble), 1);
  b.action = at::randint(0, 4, {7}, gen, at::kLong);
  for (cs::Objective obj : {cs::Objective::CrossEntropy, cs::Objective::Dpo, cs::Objective::Reinforce}) {
    cs::Mlp g;
    cs::objective_and_grad(m, obj, b, 0.7, &g);
    const at::Tensor* params[] = {&m.w1, &m.b1, &m.w2, &m.b2};
    const at::Tensor* grads[] = {&g.w1, &g.b1, &g.w2, &g.b2};
    for (int p = 0; p < 4; ++p) {
      at::Tensor flat = params[p]->view({-1});
      for (std::int64_t i = 0; i < flat.numel(); i += 3) {
        const double h = 1e-6, v = flat[i].item<double>();
        flat[i] = v + h;
        const double up = cs::objective_and_grad(m, obj, b, 0.7, nullptr);
        flat[i] = v - h;
        const double down = cs::objective_and_grad(m, obj, b, 0.7, nullptr);
        flat[i] = v;
        EXPECT_NEAR(grads[p]->view({-1})[i].item<double>(), (up - down) / (2 * h), 1e-7)
            << "objective " << static_cast<int>(obj) << " parameter " << p << " index " << i;
      }
    }
  }
}

TEST(CurationScaling, HalfOctaveKs) {
  EXPECT_EQ(cs::half_octave_ks(16), (std::vector<std::int64_t>{1, 2, 3, 4, 6, 8, 11, 16}));
  EXPECT_NEAR(cs::unit_ball_volume(2), M_PI, 1e-12);
  EXPECT_NEAR(cs::unit_ball_volume(4), M_PI * M_PI / 2, 1e-12);
}

// The law with repetition: the hand-written form at a point, continuity at every pass boundary,
// monotone descent, and the limit tau -> infinity (no decay) is a n^b.
TEST(CurationScaling, RepetitionLawFormContinuityAndLimit) {
  cs::RepetitionLaw law;
  law.log_a = std::log(3.0), law.b = -0.3, law.tau = 1.5, law.unique = 500;
  const double delta = std::exp2(-1.0 / 1.5);
  // C = 2.5 U: K = 2, bracket = log U + delta log 2 + delta^2 log(1.25).
  const double by_hand = std::log(3.0) - 0.3 * (std::log(500.0) + delta * std::log(2.0) + delta * delta * std::log(1.25));
  EXPECT_NEAR(law.log_loss(1250), by_hand, 1e-12);
  EXPECT_NEAR(law.log_loss(400), std::log(3.0) - 0.3 * std::log(400.0), 1e-12);
  for (int k = 1; k <= 6; ++k) {
    const double at = 500.0 * k;
    EXPECT_NEAR(law.log_loss(at * (1 - 1e-9)), law.log_loss(at), 1e-8) << "K = " << k;
    EXPECT_NEAR(law.log_loss(at * (1 + 1e-9)), law.log_loss(at), 1e-8) << "K = " << k;
  }
  double previous = INFINITY;
  for (double c = 10; c < 20000; c *= 1.01) {
    const double y = law(c);
    EXPECT_LT(y, previous) << "C = " << c;
    previous = y;
  }
  // Decay bounds the gain from repetition: the bracket tends to log U + sum_k delta^(k-1) log(k/(k-1)) < infinity,
  // so y stays above a finite floor while a C^b would not.
  EXPECT_GT(law(1e7), 3.0 * std::pow(1e7, -0.3) * 1.5);
  law.tau = INFINITY;
  for (double c : {10.0, 499.0, 500.0, 1234.0, 5000.0, 77777.0})
    EXPECT_NEAR(law.log_loss(c), std::log(3.0) - 0.3 * std::log(c), 1e-9) << "C = " << c;
  law.tau = 1e9;  // numerically infinite half-life
  EXPECT_NEAR(law.log_loss(77777.0), std::log(3.0) - 0.3 * std::log(77777.0), 1e-5);
}

// Planted (a, b, tau): first-use points give (a, b), repeated-data points give tau; exactly without
// noise, closely with 1% multiplicative noise.
TEST(CurationScaling, RepetitionLawRecoversPlantedParameters) {
  cs::RepetitionLaw planted;
  planted.log_a = std::log(2.5), planted.b = -0.35, planted.tau = 2.5, planted.unique = 400;
  const std::vector<double> first = {50, 100, 200, 400}, repeated = {800, 1200, 1600, 2400};
  for (double noise : {0.0, 0.01}) {
    nexp::Random rng(11);
    std::vector<double> nf, yf, nr, yr;
    for (int rep = 0; rep < 4; ++rep) {
      for (double n : first) nf.push_back(n), yf.push_back(planted(n) * std::exp(noise * rng.normal()));
      for (double n : repeated) nr.push_back(n), yr.push_back(planted(n) * std::exp(noise * rng.normal()));
    }
    cs::RepetitionLaw law = cs::fit_first_use(nf, yf, 400);
    EXPECT_NEAR(law.b, -0.35, noise == 0 ? 1e-9 : 0.015) << "noise " << noise;
    EXPECT_NEAR(law.log_a, std::log(2.5), noise == 0 ? 1e-9 : 0.05) << "noise " << noise;
    const double tau = cs::fit_half_life(law, nr, yr);
    EXPECT_NEAR(tau, 2.5, noise == 0 ? 1e-4 : 0.5) << "noise " << noise;
  }
  EXPECT_THROW(cs::fit_first_use({100}, {1.0}, 400), nexp::ConfigError);
  EXPECT_THROW(cs::fit_first_use({100, 200}, {1.0, 0.0}, 400), nexp::ConfigError);
}

// Two planted laws with equal exponent: a strict filter (lower a, U_s = 500) and a loose one (a twice
// as high, U_l = 20000). With tau -> 0 the strict pool's repetitions are worthless, so it stalls at
// a_s U_s^b while the loose one keeps falling: the argmin moves to the loose pool at the closed-form
// C* = U_s (a_s / a_l)^(1/b) = 500 * 0.5^(-2) = 2000. With tau = infinity the strict pool always wins.
TEST(CurationScaling, LawArgminLoosensWithCompute) {
  cs::RepetitionLaw strict, loose;
  strict.log_a = 0.0, strict.b = -0.5, strict.tau = 0.02, strict.unique = 500;
  loose.log_a = std::log(2.0), loose.b = -0.5, loose.tau = 0.02, loose.unique = 20000;
  const double crossing = 500 * std::pow(0.5, 1.0 / -0.5);
  EXPECT_NEAR(crossing, 2000, 1e-9);
  for (double c : {100.0, 500.0, 1000.0, 1990.0}) EXPECT_LT(strict(c), loose(c)) << "C = " << c;
  for (double c : {2010.0, 4000.0, 10000.0, 20000.0}) EXPECT_GT(strict(c), loose(c)) << "C = " << c;
  EXPECT_NEAR(strict(1e5), std::pow(500.0, -0.5), 1e-9);  // the stalled strict pool
  strict.tau = loose.tau = INFINITY;
  for (double c : {2010.0, 20000.0, 1e6}) EXPECT_LT(strict(c), loose(c)) << "C = " << c;
}
