#pragma once
// fisher_select.images: fine-tuning data with known corruptions. A network pretrained on MNIST digits
// is tuned on Fashion-MNIST whose training split carries label noise and near-duplicates; the flags
// are kept for the metrics (noisy_selected, duplicate_selected) and never shown to a selector.
//
//   noise       each training label is replaced with probability `noise`: by a uniformly drawn other
//               class (symmetric), or by its partner in a fixed pairing of look-alike classes (pair:
//               T-shirt/Shirt, Pullover/Coat, Sandal/Sneaker, Trouser/Dress, Bag/Ankle boot)
//   duplicates  that share of the training split is near-duplicates: copies of `duplicate_sources`
//               images with Gaussian pixel jitter (clamped to [0, 1]); sources and copies are flagged
//   holdout     a clean held-out split drawn from the remaining Fashion-MNIST training images (the
//               reference gradient of gfv's gate, RHO-LOSS's irreducible-loss model, GREATS' g_val)
//   test        the Fashion-MNIST test split, clean
// The image subsets are fixed (subset_seed 0); noise and duplicates are drawn from the run's seed.
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace fisher_select {

enum class NoiseType { Symmetric, Pair };

struct ImagesOptions {
  double noise = 0.3;
  NoiseType noise_type = NoiseType::Symmetric;
  double duplicates = 0.2;
  std::int64_t duplicate_sources = 20;
  double jitter = 0.05;
  std::int64_t train_size = 10000;
  std::int64_t holdout_size = 1000;
  std::int64_t test_size = 0;
  std::int64_t pretrain_size = 20000;
  static void declare(nexp::Options<ImagesOptions>& o);
};

struct ImagesData : nexp::Dataset {
  // Images flattened to [N, 784] float32 in [0, 1]; labels int64.
  at::Tensor pretrain_x, pretrain_y;  // MNIST digits
  at::Tensor train_x, train_y;        // Fashion-MNIST, observed (possibly corrupted) labels
  at::Tensor clean_y;                 // the true labels of the training split
  at::Tensor noisy, duplicate;        // bool flags [N] (metrics only)
  at::Tensor holdout_x, holdout_y;    // clean
  at::Tensor test_x, test_y;          // clean
  std::int64_t classes = 10;
  std::string describe() const override;
};

std::shared_ptr<nexp::Dataset> make_images(const ImagesOptions& o, nexp::RunContext& ctx);

// The corruptions, on their own for tests: labels flipped with probability `rate` (returns the new
// labels; `flipped` receives the flags), and the pair partner of a Fashion-MNIST class.
at::Tensor corrupt_labels(const at::Tensor& labels, double rate, NoiseType type, std::int64_t classes,
                          nexp::Random& rng, at::Tensor* flipped);
std::int64_t pair_partner(std::int64_t label);

}  // namespace fisher_select
