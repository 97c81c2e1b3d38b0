#pragma once
// fisher_select.sft: a supervised fine-tuning simulator with known corruptions. A tiny causal
// transformer (learners.cpp) is pretrained on two tasks, copy and reverse, and fine-tuned on two
// others, sort and add, from prompt -> response pairs with the loss on the response tokens only.
// Real SFT pools are not available offline with corruption labels, so nexp builds one whose every
// flaw is known; the flags are kept for the metrics and never shown to a selector.
//
// Sequences (vocabulary of 18 tokens, every sequence 13 long, every prompt 7 long):
//   copy     COPY d1 .. d5 = d1 .. d5 EOS              (pretraining)
//   reverse  REV  d1 .. d5 = d5 .. d1 EOS              (pretraining)
//   sort     SORT d1 .. d5 = the digits ascending EOS  (fine-tuning)
//   add      ADD a1 a2 + b1 b2 = s1 s2 s3 EOS PAD PAD  (fine-tuning; the sum zero-padded to 3 digits)
// The supervised tokens are the response and its EOS.
//
//   noise       each training response is corrupted with probability `noise`, by `noise_type`:
//               random (every response digit redrawn uniformly, the response made to differ),
//               off_by_one (one response digit moved by +-1 mod 10), off_task (the answer of a
//               pretraining task: the prompt's digits copied, cut to the response's length), or
//               mixed (one of the three, uniformly)
//   duplicates  that share of the training split is near-duplicates of `duplicate_sources` easy prompts
//               (sort prompts already ascending, add prompts without a carry): one prompt digit moved
//               by +-1, the response recomputed; sources and copies are flagged
//   holdout     clean pairs (the reference gradient of gfv's gate, RHO-LOSS's model, GREATS' g_val)
//   test        clean prompts, scored by greedy decoding and exact match of the whole response
// Half of every split is sort and half add; all of it is drawn from the run's seed.
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fisher_select::sft {

// The vocabulary: the digits are tokens 0-9.
constexpr std::int64_t kCopyToken = 10, kReverseToken = 11, kSortToken = 12, kAddToken = 13, kEquals = 14, kPlus = 15,
                       kEos = 16, kPad = 17, kVocabulary = 18;
enum class Task { Copy, Reverse, Sort, Add };
constexpr std::int64_t kLength = 13, kPrompt = 7, kDigits = 5;

enum class NoiseType { Mixed, Random, OffByOne, OffTask };

struct SftOptions {
  double noise = 0.3;
  NoiseType noise_type = NoiseType::Mixed;
  double duplicates = 0.2;
  std::int64_t duplicate_sources = 10;
  std::int64_t train_size = 4000;
  std::int64_t holdout_size = 500;
  std::int64_t test_size = 500;
  std::int64_t pretrain_size = 20000;
  static void declare(nexp::Options<SftOptions>& o);
};

// Sequences [N, kLength] int64 and the mask of their supervised tokens [N, kLength] bool.
struct Sequences {
  at::Tensor tokens, supervised;
  std::int64_t size() const { return tokens.defined() ? tokens.size(0) : 0; }
};

struct SftData : nexp::Dataset {
  Sequences pretrain;           // copy and reverse
  Sequences train;              // sort and add, observed (possibly corrupted) responses
  at::Tensor noisy, duplicate;  // bool flags [N] of the training split (metrics only)
  Sequences holdout, test;      // clean
  std::string describe() const override;
};

std::shared_ptr<nexp::Dataset> make_sft(const SftOptions& o, nexp::RunContext& ctx);

// The pieces, on their own for tests.
std::vector<std::int64_t> sequence(Task task, const std::vector<std::int64_t>& digits);  // a clean sequence
std::vector<std::int64_t> random_digits(Task task, nexp::Random& rng);  // a prompt's digits (5, or 2 + 2)
// Corrupts the response of a clean sequence in place (kind Mixed draws one of the others).
void corrupt(std::vector<std::int64_t>& seq, NoiseType kind, nexp::Random& rng);
// The number of supervised (response) tokens of a task, EOS included.
std::int64_t response_length(Task task);

}  // namespace fisher_select::sft
