// llm_channel's mathematics against independent references: exact enumeration, closed forms, brute
// force, and scripted channels whose every call is known.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <nexp/error.hpp>
#include <nexp/stats.hpp>

#include "operators.hpp"
#include "router.hpp"
#include "sim.hpp"
#include "theory.hpp"

using namespace llm_channel;

namespace {

// Answers drawn from p by `vote`'s plurality, as a Monte Carlo reference for the exact enumeration.
double simulated_plurality(const std::vector<double>& p, int n, int trials, nexp::Random& rng) {
  int right = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<AnswerId> answers;
    for (int i = 0; i < n; ++i) {
      double u = rng.uniform();
      int k = 0;
      while (k + 1 < static_cast<int>(p.size()) && u >= p[static_cast<std::size_t>(k)]) u -= p[static_cast<std::size_t>(k++)];
      answers.push_back(k);
    }
    right += vote(answers, std::vector<double>(answers.size(), 1.0)) == 0;
  }
  return static_cast<double>(right) / trials;
}

// Chen et al.'s mix: easy items (the right answer most likely) and hard ones (an attractor more likely).
double mixed_accuracy(int n) {
  return 0.5 * plurality_accuracy_exact({0.85, 0.1, 0.05}, n) + 0.5 * plurality_accuracy_exact({0.38, 0.47, 0.15}, n);
}

// A channel whose answers come from a script: generate() returns the next scripted answer, judge()
// scores answer 0 high, verify() accepts answer 0 only; prices 1 / 4 / 20 over 4, judge and
// verifier 1 / 4.
class ScriptedChannel : public Channel {
 public:
  explicit ScriptedChannel(std::vector<AnswerId> script) : script_(std::move(script)) {}
  int models() const override { return 3; }
  double price(int model) const override { return std::vector<double>{0.25, 1, 5}[static_cast<std::size_t>(model)]; }
  AnswerId generate(int model, double) override {
    charge(price(model));
    return script_.at(next_++);
  }
  double judge(AnswerId a) override {
    charge(0.25);
    return a == 0 ? 0.9 : 0.2;
  }
  bool verify(AnswerId a) override {
    charge(0.25);
    return a == 0;
  }
  AnswerId refine(int model, AnswerId) override {
    charge(1 + price(model));
    return 0;
  }

 private:
  std::vector<AnswerId> script_;
  std::size_t next_ = 0;
};

ChannelConfig test_config(double temperature) {
  ChannelConfig c;
  c.name = "test";
  c.temperature = temperature;
  c.models = {{"small", 0.5, 1, 1, 1}, {"mid", 1.5, 1, 1, 4}, {"large", 2.5, 1, 1, 20}};
  return c;
}

Task choice_task() {
  Task t;
  t.kind = Kind::Choice;
  t.difficulty = 1;
  t.attractor = 1;
  t.other_logits = {-0.5, -1};
  t.quality = {1, 0, 0, 0};
  return t;
}

double entropy(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return h;
}

}  // namespace

// ---------------------------------------------------------------- T3: plurality voting

TEST(Vote, TiesGoToTheAnswerSeenFirstAndWeightsCount) {
  EXPECT_EQ(vote({2, 1, 1, 2}, {1, 1, 1, 1}), 2);
  EXPECT_EQ(vote({2, 1, 1}, {1, 1, 1}), 1);
  EXPECT_EQ(vote({2, 1, 1}, {0.9, 0.3, 0.3}), 2);
  EXPECT_EQ(vote_margin({3, 3, 1, 3, 2}), 2);
}

TEST(Vote, ExactEnumerationMatchesClosedFormsForTwoAnswers) {
  // K = 2, n = 3: right wins with 2 or 3 votes: p^3 + 3 p^2 (1 - p). n = 2: a 1-1 tie is a coin flip.
  const double p = 0.6;
  EXPECT_NEAR(plurality_accuracy_exact({p, 1 - p}, 3), p * p * p + 3 * p * p * (1 - p), 1e-12);
  EXPECT_NEAR(plurality_accuracy_exact({p, 1 - p}, 2), p * p + p * (1 - p), 1e-12);
  EXPECT_NEAR(plurality_accuracy_exact({0.2, 0.3, 0.5}, 1), 0.2, 1e-12);
}

TEST(Vote, ExactEnumerationMatchesSimulatedVotes) {
  nexp::Random rng(7);
  const std::vector<double> p = {0.4, 0.35, 0.15, 0.1};
  for (int n : {1, 2, 3, 4, 6, 9}) {
    const int trials = 40000;
    const double exact = plurality_accuracy_exact(p, n), sim = simulated_plurality(p, n, trials, rng);
    EXPECT_NEAR(sim, exact, 4 * std::sqrt(exact * (1 - exact) / trials)) << "n = " << n;
  }
}

TEST(Vote, AccuracyOfAnEasyHardMixIsNotMonotoneInTheNumberOfCalls) {
  // Chen et al. 2024: voting first helps (easy items saturate) and then hurts (hard items converge on
  // the attractor).
  std::vector<double> acc;
  for (int n = 1; n <= 41; n += 2) acc.push_back(mixed_accuracy(n));
  const auto peak = std::max_element(acc.begin(), acc.end()) - acc.begin();
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, static_cast<long>(acc.size()) - 1);
  EXPECT_GT(acc[static_cast<std::size_t>(peak)] - acc.front(), 0.02);
  EXPECT_GT(acc[static_cast<std::size_t>(peak)] - acc.back(), 0.02);
  // The same shape from simulated votes at the ends and the peak.
  nexp::Random rng(11);
  const int n_peak = 1 + 2 * static_cast<int>(peak);
  auto sim = [&](int n) {
    return 0.5 * simulated_plurality({0.85, 0.1, 0.05}, n, 20000, rng) +
           0.5 * simulated_plurality({0.38, 0.47, 0.15}, n, 20000, rng);
  };
  const double at_one = sim(1), at_peak = sim(n_peak), at_end = sim(41);
  EXPECT_GT(at_peak, at_one + 0.01);
  EXPECT_GT(at_peak, at_end + 0.01);
}

// ---------------------------------------------------------------- T2: generator-critic refinement

TEST(Refinement, ClosedFormMatchesTheSimulatedCritic) {
  for (const auto& [a, b] : std::vector<std::pair<double, double>>{{0.35, 0.15}, {0.08, 0.30}}) {
    auto config = test_config(1);
    config.critic.break_rate = a, config.critic.fix_rate = b;
    const Task task = choice_task();
    const double c0 = 0.55;
    const int chains = 20000;
    for (int rounds : {1, 2, 4}) {
      int right = 0;
      for (int i = 0; i < chains; ++i) {
        SimChannel ch(config, task, nexp::Random::stream({3, static_cast<std::uint64_t>(rounds), static_cast<std::uint64_t>(i)}));
        nexp::Random start(static_cast<std::uint64_t>(i));
        AnswerId y = start.bernoulli(c0) ? 0 : 1;
        for (int t = 0; t < rounds; ++t) y = ch.refine(1, y);
        right += ch.quality(y) == 1;
      }
      const double expected = refinement_accuracy(c0, a, b, rounds);
      EXPECT_NEAR(static_cast<double>(right) / chains, expected, 4 * std::sqrt(expected * (1 - expected) / chains))
          << "a " << a << " b " << b << " rounds " << rounds;
    }
  }
  // Either side of the boundary c* = c0: the weak critic (c* 0.30) degrades, the strong (c* 0.79) helps.
  EXPECT_LT(refinement_accuracy(0.55, 0.35, 0.15, 3), 0.55);
  EXPECT_GT(refinement_accuracy(0.55, 0.08, 0.30, 3), 0.55);
  EXPECT_NEAR(refinement_accuracy(0.55, 0.35, 0.15, 200), 0.3, 1e-12);
}

// ---------------------------------------------------------------- T1: uniform against weighted averaging

TEST(Averaging, MonteCarloMatchesTheFirstOrderFormulasAndCrossesAtTauStar) {
  std::vector<double> p;
  for (int i = 0; i < 64; ++i) p.push_back(10 + 10.0 * i / 63);
  const double star = tau_star(p);
  const auto m = precision_means(p);
  EXPECT_NEAR(star * star, m.arithmetic * (m.arithmetic - m.harmonic), 1e-9);
  nexp::Random rng(5);
  std::vector<double> taus, diff;
  for (double f : {0.5, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5}) {
    const double tau = f * star;
    const auto mc = averaging_mse_monte_carlo(p, tau, 40000, rng);
    EXPECT_NEAR(mc.uniform, mse_uniform_first_order(p), 4 * mc.uniform_se) << "tau " << tau;
    EXPECT_NEAR(mc.weighted, mse_weighted_first_order(p, tau), 4 * mc.weighted_se + 0.01 * mc.weighted) << "tau " << tau;
    taus.push_back(tau), diff.push_back(mc.weighted - mc.uniform);
  }
  EXPECT_LT(diff.front(), 0);  // weighting wins well below tau*
  EXPECT_GT(diff.back(), 0);   // uniform wins well above
  // The Monte Carlo crossing: a line through the differences near tau*, solved for zero.
  const auto fit = nexp::stats::fit_line(std::vector<double>(taus.begin() + 1, taus.end() - 1),
                                         std::vector<double>(diff.begin() + 1, diff.end() - 1));
  EXPECT_NEAR(-fit.intercept / fit.slope, star, 0.05 * star);
}

// ---------------------------------------------------------------- the simulated channel

TEST(SimChannel, GreedyIsOneAnswerAndEntropyRisesWithTemperature) {
  const auto config = test_config(0);
  const Task task = choice_task();
  SimChannel ch(config, task, nexp::Random(1));
  const AnswerId first = ch.generate(1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(ch.generate(1), first);
  double previous = -1;
  for (double t : {0.0, 0.3, 0.7, 1.0, 2.0}) {
    const double h = entropy(ch.distribution(1, t));
    EXPECT_GT(h, previous) << "T = " << t;
    previous = h;
  }
  // softmax(z / T) at T = 1 by hand: z = (1.5 - 1, 1, -0.5, -1).
  const std::vector<double> z = {0.5, 1, -0.5, -1};
  double s = 0;
  for (double x : z) s += std::exp(x);
  const auto p = ch.distribution(1, 1);
  for (std::size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(p[i], std::exp(z[i]) / s, 1e-12);
  EXPECT_DOUBLE_EQ(ch.usage().cost, 51 * 1.0);  // 51 mid-model calls at price 4 / 4
}

TEST(SimChannel, TheChannelFileIsCheckedBeforeAnyWork) {
  const auto dir = std::filesystem::temp_directory_path() / "llm_channel_test_file";
  std::filesystem::create_directories(dir);
  EXPECT_THROW(read_channel_file(dir / "missing.yaml"), nexp::DataError);
  std::ofstream(dir / "bad.yaml") << "configurations:\n  - name: a\n    temprature: 1\n    models: [{name: m}]\n";
  try {
    read_channel_file(dir / "bad.yaml");
    ADD_FAILURE() << "a misspelt key was accepted";
  } catch (const nexp::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("temprature"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "good.yaml") << "configurations:\n  - name: a\n    models: [{name: m, price: 4}]\n";
  const auto configs = read_channel_file(dir / "good.yaml");
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_THROW(find_config(configs, "b", dir / "good.yaml"), nexp::DataError);
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------- the operators, call by call

TEST(Operators, CostsCallsAndAnswersOfScriptedChannels) {
  {
    ScriptedChannel ch({1, 0, 1, 2, 0});
    const auto out = combine(ch, 1, 5, Combiner::Plurality);  // 1 and 0 tie at two; 1 came first
    EXPECT_EQ(out.answer, 1);
    EXPECT_DOUBLE_EQ(out.cost, 5);
    EXPECT_EQ(out.calls, 5);
  }
  {
    ScriptedChannel ch({1, 0, 1});
    const auto out = combine(ch, 0, 3, Combiner::Selection);  // the judge prefers 0
    EXPECT_EQ(out.answer, 0);
    EXPECT_DOUBLE_EQ(out.cost, 3 * 0.25 + 3 * 0.25);
  }
  {
    ScriptedChannel ch({2, 2, 0, 1});
    const auto out = harq(ch, 2, 5, false);  // accepted at the third attempt
    EXPECT_EQ(out.answer, 0);
    EXPECT_EQ(out.rounds, 3);
    EXPECT_DOUBLE_EQ(out.cost, 3 * 5 + 3 * 0.25);
  }
  {
    ScriptedChannel ch({2, 1, 2});
    const auto out = harq(ch, 0, 3, false);  // never accepted: chase combining votes 2
    EXPECT_EQ(out.answer, 2);
    EXPECT_EQ(out.calls, 6);
  }
  {
    ScriptedChannel ch({1, 2, 1, 1, 3, 3});
    const auto out = rateless(ch, 0, 2, 15);  // margins 1, 0, 1, 2: stops after four samples
    EXPECT_EQ(out.answer, 1);
    EXPECT_EQ(out.calls, 4);
  }
  {
    ScriptedChannel ch({1, 0, 1});
    // Rate 1/2 with k = 3: three verifications, to 1, 0, 1 (by votes); 0 is accepted, 1 rejected twice.
    const auto out = redundant_verification(ch, 1, 3, 0.5);
    EXPECT_EQ(out.answer, 0);
    EXPECT_EQ(out.calls, 6);
  }
  {
    ScriptedChannel ch({2, 3, 0});
    const auto out = escalate(ch, 0, false);  // m0 rejected, m1 rejected, m2 final
    EXPECT_EQ(out.answer, 0);
    EXPECT_DOUBLE_EQ(out.cost, 0.25 + 0.25 + 1 + 0.25 + 5);
  }
  {
    ScriptedChannel ch({3});
    const auto out = generator_critic(ch, 1, 2);
    EXPECT_EQ(out.answer, 0);
    EXPECT_DOUBLE_EQ(out.cost, 1 + 2 * (1 + 1));
  }
  const auto arms = standard_arms(3);
  EXPECT_GE(arms.size(), 80u);
  for (std::size_t i = 0; i < arms.size(); ++i) EXPECT_EQ(find_arm(arms, arms[i].name), static_cast<int>(i));
}

// ---------------------------------------------------------------- the router

TEST(Router, WithEveryTaskAsNeighbourItPicksTheBestFixedArmPerLam) {
  nexp::Random rng(3);
  const std::size_t tasks = 40, arms = 12;
  ArmTable t(tasks, arms);
  std::vector<std::vector<double>> emb;
  for (std::size_t j = 0; j < tasks; ++j) {
    for (std::size_t a = 0; a < arms; ++a) t.q(j, a) = rng.uniform(), t.c(j, a) = 0.25 * (1 + a) * rng.uniform(0.5, 1.5);
    emb.push_back({rng.normal(), rng.normal(), rng.normal()});
  }
  std::vector<std::size_t> train(tasks);
  std::iota(train.begin(), train.end(), 0);
  for (double lam : {0.0, 0.01, 0.1, 0.3, 1.0, 10.0}) {
    // Brute force: the arm of largest mean Q - lam C over all tasks.
    std::size_t best = 0;
    double best_u = -1e300;
    for (std::size_t a = 0; a < arms; ++a) {
      double u = 0;
      for (std::size_t j = 0; j < tasks; ++j) u += t.q(j, a) - lam * t.c(j, a);
      if (u > best_u) best = a, best_u = u;
    }
    for (std::size_t query = 0; query < 5; ++query)
      EXPECT_EQ(choose_arm(knn_estimate(t, train, emb, emb[query], tasks, false), lam), best) << "lam " << lam;
    // Similarity weights with identical embeddings are equal weights too.
    const std::vector<std::vector<double>> same(tasks, std::vector<double>{1, 2, 3});
    EXPECT_EQ(choose_arm(knn_estimate(t, train, same, same[0], tasks, true), lam), best) << "lam " << lam;
  }
}

TEST(Router, NearestNeighboursAreFoundByCosineSimilarity) {
  ArmTable t(3, 2);
  t.q(0, 0) = 1, t.q(1, 1) = 1, t.q(2, 1) = 1;
  const std::vector<std::vector<double>> emb = {{1, 0}, {0, 1}, {-1, 0.1}};
  const auto e = knn_estimate(t, {0, 1, 2}, emb, {2, 0.1}, 1, true);
  EXPECT_EQ(choose_arm(e, 0), 0u);
  EXPECT_NEAR(cosine({1, 0}, {1, 1}), std::sqrt(0.5), 1e-12);
}

TEST(Router, FrontierMeasuresOfAHandMadeCase) {
  // Fixed arms: (0.5, 1), (0.7, 4), (0.9, 20), and a dominated (0.6, 5). Router: (0.55, 0.8),
  // (0.75, 3), (0.9, 8), (0.92, 15).
  const std::vector<Point> fixed = {{0.5, 1, 0}, {0.7, 4, 0}, {0.9, 20, 0}, {0.6, 5, 0}};
  const std::vector<Point> router = {{0.55, 0.8, 0}, {0.75, 3, 0}, {0.9, 8, 0}, {0.92, 15, 0}};
  EXPECT_EQ(pareto_front(fixed), (std::vector<std::size_t>{0, 1, 2}));
  const auto m = frontier_measures(fixed, router, {0}, 1);
  EXPECT_EQ(m.strongest_arm, 2u);
  EXPECT_NEAR(m.cost_cut_at_matched_quality, 1 - 8.0 / 20, 1e-12);
  EXPECT_NEAR(m.quality_gain_at_matched_cost, 0.92 / 0.9 - 1, 1e-12);
  EXPECT_NEAR(m.quality_gain_vs_single_shot, 0.92 / 0.5 - 1, 1e-12);
  EXPECT_DOUBLE_EQ(m.frontier_covered, 1.0);
  // (0.55, 0.8) is cheaper than every fixed arm; the others: 0.75 / 0.5, 0.9 / 0.7, 0.92 / 0.7.
  EXPECT_NEAR(m.mean_gain_over_frontier, (0.75 / 0.5 + 0.9 / 0.7 + 0.92 / 0.7) / 3 - 1, 1e-12);
  const auto worse = frontier_measures(fixed, {{0.4, 0.5, 0}, {0.8, 10, 0}}, {0}, 1);
  EXPECT_TRUE(std::isnan(worse.cost_cut_at_matched_quality));
  EXPECT_NEAR(worse.frontier_covered, 0.0, 1e-12);  // (0.5, 1): 0.4; (0.7, 4): 0.4; (0.9, 20): 0.8
}
