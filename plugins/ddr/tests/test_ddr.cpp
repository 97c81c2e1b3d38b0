// ddr's own tests: parameter counts, the frequency bias against its closed form and its DFT, grid
// transfer, translation equivariance, the spectral mixer against an explicit circular convolution,
// gradients through the complex filter, and a tiny model that memorises 64 real images.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/fft.h>
#include <torch/optim/adamw.h>
#include <torch/serialize.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <set>

#include "experiments.hpp"
#include "modules.hpp"

using namespace ddr;

namespace {
constexpr double kPi = 3.14159265358979323846;

// Row of offset (dy, dx) in the offset table of an n x n grid.
std::int64_t row(std::int64_t n, std::int64_t dy, std::int64_t dx) { return (dy + n - 1) * (2 * n - 1) + (dx + n - 1); }
}  // namespace

// ---------------------------------------------------------------- parameter counts

TEST(ddr, ParameterCountsAtWindowSevenAre169Versus52) {
  TableBias table(7, 4);
  FrequencyBias freq(7, 4);
  EXPECT_EQ(table.weight.numel() / 4, 169);
  EXPECT_EQ(freq.coefficients.numel() / 4, 52);
  EXPECT_EQ(table.params_per_head(), 169);
  EXPECT_EQ(freq.params_per_head(), 52);
  EXPECT_DOUBLE_EQ(169.0 / 52.0, 3.25);
}

TEST(ddr, ParameterCountsFollowTheGeneralFormula) {
  for (std::int64_t m = 2; m <= 12; ++m) {
    const std::int64_t l = 2 * m - 1;
    TableBias table(m, 3);
    FrequencyBias freq(m, 3);
    EXPECT_EQ(table.weight.numel(), 3 * l * l) << "M = " << m;
    // 2K with K = 2(2M - 1), capped by the 2M(M - 1) non-constant half-lattice frequencies.
    const std::int64_t k = std::min(2 * l, 2 * m * (m - 1));
    EXPECT_EQ(freq.coefficients.numel(), 3 * 2 * k) << "M = " << m;
    EXPECT_EQ(frequency_params_per_head(m), 2 * k);
    if (m >= 3) {
      EXPECT_DOUBLE_EQ(static_cast<double>(table_params_per_head(m)) / frequency_params_per_head(m), l / 4.0);
    }
  }
  EXPECT_EQ(FrequencyBias(7, 2, 10).params_per_head(), 20);
  ModelConfig c;
  c.variant = "ddr_swin";
  EXPECT_EQ(c.rpb_params_per_head(), 169);
  c.variant = "ddr";
  EXPECT_EQ(c.rpb_params_per_head(), 52);
  c.variant = "ddr_no_attention";
  EXPECT_EQ(c.rpb_params_per_head(), 0);
}

TEST(ddr, DefaultFrequenciesAreAWholeLowPassSetClosedUnderRotation) {
  const auto f7 = low_frequencies(7, default_frequency_count(7));
  ASSERT_EQ(f7.size(), 26u);
  std::set<std::pair<int, int>> got;
  for (const auto& f : f7) got.insert({f.u, f.v});
  std::set<std::pair<int, int>> expected = {{4, 0}, {0, 4}};
  for (int v = 0; v <= 3; ++v)
    for (int u = -3; u <= 3; ++u)
      if (v > 0 || u > 0) expected.insert({u, v});
  EXPECT_EQ(got, expected);
  for (std::int64_t m = 3; m <= 12; ++m) {
    std::set<std::pair<int, int>> s;
    for (const auto& f : low_frequencies(m, default_frequency_count(m))) s.insert({f.u, f.v});
    auto contains = [&](int u, int v) { return s.count({u, v}) || s.count({-u, -v}); };
    for (const auto& [u, v] : s) {
      EXPECT_TRUE(contains(-v, u)) << "M = " << m << ": (" << u << "," << v << ") rotated is missing";
      EXPECT_TRUE(contains(v, u)) << "M = " << m << ": (" << u << "," << v << ") mirrored is missing";
    }
  }
}

// ---------------------------------------------------------------- the frequency bias

TEST(ddr, FrequencyBiasOnItsTrainingGridIsItsClosedFormAndHasExactlyItsSpectrum) {
  const std::int64_t m = 7, l = 13, heads = 3;
  FrequencyBias bias(m, heads);
  bias.to(at::kDouble);
  at::Tensor table = bias.table(m);  // [169, heads]
  ASSERT_EQ(table.sizes(), (at::IntArrayRef{l * l, heads}));
  auto coef = bias.coefficients.accessor<double, 2>();
  const auto& freqs = bias.frequencies();
  const std::int64_t k = static_cast<std::int64_t>(freqs.size());
  // (a) equals eq. FB summed term by term.
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t dy = -(m - 1); dy < m; ++dy)
      for (std::int64_t dx = -(m - 1); dx < m; ++dx) {
        double b = 0;
        for (std::int64_t i = 0; i < k; ++i) {
          const double t = 2 * kPi * static_cast<double>(freqs[i].u * dy + freqs[i].v * dx) / l;
          b += coef[h][i] * std::cos(t) + coef[h][k + i] * std::sin(t);
        }
        EXPECT_NEAR(table[row(m, dy, dx)][h].item<double>(), b, 1e-12);
      }
  // (b) its DFT over the L-periodic offset lattice is (L^2/2)(a - i c) at each chosen frequency and 0 at
  // every other non-constant frequency: the table is the series, nothing smoothed or added.
  auto t = table.accessor<double, 2>();
  for (std::int64_t h = 0; h < heads; ++h)
    for (int v = 0; v < m; ++v)
      for (int u = -(static_cast<int>(m) - 1); u < m; ++u) {
        if (v == 0 && u <= 0) continue;
        std::complex<double> s = 0;
        for (std::int64_t dy = -(m - 1); dy < m; ++dy)
          for (std::int64_t dx = -(m - 1); dx < m; ++dx)
            s += t[row(m, dy, dx)][h] * std::polar(1.0, -2 * kPi * static_cast<double>(u * dy + v * dx) / l);
        std::complex<double> want = 0;
        for (std::int64_t i = 0; i < k; ++i)
          if (freqs[i].u == u && freqs[i].v == v) want = 0.5 * l * l * std::complex<double>(coef[h][i], -coef[h][k + i]);
        EXPECT_NEAR(std::abs(s - want), 0.0, 1e-10) << "frequency (" << u << "," << v << ")";
      }
}

TEST(ddr, FrequencyBiasOnADoubledGridAgreesAtTheSharedOffsetsWhereSwinsResizedTableDoesNot) {
  at::manual_seed(3);
  FrequencyBias freq(7, 4);
  TableBias swin(7, 4);
  torch::NoGradGuard no_grad;
  at::Tensor f7 = freq.table(7), f14 = freq.table(14), s7 = swin.table(7), s14 = swin.table(14);
  ASSERT_EQ(f14.size(0), 27 * 27);
  double freq_gap = 0, swin_gap = 0;
  for (std::int64_t dy = -6; dy <= 6; ++dy)
    for (std::int64_t dx = -6; dx <= 6; ++dx) {
      freq_gap = std::max(freq_gap, (f14[row(14, 2 * dy, 2 * dx)] - f7[row(7, dy, dx)]).abs().max().item<double>());
      swin_gap = std::max(swin_gap, (s14[row(14, 2 * dy, 2 * dx)] - s7[row(7, dy, dx)]).abs().max().item<double>());
    }
  EXPECT_LT(freq_gap, 1e-6);
  // Bicubic resizing (align_corners = false) samples between the old entries and smooths them.
  EXPECT_GT(swin_gap, 1e-3);
  // The control used by ddr.transfer: the same frequency bias tabulated and resized like Swin's.
  freq.transfer = BiasTransfer::Interpolate;
  EXPECT_TRUE(freq.table(7).equal(f7));
  EXPECT_GT((freq.table(14) - f14).abs().max().item<double>(), 1e-4);
}

TEST(ddr, BiasesAreTranslationEquivariantOnEveryGrid) {
  at::manual_seed(5);
  FrequencyBias freq(7, 2);
  TableBias swin(7, 2);
  torch::NoGradGuard no_grad;
  for (RelativePositionBias* bias : {static_cast<RelativePositionBias*>(&freq), static_cast<RelativePositionBias*>(&swin)})
    for (std::int64_t n : {7, 10}) {
      at::Tensor b = bias->forward(n);  // [H, N, N]
      ASSERT_EQ(b.sizes(), (at::IntArrayRef{2, n * n, n * n}));
      auto a = b.accessor<float, 3>();
      at::Tensor table = bias->table(n);
      auto t = table.accessor<float, 2>();
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t i = 0; i < n * n; ++i)
          for (std::int64_t j = 0; j < n * n; ++j) {
            const std::int64_t dy = i / n - j / n, dx = i % n - j % n;
            ASSERT_EQ(a[h][i][j], t[row(n, dy, dx)][h]);  // a function of p_i - p_j alone
            for (auto [ty, tx] : {std::pair{1, 0}, {0, 1}, {2, -3}}) {
              const std::int64_t yi = i / n + ty, xi = i % n + tx, yj = j / n + ty, xj = j % n + tx;
              if (yi < 0 || yi >= n || xi < 0 || xi >= n || yj < 0 || yj >= n || xj < 0 || xj >= n) continue;
              ASSERT_EQ(a[h][i][j], a[h][yi * n + xi][yj * n + xj]);
            }
          }
    }
}

// ---------------------------------------------------------------- the spectral mixer

TEST(ddr, SpectralMixerIsAnExplicitCircularConvolution) {
  at::manual_seed(7);
  for (std::int64_t n : {4, 5}) {
    const std::int64_t c = 3, batch = 2;
    SpectralMixer mixer(n, c);
    mixer->to(at::kDouble);
    at::Tensor x = at::randn({batch, n * n, c}, at::kDouble);
    at::Tensor y = mixer->forward(x, n);
    at::Tensor k = torch::fft::irfft2(mixer->filter(n), std::vector<std::int64_t>{n, n}, {0, 1});  // [n, n, c]
    auto ka = k.accessor<double, 3>();
    auto xa = x.accessor<double, 3>();
    auto ya = y.accessor<double, 3>();
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t p = 0; p < n * n; ++p)
        for (std::int64_t ch = 0; ch < c; ++ch) {
          double s = 0;
          for (std::int64_t q = 0; q < n * n; ++q)
            s += ka[(p / n - q / n + n) % n][(p % n - q % n + n) % n][ch] * xa[b][q][ch];
          EXPECT_NEAR(ya[b][p][ch], s, 1e-12) << "grid " << n;
        }
  }
}

TEST(ddr, SpectralMixerMovedToAFinerGridCommutesWithFourierUpsampling) {
  at::manual_seed(11);
  const std::int64_t m = 5, c = 2;
  SpectralMixer mixer(m, c);
  mixer->to(at::kDouble);
  at::Tensor x = at::randn({1, m * m, c}, at::kDouble);
  // The trigonometric interpolant of a signal on the m x m grid, sampled on an n x n grid (same field).
  auto upsample = [&](const at::Tensor& s, std::int64_t n) {
    at::Tensor spec = torch::fft::fft2(s.reshape({m, m, c}), c10::nullopt, {0, 1});
    auto sp = spec.accessor<c10::complex<double>, 3>();
    at::Tensor out = at::zeros({1, n * n, c}, at::kDouble);
    auto o = out.accessor<double, 3>();
    for (std::int64_t py = 0; py < n; ++py)
      for (std::int64_t px = 0; px < n; ++px)
        for (std::int64_t ch = 0; ch < c; ++ch) {
          std::complex<double> sum = 0;
          for (std::int64_t u = -(m / 2); u <= m / 2; ++u)
            for (std::int64_t v = -(m / 2); v <= m / 2; ++v) {
              const auto z = sp[(u + m) % m][(v + m) % m][ch];
              sum += std::complex<double>(z.real(), z.imag()) *
                     std::polar(1.0, 2 * kPi * static_cast<double>(u * py + v * px) / static_cast<double>(n));
            }
          o[0][py * n + px][ch] = sum.real() / static_cast<double>(m * m);
        }
    return out;
  };
  for (std::int64_t n : {10, 15, 4}) {
    if (n < m) continue;  // downsampling loses the high band; only upsampling commutes exactly
    at::Tensor a = mixer->forward(upsample(x, n), n);
    at::Tensor b = upsample(mixer->forward(x, m), n);
    EXPECT_LT((a - b).abs().max().item<double>(), 1e-12) << "grid " << n;
  }
  EXPECT_TRUE(resample_filter(mixer->filter(m), m, m).equal(mixer->filter(m)));
}

TEST(ddr, GradientsFlowIntoTheComplexFilterAndMatchFiniteDifferences) {
  at::manual_seed(13);
  const std::int64_t n = 4, c = 2;
  SpectralMixer mixer(n, c);
  mixer->to(at::kDouble);
  at::Tensor x = at::randn({3, n * n, c}, at::kDouble), r = at::randn({3, n * n, c}, at::kDouble);
  auto loss = [&] { return (mixer->forward(x, n) * r).sum(); };
  loss().backward();
  at::Tensor grad = mixer->weight.grad().clone();
  ASSERT_GT(grad.abs().sum().item<double>(), 0.0);
  torch::NoGradGuard no_grad;
  at::Tensor w = mixer->weight.view(-1);
  for (std::int64_t i = 0; i < w.numel(); ++i) {
    const double keep = w[i].item<double>(), h = 1e-6;
    w[i] = keep + h;
    const double up = loss().item<double>();
    w[i] = keep - h;
    const double down = loss().item<double>();
    w[i] = keep;
    EXPECT_NEAR(grad.view(-1)[i].item<double>(), (up - down) / (2 * h), 1e-6) << "entry " << i;
  }
}

TEST(ddr, EveryParameterOfADdrModelGetsAGradient) {
  at::manual_seed(17);
  ModelConfig c;
  c.dim = 16, c.depth = 2, c.heads = 2;
  Vit model(c);
  at::Tensor logits = model->forward(at::randn({4, 1, 28, 28}));
  ASSERT_EQ(logits.sizes(), (at::IntArrayRef{4, 10}));
  at::nll_loss(logits.log_softmax(1), at::tensor({0, 1, 2, 3}, at::kLong)).backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}

// ---------------------------------------------------------------- the model and its data

TEST(ddr, EveryVariantRunsOnItsGridAndOnAnother) {
  at::manual_seed(19);
  for (const auto& v : variant_names()) {
    ModelConfig c;
    c.variant = v, c.dim = 16, c.depth = 2, c.heads = 2;
    Vit model(c);
    torch::NoGradGuard no_grad;
    EXPECT_EQ(model->forward(at::randn({2, 1, 28, 28})).sizes(), (at::IntArrayRef{2, 10})) << v;
    EXPECT_EQ(model->forward(at::randn({2, 1, 40, 40})).sizes(), (at::IntArrayRef{2, 10})) << v;
    EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
    const auto gates = model->gates();
    ASSERT_EQ(gates.size(), 2u);
    if (c.block() == BlockKind::Ddr) {
      EXPECT_EQ(gates[0].attention, c.attention() ? 0.5 : 0.0) << v;
      EXPECT_EQ(gates[0].spectral, c.spectral() ? 0.5 : 0.0) << v;
    }
  }
}

TEST(ddr, AugmentationTranslatesWithinTheShiftAndIsSeeded) {
  at::Tensor images = at::zeros({6, 1, 12, 12});
  images.slice(2, 2, 10).slice(3, 2, 10).copy_(at::rand({6, 1, 8, 8}));
  at::Generator g1 = at::detail::createCPUGenerator(42), g2 = at::detail::createCPUGenerator(42);
  at::Tensor a = augment(images, 2, false, g1), b = augment(images, 2, false, g2);
  EXPECT_TRUE(a.equal(b));
  for (std::int64_t i = 0; i < 6; ++i) {
    bool found = false;
    for (std::int64_t dy = -2; dy <= 2 && !found; ++dy)
      for (std::int64_t dx = -2; dx <= 2 && !found; ++dx) found = a[i].equal(images[i].roll({dy, dx}, {1, 2}));
    EXPECT_TRUE(found) << "image " << i << " is not a translate of its original";
  }
}

TEST(ddr, SavedModelReloadsToTheSameOutputs) {
  at::manual_seed(23);
  ModelConfig c;
  c.variant = "ddr_swin", c.dim = 16, c.depth = 1, c.heads = 2;
  Vit a(c), b(ModelConfig::from_json(c.to_json()));
  const std::string file = testing::TempDir() + "ddr_model_roundtrip.pt";
  torch::save(a, file);
  torch::load(b, file);
  std::remove(file.c_str());
  torch::NoGradGuard no_grad;
  at::Tensor x = at::randn({2, 1, 28, 28});
  EXPECT_TRUE(a->forward(x).equal(b->forward(x)));
}

// Memorises 64 real Fashion-MNIST images (skips when the data cache is not filled).
TEST(ddr, TinyModelOverfits64Images) {
  const auto file = nexp::data_dir() / "fashion-mnist" / "train-images-idx3-ubyte";
  const auto labels_file = nexp::data_dir() / "fashion-mnist" / "train-labels-idx1-ubyte";
  std::ifstream in(file, std::ios::binary), lin(labels_file, std::ios::binary);
  if (!in || !lin) GTEST_SKIP() << "Fashion-MNIST is not in the data cache; run scripts/setup";
  const std::int64_t n = 64;
  at::Tensor raw = at::empty({n, 1, 28, 28}, at::kByte), lab = at::empty({n}, at::kByte);
  in.seekg(16), lin.seekg(8);
  in.read(static_cast<char*>(raw.data_ptr()), n * 784);
  lin.read(static_cast<char*>(lab.data_ptr()), n);
  at::Tensor y = lab.to(at::kLong);
  const Normalizer norm{0.286, 0.353};
  at::Tensor x = prepare(raw.to(at::kFloat) / 255.0, 7, 4, norm);

  at::manual_seed(29);
  ModelConfig c;
  c.dim = 32, c.depth = 1, c.heads = 2;
  Vit model(c);
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-2).weight_decay(0.0));
  double loss_value = 0;
  for (int step = 0; step < 80; ++step) {
    at::Tensor loss = at::nll_loss(model->forward(x).log_softmax(1), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_value = loss.item<double>();
  }
  at::Tensor probs = predict(model, raw.to(at::kFloat) / 255.0, 7, norm, at::kCPU, 32);
  EXPECT_EQ(probs.argmax(1).eq(y).sum().item<std::int64_t>(), n);
  EXPECT_LT(loss_value, 0.1);
}
