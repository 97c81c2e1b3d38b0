// htaf's tests: every step approximation against its defining properties (monotone, limits, h(0) = 1/2,
// unit mass by quadrature, analytic backward against finite differences), HTAF's tail and band mass
// against the slope-matched logistic and arctan (closed forms), exact 0/1 surrogate forwards, a LIF
// layer against a hand-computed trace, the binary layer against integer XNOR-popcount, the shapes
// concepts, the ICBM scores, and a deep Heaviside network that memorises 64 real digits.
#include <gtest/gtest.h>

#include <torch/optim/adam.h>
#include <torch/nn/functional/loss.h>

#include <bitset>
#include <cmath>
#include <fstream>
#include <sstream>

#include "activations.hpp"
#include "experiments.hpp"
#include "models.hpp"
#include "shapes.hpp"

using namespace htaf;

namespace {

Activation make(Kind k, double a = 4.0, double b = 1.0) {
  Activation act;
  act.kind = k, act.a = a, act.b = b;
  return act;
}

std::vector<Kind> kinds_under_test() { return step_kinds(); }

}  // namespace

// ---------------------------------------------------------------- the step approximations

TEST(htaf, EveryStepIsMonotoneWithLimitsZeroOneAndHalfAtZero) {
  for (Kind k : kinds_under_test()) {
    const Activation act = make(k);
    SCOPED_TRACE(kind_name(k));
    EXPECT_NEAR(value(act, 0.0), 0.5, 1e-15);
    EXPECT_NEAR(value(act, -1e7), 0.0, 1e-6);
    EXPECT_NEAR(value(act, 1e7), 1.0, 1e-6);
    double prev = value(act, -20.0);
    for (double x = -20.0; x <= 20.0; x += 0.01) {
      const double v = value(act, x);
      EXPECT_GE(v, prev - 1e-15) << "x = " << x;
      EXPECT_GE(derivative(act, x), 0.0) << "x = " << x;
      prev = v;
    }
  }
}

TEST(htaf, DerivativeIntegratesToTheRiseOfHAndToOne) {
  for (Kind k : kinds_under_test()) {
    const Activation act = make(k);
    SCOPED_TRACE(kind_name(k));
    // Quadrature of h' equals h(hi) - h(lo): the analytic derivative belongs to the value.
    EXPECT_NEAR(integrate_derivative(act, -7.3, 5.9, 200000), value(act, 5.9) - value(act, -7.3), 1e-7);
    // The whole mass is 1: the heavy-tailed arctan and fast sigmoid leave O(1/L) beyond |x| = L.
    EXPECT_NEAR(integrate_derivative(act, -1e4, 1e4, 2000000) , 1.0, 2e-4);
  }
}

TEST(htaf, SlopeAtZeroIsTheClosedForm) {
  for (double a : {0.5, 1.0, 4.0, 12.0})
    for (double b : {0.5, 1.0, 3.0}) {
      const double slope = a * b / (4.0 * std::tanh(a / 2.0));
      EXPECT_NEAR(derivative(make(Kind::Htaf, a, b), 0.0), slope, 1e-12);
      EXPECT_NEAR(derivative(make(Kind::SigmoidMatched, a, b), 0.0), slope, 1e-12);  // matched logistic
    }
}

TEST(htaf, BackwardMatchesFiniteDifferencesInDouble) {
  const at::Tensor x = at::tensor({-3.1, -1.7, -0.6, -0.2, 0.15, 0.55, 1.3, 2.9}, at::kDouble);
  for (Kind k : kinds_under_test()) {
    const Activation act = make(k);
    SCOPED_TRACE(kind_name(k));
    for (Mode mode : {Mode::Smooth, Mode::Surrogate}) {
      const at::Tensor xs = x.clone().requires_grad_(true);
      activate(xs, act, mode, true).sum().backward();
      const double eps = 1e-6;
      for (std::int64_t i = 0; i < x.size(0); ++i) {
        const double xi = x[i].item<double>();
        const double fd = (value(act, xi + eps) - value(act, xi - eps)) / (2 * eps);
        EXPECT_NEAR(xs.grad()[i].item<double>(), fd, 1e-7) << "x = " << xi;
      }
    }
  }
}

TEST(htaf, SurrogateForwardIsExactlyZeroOrOne) {
  const at::Tensor x = at::randn({1000}, at::kDouble) * 3;
  for (Kind k : kinds_under_test()) {
    const at::Tensor y = activate(x, make(k), Mode::Surrogate, true);
    EXPECT_TRUE(at::equal(y, x.ge(0).to(at::kDouble))) << kind_name(k);
    // Smooth mode: h while training, exactly H at test.
    EXPECT_TRUE(at::equal(activate(x, make(k), Mode::Smooth, false), x.ge(0).to(at::kDouble))) << kind_name(k);
    EXPECT_TRUE(at::allclose(activate(x, make(k), Mode::Smooth, true), value(make(k), x))) << kind_name(k);
  }
}

TEST(htaf, HtafTailOutgrowsTheSlopeMatchedLogisticWithoutBound) {
  for (double a : {0.5, 1.0, 4.0, 16.0}) {
    const Activation h = make(Kind::Htaf, a), s = make(Kind::SigmoidMatched, a);
    double prev = 0;
    for (double x : {1.0, 2.0, 4.0, 8.0, 16.0}) {
      const double ratio = derivative(h, x) / derivative(s, x);
      EXPECT_GT(ratio, prev) << "a = " << a << ", x = " << x;
      prev = ratio;
    }
    // Closed form of the log-ratio's growth: k - 2b per unit of x (k = a b / tanh(a/2)).
    const double k = a / std::tanh(a / 2.0);
    const double slope = std::log(derivative(h, 16.0) / derivative(s, 16.0)) - std::log(derivative(h, 15.0) / derivative(s, 15.0));
    EXPECT_NEAR(slope, k - 2.0, 1e-3) << "a = " << a;
    // ... so that it passes any bound: 1e3 at x = 16 + ln(1e3) / (k - 2) at the latest.
    const double far = 16.0 + std::log(1e3) / (k - 2.0);
    EXPECT_GT(derivative(h, far) / derivative(s, far), 1e3) << "a = " << a;
  }
}

TEST(htaf, BandMassOfHtafExceedsArctanAtEqualSlope) {
  for (double a : {0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0}) {
    const Activation h = make(Kind::Htaf, a);
    const double m = profile(h).band_mass;
    EXPECT_GE(m, 0.865) << "a = " << a;
    EXPECT_LE(m, 0.9) << "a = " << a;
    // arctan with the same slope at 0 (alpha / 2 = h'(0)): 2/pi atan(pi/4 * 2 atanh(0.9)) = 0.7401
    Activation t = make(Kind::Arctan);
    t.alpha = 2.0 * derivative(h, 0.0);
    const double mt = profile(t).band_mass;
    EXPECT_NEAR(mt, 2.0 / M_PI * std::atan(M_PI / 2.0 * std::atanh(0.9)), 1e-9);
    EXPECT_GT(m, mt + 0.1) << "a = " << a;
    // the matched logistic holds 90% by construction
    EXPECT_NEAR(profile(make(Kind::SigmoidMatched, a)).band_mass, 0.9, 1e-9);
  }
}

TEST(htaf, BadParametersFailBeforeTraining) {
  Activation act = make(Kind::Htaf, 0.0);
  EXPECT_THROW(validate(act), nexp::ConfigError);
  act = make(Kind::Htaf, 4.0, -1.0);
  EXPECT_THROW(validate(act), nexp::ConfigError);
  EXPECT_NO_THROW(validate(make(Kind::Htaf)));
}

// ---------------------------------------------------------------- the networks

TEST(htaf, LifLayerFollowsTheHandComputedTrace) {
  // beta 0.5, theta 1, currents 0.6 and 1.2 (soft reset v -= theta after a spike):
  //   I = 0.6: v = 0.6, 0.9, 1.05        -> spikes 0, 0, 1
  //   I = 1.2: v = 1.2, 0.8, 1.6         -> spikes 1, 0, 1
  const Unit unit{make(Kind::Htaf), Mode::Surrogate};
  const at::Tensor current = at::tensor({0.6, 1.2}, at::kDouble).reshape({1, 2});
  const at::Tensor s = lif_spikes(current, 3, 0.5, 1.0, unit, true);
  const at::Tensor expected = at::tensor({0.0, 1.0, 0.0, 0.0, 1.0, 1.0}, at::kDouble).reshape({3, 1, 2});
  EXPECT_TRUE(at::equal(s, expected)) << s;
  // One step: ds/dI = h'(I - theta).
  const at::Tensor i = at::tensor({0.6, 1.2}, at::kDouble).reshape({1, 2}).requires_grad_(true);
  lif_spikes(i, 1, 0.5, 1.0, unit, true).sum().backward();
  EXPECT_NEAR(i.grad()[0][0].item<double>(), derivative(make(Kind::Htaf), -0.4), 1e-12);
  EXPECT_NEAR(i.grad()[0][1].item<double>(), derivative(make(Kind::Htaf), 0.2), 1e-12);
}

TEST(htaf, BinaryLayerEqualsIntegerXnorPopcount) {
  constexpr int n = 37, outputs = 9;
  at::manual_seed(3);
  const at::Tensor x = at::where(at::rand({5, n}).ge(0.5), 1.0, -1.0).to(at::kFloat);
  const at::Tensor w = at::rand({outputs, n}) * 2 - 1;
  const at::Tensor y = at::linear(x, binarize_weight(w));
  for (int r = 0; r < 5; ++r)
    for (int o = 0; o < outputs; ++o) {
      std::bitset<n> xb, wb;
      for (int j = 0; j < n; ++j) xb[j] = x[r][j].item<float>() > 0, wb[j] = w[o][j].item<float>() >= 0;
      const int expected = 2 * static_cast<int>((~(xb ^ wb)).count()) - n;
      EXPECT_EQ(y[r][o].item<float>(), static_cast<float>(expected));
    }
  // The sign unit is 2 H - 1, exactly +-1.
  const at::Tensor s = sign_unit(at::randn({100}), Unit{make(Kind::ApproxSign), Mode::Surrogate}, true);
  EXPECT_TRUE(at::equal(s.abs(), at::ones_like(s)));
}

TEST(htaf, ShapesConceptsRenderAloneAsSpecified) {
  const auto lit = [](const std::vector<float>& img) {
    int n = 0;
    for (float v : img) n += v > 0.5f;
    return n;
  };
  const auto at_px = [](const std::vector<float>& img, int y, int x) { return img[static_cast<std::size_t>(y * kSide + x)] > 0.5f; };
  std::vector<float> img(kSide * kSide, 0.0f);
  render_concept(img, 0, 0, 0, 1);  // hbar: row 3, columns 5..22
  EXPECT_EQ(lit(img), 18);
  for (int x = 5; x <= 22; ++x) EXPECT_TRUE(at_px(img, 3, x));
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 0, 2, -1, 1);  // shifted two rows down, one column left
  for (int x = 4; x <= 21; ++x) EXPECT_TRUE(at_px(img, 5, x));
  EXPECT_EQ(lit(img), 18);
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 1, 0, 0, 1);  // vbar: column 3, rows 5..22
  EXPECT_EQ(lit(img), 18);
  EXPECT_TRUE(at_px(img, 5, 3) && at_px(img, 22, 3));
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 2, 0, 0, 1);  // ring of radius 5: the centre is dark, the circle lit
  EXPECT_FALSE(at_px(img, 14, 14));
  EXPECT_TRUE(at_px(img, 14, 19) && at_px(img, 9, 14) && at_px(img, 19, 14) && at_px(img, 14, 9));
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 3, 0, 0, 1);  // dot: lattice points within 2.5 of (22, 22): 21
  EXPECT_EQ(lit(img), 21);
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 5, 0, 0, 1);  // diagonal (8, 8) - (20, 20): its 13 lattice points (the distance of a
  EXPECT_TRUE(at_px(img, 8, 8) && at_px(img, 14, 14) && at_px(img, 20, 20));  // neighbour is 0.707)
  EXPECT_EQ(lit(img), 13);
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 7, 0, 0, 1);  // box outline of [18, 25] x [6, 13]: 4 * 7 = 28 pixels, hollow
  EXPECT_EQ(lit(img), 28);
  EXPECT_FALSE(at_px(img, 21, 9));
  // Width 2 thickens a bar to two rows.
  std::fill(img.begin(), img.end(), 0.0f);
  render_concept(img, 0, 0, 0, 2);
  EXPECT_GT(lit(img), 18);
  // Every concept alone is non-empty and differs from the others.
  std::vector<std::vector<float>> alone;
  for (int c = 0; c < kConcepts; ++c) {
    alone.emplace_back(kSide * kSide, 0.0f);
    render_concept(alone.back(), c, 0, 0, 1);
    EXPECT_GT(lit(alone.back()), 8) << concept_names()[static_cast<std::size_t>(c)];
    for (int p = 0; p < c; ++p) EXPECT_NE(alone[static_cast<std::size_t>(p)], alone.back());
  }
}

TEST(htaf, ShapesClassTableIsFixedAndCoversEveryClass) {
  const auto t = class_table(10, 0);
  EXPECT_EQ(t, class_table(10, 0));
  EXPECT_NE(t, class_table(10, 1));
  std::vector<int> count(10, 0);
  for (auto c : t) ++count[static_cast<std::size_t>(c)];
  for (int c : count) EXPECT_TRUE(c == 25 || c == 26);  // 256 codes round robin over 10 classes
}

TEST(htaf, IcbmScoresHaveTheirDefinitions) {
  EXPECT_DOUBLE_EQ(binary_share({0.0, 0.04, 0.5, 0.96, 1.0, 0.94}), 4.0 / 6.0);
  // A unit equal to a concept scores AUC 1; one equal to its absence too (max(AUC, 1 - AUC)).
  std::vector<std::vector<double>> units;
  std::vector<std::vector<int>> concepts;
  for (int i = 0; i < 40; ++i) {
    const int c0 = i % 2, c1 = (i / 2) % 2;
    units.push_back({static_cast<double>(c0), 1.0 - c1, 0.3});
    concepts.push_back({c0, c1});
  }
  EXPECT_DOUBLE_EQ(concept_auc(units, concepts), 1.0);
  for (auto& u : units) u = {0.3, 0.3, 0.3};  // constant units: AUC 1/2
  EXPECT_DOUBLE_EQ(concept_auc(units, concepts), 0.5);
}

TEST(htaf, DeepHeavisideNetworkMemorises64Digits) {
  std::ifstream in(nexp::data_dir() / "sklearn" / "digits.csv");
  if (!in) GTEST_SKIP() << "digits.csv is not in the data cache; run scripts/setup";
  std::string line;
  std::getline(in, line);
  std::vector<float> xs;
  std::vector<std::int64_t> ys;
  while (ys.size() < 64 && std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    for (int j = 0; j < 64 && std::getline(ss, cell, ','); ++j) xs.push_back(std::stof(cell) / 16.0f);
    std::getline(ss, cell, ',');
    ys.push_back(std::stoll(cell));
  }
  ASSERT_EQ(ys.size(), 64u);
  const at::Tensor x = (at::tensor(xs).reshape({64, 64}) - 0.3) / 0.4;
  const at::Tensor y = at::tensor(ys);
  at::manual_seed(0);
  Dhn net(64, 64, 3, 10, Unit{make(Kind::Htaf), Mode::Surrogate});
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(1e-2));
  for (int step = 0; step < 300; ++step) {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net.forward(x), y).backward();
    opt.step();
  }
  net.eval();
  const double acc = net.forward(x).argmax(1).eq(y).to(at::kDouble).mean().item<double>();
  EXPECT_GE(acc, 0.95);
}
