#include "pool.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <nexp/error.hpp>
#include <nexp/run_context.hpp>
#include <nexp/runtime/torch_runtime.hpp>
#include <nexp/tensor_dataset.hpp>

#include "mlp.hpp"

namespace curation_scaling {

namespace {

const std::vector<std::pair<std::string, Stage>> kStages = {
    {"pretrain", Stage::Pretrain}, {"sft", Stage::Sft}, {"dpo", Stage::Dpo}, {"rl", Stage::Rl}};

at::Generator generator(std::uint64_t seed, std::uint64_t purpose) {
  return at::detail::createCPUGenerator(nexp::mix64(seed * 0x9E3779B97F4A7C15ull ^ nexp::mix64(purpose)));
}

// One image set, flattened to [N, 784] in [0, 1], train and test splits.
struct Images {
  at::Tensor train_x, train_y, test_x, test_y;
};

Images load_images(const std::string& name, const std::string& folder) {
  const auto data = nexp::require_torch_runtime().idx_images(name, nexp::data_dir() / folder, nexp::ImageOptions{}, {});
  const auto& d = dynamic_cast<const nexp::TensorDataset&>(*data);
  return {d.train_x.reshape({d.train_x.size(0), -1}).to(at::kFloat), d.train_y,
          d.test_x.reshape({d.test_x.size(0), -1}).to(at::kFloat), d.test_y};
}

// Consecutive slices of a permutation.
struct Carver {
  at::Tensor perm;
  std::int64_t at = 0;
  at::Tensor take(std::int64_t n, const char* what) {
    if (at + n > perm.size(0))
      throw nexp::ConfigError(fmt::format("curation_scaling.pool: the sizes ask for more than the {} examples of the "
                                          "split (ran out at '{}'); lower dataset.source_size or the other sizes",
                                          perm.size(0), what));
    at::Tensor s = perm.slice(0, at, at + n);
    at += n;
    return s;
  }
};

at::Tensor confuse(const at::Tensor& y, double rate, bool fashion, at::Generator& gen) {
  at::Tensor out = y.clone();
  const at::Tensor flip = at::rand({y.size(0)}, gen) < rate;
  auto o = out.accessor<std::int64_t, 1>();
  auto f = flip.accessor<bool, 1>();
  for (std::int64_t i = 0; i < y.size(0); ++i)
    if (f[i]) o[i] = confusable(o[i], fashion);
  return out;
}

// `copies` versions of each image, each shifted by one pixel or less in each direction.
at::Tensor shifted_copies(const at::Tensor& base, std::int64_t copies, bool images, at::Generator& gen) {
  std::vector<at::Tensor> out;
  const at::Tensor shift = at::randint(-1, 2, {base.size(0), copies, 2}, gen, at::kLong);
  auto s = shift.accessor<std::int64_t, 3>();
  for (std::int64_t i = 0; i < base.size(0); ++i)
    for (std::int64_t c = 0; c < copies; ++c) {
      if (images)
        out.push_back(at::roll(base[i].view({28, 28}), {s[i][c][0], s[i][c][1]}, {0, 1}).reshape({1, -1}));
      else  // features: a small jitter stands in for the shift
        out.push_back(base[i].unsqueeze(0) + 0.02 * at::randn({1, base.size(1)}, gen));
    }
  return at::cat(out, 0);
}

// Everything a pool is made of before scoring: per-source examples, the reference set, the splits.
struct Parts {
  std::vector<at::Tensor> xs, ys, origins;
  at::Tensor ref_x, ref_y;
};

void add_source(Parts& p, at::Tensor x, at::Tensor y, at::Tensor origin) {
  p.xs.push_back(std::move(x)), p.ys.push_back(std::move(y)), p.origins.push_back(std::move(origin));
}

void build_image_parts(const PoolOptions& o, Pool& pool, Parts& parts) {
  const bool fashion = o.stage == Stage::Sft;
  const Images digits = load_images("mnist", "mnist"), clothes = load_images("fashion_mnist", "fashion-mnist");
  const Images& in = fashion ? clothes : digits;
  const Images& off = fashion ? digits : clothes;
  at::Generator gen = generator(o.data_seed, 1);
  Carver c{at::randperm(in.train_x.size(0), gen, at::kLong)}, d{at::randperm(off.train_x.size(0), gen, at::kLong)};
  const std::int64_t s = o.source_size, bases = std::max<std::int64_t>(1, s / o.duplicates);
  const at::Tensor ref = c.take(o.reference_size, "reference"), valid = c.take(o.valid_size, "valid");
  parts.ref_x = in.train_x.index_select(0, ref), parts.ref_y = in.train_y.index_select(0, ref);
  pool.valid_x = in.train_x.index_select(0, valid), pool.valid_y = in.train_y.index_select(0, valid);
  const at::Tensor test = at::randperm(in.test_x.size(0), gen, at::kLong).slice(0, 0, std::min(o.test_size, in.test_x.size(0)));
  pool.test_x = in.test_x.index_select(0, test), pool.test_y = in.test_y.index_select(0, test);

  const at::Tensor clean = c.take(s, "clean");
  add_source(parts, in.train_x.index_select(0, clean), in.train_y.index_select(0, clean), clean);
  for (int k = 0; k < 2; ++k) {
    const at::Tensor idx = c.take(s, "noisy");
    add_source(parts, in.train_x.index_select(0, idx), confuse(in.train_y.index_select(0, idx), o.noise_rates[k], fashion, gen), idx);
  }
  const at::Tensor base = c.take(bases, "duplicates");
  add_source(parts, shifted_copies(in.train_x.index_select(0, base), o.duplicates, true, gen),
             in.train_y.index_select(0, base).repeat_interleave(o.duplicates), base.repeat_interleave(o.duplicates));
  const at::Tensor odd = d.take(s, "off-domain");
  add_source(parts, off.train_x.index_select(0, odd), at::randint(0, 10, {s}, gen, at::kLong), odd + 100000000);
  if (o.stage == Stage::Sft) {
    const at::Tensor init = d.take(o.init_size, "init");
    pool.init_x = off.train_x.index_select(0, init), pool.init_y = off.train_y.index_select(0, init);
  } else if (o.stage != Stage::Pretrain) {
    pool.init_x = parts.ref_x, pool.init_y = parts.ref_y;
  }
}

// A 10-class Gaussian pool labelled by a random linear teacher: the smoke test's seconds-long stand-in.
void build_synthetic_parts(const PoolOptions& o, Pool& pool, Parts& parts) {
  at::Generator gen = generator(o.data_seed, 2);
  const std::int64_t f = o.features, s = o.source_size, bases = std::max<std::int64_t>(1, s / o.duplicates);
  const at::Tensor teacher = at::randn({f, 10}, gen);
  std::int64_t next_origin = 0;
  auto draw = [&](std::int64_t n, at::Tensor* x, at::Tensor* y) {
    *x = at::randn({n, f}, gen);
    *y = x->mm(teacher).argmax(1);
    const at::Tensor origin = at::arange(next_origin, next_origin + n, at::kLong);
    next_origin += n;
    return origin;
  };
  at::Tensor x, y;
  draw(o.reference_size, &parts.ref_x, &parts.ref_y);
  draw(o.valid_size, &pool.valid_x, &pool.valid_y);
  draw(o.test_size, &pool.test_x, &pool.test_y);
  at::Tensor origin = draw(s, &x, &y);
  add_source(parts, x, y, origin);
  for (int k = 0; k < 2; ++k) {
    origin = draw(s, &x, &y);
    add_source(parts, x, confuse(y, o.noise_rates[k], false, gen), origin);
  }
  origin = draw(bases, &x, &y);
  add_source(parts, shifted_copies(x, o.duplicates, false, gen), y.repeat_interleave(o.duplicates), origin.repeat_interleave(o.duplicates));
  origin = draw(s, &x, &y);
  add_source(parts, 0.5 * x + 2.0, at::randint(0, 10, {s}, gen, at::kLong), origin);
  if (o.stage != Stage::Pretrain) pool.init_x = parts.ref_x, pool.init_y = parts.ref_y;
}

// The reference (quality) model: a D-32-10 MLP trained on the small clean reference set.
std::vector<double> reference_scores(const Parts& parts, const Pool& pool, std::uint64_t seed) {
  Mlp ref = init_mlp(pool.x.size(1), 32, pool.classes, seed);
  at::Generator gen = generator(seed, 3);
  const std::int64_t n = parts.ref_x.size(0), epochs = 30;
  std::vector<at::Tensor> orders;
  for (std::int64_t e = 0; e < epochs; ++e) orders.push_back(at::randperm(n, gen, at::kLong));
  SgdSettings s;
  s.batch = 32;
  train_mlp(ref, nullptr, Objective::CrossEntropy, parts.ref_x, parts.ref_y, {}, at::cat(orders), s, seed);
  const at::Tensor loss = cross_entropy_each(ref, pool.x, pool.label).contiguous();
  return {loss.data_ptr<double>(), loss.data_ptr<double>() + loss.numel()};
}

}  // namespace

const char* stage_name(Stage s) {
  for (const auto& [name, value] : kStages)
    if (value == s) return name.c_str();
  return "?";
}

void PoolOptions::declare(nexp::Options<PoolOptions>& o) {
  o.add("stage", &PoolOptions::stage, "training stage the recipe curates data for", kStages);
  o.add("data", &PoolOptions::data, "images: MNIST and Fashion-MNIST; synthetic: a Gaussian 10-class pool (smoke)",
        {{"images", PoolData::Images}, {"synthetic", PoolData::Synthetic}});
  o.add("source_size", &PoolOptions::source_size, "examples per source (the pool holds 5 sources)").range(20, 20000);
  o.add("noise_rates", &PoolOptions::noise_rates, "class-confusion label noise of sources 1 and 2").range(0, 1);
  o.add("duplicates", &PoolOptions::duplicates, "copies of each image in the duplicate source").range(1, 100);
  o.add("reference_size", &PoolOptions::reference_size, "clean examples the reference (quality) model learns from").range(10, 10000);
  o.add("init_size", &PoolOptions::init_size, "digits the sft stage's starting model is pretrained on").range(10, 50000);
  o.add("valid_size", &PoolOptions::valid_size, "clean validation examples (ablation runs are scored on them)").range(10, 10000);
  o.add("test_size", &PoolOptions::test_size, "clean test examples (target runs are scored on them)").range(10, 10000);
  o.add("features", &PoolOptions::features, "features of the synthetic pool").range(2, 1000);
  o.add("data_seed", &PoolOptions::data_seed, "seed of the pool (fixed across run seeds)").min(0);
}

std::int64_t confusable(std::int64_t cls, bool fashion) {
  static const std::int64_t digits[10] = {6, 7, 8, 5, 9, 3, 0, 1, 2, 4};
  static const std::int64_t clothes[10] = {6, 3, 4, 1, 2, 7, 0, 5, 9, 8};
  return fashion ? clothes[cls] : digits[cls];
}

std::vector<std::int64_t> Pool::source_sizes() const {
  std::vector<std::int64_t> n(kSources, 0);
  for (int s : source) ++n[s];
  return n;
}

std::string Pool::describe() const {
  const auto n = source_sizes();
  return fmt::format("curation_scaling.pool ({}): {} examples, {} features; sources clean {}, noisy {}, noisier {}, "
                     "duplicates {}, off-domain {}; valid {}, test {}",
                     stage_name(stage), x.size(0), x.size(1), n[0], n[1], n[2], n[3], n[4], valid_x.size(0), test_x.size(0));
}

at::Tensor dedup_signature(const at::Tensor& x) {
  at::Tensor s = x.to(at::kFloat);
  if (x.size(1) == 784) s = at::avg_pool2d(s.view({-1, 1, 28, 28}), {5, 5}, {1, 1}, {2, 2}).reshape({x.size(0), -1});
  return s / s.norm(2, 1, true).clamp_min(1e-12);
}

std::vector<double> max_earlier_similarity(const at::Tensor& signature) {
  const std::int64_t n = signature.size(0), chunk = 1024;
  std::vector<double> out(n, -1.0);
  for (std::int64_t a = 0; a < n; a += chunk) {
    const std::int64_t b = std::min(n, a + chunk);
    at::Tensor sim = signature.slice(0, a, b).mm(signature.slice(0, 0, b).t());
    const at::Tensor later = at::arange(0, b, at::kLong).unsqueeze(0) >= at::arange(a, b, at::kLong).unsqueeze(1);
    sim.masked_fill_(later, -1.0);
    const at::Tensor best = std::get<0>(sim.max(1)).to(at::kDouble).contiguous();
    std::copy(best.data_ptr<double>(), best.data_ptr<double>() + (b - a), out.begin() + a);
  }
  return out;
}

std::shared_ptr<nexp::Dataset> make_pool(const PoolOptions& o, nexp::RunContext& ctx) {
  if (o.noise_rates.size() != 2)
    throw nexp::ConfigError(fmt::format("dataset.noise_rates: expected 2 rates (sources 1 and 2), found {}; e.g. "
                                        "noise_rates: [0.4, 0.8]", o.noise_rates.size()));
  auto pool = std::make_shared<Pool>();
  pool->stage = o.stage;
  Parts parts;
  if (o.data == PoolData::Images)
    build_image_parts(o, *pool, parts);
  else
    build_synthetic_parts(o, *pool, parts);
  pool->x = at::cat(parts.xs, 0).contiguous();
  pool->label = at::cat(parts.ys, 0).contiguous();
  const at::Tensor origin = at::cat(parts.origins, 0).contiguous();
  pool->origin.assign(origin.data_ptr<std::int64_t>(), origin.data_ptr<std::int64_t>() + origin.numel());
  for (int s = 0; s < kSources; ++s) pool->source.insert(pool->source.end(), parts.xs[s].size(0), s);
  pool->rejected = pool->label.clone();
  auto r = pool->rejected.accessor<std::int64_t, 1>();
  for (std::int64_t i = 0; i < r.size(0); ++i) r[i] = confusable(r[i], o.data == PoolData::Images && o.stage == Stage::Sft);
  pool->score = reference_scores(parts, *pool, nexp::mix64(static_cast<std::uint64_t>(o.data_seed) + 17));
  pool->dup_similarity = max_earlier_similarity(dedup_signature(pool->x));
  ctx.log().info("{}", pool->describe());
  return pool;
}

}  // namespace curation_scaling
