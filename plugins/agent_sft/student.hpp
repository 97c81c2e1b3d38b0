#pragma once
// The student: a small causal transformer over a view of the episode (corpus.hpp: the pinned goal,
// then the latest tokens, `context` in all) that scores every admissible action (LibTorch, in
// student.cpp only; this header is torch-free).
//
//   x     = view(episode) = goal, kGoal, the latest tokens up to the decision    (W <= context tokens)
//   h_t   = LN(Block_L(... Block_1(E[x_{1..W}] + P[0..W-1])))[t]              (pre-norm blocks, causal)
//   e(a)  = W_a mean_{w in a} E[w]                                          (the action's pooled tokens)
//   c(a)  = mean_{w in a} max_{j <= t} q(E[w]) . k(h_j) / sqrt(d)           (pointer: copy what was read)
//   pi(a | history) = softmax_{a in admissible} (h_t . e(a) / sqrt(d) + c(a))
//   loss  = - mean over labelled decisions of log pi(a_teacher | history)   (teacher steps only)
// The kAct token closes the history at a decision, so h_t has read the whole window before acting.
// Windows are drawn in proportion to the labelled decisions they hold, so every kept teacher step
// weighs the same whatever construction produced it.
#include <cstdint>
#include <memory>
#include <vector>

#include "corpus.hpp"

namespace agent_sft {

struct StudentConfig {
  int dim = 64;
  int layers = 2;
  int heads = 4;
  int context = 256;  // tokens the student reads: the pinned goal and the latest history
  double lr = 2e-3;
  int batch = 16;     // windows per update
};

class Student final : public Policy {
 public:
  Student(const StudentConfig& config, std::uint64_t seed);
  Student(const Student& other);  // a deep copy (weights; a fresh optimiser)
  Student& operator=(const Student&) = delete;
  ~Student() override;

  // `updates` AdamW steps on windows drawn from the corpus; returns the mean loss of the last tenth.
  double train(const std::vector<Window>& corpus, int updates, nexp::Random& rng);
  // Greedy (argmax) by default; sample(&rng) draws from pi instead, until sample(nullptr).
  std::vector<int> choose(const std::vector<const Episode*>& episodes,
                          const std::vector<std::vector<std::string>>& admissible) override;
  void sample(nexp::Random* rng) { sampler_ = rng; }
  std::int64_t parameters() const;
  void set_lr(double lr);
  const StudentConfig& config() const { return config_; }

  // REINFORCE on whole episodes: loss = - sum_t (R - baseline) log pi(a_t) over the student's own
  // decisions, R = 1 on success; one AdamW step per call.
  void reinforce(const std::vector<Episode>& episodes, double baseline);

 private:
  struct Impl;
  StudentConfig config_;
  std::unique_ptr<Impl> impl_;
  nexp::Random* sampler_ = nullptr;
};

}  // namespace agent_sft
