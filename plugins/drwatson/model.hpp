#pragma once
// The diagnosis models.
//
// EventEncoder: DrWatson's foundation model, a small transformer over event tokens. An event is the
// sum of six embeddings (raw code, family, platform, slot, time bucket, value bucket); a [CLS] token
// and a history token lead each node's sequence. Pretraining is self-supervised across platforms:
// 15% of the events are masked (raw code, family and value hidden) and the encoder predicts their raw
// code and value bucket from the rest. Fine-tuning puts a linear head on [CLS] that predicts the
// node's class (cause x minimal fix, or healthy) from few labelled incidents per platform; a
// temperature fitted on held-out labels calibrates it for the decision layer.
//
// BagOfEvents: the logistic baseline, multinomial logistic regression on event counts.
#include <torch/nn.h>
#include <torch/optim.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "fleet.hpp"
#include "incidents.hpp"
#include "policies.hpp"

namespace drwatson {

struct ModelConfig {
  std::int64_t dim = 64, heads = 4, layers = 2, ff = 128, max_len = 40;
  double dropout = 0.1;
  std::int64_t raw_size = 0, family_size = 0, platforms = 0, classes = 0;
};

// Token fields of a batch, each [B, L] int64, and the padding mask [B, L] (true = padding).
struct TokenBatch {
  at::Tensor raw, family, platform, slot, time, value, padding;
};
TokenBatch make_batch(const std::vector<std::vector<Token>>& sequences, std::int64_t max_len);
TokenBatch on(const TokenBatch& batch, const c10::Device& device);

class EventEncoderImpl : public torch::nn::Module {
 public:
  explicit EventEncoderImpl(const ModelConfig& config);
  // [B, L, dim] contextual embeddings.
  at::Tensor encode(const TokenBatch& batch);
  // [B, classes] logits from the [CLS] position.
  at::Tensor classify(const TokenBatch& batch) { return head_->forward(encode(batch).select(1, 0)); }
  // Masked-event logits at every position: raw code [B, L, raw_size] and value bucket [B, L, buckets].
  std::pair<at::Tensor, at::Tensor> masked(const TokenBatch& batch);
  // A fresh classification head (fine-tuning starts from a pretrained encoder with a new head).
  void reset_head();
  // Where its parameters live (the run's HAL device while training; the CPU for the simulator).
  c10::Device device() const;
  const ModelConfig& config() const { return config_; }

 private:
  ModelConfig config_;
  torch::nn::Embedding raw_{nullptr}, family_{nullptr}, platform_{nullptr}, slot_{nullptr}, time_{nullptr}, value_{nullptr};
  torch::nn::TransformerEncoder encoder_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear raw_head_{nullptr}, value_head_{nullptr}, head_{nullptr};
};
TORCH_MODULE(EventEncoder);

// The labelled or unlabelled corpus of one training phase: incidents drawn from the platforms' mixes,
// each candidate node one sequence.
struct Example {
  std::vector<Token> tokens;
  std::int64_t label = 0;  // ClassTable class
};
struct CorpusSpec {
  std::vector<int> platforms;          // which platforms
  std::vector<std::int64_t> incidents; // how many incidents of each
  std::uint64_t seed = 0;
};
std::vector<Example> build_corpus(const FleetSpec& fleet, const Vocabulary& vocab, const ClassTable& classes,
                                  const CorpusSpec& spec, std::int64_t max_len);

// One optimisation step of masked-event pretraining on `batch` (indices into corpus); returns the loss.
double pretrain_step(EventEncoder& model, torch::optim::Optimizer& opt, const std::vector<Example>& corpus,
                     const std::vector<std::size_t>& batch, std::uint64_t mask_seed, double mask_rate = 0.15);
// One step of supervised fine-tuning; returns the loss.
double finetune_step(EventEncoder& model, torch::optim::Optimizer& opt, const std::vector<Example>& data,
                     const std::vector<std::size_t>& batch);
// Logits [N, classes] of many examples, in evaluation mode, without gradients.
at::Tensor predict_logits(EventEncoder& model, const std::vector<Example>& data, std::int64_t chunk = 256);
// The temperature T > 0 minimising the NLL of softmax(logits / T) (golden-section search on log T).
double fit_temperature(const at::Tensor& logits, const at::Tensor& labels);
at::Tensor labels_of(const std::vector<Example>& data);

// Shuffled mini-batch `step` of an epoch-less stream over n examples, reproducible from (seed, step).
std::vector<std::size_t> batch_indices(std::uint64_t seed, std::int64_t step, std::size_t n, std::size_t batch);

void save_encoder(EventEncoder& model, double temperature, const std::filesystem::path& file);
// Reads a model written by save_encoder; returns it and its temperature. Throws nexp::DataError.
std::pair<EventEncoder, double> load_encoder(const std::filesystem::path& file);

// The transformer as a Classifier for the policies. Thread-safe: the simulator's replicas share it.
class TransformerClassifier final : public Classifier {
 public:
  TransformerClassifier(EventEncoder model, double temperature, const FleetSpec& fleet);
  std::vector<std::vector<double>> posteriors(const Observation& obs) const override;

 private:
  mutable EventEncoder model_;  // read-only in evaluation mode; forward() is not const in LibTorch
  double temperature_;
  Vocabulary vocab_;
};

// ---------------------------------------------------------------- bag of events

class BagOfEvents final : public Classifier {
 public:
  explicit BagOfEvents(const FleetSpec& fleet);
  // Features of one node: log(1 + count) and max value bucket per raw code, counts per family, the
  // history bucket one-hot and the platform one-hot.
  std::vector<float> features(int platform, const NodeView& view) const;
  std::int64_t dims() const;
  // Multinomial logistic regression with L2 penalty `l2`, full-batch L-BFGS, then temperature fitting
  // on `calibration`.
  void fit(const std::vector<std::vector<float>>& x, const std::vector<std::int64_t>& y,
           const std::vector<std::vector<float>>& cal_x, const std::vector<std::int64_t>& cal_y, double l2, int iterations);
  std::vector<double> predict(const std::vector<float>& x) const;
  std::vector<std::vector<double>> posteriors(const Observation& obs) const override;

 private:
  const FleetSpec* fleet_;
  Vocabulary vocab_;
  std::int64_t classes_;
  std::vector<float> weight_;  // [classes, dims + 1] row-major, the last column the bias
};

}  // namespace drwatson
