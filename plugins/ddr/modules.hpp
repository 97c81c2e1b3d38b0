#pragma once
// The modules of the Dual-Domain Residual (DDR) vision transformer.
//
//   RelativePositionBias   b_h(delta) added to the attention logits of head h, for tokens at offset delta
//     TableBias            Swin's learned table over the (2M-1)^2 offsets of an M x M window; bicubic
//                          resizing of the table moves it to another grid (the baseline)
//     FrequencyBias        the paper's bias: a truncated real Fourier series of the offset (eq. FB below),
//                          evaluated in closed form on any grid
//   SpectralMixer          GFNet's global filter, x -> irfft2(W . rfft2(x)) over the token grid
//   Attention              multi-head self-attention with an optional relative position bias and the
//                          head-specific sigmoid output gate of gated attention
//   Block                  a pre-norm ViT block, or a DDR block: spectral mixer and gated attention as
//                          parallel residuals, each scaled by a learnable per-layer gate
//   Vit                    patch embedding, blocks, mean pooling and a linear classifier
//
// Tensor shapes: tokens [B, N, C] with N = n * n for an n x n patch grid (row-major); attention biases
// [heads, N, N]; offset tables [(2n-1)^2, heads] indexed by (dy + n - 1) * (2n - 1) + (dx + n - 1).
//
// Eq. FB (M = training grid, L = 2M - 1, omega_k = (u_k, v_k) on the half-lattice of Z_L^2):
//   b_h(dy, dx) = sum_k a_hk cos(2 pi (u_k dy + v_k dx) / L) + c_hk sin(2 pi (u_k dy + v_k dx) / L)
// On the training grid (integer offsets |dy|, |dx| <= M - 1) this is a band-limited function on the
// L-periodic offset lattice, so the table it produces has exactly the DFT coefficients
// (L^2 / 2) (a_hk - i c_hk) at omega_k and nothing at the other frequencies of the half-lattice. On an
// n x n grid covering the same field of view the offsets are scaled by M / n and the series is
// evaluated as it stands: no interpolation.
#include <torch/nn.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ddr {

// ---------------------------------------------------------------- parameter counts

// Swin's table: one entry per offset of an M x M window, (2M - 1)^2 per head (169 at M = 7).
std::int64_t table_params_per_head(std::int64_t window);
// The default number of frequencies of eq. FB: 2 (2M - 1), capped by the (L^2 - 1) / 2 non-constant
// frequencies of the half-lattice (26 at M = 7).
std::int64_t default_frequency_count(std::int64_t window);
// Two coefficients (cos, sin) per frequency: 4 (2M - 1) per head with the default count (52 at M = 7),
// so the ratio to Swin's table is (2M - 1) / 4 (3.25 at M = 7).
std::int64_t frequency_params_per_head(std::int64_t window, std::int64_t frequencies = 0);

// ---------------------------------------------------------------- geometry

struct Frequency {
  int u = 0, v = 0;  // signed representatives of Z_L, |u|, |v| <= M - 1
};
// The first `count` frequencies of the half-lattice {v > 0} U {v = 0, u > 0} of Z_L^2 (L = 2M - 1), from
// low to high: by the Chebyshev radius max(|u|, |v|), then the Euclidean radius, then the angle. The
// constant (u = v = 0) is left out: softmax is invariant to a constant added to every logit of a row.
// With the default count the set is a whole number of radius classes, so it is closed under 90-degree
// rotations and mirror images (up to omega ~ -omega): at M = 7 it is max(|u|, |v|) <= 3 plus (4, 0), (0, 4).
std::vector<Frequency> low_frequencies(std::int64_t window, std::int64_t count);

// Swin's relative position index of an n x n grid: [N, N] int64 into the (2n - 1)^2 offset table.
at::Tensor relative_position_index(std::int64_t n);
// The (2n - 1)^2 integer offsets as [(2n - 1)^2, 2] (dy, dx), in the table's row order.
at::Tensor offset_grid(std::int64_t n);
// Bicubic resizing of an offset table [(2m - 1)^2, H] to [(2n - 1)^2, H] (align_corners = false, as the
// usual rel-pos resize does): Swin's way to move a learned table to another grid.
at::Tensor resize_offset_table(const at::Tensor& table, std::int64_t m, std::int64_t n);

// ---------------------------------------------------------------- position biases

enum class BiasKind { None, Table, Frequency };
// How a frequency bias is moved to another grid: evaluated in closed form (the paper), or tabulated on
// the training grid and resized like Swin's table (a control that isolates the transfer rule).
enum class BiasTransfer { ClosedForm, Interpolate };

class RelativePositionBias : public torch::nn::Module {
 public:
  RelativePositionBias(std::int64_t window, std::int64_t heads) : window_(window), heads_(heads) {}
  // The offset table of an n x n grid: [(2n - 1)^2, heads].
  virtual at::Tensor table(std::int64_t n) = 0;
  virtual std::int64_t params_per_head() const = 0;
  // The bias of every token pair of an n x n grid: [heads, N, N].
  at::Tensor forward(std::int64_t n);
  std::int64_t window() const { return window_; }
  std::int64_t heads() const { return heads_; }

 protected:
  std::int64_t window_, heads_;
  std::map<std::int64_t, at::Tensor> index_cache_;  // per grid, on the parameters' device
};

// Swin: a learned [(2M - 1)^2, heads] table, clamped-normal(0.02) initialised.
class TableBias : public RelativePositionBias {
 public:
  TableBias(std::int64_t window, std::int64_t heads);
  at::Tensor table(std::int64_t n) override;
  std::int64_t params_per_head() const override { return table_params_per_head(window_); }
  at::Tensor weight;  // [(2M - 1)^2, heads]
};

// Eq. FB: coefficients [heads, 2K] = (a_h1..a_hK, c_h1..c_hK).
class FrequencyBias : public RelativePositionBias {
 public:
  FrequencyBias(std::int64_t window, std::int64_t heads, std::int64_t frequencies = 0);
  at::Tensor table(std::int64_t n) override;
  std::int64_t params_per_head() const override { return 2 * static_cast<std::int64_t>(freqs_.size()); }
  // [(2n - 1)^2, 2K] = [cos theta | sin theta] at the offsets of an n x n grid scaled by M / n.
  at::Tensor basis(std::int64_t n) const;
  const std::vector<Frequency>& frequencies() const { return freqs_; }
  BiasTransfer transfer = BiasTransfer::ClosedForm;
  at::Tensor coefficients;  // [heads, 2K]

 private:
  std::vector<Frequency> freqs_;
  std::map<std::int64_t, at::Tensor> basis_cache_;
};

std::shared_ptr<RelativePositionBias> make_bias(BiasKind kind, std::int64_t window, std::int64_t heads,
                                                std::int64_t frequencies);

// ---------------------------------------------------------------- spectral mixer

// GFNet's global filter on an M x M token grid: weight [M, M/2 + 1, C, 2], the real view of a complex
// filter W, initialised N(0, 0.02^2). y = irfft2(W . rfft2(x)) (orthonormal FFTs) is the circular
// convolution of each channel with k = irfft2(W) (unnormalised inverse).
class SpectralMixerImpl : public torch::nn::Module {
 public:
  SpectralMixerImpl(std::int64_t grid, std::int64_t channels);
  // x: [B, N, C] on an n x n grid.
  at::Tensor forward(const at::Tensor& x, std::int64_t n);
  // The complex filter [n, n/2 + 1, C] for an n x n grid.
  at::Tensor filter(std::int64_t n);
  std::int64_t grid() const { return grid_; }
  at::Tensor weight;

 private:
  std::int64_t grid_;
};
TORCH_MODULE(SpectralMixer);

// The filter of an M x M grid moved to an n x n grid over the same field of view: the kernel k(delta)
// is a trigonometric polynomial of the offset; k'(delta') = (M / n)^2 k(delta' M / n) keeps the operator
// on an upsampled image, and in the frequency domain that is W'[u] = W[u] on the shared low band and
// 0 elsewhere (an even grid's Nyquist bin is split evenly between +-M/2, or folded when n is smaller).
// filter: complex [M, M/2 + 1, C] -> complex [n, n/2 + 1, C].
at::Tensor resample_filter(const at::Tensor& filter, std::int64_t m, std::int64_t n);

// ---------------------------------------------------------------- the model

enum class BlockKind { Vit, Ddr };

// Sizes and the ablation switch. `variant` names one of the paper's configurations:
//   ddr               DDR blocks (spectral + gated attention), frequency bias      (the full model)
//   ddr_swin          DDR blocks, Swin's table bias
//   ddr_none          DDR blocks, no position bias
//   ddr_no_attention  DDR blocks without the attention branch (so without any bias)
//   ddr_no_spectral   DDR blocks without the spectral branch, frequency bias
//   vit_freq, vit_swin, vit_none   plain pre-norm ViT blocks with the named bias
struct ModelConfig {
  std::string variant = "ddr";
  std::int64_t image = 28, channels = 1, classes = 10, patch = 4;
  std::int64_t dim = 64, depth = 4, heads = 4;
  double mlp_ratio = 2.0;
  double gate_init = 0.5;
  std::int64_t frequencies = 0;  // 0: default_frequency_count(grid)

  BlockKind block() const;
  BiasKind bias() const;
  bool attention() const;
  bool spectral() const;
  std::int64_t grid() const { return image / patch; }  // the training grid M (the Swin window)
  std::int64_t rpb_params_per_head() const;

  nlohmann::json to_json() const;
  static ModelConfig from_json(const nlohmann::json& j);
};
// The accepted variant names, for the parameter's choices.
const std::vector<std::string>& variant_names();

class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(const ModelConfig& cfg, bool gated);
  at::Tensor forward(const at::Tensor& x, std::int64_t n);  // [B, N, C] -> [B, N, C]
  std::shared_ptr<RelativePositionBias> bias;               // null when the variant has none

 private:
  std::int64_t heads_;
  double scale_;
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, gate_{nullptr};
};
TORCH_MODULE(Attention);

struct Gates {
  double attention = 0, spectral = 0, mlp = 0;  // 0 for a branch the block does not have
};

class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(const ModelConfig& cfg);
  at::Tensor forward(const at::Tensor& x, std::int64_t n);
  Gates gates() const;
  Attention attention{nullptr};
  SpectralMixer spectral{nullptr};

 private:
  BlockKind kind_;
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Sequential mlp_{nullptr};
  at::Tensor gate_attention_, gate_spectral_, gate_mlp_;  // DDR: learnable per-layer scalars
};
TORCH_MODULE(Block);

class VitImpl : public torch::nn::Module {
 public:
  explicit VitImpl(ModelConfig cfg);
  // images [B, C, H, H] with H a multiple of the patch size; the grid is H / patch. -> logits [B, classes]
  at::Tensor forward(const at::Tensor& images);
  const ModelConfig& config() const { return cfg_; }
  std::vector<Gates> gates() const;
  void set_bias_transfer(BiasTransfer mode);
  std::vector<BlockImpl*> blocks();

 private:
  ModelConfig cfg_;
  torch::nn::Conv2d embed_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Vit);

}  // namespace ddr
