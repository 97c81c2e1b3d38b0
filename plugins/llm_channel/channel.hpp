#pragma once
// The LLM at temperature T as a discrete stochastic channel p(y | x) (the paper's starting identity),
// seen by the reliability operators through one interface, simulated (sim.hpp) or real (probe.cpp).
//
// An operator sees only what a deployed system sees: answers (opaque ids; equal ids are the same
// answer, which is what a vote counts), judge scores, verifier verdicts and refined answers, and what
// each call cost. It never sees an answer's true quality: that is graded afterwards, outside this
// interface, as the test labels of a benchmark are.
#include <vector>

namespace llm_channel {

using AnswerId = int;

// What the calls of a channel have cost so far. Costs are normalised: one call of the mid-priced
// model = 1 (prices 1 / 4 / 20 become 0.25 / 1 / 5).
struct Usage {
  double cost = 0;
  int calls = 0;
};

class Channel {
 public:
  virtual ~Channel() = default;
  // Generators, cheapest first.
  virtual int models() const = 0;
  virtual double price(int model) const = 0;
  // One draw of y ~ p(y | x) from `model` at the channel's temperature, or at `temperature` when it
  // is >= 0 (incremental-redundancy retries raise it).
  virtual AnswerId generate(int model, double temperature = -1) = 0;
  // A judge's score of an answer in [0, 1] (the paper's LLM-judge quality, here with noise tau).
  virtual double judge(AnswerId answer) = 0;
  // A verifier's verdict (true: accept), with its true- and false-positive rates.
  virtual bool verify(AnswerId answer) = 0;
  // One generator-critic round: the critic reviews `answer`, `model` revises it.
  virtual AnswerId refine(int model, AnswerId answer) = 0;

  const Usage& usage() const { return usage_; }

 protected:
  void charge(double cost) {
    usage_.cost += cost;
    ++usage_.calls;
  }

 private:
  Usage usage_;
};

}  // namespace llm_channel
