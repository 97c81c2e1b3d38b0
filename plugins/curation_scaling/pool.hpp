#pragma once
// The data pool a curation recipe draws from: five sources of known quality, each example scored by a
// small, imperfect reference model (the role of DCLM's fastText quality classifier), and a near-
// duplicate signature for deduplication.
//
//   source 0 clean        in-domain images with their labels
//   source 1 noisy        labels swapped with a confusable class (4<->9, 3<->5, ...) at rate noise_rates[0]
//   source 2 noisier      the same at rate noise_rates[1]
//   source 3 duplicates   source_size / duplicates images, each `duplicates` times with a 1-pixel shift
//   source 4 off-domain   images of the other set (Fashion for digits, digits for Fashion) with random labels
//
// Stages (the paper's pretraining, SFT, preference optimisation and RL, at MNIST scale):
//   pretrain  a model trained from scratch on the curated digits (cross entropy)
//   sft       an MNIST-pretrained model tuned on a curated Fashion-MNIST pool (cross entropy)
//   dpo       pairs (chosen = the example's label, rejected = its confusable class): right exactly when
//             the source's label is; DPO from the reference policy
//   rl        REINFORCE with reward 1 for the example's label, from the reference policy; prompts are
//             filtered by the reference pass rate pi_ref(y|x) = exp(-score), the same order as the score
// Every stage is judged by the cross entropy of a clean in-domain test split; ablation (proxy) runs see
// only a clean validation split. `data: synthetic` replaces the images by a 10-class Gaussian pool
// whose labels come from a random linear teacher (seconds; the smoke test).
#include <ATen/core/Tensor.h>

#include <nexp/dataset.hpp>
#include <nexp/options.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nexp {
class RunContext;
}

namespace curation_scaling {

enum class Stage { Pretrain, Sft, Dpo, Rl };
enum class PoolData { Images, Synthetic };
constexpr int kSources = 5;
const char* stage_name(Stage s);

struct PoolOptions {
  Stage stage = Stage::Pretrain;
  PoolData data = PoolData::Images;
  std::int64_t source_size = 2000;
  std::vector<double> noise_rates = {0.4, 0.8};
  std::int64_t duplicates = 10;
  std::int64_t reference_size = 500;
  std::int64_t init_size = 5000;
  std::int64_t valid_size = 1000;
  std::int64_t test_size = 2000;
  std::int64_t features = 20;
  std::int64_t data_seed = 0;
  static void declare(nexp::Options<PoolOptions>& o);
};

class Pool : public nexp::Dataset {
 public:
  std::string describe() const override;

  Stage stage = Stage::Pretrain;
  std::int64_t classes = 10;
  at::Tensor x;                      // [P, D] float, the pool
  at::Tensor label;                  // [P] int64: the source's label (DPO's chosen, RL's rewarded answer)
  at::Tensor rejected;               // [P] int64: the confusable class of `label` (DPO's rejected)
  std::vector<int> source;           // [P] 0..4
  std::vector<double> score;         // [P] reference model's loss on `label`: lower is cleaner
  std::vector<double> dup_similarity;  // [P] largest signature cosine to any earlier example of the pool
  std::vector<std::int64_t> origin;  // [P] the id of the underlying image (copies share it)
  at::Tensor valid_x, valid_y;       // clean in-domain validation: what ablation runs are scored on
  at::Tensor test_x, test_y;         // clean in-domain test: what target runs are scored on
  at::Tensor init_x, init_y;         // what the starting policy learns (sft: digits; dpo, rl: the reference set)
  std::vector<std::int64_t> source_sizes() const;
};

std::shared_ptr<nexp::Dataset> make_pool(const PoolOptions& o, nexp::RunContext& ctx);

// Near-duplicate signatures, [N, K] unit rows: 28x28 images are blurred by a 5x5 box (so that a 1-pixel
// shift moves the cosine little: copies of MNIST digits stay above 0.95 in ~98% of cases), other
// features are used as they are; each row is normalised (not centred: the shared background would
// dominate the cosine).
at::Tensor dedup_signature(const at::Tensor& x);
// For each row i, max_{j < i} <s_i, s_j> (-1 for the first row): the example is a near-duplicate of an
// earlier one when this exceeds the threshold.
std::vector<double> max_earlier_similarity(const at::Tensor& signature);
// The confusable partner of each class (an involution): digits 0-6 1-7 2-8 3-5 4-9; Fashion T-shirt-shirt,
// trouser-dress, pullover-coat, sandal-sneaker, bag-ankle boot.
std::int64_t confusable(std::int64_t cls, bool fashion);

}  // namespace curation_scaling
