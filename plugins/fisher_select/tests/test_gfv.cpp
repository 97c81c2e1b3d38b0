// fisher_select's own tests: the closed forms against autograd and explicit expectations, the Gated
// Fisher Volume's identities (singleton, Sherman-Morrison, greedy gains), its monotone submodularity
// and the greedy's (1 - 1/e) guarantee by enumeration, the gate, and every selector's contract.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <set>
#include <vector>

#include "gfv.hpp"
#include "images.hpp"
#include "selectors.hpp"
#include "sft.hpp"

using namespace fisher_select;

namespace {

const auto kF64 = at::TensorOptions().dtype(at::kDouble);

at::Tensor random_probs(std::int64_t n, std::int64_t c) { return at::softmax(at::randn({n, c}, kF64), 1); }

// A random symmetric positive definite matrix.
at::Tensor random_spd(std::int64_t d) {
  const at::Tensor a = at::randn({d, d}, kF64);
  return a.matmul(a.t()) / d + 0.1 * at::eye(d, kF64);
}

std::vector<std::int64_t> members(unsigned mask, int n) {
  std::vector<std::int64_t> s;
  for (int i = 0; i < n; ++i)
    if (mask >> i & 1u) s.push_back(i);
  return s;
}

}  // namespace

// (G1): the closed form (p - e_y) (x) [h; 1] is the autograd gradient of each sample's cross-entropy
// with respect to the last layer's weight and bias.
TEST(fisher_select, ClosedFormLastLayerGradientsEqualAutogradPerSample) {
  at::manual_seed(1);
  const std::int64_t n = 6, hdim = 5, c = 4;
  const at::Tensor h = at::randn({n, hdim}, kF64);
  const at::Tensor labels = at::randint(c, {n}, at::kLong);
  at::Tensor w = at::randn({c, hdim}, kF64).requires_grad_(), b = at::randn({c}, kF64).requires_grad_();
  const at::Tensor probs = at::softmax(h.matmul(w.t()) + b, 1).detach();
  const at::Tensor closed = last_layer_gradients(probs, labels, h);
  ASSERT_EQ(closed.size(1), c * (hdim + 1));
  for (std::int64_t i = 0; i < n; ++i) {
    w.mutable_grad() = at::Tensor();
    b.mutable_grad() = at::Tensor();
    at::cross_entropy_loss((h[i].matmul(w.t()) + b).unsqueeze(0), labels[i].unsqueeze(0)).backward();
    const at::Tensor autograd = at::cat({w.grad(), b.grad().unsqueeze(1)}, 1).reshape({-1});
    EXPECT_LT((closed[i] - autograd).abs().max().item<double>(), 1e-12) << "sample " << i;
  }
}

// A candidate of several tokens: the summed closed form is the autograd gradient of its summed token
// losses, and the sum of its tokens' Fishers is the explicit expectation over the joint labels drawn
// from the model (independent given the teacher-forced inputs).
TEST(fisher_select, SequenceUpdatesAndFishersSumOverTheirTokens) {
  at::manual_seed(11);
  const std::int64_t hdim = 4, c = 3, d = 5;
  const at::Tensor owner = at::tensor(std::vector<std::int64_t>{0, 0, 1, 1, 1});
  const at::Tensor h = at::randn({5, hdim}, kF64);
  const at::Tensor labels = at::randint(c, {5}, at::kLong);
  at::Tensor w = at::randn({c, hdim}, kF64).requires_grad_(), b = at::randn({c}, kF64).requires_grad_();
  const at::Tensor probs = at::softmax(h.matmul(w.t()) + b, 1).detach();
  const at::Tensor closed = per_candidate(last_layer_gradients(probs, labels, h), owner, 2);
  at::cross_entropy_loss(h.slice(0, 2).matmul(w.t()) + b, labels.slice(0, 2), {}, at::Reduction::Sum).backward();
  const at::Tensor autograd = at::cat({w.grad(), b.grad().unsqueeze(1)}, 1).reshape({-1});
  EXPECT_LT((closed[1] - autograd).abs().max().item<double>(), 1e-12);

  const at::Tensor p = gaussian_projection(c, hdim, d, 5), q = class_embeddings(h, p, c);
  at::Tensor explicit_f = at::zeros({d, d}, kF64);  // candidate 0: tokens 0 and 1, labels (y0, y1)
  for (std::int64_t y0 = 0; y0 < c; ++y0)
    for (std::int64_t y1 = 0; y1 < c; ++y1) {
      const at::Tensor y = at::tensor(std::vector<std::int64_t>{y0, y1});
      const at::Tensor g = projected_gradients(q.slice(0, 0, 2), probs.slice(0, 0, 2), y).sum(0);
      explicit_f += probs[0][y0].item<double>() * probs[1][y1].item<double>() * at::outer(g, g);
    }
  const at::Tensor summed = 2 * model_fisher(q.slice(0, 0, 2), probs.slice(0, 0, 2));
  EXPECT_LT((summed - explicit_f).abs().max().item<double>(), 1e-12);
}

// The projected route Q_i^T (p_i - e_y) equals P^T g_i, and D = 0 is the identity.
TEST(fisher_select, ProjectedGradientsEqualTheProjectionOfTheFullOnes) {
  at::manual_seed(2);
  const std::int64_t n = 7, hdim = 5, c = 3, d = 4;
  const at::Tensor h = at::randn({n, hdim}, kF64), probs = random_probs(n, c);
  const at::Tensor labels = at::randint(c, {n}, at::kLong);
  for (std::int64_t dim : {d, std::int64_t{0}}) {
    const at::Tensor p = gaussian_projection(c, hdim, dim, 7);
    const at::Tensor q = class_embeddings(h, p, c);
    const at::Tensor expected = last_layer_gradients(probs, labels, h).matmul(p);
    EXPECT_LT((projected_gradients(q, probs, labels) - expected).abs().max().item<double>(), 1e-12) << "D " << dim;
  }
}

// (G2): Q^T (diag p - p p^T) Q is the explicit expectation over labels drawn from the model,
// mean_i sum_y p_iy (P^T g_iy)(P^T g_iy)^T.
TEST(fisher_select, FisherClosedFormEqualsTheExplicitExpectationOverLabels) {
  at::manual_seed(3);
  const std::int64_t n = 5, hdim = 4, c = 3, d = 6;
  const at::Tensor h = at::randn({n, hdim}, kF64), probs = random_probs(n, c);
  const at::Tensor p = gaussian_projection(c, hdim, d, 11);
  at::Tensor explicit_fisher = at::zeros({d, d}, kF64);
  for (std::int64_t y = 0; y < c; ++y) {
    const at::Tensor g = last_layer_gradients(probs, at::full({n}, y, at::kLong), h).matmul(p);  // [n, D]
    explicit_fisher += (g * probs.select(1, y).unsqueeze(1)).t().matmul(g);
  }
  explicit_fisher /= n;
  const at::Tensor closed = model_fisher(class_embeddings(h, p, c), probs);
  EXPECT_LT((closed - explicit_fisher).abs().max().item<double>(), 1e-12);
}

// (G5) on a singleton is the gated per-sample score (G3): Phi({i}) = log(1 + w_i g_i^T F^-1 g_i).
TEST(fisher_select, SingletonVolumeIsTheGatedPerSampleScore) {
  at::manual_seed(4);
  const std::int64_t n = 8, d = 5;
  const at::Tensor g = at::randn({n, d}, kF64), f = random_spd(d), w = at::rand({n}, kF64);
  const at::Tensor z = whiten(g, f);
  const at::Tensor finv = at::linalg_inv(f);
  const at::Tensor scores = gated_scores(z, w);
  for (std::int64_t i = 0; i < n; ++i) {
    const double direct = std::log1p(w[i].item<double>() * g[i].dot(finv.matmul(g[i])).item<double>());
    EXPECT_NEAR(gated_fisher_volume(z, w, {i}), direct, 1e-10);
    EXPECT_NEAR(scores[i].item<double>(), direct, 1e-10);
  }
  EXPECT_NEAR(gated_fisher_volume(z, w, {}), 0.0, 1e-14);
}

// (G6): each greedy gain equals the difference of direct log-dets, and the Sherman-Morrison form
// log(1 + w_j z_j^T M^-1 z_j) with M^-1 updated explicitly.
TEST(fisher_select, GreedyGainsEqualDirectLogDetsAndShermanMorrison) {
  at::manual_seed(5);
  const std::int64_t n = 20, d = 6, k = 9;
  const at::Tensor z = at::randn({n, d}, kF64), w = at::rand({n}, kF64);
  const Greedy greedy = greedy_volume(z, w, k);
  ASSERT_EQ(static_cast<std::int64_t>(greedy.picked.size()), k);
  std::vector<std::int64_t> prefix;
  at::Tensor minv = at::eye(d, kF64);
  double previous = 0;
  for (std::int64_t t = 0; t < k; ++t) {
    const std::int64_t j = greedy.picked[t];
    const at::Tensor zj = z[j];
    const double wj = w[j].item<double>();
    const double sherman = std::log1p(wj * zj.dot(minv.matmul(zj)).item<double>());
    // the greedy picked the best Sherman-Morrison gain among those not taken
    for (std::int64_t i = 0; i < n; ++i) {
      if (std::find(prefix.begin(), prefix.end(), i) != prefix.end()) continue;
      EXPECT_LE(std::log1p(w[i].item<double>() * z[i].dot(minv.matmul(z[i])).item<double>()), sherman + 1e-10);
    }
    const at::Tensor mz = minv.matmul(zj);
    minv = minv - wj * at::outer(mz, mz) / (1 + wj * zj.dot(mz));
    prefix.push_back(j);
    const double phi = gated_fisher_volume(z, w, prefix);
    EXPECT_NEAR(greedy.gains[t], phi - previous, 1e-9) << "pick " << t;
    EXPECT_NEAR(greedy.gains[t], sherman, 1e-9) << "pick " << t;
    previous = phi;
  }
}

// (G7): for w >= 0, Phi is monotone and has diminishing returns, checked on every subset of 10
// random candidates (D = 4 < 10, so the volume saturates and the returns truly diminish).
TEST(fisher_select, VolumeIsMonotoneAndSubmodularByEnumeration) {
  at::manual_seed(6);
  const int n = 10;
  for (int trial = 0; trial < 3; ++trial) {
    const at::Tensor z = at::randn({n, 4}, kF64), w = at::rand({n}, kF64);
    std::vector<double> phi(1u << n);
    for (unsigned m = 0; m < phi.size(); ++m) phi[m] = gated_fisher_volume(z, w, members(m, n));
    for (unsigned m = 0; m < phi.size(); ++m)
      for (int i = 0; i < n; ++i) {
        if (m >> i & 1u) continue;
        const double gain = phi[m | 1u << i] - phi[m];
        ASSERT_GE(gain, -1e-12) << "monotone, set " << m << " + " << i;
        for (int j = 0; j < n; ++j) {
          if (j == i || (m >> j & 1u)) continue;
          const double later = phi[m | 1u << j | 1u << i] - phi[m | 1u << j];
          ASSERT_LE(later, gain + 1e-10) << "submodular, set " << m << " + " << j << ", then " << i;
        }
      }
  }
}

// (G7): the greedy reaches at least (1 - 1/e) of the brute-force optimum over all k-subsets of 12.
TEST(fisher_select, GreedyReachesOneMinusOneOverEOfTheOptimum) {
  at::manual_seed(7);
  const int n = 12;
  double worst = 1;
  for (int trial = 0; trial < 5; ++trial) {
    const at::Tensor z = at::randn({n, 3}, kF64) * (1 + 2 * at::rand({n, 1}, kF64)), w = at::rand({n}, kF64);
    for (int k = 1; k <= 4; ++k) {
      double best = 0;
      for (unsigned m = 0; m < (1u << n); ++m)
        if (__builtin_popcount(m) == k) best = std::max(best, gated_fisher_volume(z, w, members(m, n)));
      const double greedy = gated_fisher_volume(z, w, greedy_volume(z, w, k).picked);
      EXPECT_GE(greedy, (1 - std::exp(-1.0)) * best - 1e-12) << "trial " << trial << ", k " << k;
      EXPECT_LE(greedy, best + 1e-12);
      worst = std::min(worst, greedy / best);
    }
  }
  EXPECT_GT(worst, 1 - std::exp(-1.0));
}

// (G4): the gate is 1/2 for an update F^-1-orthogonal to the reference and grows with the alignment.
TEST(fisher_select, GateIsOneHalfWhenOrthogonalAndIncreasesWithAlignment) {
  at::manual_seed(8);
  const std::int64_t d = 5;
  const at::Tensor f = random_spd(d), gbar = at::randn({d}, kF64);
  const at::Tensor finv = at::linalg_inv(f);
  at::Tensor u = at::randn({d}, kF64);
  const at::Tensor fg = finv.matmul(gbar);
  const at::Tensor orth = u - (u.dot(fg) / gbar.dot(fg)) * gbar;  // <orth, gbar>_{F^-1} = 0
  const at::Tensor zbar = whiten(gbar.unsqueeze(0), f).squeeze(0);
  const at::Tensor zo = whiten(orth.unsqueeze(0), f);
  EXPECT_NEAR(descent_gate(alignment(zo, zbar), 10.0).item<double>(), 0.5, 1e-12);
  std::vector<at::Tensor> rows;
  for (double s : {-1.0, -0.5, 0.0, 0.5, 1.0, 3.0}) rows.push_back(orth + s * gbar);
  const at::Tensor gates = descent_gate(alignment(whiten(at::stack(rows), f), zbar), 4.0);
  for (std::int64_t i = 1; i < gates.size(0); ++i) EXPECT_GT(gates[i].item<double>(), gates[i - 1].item<double>());
  EXPECT_NEAR(descent_gate(alignment(whiten(gbar.unsqueeze(0), f), zbar), 4.0).item<double>(), 1 / (1 + std::exp(-4.0)),
              1e-12);
}

// Every selector returns k distinct indices of the pool, including k = n and a pool with repeated
// candidates, each candidate owning two tokens (an SFT response).
TEST(fisher_select, EverySelectorReturnsKDistinctIndices) {
  at::manual_seed(9);
  const std::int64_t n = 24, tokens = 2 * n, c = 4, hdim = 6, d = 5;
  Pool pool;
  pool.h = at::randn({tokens, hdim}, kF64);
  pool.h.slice(0, n, tokens).copy_(pool.h.slice(0, 0, n));  // every candidate twice
  pool.probs = random_probs(tokens, c);
  pool.probs.slice(0, n, tokens).copy_(pool.probs.slice(0, 0, n));
  pool.labels = at::randint(c, {tokens}, at::kLong);
  pool.labels.slice(0, n, tokens).copy_(pool.labels.slice(0, 0, n));
  pool.q = class_embeddings(pool.h, gaussian_projection(c, hdim, d, 3), c);
  pool.owner = at::arange(n, at::kLong).repeat_interleave(2);
  pool.n = n;
  pool.reference = at::randn({d}, kF64);
  pool.irreducible_loss = at::rand({n}, kF64);
  const at::Tensor f = random_spd(d);
  nexp::Random rng(1);
  for (const auto& [name, s] : selector_names())
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{5}, n}) {
      const auto picked = select(s, pool, f, k, SelectorSettings{}, rng).picked;
      const std::set<std::int64_t> distinct(picked.begin(), picked.end());
      EXPECT_EQ(static_cast<std::int64_t>(picked.size()), k) << name;
      EXPECT_EQ(static_cast<std::int64_t>(distinct.size()), k) << name << " k " << k;
      EXPECT_GE(*distinct.begin(), 0) << name;
      EXPECT_LT(*distinct.rbegin(), n) << name;
    }
}

// GREATS' greedy: with eta -> 0 it is the top-k of <g_i, g_val>; its gains match the second-order
// reduction R(S) = eta <g_val, sum g> - eta^2/2 |sum g|^2 computed directly.
TEST(fisher_select, GreatsGreedyMaximisesTheSecondOrderReduction) {
  at::manual_seed(10);
  const at::Tensor g = at::randn({15, 4}, kF64), gval = at::randn({4}, kF64);
  const auto tiny = greats_greedy(g, gval, 5, 1e-9);
  EXPECT_EQ(tiny, top_k(g.matmul(gval), 5));
  const double eta = 0.7;
  const auto picked = greats_greedy(g, gval, 4, eta);
  auto reduction = [&](const std::vector<std::int64_t>& s) {
    at::Tensor sum = at::zeros({4}, kF64);
    for (auto i : s) sum += g[i];
    return eta * gval.dot(sum).item<double>() - 0.5 * eta * eta * sum.dot(sum).item<double>();
  };
  std::vector<std::int64_t> prefix;
  for (auto j : picked) {
    for (std::int64_t i = 0; i < 15; ++i) {
      if (std::find(prefix.begin(), prefix.end(), i) != prefix.end()) continue;
      auto with_i = prefix, with_j = prefix;
      with_i.push_back(i), with_j.push_back(j);
      EXPECT_LE(reduction(with_i), reduction(with_j) + 1e-12);
    }
    prefix.push_back(j);
  }
}

// Effective rank: 1 for collinear rows, n for orthogonal rows of equal norm.
TEST(fisher_select, EffectiveRankOfCollinearAndOrthogonalRows) {
  const at::Tensor line = at::outer(at::arange(1, 5, kF64), at::randn({6}, kF64));
  EXPECT_NEAR(effective_rank(line), 1.0, 1e-9);
  EXPECT_NEAR(effective_rank(3 * at::eye(4, kF64)), 4.0, 1e-9);
}

// The corruptions: rate 0 flips nothing, rate 1 flips everything (to another class, or to the pair
// partner), and the pairing is an involution without fixed points.
TEST(fisher_select, LabelNoiseFlipsAtTheGivenRate) {
  const at::Tensor y = at::arange(10, at::kLong).repeat({300});
  nexp::Random rng(4);
  at::Tensor flags;
  EXPECT_TRUE(corrupt_labels(y, 0.0, NoiseType::Symmetric, 10, rng, &flags).equal(y));
  EXPECT_EQ(flags.sum().item<std::int64_t>(), 0);
  const at::Tensor all = corrupt_labels(y, 1.0, NoiseType::Symmetric, 10, rng, &flags);
  EXPECT_EQ(all.ne(y).sum().item<std::int64_t>(), y.size(0));
  const at::Tensor some = corrupt_labels(y, 0.3, NoiseType::Symmetric, 10, rng, &flags);
  EXPECT_NEAR(flags.to(at::kDouble).mean().item<double>(), 0.3, 0.03);  // 3000 draws: sd 0.008
  EXPECT_TRUE(some.ne(y).equal(flags));
  for (std::int64_t c = 0; c < 10; ++c) {
    EXPECT_NE(pair_partner(c), c);
    EXPECT_EQ(pair_partner(pair_partner(c)), c);
  }
  const at::Tensor paired = corrupt_labels(y, 1.0, NoiseType::Pair, 10, rng, &flags);
  for (std::int64_t i = 0; i < 10; ++i) EXPECT_EQ(paired[i].item<std::int64_t>(), pair_partner(i));
}

// The SFT pairs: clean responses are the sorted digits and the zero-padded sum; every corruption
// changes the response (off_by_one in exactly one digit by +-1) and leaves the prompt alone.
TEST(fisher_select, SftResponsesAreRightAndCorruptionsChangeThem) {
  using namespace fisher_select::sft;
  using Kind = fisher_select::sft::NoiseType;
  const std::vector<std::int64_t> s = sequence(Task::Sort, {3, 1, 4, 1, 5});
  EXPECT_EQ(s, (std::vector<std::int64_t>{kSortToken, 3, 1, 4, 1, 5, kEquals, 1, 1, 3, 4, 5, kEos}));
  const std::vector<std::int64_t> a = sequence(Task::Add, {9, 7, 0, 8});
  EXPECT_EQ(a, (std::vector<std::int64_t>{kAddToken, 9, 7, kPlus, 0, 8, kEquals, 1, 0, 5, kEos, kPad, kPad}));
  nexp::Random rng(3);
  for (Kind kind : {Kind::Random, Kind::OffByOne, Kind::OffTask, Kind::Mixed})
    for (int i = 0; i < 200; ++i) {
      const Task task = i % 2 ? Task::Add : Task::Sort;
      const std::vector<std::int64_t> clean = sequence(task, i % 4 == 0 ? std::vector<std::int64_t>{1, 2, 3, 4, 5}
                                                                      : random_digits(task, rng));
      std::vector<std::int64_t> bad = clean;
      corrupt(bad, kind, rng);
      int changed = 0;
      for (std::int64_t t = 0; t < kLength; ++t) {
        if (t < kPrompt || t >= kPrompt + response_length(task) - 1) {
          EXPECT_EQ(bad[t], clean[t]) << t;
        }
        changed += bad[t] != clean[t];
        if (kind == Kind::OffByOne && bad[t] != clean[t]) {
          EXPECT_EQ(std::min((bad[t] - clean[t] + 10) % 10, (clean[t] - bad[t] + 10) % 10), 1);
        }
      }
      EXPECT_GE(changed, 1);
      if (kind == Kind::OffByOne) {
        EXPECT_EQ(changed, 1);
      }
    }
}
