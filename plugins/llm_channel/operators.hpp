#pragma once
// The six reliability operators of the paper, each a classical channel-coding technique applied to
// the LLM channel p(y | x) (channel.hpp), and the arms (model x operator x budget) built from them.
//
//   operator (paper)                    techniques it covers here             function
//   1 diversity combining               selection (best judge score),         combine()
//                                       equal gain (plurality, self-
//                                       consistency), quality-weighted;
//                                       over samples of one model or over
//                                       the models                            combine_models()
//   2 hybrid retransmission (HARQ)      retry while the verifier rejects;     harq()
//                                       chase combining (vote over all
//                                       attempts at the end), incremental
//                                       redundancy (each retry hotter)
//   3 iterative generator-critic        rounds of review and revision         generator_critic()
//   4 rateless (fountain) sampling      sample until the leader's margin      rateless()
//                                       over the runner-up is m
//   5 structured redundant verification k candidates and verifications at     redundant_verification()
//                                       code rate r = k / (k + v)
//   6 difficulty-adaptive escalation    cheapest model first, escalate when   escalate()
//                                       the check fails
//
// Every operator reads only the channel (answers, judge scores, verdicts), never true quality.
// Ties of a vote go to the answer seen first: for exchangeable samples this is the same as breaking
// ties uniformly at random (theory.hpp's exact vote counts it that way).
#include <string>
#include <vector>

#include "channel.hpp"

namespace llm_channel {

// What an operator returns; the caller grades `answer`.
struct Outcome {
  AnswerId answer = 0;
  double cost = 0;  // normalised (one mid-model call = 1)
  int calls = 0;
  int rounds = 0;   // sequential rounds (latency proxy): 1 for a parallel batch
};

enum class Combiner { Selection, Plurality, Weighted };

// The answer with the largest total weight; ties to the one seen first.
AnswerId vote(const std::vector<AnswerId>& answers, const std::vector<double>& weights);
// The leader's count minus the runner-up's.
int vote_margin(const std::vector<AnswerId>& answers);

Outcome combine(Channel& ch, int model, int n, Combiner how);
Outcome combine_models(Channel& ch, int per_model, Combiner how);
Outcome harq(Channel& ch, int model, int max_attempts, bool incremental);
Outcome generator_critic(Channel& ch, int model, int rounds);
Outcome rateless(Channel& ch, int model, int margin, int cap);
// k candidates, v = round(k (1 - r) / r) verifications, spread over the distinct candidates by vote.
Outcome redundant_verification(Channel& ch, int model, int k, double rate);
// From model `start` upwards: one sample checked by the verifier (or two samples that must agree);
// the top model's answer is final.
Outcome escalate(Channel& ch, int start, bool agreement);

// One arm: a model, an operator and its budget.
enum class Operator { Single, Combine, CombineModels, Harq, Critic, Rateless, Verification, Escalate };
struct Arm {
  std::string name;  // e.g. "plurality/m1/n5"
  Operator op = Operator::Single;
  int model = 0;
  int budget = 1;    // samples, attempts, rounds, cap or candidates
  int margin = 0;    // rateless
  double rate = 1;   // verification
  bool flag = false; // HARQ: incremental redundancy; escalation: agreement check
  Combiner combiner = Combiner::Plurality;
};

Outcome run_arm(const Arm& arm, Channel& ch);
// The arms of every experiment for `models` generators: single shot; the three combiners with 3, 5, 9,
// 15 samples; combining over models; HARQ (chase, incremental) with 2, 3, 5 attempts; 1, 2, 4 critic
// rounds; rateless with margins 2, 3 (cap 15); verification at rates 0.75, 0.5, 0.33 (k = 3);
// escalation from each rung below the top, checked by the verifier or by agreement.
std::vector<Arm> standard_arms(int models);
// The index of the arm named `name` in `arms`, or -1.
int find_arm(const std::vector<Arm>& arms, const std::string& name);

}  // namespace llm_channel
