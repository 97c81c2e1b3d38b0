#pragma once
// The real path: the operators on a language model served behind an OpenAI-compatible endpoint,
// through core's client (nexp/llm.hpp). Plumbing, cost accounting and seeding, not competence: the
// local test server (scripts/llm-local) serves a random-weight model.
//
// One item is a four-way question with a gold letter. Every call is seeded (seed_base + call index),
// so a run is reproducible and its calls replay from the response cache; n samples are n calls
// (llama.cpp's server refuses n > 1). A grammar allows only A-D; the judge answers a digit 0-9
// (score = digit / 9), the verifier yes or no; a critic round asks the model to review and answer
// again. Costs are normalised as in the simulator: one call of model m costs price_m / unit_price.
#include <cstdint>
#include <string>
#include <vector>

#include <nexp/llm.hpp>
#include <nexp/options.hpp>

#include "channel.hpp"

namespace llm_channel {

struct Question {
  std::string text;  // the question with its options "A) .. B) .. C) .. D) .."
  int gold = 0;      // 0..3: A..D
};

// Seeded arithmetic questions with three near-miss distractors.
std::vector<Question> make_questions(int n, std::uint64_t seed);

class LlmChannel : public Channel {
 public:
  // `models`: one client per generator, cheapest first, with its normalised price.
  LlmChannel(std::vector<nexp::llm::Client*> models, std::vector<double> prices, Question question,
             double temperature, std::int64_t seed_base);
  int models() const override { return static_cast<int>(clients_.size()); }
  double price(int model) const override { return prices_.at(static_cast<std::size_t>(model)); }
  AnswerId generate(int model, double temperature = -1) override;
  double judge(AnswerId answer) override;
  bool verify(AnswerId answer) override;
  AnswerId refine(int model, AnswerId answer) override;

  double quality(AnswerId answer) const { return answer == question_.gold ? 1 : 0; }
  std::int64_t tokens() const { return tokens_; }
  int cached() const { return cached_; }

 private:
  std::string ask(int model, const std::string& system, const std::string& user, const std::string& grammar,
                  double temperature);

  std::vector<nexp::llm::Client*> clients_;
  std::vector<double> prices_;
  Question question_;
  double temperature_;
  std::int64_t seed_;
  std::int64_t tokens_ = 0;
  int cached_ = 0;
};

struct ProbeOptions {
  std::vector<std::string> endpoints;      // the generators, cheapest first: names of the llm: section
  std::vector<double> prices = {1, 4, 20};
  double unit_price = 4;
  std::vector<double> temperatures = {0, 0.5, 1.0, 1.5};
  int questions = 8;
  int samples = 8;
  std::vector<std::string> arms = {"single/m0", "plurality/m0/n5", "harq-chase/m0/n3", "critic/m0/r1",
                                   "rateless/m0/m2", "verify/m0/r0.50"};
  static void declare(nexp::Options<ProbeOptions>& o) {
    o.add("endpoints", &ProbeOptions::endpoints, "the generators, cheapest first: endpoint names of the llm: section");
    o.add("prices", &ProbeOptions::prices, "raw price of one call of each generator").min(0);
    o.add("unit_price", &ProbeOptions::unit_price, "the raw price that normalises to cost 1").min(1e-9);
    o.add("temperatures", &ProbeOptions::temperatures, "temperatures of the channel measurement").range(0, 5);
    o.add("questions", &ProbeOptions::questions, "four-way questions").range(1, 10000);
    o.add("samples", &ProbeOptions::samples, "seeded samples per question and temperature").range(1, 10000);
    o.add("arms", &ProbeOptions::arms, "operator arms run through the real channel (names as in arms.csv)");
  }
};

// Checks the options before any call: endpoints named, one price each, every arm known.
void check_probe_options(const ProbeOptions& o);

}  // namespace llm_channel

extern template llm_channel::ProbeOptions nexp::bind<llm_channel::ProbeOptions>(const nexp::Params&);
