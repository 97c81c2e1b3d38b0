#include "modules.hpp"

#include <ATen/ATen.h>
#include <torch/fft.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace ddr {

namespace F = torch::nn::functional;

namespace {
constexpr double kPi = 3.14159265358979323846;
}

// ---------------------------------------------------------------- parameter counts

std::int64_t table_params_per_head(std::int64_t window) { return (2 * window - 1) * (2 * window - 1); }

std::int64_t default_frequency_count(std::int64_t window) {
  return std::min<std::int64_t>(2 * (2 * window - 1), 2 * window * (window - 1));
}

std::int64_t frequency_params_per_head(std::int64_t window, std::int64_t frequencies) {
  return 2 * (frequencies > 0 ? frequencies : default_frequency_count(window));
}

// ---------------------------------------------------------------- geometry

std::vector<Frequency> low_frequencies(std::int64_t window, std::int64_t count) {
  const int m = static_cast<int>(window);
  std::vector<Frequency> all;
  for (int v = 0; v < m; ++v)
    for (int u = -(m - 1); u < m; ++u)
      if (v > 0 || u > 0) all.push_back({u, v});
  TORCH_CHECK(count >= 1 && count <= static_cast<std::int64_t>(all.size()), "a ", window, "x", window,
              " grid has ", all.size(), " non-constant frequencies on its half-lattice; asked for ", count);
  auto key = [](const Frequency& f) {
    return std::make_tuple(std::max(std::abs(f.u), std::abs(f.v)), f.u * f.u + f.v * f.v, std::atan2(f.v, f.u));
  };
  std::stable_sort(all.begin(), all.end(), [&](const Frequency& a, const Frequency& b) { return key(a) < key(b); });
  all.resize(static_cast<std::size_t>(count));
  return all;
}

at::Tensor relative_position_index(std::int64_t n) {
  at::Tensor r = at::arange(n, at::kLong);
  at::Tensor y = r.repeat_interleave(n), x = r.repeat(n);  // [N] row-major coordinates
  at::Tensor dy = y.unsqueeze(1) - y.unsqueeze(0) + (n - 1), dx = x.unsqueeze(1) - x.unsqueeze(0) + (n - 1);
  return dy * (2 * n - 1) + dx;
}

at::Tensor offset_grid(std::int64_t n) {
  at::Tensor r = at::arange(-(n - 1), n, at::kLong);
  return at::stack({r.repeat_interleave(2 * n - 1), r.repeat(2 * n - 1)}, 1);
}

at::Tensor resize_offset_table(const at::Tensor& table, std::int64_t m, std::int64_t n) {
  if (m == n) return table;
  const std::int64_t lm = 2 * m - 1, ln = 2 * n - 1, heads = table.size(1);
  at::Tensor image = table.t().reshape({1, heads, lm, lm});
  at::Tensor resized = F::interpolate(
      image, F::InterpolateFuncOptions().size(std::vector<std::int64_t>{ln, ln}).mode(torch::kBicubic).align_corners(false));
  return resized.reshape({heads, ln * ln}).t();
}

// ---------------------------------------------------------------- position biases

at::Tensor RelativePositionBias::forward(std::int64_t n) {
  at::Tensor t = table(n);
  at::Tensor& index = index_cache_[n];
  if (!index.defined() || index.device() != t.device()) index = relative_position_index(n).view(-1).to(t.device());
  const std::int64_t tokens = n * n;
  return t.index_select(0, index).view({tokens, tokens, heads_}).permute({2, 0, 1});
}

TableBias::TableBias(std::int64_t window, std::int64_t heads) : RelativePositionBias(window, heads) {
  weight = register_parameter("weight", at::randn({table_params_per_head(window), heads}).mul_(0.02).clamp_(-0.04, 0.04));
}

at::Tensor TableBias::table(std::int64_t n) { return resize_offset_table(weight, window_, n); }

FrequencyBias::FrequencyBias(std::int64_t window, std::int64_t heads, std::int64_t frequencies)
    : RelativePositionBias(window, heads),
      freqs_(low_frequencies(window, frequencies > 0 ? frequencies : default_frequency_count(window))) {
  // Each table entry sums K cos/sin pairs: N(0, 0.02^2 / K) coefficients give Swin's 0.02 spread.
  const auto k = static_cast<double>(freqs_.size());
  coefficients = register_parameter("coefficients", at::randn({heads, 2 * static_cast<std::int64_t>(k)}).mul_(0.02 / std::sqrt(k)));
}

at::Tensor FrequencyBias::basis(std::int64_t n) const {
  const std::int64_t k = static_cast<std::int64_t>(freqs_.size());
  at::Tensor omega = at::empty({k, 2}, at::kDouble);
  auto w = omega.accessor<double, 2>();
  for (std::int64_t i = 0; i < k; ++i) w[i][0] = freqs_[i].u, w[i][1] = freqs_[i].v;
  // Offsets of the n x n grid in units of training-grid patches (same field of view).
  at::Tensor delta = offset_grid(n).to(at::kDouble) * (static_cast<double>(window_) / static_cast<double>(n));
  at::Tensor theta = delta.matmul(omega.t()) * (2.0 * kPi / static_cast<double>(2 * window_ - 1));
  return at::cat({theta.cos(), theta.sin()}, 1).to(coefficients.options());
}

at::Tensor FrequencyBias::table(std::int64_t n) {
  if (n != window_ && transfer == BiasTransfer::Interpolate) return resize_offset_table(table(window_), window_, n);
  at::Tensor& b = basis_cache_[n];
  if (!b.defined() || b.device() != coefficients.device() || b.dtype() != coefficients.dtype()) b = basis(n);
  return b.matmul(coefficients.t());
}

std::shared_ptr<RelativePositionBias> make_bias(BiasKind kind, std::int64_t window, std::int64_t heads,
                                                std::int64_t frequencies) {
  switch (kind) {
    case BiasKind::Table: return std::make_shared<TableBias>(window, heads);
    case BiasKind::Frequency: return std::make_shared<FrequencyBias>(window, heads, frequencies);
    case BiasKind::None: break;
  }
  return nullptr;
}

// ---------------------------------------------------------------- spectral mixer

SpectralMixerImpl::SpectralMixerImpl(std::int64_t grid, std::int64_t channels) : grid_(grid) {
  weight = register_parameter("weight", at::randn({grid, grid / 2 + 1, channels, 2}).mul_(0.02));
}

at::Tensor SpectralMixerImpl::filter(std::int64_t n) {
  at::Tensor w = at::view_as_complex(weight);
  return n == grid_ ? w : resample_filter(w, grid_, n);
}

at::Tensor SpectralMixerImpl::forward(const at::Tensor& x, std::int64_t n) {
  const std::int64_t batch = x.size(0), channels = x.size(2);
  at::Tensor spectrum = torch::fft::rfft2(x.reshape({batch, n, n, channels}), c10::nullopt, {1, 2}, "ortho");
  at::Tensor y = torch::fft::irfft2(spectrum * filter(n), std::vector<std::int64_t>{n, n}, {1, 2}, "ortho");
  return y.reshape({batch, n * n, channels});
}

namespace {
// [n, m]: where each of the m DFT bins of a grid lands among the n bins of the other (see resample_filter).
at::Tensor band_map(std::int64_t m, std::int64_t n, at::TensorOptions options) {
  at::Tensor p = at::zeros({n, m}, at::kDouble);
  auto a = p.accessor<double, 2>();
  auto place = [&](std::int64_t signed_bin, std::int64_t column, double weight) {
    if (2 * std::abs(signed_bin) < n) a[(signed_bin + n) % n][column] += weight;
    else if (2 * std::abs(signed_bin) == n) a[n / 2][column] += weight;  // folded onto the Nyquist bin
  };
  for (std::int64_t j = 0; j < m; ++j) {
    if (2 * j < m) place(j, j, 1.0);
    else if (2 * j == m) place(j, j, 0.5), place(-j, j, 0.5);  // the Nyquist bin of an even grid
    else place(j - m, j, 1.0);
  }
  return p.to(options);
}
}  // namespace

at::Tensor resample_filter(const at::Tensor& filter, std::int64_t m, std::int64_t n) {
  if (m == n) return filter;
  at::Tensor kernel = torch::fft::irfft2(filter, std::vector<std::int64_t>{m, m}, {0, 1});
  at::Tensor full = at::view_as_real(torch::fft::fft2(kernel, c10::nullopt, {0, 1}));  // [m, m, C, 2]
  at::Tensor p = band_map(m, n, kernel.options());
  at::Tensor moved = at::einsum("iu,uvcz,jv->ijcz", {p, full, p}).contiguous();
  return at::view_as_complex(moved).slice(1, 0, n / 2 + 1);
}

// ---------------------------------------------------------------- the model

namespace {
struct Variant {
  const char* name;
  BlockKind block;
  BiasKind bias;
  bool attention, spectral;
};
// The ablations of the paper, in one place.
const Variant kVariants[] = {
    {"ddr", BlockKind::Ddr, BiasKind::Frequency, true, true},
    {"ddr_swin", BlockKind::Ddr, BiasKind::Table, true, true},
    {"ddr_none", BlockKind::Ddr, BiasKind::None, true, true},
    {"ddr_no_attention", BlockKind::Ddr, BiasKind::None, false, true},
    {"ddr_no_spectral", BlockKind::Ddr, BiasKind::Frequency, true, false},
    {"vit_freq", BlockKind::Vit, BiasKind::Frequency, true, false},
    {"vit_swin", BlockKind::Vit, BiasKind::Table, true, false},
    {"vit_none", BlockKind::Vit, BiasKind::None, true, false},
};

const Variant& find_variant(const std::string& name) {
  for (const auto& v : kVariants)
    if (name == v.name) return v;
  TORCH_CHECK(false, "unknown DDR variant '", name, "'");
}
}  // namespace

const std::vector<std::string>& variant_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& v : kVariants) out.emplace_back(v.name);
    return out;
  }();
  return names;
}

BlockKind ModelConfig::block() const { return find_variant(variant).block; }
BiasKind ModelConfig::bias() const { return find_variant(variant).bias; }
bool ModelConfig::attention() const { return find_variant(variant).attention; }
bool ModelConfig::spectral() const { return find_variant(variant).spectral; }

std::int64_t ModelConfig::rpb_params_per_head() const {
  switch (bias()) {
    case BiasKind::Table: return table_params_per_head(grid());
    case BiasKind::Frequency: return frequency_params_per_head(grid(), frequencies);
    case BiasKind::None: break;
  }
  return 0;
}

nlohmann::json ModelConfig::to_json() const {
  return {{"variant", variant}, {"image", image},         {"channels", channels},   {"classes", classes},
          {"patch", patch},     {"dim", dim},             {"depth", depth},         {"heads", heads},
          {"mlp_ratio", mlp_ratio}, {"gate_init", gate_init}, {"frequencies", frequencies}};
}

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  ModelConfig c;
  c.variant = j.at("variant").get<std::string>();
  find_variant(c.variant);
  using Field = std::pair<const char*, std::int64_t*>;
  for (const Field& f : std::initializer_list<Field>{{"image", &c.image}, {"channels", &c.channels},
                                                     {"classes", &c.classes}, {"patch", &c.patch}, {"dim", &c.dim},
                                                     {"depth", &c.depth}, {"heads", &c.heads},
                                                     {"frequencies", &c.frequencies}})
    *f.second = j.at(f.first).get<std::int64_t>();
  c.mlp_ratio = j.at("mlp_ratio").get<double>();
  c.gate_init = j.at("gate_init").get<double>();
  return c;
}

AttentionImpl::AttentionImpl(const ModelConfig& cfg, bool gated)
    : heads_(cfg.heads), scale_(1.0 / std::sqrt(static_cast<double>(cfg.dim / cfg.heads))) {
  qkv_ = register_module("qkv", torch::nn::Linear(cfg.dim, 3 * cfg.dim));
  proj_ = register_module("proj", torch::nn::Linear(cfg.dim, cfg.dim));
  if (gated) gate_ = register_module("gate", torch::nn::Linear(cfg.dim, cfg.dim));
  bias = make_bias(cfg.bias(), cfg.grid(), cfg.heads, cfg.frequencies);
  if (bias) register_module("bias", bias);
}

at::Tensor AttentionImpl::forward(const at::Tensor& x, std::int64_t n) {
  const std::int64_t batch = x.size(0), tokens = x.size(1), dim = x.size(2);
  at::Tensor qkv = qkv_(x).reshape({batch, tokens, 3, heads_, dim / heads_}).permute({2, 0, 3, 1, 4});
  at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];  // [B, H, N, d]
  at::Tensor logits = q.matmul(k.transpose(-2, -1)) * scale_;
  if (bias) logits = logits + bias->forward(n).unsqueeze(0);
  at::Tensor out = logits.softmax(-1).matmul(v).transpose(1, 2).reshape({batch, tokens, dim});
  // Gated attention: a head-specific, elementwise sigmoid gate computed from the block's input.
  if (gate_) out = out * gate_(x).sigmoid();
  return proj_(out);
}

BlockImpl::BlockImpl(const ModelConfig& cfg) : kind_(cfg.block()) {
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.dim})));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.dim})));
  const auto hidden = static_cast<std::int64_t>(std::lround(cfg.mlp_ratio * static_cast<double>(cfg.dim)));
  mlp_ = register_module("mlp", torch::nn::Sequential(torch::nn::Linear(cfg.dim, hidden), torch::nn::GELU(),
                                                      torch::nn::Linear(hidden, cfg.dim)));
  if (cfg.attention()) attention = register_module("attention", Attention(cfg, kind_ == BlockKind::Ddr));
  if (cfg.spectral()) spectral = register_module("spectral", SpectralMixer(cfg.grid(), cfg.dim));
  if (kind_ == BlockKind::Ddr) {
    auto gate = [&](const char* name) { return register_parameter(name, at::full({1}, cfg.gate_init)); };
    if (attention) gate_attention_ = gate("gate_attention");
    if (spectral) gate_spectral_ = gate("gate_spectral");
    gate_mlp_ = gate("gate_mlp");
  }
}

at::Tensor BlockImpl::forward(const at::Tensor& x, std::int64_t n) {
  at::Tensor h = norm1_(x);
  if (kind_ == BlockKind::Vit) {
    at::Tensor y = x + attention(h, n);
    return y + mlp_->forward(norm2_(y));
  }
  // DDR: X <- X + g_a GatedAttn(LN X) + g_s Spectral(LN X);  X <- X + g_m MLP(LN X).
  at::Tensor y = x;
  if (attention) y = y + gate_attention_ * attention(h, n);
  if (spectral) y = y + gate_spectral_ * spectral(h, n);
  return y + gate_mlp_ * mlp_->forward(norm2_(y));
}

Gates BlockImpl::gates() const {
  auto value = [](const at::Tensor& g) { return g.defined() ? g.item<double>() : 0.0; };
  return {value(gate_attention_), value(gate_spectral_), value(gate_mlp_)};
}

VitImpl::VitImpl(ModelConfig cfg) : cfg_(std::move(cfg)) {
  TORCH_CHECK(cfg_.dim % cfg_.heads == 0, "dim ", cfg_.dim, " is not a multiple of heads ", cfg_.heads);
  TORCH_CHECK(cfg_.image % cfg_.patch == 0 && cfg_.grid() >= 2, "image ", cfg_.image, " must be a multiple of patch ",
              cfg_.patch, " giving a grid of at least 2x2");
  embed_ = register_module("embed", torch::nn::Conv2d(torch::nn::Conv2dOptions(cfg_.channels, cfg_.dim, cfg_.patch)
                                                          .stride(cfg_.patch)));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < cfg_.depth; ++i) blocks_->push_back(Block(cfg_));
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg_.dim})));
  head_ = register_module("head", torch::nn::Linear(cfg_.dim, cfg_.classes));
  // ViT initialisation: linear weights clamped-normal(0.02), zero biases.
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false))
    if (auto* linear = m->as<torch::nn::LinearImpl>()) {
      linear->weight.normal_(0.0, 0.02).clamp_(-0.04, 0.04);
      linear->bias.zero_();
    }
}

at::Tensor VitImpl::forward(const at::Tensor& images) {
  TORCH_CHECK(images.dim() == 4 && images.size(2) == images.size(3) && images.size(2) % cfg_.patch == 0,
              "expected square images [B, C, H, H] with H a multiple of ", cfg_.patch, ", got ", images.sizes());
  const std::int64_t n = images.size(2) / cfg_.patch;
  at::Tensor x = embed_(images).flatten(2).transpose(1, 2);  // [B, N, C]
  for (auto* block : blocks()) x = block->forward(x, n);
  return head_(norm_(x).mean(1));
}

std::vector<BlockImpl*> VitImpl::blocks() {
  std::vector<BlockImpl*> out;
  for (const auto& m : *blocks_) out.push_back(m->as<BlockImpl>());
  return out;
}

std::vector<Gates> VitImpl::gates() const {
  std::vector<Gates> out;
  for (const auto& m : *blocks_) out.push_back(m->as<BlockImpl>()->gates());
  return out;
}

void VitImpl::set_bias_transfer(BiasTransfer mode) {
  for (auto* block : blocks())
    if (block->attention)
      if (auto f = std::dynamic_pointer_cast<FrequencyBias>(block->attention->bias)) f->transfer = mode;
}

}  // namespace ddr
