#include "model.hpp"

#include <torch/serialize.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nexp/error.hpp>

#include "rng.hpp"

namespace drwatson {

TokenBatch make_batch(const std::vector<std::vector<Token>>& sequences, std::int64_t max_len) {
  const auto B = static_cast<std::int64_t>(sequences.size());
  std::int64_t L = 1;
  for (const auto& s : sequences) L = std::max<std::int64_t>(L, std::min<std::int64_t>(max_len, static_cast<std::int64_t>(s.size())));
  auto opts = at::TensorOptions().dtype(at::kLong);
  TokenBatch b;
  b.raw = at::zeros({B, L}, opts);
  b.family = at::zeros({B, L}, opts);
  b.platform = at::zeros({B, L}, opts);
  b.slot = at::zeros({B, L}, opts);
  b.time = at::zeros({B, L}, opts);
  b.value = at::zeros({B, L}, opts);
  b.padding = at::ones({B, L}, at::TensorOptions().dtype(at::kBool));
  auto raw = b.raw.accessor<std::int64_t, 2>(), family = b.family.accessor<std::int64_t, 2>(),
       platform = b.platform.accessor<std::int64_t, 2>(), slot = b.slot.accessor<std::int64_t, 2>(),
       time = b.time.accessor<std::int64_t, 2>(), value = b.value.accessor<std::int64_t, 2>();
  auto pad = b.padding.accessor<bool, 2>();
  for (std::int64_t i = 0; i < B; ++i) {
    const auto& s = sequences[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < std::min<std::int64_t>(L, static_cast<std::int64_t>(s.size())); ++j) {
      const Token& t = s[static_cast<std::size_t>(j)];
      raw[i][j] = t.raw, family[i][j] = t.family, platform[i][j] = t.platform;
      slot[i][j] = t.slot, time[i][j] = t.time, value[i][j] = t.value, pad[i][j] = false;
    }
  }
  return b;
}

TokenBatch on(const TokenBatch& b, const c10::Device& device) {
  if (b.raw.device() == device) return b;
  return {b.raw.to(device),  b.family.to(device), b.platform.to(device), b.slot.to(device),
          b.time.to(device), b.value.to(device),  b.padding.to(device)};
}

// ---------------------------------------------------------------- the encoder

c10::Device EventEncoderImpl::device() const { return raw_->weight.device(); }

EventEncoderImpl::EventEncoderImpl(const ModelConfig& c) : config_(c) {
  raw_ = register_module("raw", torch::nn::Embedding(c.raw_size, c.dim));
  family_ = register_module("family", torch::nn::Embedding(c.family_size, c.dim));
  platform_ = register_module("platform", torch::nn::Embedding(c.platforms, c.dim));
  slot_ = register_module("slot", torch::nn::Embedding(kSlots, c.dim));
  time_ = register_module("time", torch::nn::Embedding(Vocabulary::kTimeBuckets, c.dim));
  value_ = register_module("value", torch::nn::Embedding(Vocabulary::kValueBuckets, c.dim));
  auto layer = torch::nn::TransformerEncoderLayerOptions(c.dim, c.heads).dim_feedforward(c.ff).dropout(c.dropout);
  encoder_ = register_module("encoder", torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(layer, c.layers)));
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim})));
  raw_head_ = register_module("raw_head", torch::nn::Linear(c.dim, c.raw_size));
  value_head_ = register_module("value_head", torch::nn::Linear(c.dim, Vocabulary::kValueBuckets));
  head_ = register_module("head", torch::nn::Linear(c.dim, c.classes));
}

at::Tensor EventEncoderImpl::encode(const TokenBatch& batch) {
  const TokenBatch b = on(batch, device());
  at::Tensor x = raw_->forward(b.raw) + family_->forward(b.family) + platform_->forward(b.platform) +
                 slot_->forward(b.slot) + time_->forward(b.time) + value_->forward(b.value);
  x = norm_->forward(x);
  // The layers take [L, B, dim].
  x = encoder_->forward(x.transpose(0, 1), /*src_mask=*/{}, /*src_key_padding_mask=*/b.padding);
  return x.transpose(0, 1);
}

std::pair<at::Tensor, at::Tensor> EventEncoderImpl::masked(const TokenBatch& b) {
  at::Tensor h = encode(b);
  return {raw_head_->forward(h), value_head_->forward(h)};
}

void EventEncoderImpl::reset_head() { head_->reset_parameters(); }

// ---------------------------------------------------------------- corpora

std::vector<Example> build_corpus(const FleetSpec& fleet, const Vocabulary& vocab, const ClassTable& classes,
                                  const CorpusSpec& spec, std::int64_t max_len) {
  std::vector<Example> out;
  for (std::size_t p = 0; p < spec.platforms.size(); ++p) {
    IncidentGenerator gen(fleet, spec.platforms[p]);
    for (std::int64_t i = 0; i < spec.incidents[p]; ++i) {
      auto [obs, truth] = gen.sample(spec.seed, static_cast<std::uint64_t>(i));
      for (std::size_t c = 0; c < obs.candidates.size(); ++c) {
        Example e;
        e.tokens = vocab.tokens(obs.platform, obs.candidates[c], static_cast<int>(max_len));
        e.label = static_cast<int>(c) == truth.culprit ? classes.of(truth.cause, truth.fix) : ClassTable::kHealthy;
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

std::vector<std::size_t> batch_indices(std::uint64_t seed, std::int64_t step, std::size_t n, std::size_t batch) {
  Rng rng(seed, Purpose::Batch, static_cast<std::uint64_t>(step));
  std::vector<std::size_t> out(std::min(batch, n));
  for (auto& i : out) i = static_cast<std::size_t>(rng.below(n));
  return out;
}

double pretrain_step(EventEncoder& model, torch::optim::Optimizer& opt, const std::vector<Example>& corpus,
                     const std::vector<std::size_t>& batch, std::uint64_t mask_seed, double mask_rate) {
  std::vector<std::vector<Token>> seqs;
  for (auto i : batch) seqs.push_back(corpus[i].tokens);
  // Mask whole events (raw code, family, value); the slot, time and platform stay visible.
  Rng rng(mask_seed, Purpose::Mask);
  std::vector<std::vector<bool>> masked(seqs.size());
  for (std::size_t s = 0; s < seqs.size(); ++s) {
    masked[s].assign(seqs[s].size(), false);
    bool any = false;
    for (std::size_t j = 2; j < seqs[s].size(); ++j)
      if (rng.bernoulli(mask_rate)) masked[s][j] = any = true;
    if (!any && seqs[s].size() > 2) masked[s][2 + rng.below(seqs[s].size() - 2)] = true;
  }
  const std::int64_t max_len = model->config().max_len;
  TokenBatch targets = make_batch(seqs, max_len);
  for (std::size_t s = 0; s < seqs.size(); ++s)
    for (std::size_t j = 0; j < seqs[s].size(); ++j)
      if (masked[s][j]) seqs[s][j].raw = Vocabulary::kMask, seqs[s][j].family = 0, seqs[s][j].value = 0;
  TokenBatch input = make_batch(seqs, max_len);
  at::Tensor mask = at::zeros_like(input.padding);
  auto m = mask.accessor<bool, 2>();
  for (std::size_t s = 0; s < seqs.size(); ++s)
    for (std::size_t j = 0; j < std::min<std::size_t>(seqs[s].size(), static_cast<std::size_t>(mask.size(1))); ++j)
      m[static_cast<std::int64_t>(s)][static_cast<std::int64_t>(j)] = masked[s][j];
  if (!mask.any().item<bool>()) return 0.0;
  model->train();
  auto [raw_logits, value_logits] = model->masked(input);
  mask = mask.to(model->device());
  at::Tensor loss = at::cross_entropy_loss(raw_logits.index({mask}), targets.raw.to(model->device()).index({mask})) +
                    0.5 * at::cross_entropy_loss(value_logits.index({mask}), targets.value.to(model->device()).index({mask}));
  opt.zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  opt.step();
  return loss.item<double>();
}

double finetune_step(EventEncoder& model, torch::optim::Optimizer& opt, const std::vector<Example>& data,
                     const std::vector<std::size_t>& batch) {
  std::vector<std::vector<Token>> seqs;
  std::vector<std::int64_t> labels;
  for (auto i : batch) seqs.push_back(data[i].tokens), labels.push_back(data[i].label);
  model->train();
  at::Tensor logits = model->classify(make_batch(seqs, model->config().max_len));
  at::Tensor y = at::tensor(labels, at::TensorOptions().dtype(at::kLong)).to(model->device());
  at::Tensor loss = at::cross_entropy_loss(logits, y);
  opt.zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  opt.step();
  return loss.item<double>();
}

at::Tensor predict_logits(EventEncoder& model, const std::vector<Example>& data, std::int64_t chunk) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::vector<at::Tensor> parts;
  for (std::size_t start = 0; start < data.size(); start += static_cast<std::size_t>(chunk)) {
    std::vector<std::vector<Token>> seqs;
    for (std::size_t i = start; i < std::min(data.size(), start + static_cast<std::size_t>(chunk)); ++i) seqs.push_back(data[i].tokens);
    parts.push_back(model->classify(make_batch(seqs, model->config().max_len)).to(at::kCPU));
  }
  if (parts.empty()) return at::zeros({0, model->config().classes});
  return at::cat(parts, 0);
}

at::Tensor labels_of(const std::vector<Example>& data) {
  std::vector<std::int64_t> y;
  for (const auto& e : data) y.push_back(e.label);
  return at::tensor(y, at::TensorOptions().dtype(at::kLong));
}

double fit_temperature(const at::Tensor& logits, const at::Tensor& labels) {
  if (logits.size(0) == 0) return 1.0;
  auto nll = [&](double log_t) { return at::cross_entropy_loss(logits / std::exp(log_t), labels).item<double>(); };
  double a = std::log(0.05), b = std::log(20.0);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  for (int i = 0; i < 60; ++i) {
    if (nll(c) < nll(d)) b = d;
    else a = c;
    c = b - g * (b - a), d = a + g * (b - a);
  }
  return std::exp((a + b) / 2);
}

void save_encoder(EventEncoder& model, double temperature, const std::filesystem::path& file) {
  torch::serialize::OutputArchive archive;
  model->save(archive);
  const ModelConfig& c = model->config();
  archive.write("config", at::tensor(std::vector<std::int64_t>{c.dim, c.heads, c.layers, c.ff, c.max_len, c.raw_size,
                                                               c.family_size, c.platforms, c.classes}));
  archive.write("dropout", at::tensor(std::vector<double>{c.dropout}));
  archive.write("temperature", at::tensor(std::vector<double>{temperature}));
  archive.save_to(file.string());
}

std::pair<EventEncoder, double> load_encoder(const std::filesystem::path& file) {
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(file.string());
    at::Tensor config, dropout, temperature;
    archive.read("config", config);
    archive.read("dropout", dropout);
    archive.read("temperature", temperature);
    auto v = config.accessor<std::int64_t, 1>();
    ModelConfig c;
    c.dim = v[0], c.heads = v[1], c.layers = v[2], c.ff = v[3], c.max_len = v[4];
    c.raw_size = v[5], c.family_size = v[6], c.platforms = v[7], c.classes = v[8];
    c.dropout = dropout[0].item<double>();
    EventEncoder model(c);
    model->load(archive);
    return {model, temperature[0].item<double>()};
  } catch (const c10::Error& e) {
    throw nexp::DataError("cannot read the DrWatson model '" + file.string() + "': " + e.what_without_backtrace() +
                          ". Pass the model.pt that a drwatson.finetune run wrote to its artifacts folder, or leave the "
                          "model parameter empty to train one in this run.");
  }
}

// ---------------------------------------------------------------- the transformer as a classifier

TransformerClassifier::TransformerClassifier(EventEncoder model, double temperature, const FleetSpec& fleet)
    : model_(std::move(model)), temperature_(temperature), vocab_(fleet) {
  model_->eval();
}

std::vector<std::vector<double>> TransformerClassifier::posteriors(const Observation& obs) const {
  torch::NoGradGuard no_grad;
  std::vector<std::vector<Token>> seqs;
  for (const auto& c : obs.candidates) seqs.push_back(vocab_.tokens(obs.platform, c, static_cast<int>(model_->config().max_len)));
  at::Tensor p = at::softmax(model_->classify(make_batch(seqs, model_->config().max_len)) / temperature_, 1)
                    .to(at::kCPU).to(at::kDouble).contiguous();
  std::vector<std::vector<double>> out(seqs.size());
  const double* data = p.data_ptr<double>();
  for (std::size_t i = 0; i < seqs.size(); ++i)
    out[i].assign(data + i * static_cast<std::size_t>(p.size(1)), data + (i + 1) * static_cast<std::size_t>(p.size(1)));
  return out;
}

// ---------------------------------------------------------------- bag of events

BagOfEvents::BagOfEvents(const FleetSpec& fleet) : fleet_(&fleet), vocab_(fleet), classes_(ClassTable(fleet).size()) {}

std::int64_t BagOfEvents::dims() const {
  return 2 * vocab_.raw_size() + vocab_.family_size() + 6 + static_cast<std::int64_t>(fleet_->platforms.size());
}

std::vector<float> BagOfEvents::features(int platform, const NodeView& view) const {
  const std::int64_t R = vocab_.raw_size(), F = vocab_.family_size();
  std::vector<float> x(static_cast<std::size_t>(dims()), 0.0f);
  std::vector<float> count(static_cast<std::size_t>(R), 0.0f), family(static_cast<std::size_t>(F), 0.0f);
  for (const auto& e : view.events) {
    const std::int64_t raw = vocab_.raw_of(platform, e.kind);
    if (raw < 0) continue;
    count[static_cast<std::size_t>(raw)] += 1;
    family[static_cast<std::size_t>(vocab_.family_of_raw(raw))] += 1;
    auto& vmax = x[static_cast<std::size_t>(R + raw)];
    vmax = std::max(vmax, static_cast<float>(Vocabulary::value_bucket(e.value)) / (Vocabulary::kValueBuckets - 1));
  }
  for (std::int64_t r = 0; r < R; ++r) x[static_cast<std::size_t>(r)] = std::log1p(count[static_cast<std::size_t>(r)]);
  for (std::int64_t f = 0; f < F; ++f) x[static_cast<std::size_t>(2 * R + f)] = std::log1p(family[static_cast<std::size_t>(f)]);
  const int history = std::min(view.recent_incidents, 2) + (view.days_since_repair < 7 ? 3 : 0);
  x[static_cast<std::size_t>(2 * R + F + history)] = 1;
  x[static_cast<std::size_t>(2 * R + F + 6 + platform)] = 1;
  return x;
}

void BagOfEvents::fit(const std::vector<std::vector<float>>& x, const std::vector<std::int64_t>& y,
                      const std::vector<std::vector<float>>& cal_x, const std::vector<std::int64_t>& cal_y, double l2,
                      int iterations) {
  const std::int64_t D = dims(), N = static_cast<std::int64_t>(x.size());
  auto to_tensor = [&](const std::vector<std::vector<float>>& rows) {
    at::Tensor t = at::empty({static_cast<std::int64_t>(rows.size()), D}, at::kFloat);
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::copy(rows[i].begin(), rows[i].end(), t.data_ptr<float>() + i * static_cast<std::size_t>(D));
    return t;
  };
  at::Tensor X = to_tensor(x), Y = at::tensor(y, at::kLong);
  at::Tensor W = at::zeros({classes_, D}, at::kFloat).set_requires_grad(true);
  at::Tensor b = at::zeros({classes_}, at::kFloat).set_requires_grad(true);
  torch::optim::LBFGS opt({W, b}, torch::optim::LBFGSOptions(1.0).max_iter(iterations).line_search_fn("strong_wolfe"));
  auto closure = [&] {
    opt.zero_grad();
    at::Tensor loss = at::cross_entropy_loss(X.matmul(W.t()) + b, Y) + l2 * W.pow(2).sum() / static_cast<double>(std::max<std::int64_t>(N, 1));
    loss.backward();
    return loss;
  };
  if (N > 0) opt.step(closure);
  double temperature = 1.0;
  if (!cal_x.empty()) {
    torch::NoGradGuard no_grad;
    temperature = fit_temperature(to_tensor(cal_x).matmul(W.t()) + b, at::tensor(cal_y, at::kLong));
  }
  at::Tensor Wb = at::cat({W.detach(), b.detach().unsqueeze(1)}, 1) / temperature;
  weight_.assign(Wb.data_ptr<float>(), Wb.data_ptr<float>() + Wb.numel());
}

std::vector<double> BagOfEvents::predict(const std::vector<float>& x) const {
  const std::size_t D = x.size();
  std::vector<double> z(static_cast<std::size_t>(classes_));
  for (std::size_t k = 0; k < z.size(); ++k) {
    const float* w = weight_.data() + k * (D + 1);
    double s = w[D];
    for (std::size_t j = 0; j < D; ++j) s += static_cast<double>(w[j]) * x[j];
    z[k] = s;
  }
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (auto& v : z) sum += (v = std::exp(v - top));
  for (auto& v : z) v /= sum;
  return z;
}

std::vector<std::vector<double>> BagOfEvents::posteriors(const Observation& obs) const {
  std::vector<std::vector<double>> out;
  for (const auto& c : obs.candidates) out.push_back(predict(features(obs.platform, c)));
  return out;
}

}  // namespace drwatson
