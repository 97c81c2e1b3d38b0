#include "images.hpp"

#include <nexp/runtime/torch_runtime.hpp>
#include <nexp/tensor_dataset.hpp>

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace fisher_select {

void ImagesOptions::declare(nexp::Options<ImagesOptions>& o) {
  o.add("noise", &ImagesOptions::noise, "probability that a training label is corrupted").range(0, 0.9);
  o.add("noise_type", &ImagesOptions::noise_type, "symmetric: a uniform other class; pair: a fixed look-alike class",
        {{"symmetric", NoiseType::Symmetric}, {"pair", NoiseType::Pair}});
  o.add("duplicates", &ImagesOptions::duplicates, "share of the training split that is jittered copies").range(0, 0.9);
  o.add("duplicate_sources", &ImagesOptions::duplicate_sources, "distinct images the near-duplicates copy").min(1);
  o.add("jitter", &ImagesOptions::jitter, "standard deviation of the copies' pixel noise (pixels in [0, 1])")
      .range(0, 1);
  o.add("train_size", &ImagesOptions::train_size, "Fashion-MNIST training images, copies included").range(100, 59000);
  o.add("holdout_size", &ImagesOptions::holdout_size, "clean held-out Fashion-MNIST images").range(0, 20000);
  o.add("test_size", &ImagesOptions::test_size, "Fashion-MNIST test images (a fixed subset); 0 = all 10000")
      .range(0, 10000);
  o.add("pretrain_size", &ImagesOptions::pretrain_size, "MNIST images for pretraining (a fixed subset); 0 = all 60000")
      .range(0, 60000);
}

std::string ImagesData::describe() const {
  return fmt::format("fisher_select.images: pretrain {} MNIST, tune {} Fashion-MNIST ({:.1f}% noisy labels, {:.1f}% "
                     "near-duplicates), holdout {}, test {}",
                     pretrain_x.size(0), train_x.size(0), 100 * noisy.to(at::kDouble).mean().item<double>(),
                     100 * duplicate.to(at::kDouble).mean().item<double>(), holdout_x.size(0), test_x.size(0));
}

std::int64_t pair_partner(std::int64_t label) {
  static const std::int64_t partner[10] = {6, 3, 4, 1, 2, 7, 0, 5, 9, 8};
  return partner[label % 10];
}

at::Tensor corrupt_labels(const at::Tensor& labels, double rate, NoiseType type, std::int64_t classes,
                          nexp::Random& rng, at::Tensor* flipped) {
  at::Tensor out = labels.clone().contiguous();
  at::Tensor flags = at::zeros({labels.size(0)}, at::kBool);
  auto* y = out.data_ptr<std::int64_t>();
  auto* f = flags.data_ptr<bool>();
  for (std::int64_t i = 0; i < out.size(0); ++i) {
    if (!rng.bernoulli(rate)) continue;
    const std::int64_t shift = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(classes - 1)));
    y[i] = type == NoiseType::Pair ? pair_partner(y[i]) : (y[i] + shift) % classes;
    f[i] = true;
  }
  if (flipped) *flipped = flags;
  return out;
}

namespace {

std::shared_ptr<nexp::TensorDataset> load(const std::string& name, const std::string& folder, std::int64_t train,
                                          std::int64_t test) {
  nexp::ImageOptions subset;
  subset.train_size = train;
  subset.test_size = test;
  std::vector<std::string> classes;
  for (int c = 0; c < 10; ++c) classes.push_back(std::to_string(c));
  auto d = nexp::require_torch_runtime().idx_images(name, nexp::data_dir() / folder, subset, classes);
  return std::dynamic_pointer_cast<nexp::TensorDataset>(d);
}

at::Tensor flat(const at::Tensor& x) { return x.reshape({x.size(0), -1}).contiguous(); }

// Replaces the last `copies` images of x with jittered copies of `sources` images drawn from the rest.
// Returns the flags of sources and copies.
at::Tensor add_near_duplicates(at::Tensor& x, at::Tensor& y, std::int64_t copies, std::int64_t sources, double jitter,
                               nexp::Random& rng) {
  const std::int64_t n = x.size(0), originals = n - copies;
  at::Tensor flags = at::zeros({n}, at::kBool);
  if (copies == 0) return flags;
  std::vector<std::int64_t> src;
  while (static_cast<std::int64_t>(src.size()) < std::min(sources, originals)) {
    const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(originals)));
    if (std::find(src.begin(), src.end(), j) == src.end()) src.push_back(j);
  }
  for (std::int64_t s : src) flags[s] = true;
  at::Tensor noise = at::empty({copies, x.size(1)}, at::kFloat);
  float* e = noise.data_ptr<float>();
  for (std::int64_t i = 0; i < noise.numel(); ++i) e[i] = static_cast<float>(jitter * rng.normal());
  for (std::int64_t c = 0; c < copies; ++c) {
    const std::int64_t s = src[static_cast<std::size_t>(c) % src.size()];
    x[originals + c] = (x[s] + noise[c]).clamp(0, 1);
    y[originals + c] = y[s];
    flags[originals + c] = true;
  }
  return flags;
}

}  // namespace

std::shared_ptr<nexp::Dataset> make_images(const ImagesOptions& o, nexp::RunContext& ctx) {
  auto mnist = load("mnist", "mnist", o.pretrain_size, 0);
  auto fashion = load("fashion_mnist", "fashion-mnist", o.train_size + o.holdout_size, o.test_size);
  auto d = std::make_shared<ImagesData>();
  d->pretrain_x = flat(mnist->train_x);
  d->pretrain_y = mnist->train_y;
  const at::Tensor x = flat(fashion->train_x);
  d->train_x = x.slice(0, 0, o.train_size).clone();
  d->clean_y = fashion->train_y.slice(0, 0, o.train_size).clone();
  d->holdout_x = x.slice(0, o.train_size).clone();
  d->holdout_y = fashion->train_y.slice(0, o.train_size).clone();
  d->test_x = flat(fashion->test_x);
  d->test_y = fashion->test_y;

  const auto copies = static_cast<std::int64_t>(std::llround(o.duplicates * static_cast<double>(o.train_size)));
  auto dup_rng = ctx.stream("duplicates");
  d->duplicate = add_near_duplicates(d->train_x, d->clean_y, copies, o.duplicate_sources, o.jitter, dup_rng);
  auto noise_rng = ctx.stream("noise");
  d->train_y = corrupt_labels(d->clean_y, o.noise, o.noise_type, d->classes, noise_rng, &d->noisy);
  return d;
}

}  // namespace fisher_select
