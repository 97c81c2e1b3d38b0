#include "sft.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fisher_select::sft {

void SftOptions::declare(nexp::Options<SftOptions>& o) {
  o.add("noise", &SftOptions::noise, "probability that a training response is corrupted").range(0, 0.9);
  o.add("noise_type", &SftOptions::noise_type,
        "random: redrawn digits; off_by_one: one digit +-1; off_task: the prompt copied; mixed: one of the three",
        {{"mixed", NoiseType::Mixed}, {"random", NoiseType::Random}, {"off_by_one", NoiseType::OffByOne},
         {"off_task", NoiseType::OffTask}});
  o.add("duplicates", &SftOptions::duplicates, "share of the training split that is near-duplicate easy prompts")
      .range(0, 0.9);
  o.add("duplicate_sources", &SftOptions::duplicate_sources, "distinct easy prompts the near-duplicates copy").min(1);
  o.add("train_size", &SftOptions::train_size, "training pairs (sort and add), near-duplicates included")
      .range(100, 1000000);
  o.add("holdout_size", &SftOptions::holdout_size, "clean held-out pairs").range(0, 100000);
  o.add("test_size", &SftOptions::test_size, "clean test prompts, scored by greedy exact match").range(1, 100000);
  o.add("pretrain_size", &SftOptions::pretrain_size, "copy and reverse pairs for pretraining").range(1, 1000000);
}

std::string SftData::describe() const {
  return fmt::format("fisher_select.sft: pretrain {} copy/reverse, tune {} sort/add ({:.1f}% corrupted responses, "
                     "{:.1f}% near-duplicates), holdout {}, test {}",
                     pretrain.size(), train.size(), 100 * noisy.to(at::kDouble).mean().item<double>(),
                     100 * duplicate.to(at::kDouble).mean().item<double>(), holdout.size(), test.size());
}

std::int64_t response_length(Task task) { return task == Task::Add ? 4 : kDigits + 1; }

namespace {

Task task_of(const std::vector<std::int64_t>& seq) { return static_cast<Task>(seq[0] - kCopyToken); }

// The prompt's digits in order (5, or a1 a2 b1 b2).
std::vector<std::int64_t> prompt_digits(const std::vector<std::int64_t>& seq) {
  std::vector<std::int64_t> d;
  for (std::int64_t t = 1; t < kPrompt - 1; ++t)
    if (seq[t] < 10) d.push_back(seq[t]);
  return d;
}

std::vector<std::int64_t> answer(Task task, std::vector<std::int64_t> d) {
  switch (task) {
    case Task::Copy: return d;
    case Task::Reverse: std::reverse(d.begin(), d.end()); return d;
    case Task::Sort: std::sort(d.begin(), d.end()); return d;
    case Task::Add: {
      const std::int64_t s = 10 * d[0] + d[1] + 10 * d[2] + d[3];
      return {s / 100, s / 10 % 10, s % 10};
    }
  }
  return d;
}

// A digit moved by +1 or -1 (mod 10), the direction drawn from rng.
void nudge(std::int64_t& digit, nexp::Random& rng) { digit = (digit + (rng.bernoulli(0.5) ? 1 : 9)) % 10; }

bool has_carry(const std::vector<std::int64_t>& d) { return d[1] + d[3] >= 10 || d[0] + d[2] >= 10; }

// An easy prompt: ascending digits for sort, no carry for add.
std::vector<std::int64_t> easy_digits(Task task, nexp::Random& rng) {
  std::vector<std::int64_t> d = random_digits(task, rng);
  if (task == Task::Sort) std::sort(d.begin(), d.end());
  while (task == Task::Add && has_carry(d)) d = random_digits(task, rng);
  return d;
}

Sequences stack(const std::vector<std::vector<std::int64_t>>& seqs) {
  const auto n = static_cast<std::int64_t>(seqs.size());
  Sequences s{at::empty({n, kLength}, at::kLong), at::zeros({n, kLength}, at::kBool)};
  auto* t = s.tokens.data_ptr<std::int64_t>();
  auto* m = s.supervised.data_ptr<bool>();
  for (std::int64_t i = 0; i < n; ++i) {
    std::copy(seqs[i].begin(), seqs[i].end(), t + i * kLength);
    std::fill_n(m + i * kLength + kPrompt, response_length(task_of(seqs[i])), true);
  }
  return s;
}

// n clean pairs, the tasks alternating.
std::vector<std::vector<std::int64_t>> clean(std::int64_t n, Task a, Task b, nexp::Random& rng) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t i = 0; i < n; ++i) {
    const Task task = i % 2 == 0 ? a : b;
    out.push_back(sequence(task, random_digits(task, rng)));
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> random_digits(Task task, nexp::Random& rng) {
  std::vector<std::int64_t> d(task == Task::Add ? 4 : kDigits);
  for (auto& x : d) x = static_cast<std::int64_t>(rng.below(10));
  return d;
}

std::vector<std::int64_t> sequence(Task task, const std::vector<std::int64_t>& d) {
  std::vector<std::int64_t> seq = {kCopyToken + static_cast<std::int64_t>(task)};
  if (task == Task::Add) {
    seq.insert(seq.end(), {d[0], d[1], kPlus, d[2], d[3]});
  } else {
    seq.insert(seq.end(), d.begin(), d.end());
  }
  seq.push_back(kEquals);
  const std::vector<std::int64_t> r = answer(task, d);
  seq.insert(seq.end(), r.begin(), r.end());
  seq.push_back(kEos);
  seq.resize(kLength, kPad);
  return seq;
}

void corrupt(std::vector<std::int64_t>& seq, NoiseType kind, nexp::Random& rng) {
  const std::int64_t digits = response_length(task_of(seq)) - 1;
  const auto first = seq.begin() + kPrompt, last = first + digits;
  const std::vector<std::int64_t> before(first, last);
  if (kind == NoiseType::Mixed) kind = static_cast<NoiseType>(1 + rng.below(3));
  if (kind == NoiseType::Random) {
    while (std::equal(first, last, before.begin()))
      for (auto it = first; it != last; ++it) *it = static_cast<std::int64_t>(rng.below(10));
  } else if (kind == NoiseType::OffTask) {
    const std::vector<std::int64_t> d = prompt_digits(seq);
    std::copy_n(d.begin(), digits, first);
  }
  // off_by_one, and an off-task answer that happens to be right (an ascending sort prompt)
  if (kind == NoiseType::OffByOne || std::equal(first, last, before.begin())) {
    nudge(*(first + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(digits)))), rng);
  }
}

std::shared_ptr<nexp::Dataset> make_sft(const SftOptions& o, nexp::RunContext& ctx) {
  auto rng = ctx.stream("sequences");
  auto d = std::make_shared<SftData>();
  d->pretrain = stack(clean(o.pretrain_size, Task::Copy, Task::Reverse, rng));
  d->holdout = stack(clean(o.holdout_size, Task::Sort, Task::Add, rng));
  d->test = stack(clean(o.test_size, Task::Sort, Task::Add, rng));

  std::vector<std::vector<std::int64_t>> train = clean(o.train_size, Task::Sort, Task::Add, rng);
  d->duplicate = at::zeros({o.train_size}, at::kBool);
  d->noisy = at::zeros({o.train_size}, at::kBool);
  const auto copies = static_cast<std::int64_t>(std::llround(o.duplicates * static_cast<double>(o.train_size)));
  auto dup_rng = ctx.stream("duplicates");
  const std::int64_t sources = copies > 0 ? std::min(o.duplicate_sources, o.train_size - copies) : 0;
  for (std::int64_t s = 0; s < sources; ++s) {  // the first `sources` pairs become easy ones
    const Task task = s % 2 == 0 ? Task::Sort : Task::Add;
    train[s] = sequence(task, easy_digits(task, dup_rng));
    d->duplicate[s] = true;
  }
  for (std::int64_t c = 0; c < copies; ++c) {  // the last `copies` pairs become their near-duplicates
    const std::vector<std::int64_t>& src = train[c % sources];
    std::vector<std::int64_t> digits = prompt_digits(src);
    nudge(digits[dup_rng.below(digits.size())], dup_rng);
    const std::int64_t i = o.train_size - copies + c;
    train[i] = sequence(task_of(src), digits);
    d->duplicate[i] = true;
  }
  auto noise_rng = ctx.stream("noise");
  for (std::int64_t i = 0; i < o.train_size; ++i) {
    if (!noise_rng.bernoulli(o.noise)) continue;
    corrupt(train[i], o.noise_type, noise_rng);
    d->noisy[i] = true;
  }
  d->train = stack(train);
  return d;
}

}  // namespace fisher_select::sft
