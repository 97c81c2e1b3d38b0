// The six reliability operators and the arms (operators.hpp).
#include "operators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace llm_channel {

namespace {

// Runs `body` and fills the outcome's cost and calls from the channel's usage.
template <class F>
Outcome metered(Channel& ch, F&& body) {
  const Usage before = ch.usage();
  Outcome out = body();
  out.cost = ch.usage().cost - before.cost;
  out.calls = ch.usage().calls - before.calls;
  return out;
}

std::vector<AnswerId> draw(Channel& ch, int model, int n, double temperature = -1) {
  std::vector<AnswerId> a;
  for (int i = 0; i < n; ++i) a.push_back(ch.generate(model, temperature));
  return a;
}

// Selection, plurality or quality-weighted combining of given samples (judging them when needed).
AnswerId combine_samples(Channel& ch, const std::vector<AnswerId>& answers, Combiner how) {
  if (how == Combiner::Plurality) return vote(answers, std::vector<double>(answers.size(), 1.0));
  std::vector<double> scores;
  for (AnswerId a : answers) scores.push_back(ch.judge(a));
  if (how == Combiner::Weighted) return vote(answers, scores);
  const auto best = std::max_element(scores.begin(), scores.end()) - scores.begin();
  return answers[static_cast<std::size_t>(best)];
}

}  // namespace

AnswerId vote(const std::vector<AnswerId>& answers, const std::vector<double>& weights) {
  std::vector<std::pair<AnswerId, double>> totals;  // in order of first appearance
  for (std::size_t i = 0; i < answers.size(); ++i) {
    auto it = std::find_if(totals.begin(), totals.end(), [&](const auto& t) { return t.first == answers[i]; });
    if (it == totals.end()) totals.emplace_back(answers[i], weights[i]);
    else it->second += weights[i];
  }
  auto best = totals.begin();
  for (auto it = totals.begin(); it != totals.end(); ++it)
    if (it->second > best->second) best = it;
  return best->first;
}

int vote_margin(const std::vector<AnswerId>& answers) {
  std::map<AnswerId, int> counts;
  for (AnswerId a : answers) ++counts[a];
  int first = 0, second = 0;
  for (const auto& [a, c] : counts) {
    if (c > first) second = first, first = c;
    else if (c > second) second = c;
  }
  return first - second;
}

// ---------------------------------------------------------------- 1 diversity combining

Outcome combine(Channel& ch, int model, int n, Combiner how) {
  return metered(ch, [&] { return Outcome{combine_samples(ch, draw(ch, model, n), how), 0, 0, 1}; });
}

Outcome combine_models(Channel& ch, int per_model, Combiner how) {
  return metered(ch, [&] {
    std::vector<AnswerId> answers;
    for (int m = 0; m < ch.models(); ++m)
      for (AnswerId a : draw(ch, m, per_model)) answers.push_back(a);
    return Outcome{combine_samples(ch, answers, how), 0, 0, 1};
  });
}

// ---------------------------------------------------------------- 2 hybrid retransmission

Outcome harq(Channel& ch, int model, int max_attempts, bool incremental) {
  return metered(ch, [&] {
    std::vector<AnswerId> attempts;
    for (int i = 0; i < max_attempts; ++i) {
      // Incremental redundancy: each retry sends a differently drawn "codeword" (a hotter sample).
      const double t = incremental && i > 0 ? 0.7 + 0.3 * i : -1;
      const AnswerId a = ch.generate(model, t);
      attempts.push_back(a);
      if (ch.verify(a)) return Outcome{a, 0, 0, i + 1};
    }
    // Chase combining: every rejected attempt still votes.
    return Outcome{vote(attempts, std::vector<double>(attempts.size(), 1.0)), 0, 0, max_attempts};
  });
}

// ---------------------------------------------------------------- 3 generator-critic decoding

Outcome generator_critic(Channel& ch, int model, int rounds) {
  return metered(ch, [&] {
    AnswerId a = ch.generate(model);
    for (int r = 0; r < rounds; ++r) a = ch.refine(model, a);
    return Outcome{a, 0, 0, rounds + 1};
  });
}

// ---------------------------------------------------------------- 4 rateless sampling

Outcome rateless(Channel& ch, int model, int margin, int cap) {
  return metered(ch, [&] {
    std::vector<AnswerId> answers;
    while (static_cast<int>(answers.size()) < cap) {
      answers.push_back(ch.generate(model));
      if (vote_margin(answers) >= margin) break;
    }
    return Outcome{vote(answers, std::vector<double>(answers.size(), 1.0)), 0, 0, static_cast<int>(answers.size())};
  });
}

// ---------------------------------------------------------------- 5 redundant verification

Outcome redundant_verification(Channel& ch, int model, int k, double rate) {
  return metered(ch, [&] {
    const auto answers = draw(ch, model, k);
    // Distinct candidates by vote count (ties: first seen), each with its net verdict.
    struct Candidate {
      AnswerId answer;
      int votes = 0, verdict = 0;
    };
    std::vector<Candidate> cands;
    for (AnswerId a : answers) {
      auto it = std::find_if(cands.begin(), cands.end(), [&](const Candidate& c) { return c.answer == a; });
      if (it == cands.end()) cands.push_back({a, 1, 0});
      else ++it->votes;
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) { return x.votes > y.votes; });
    const int v = static_cast<int>(std::lround(k * (1 - rate) / rate));
    for (int i = 0; i < v; ++i) {
      auto& c = cands[static_cast<std::size_t>(i) % cands.size()];
      c.verdict += ch.verify(c.answer) ? 1 : -1;
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) {
      return x.verdict != y.verdict ? x.verdict > y.verdict : x.votes > y.votes;
    });
    return Outcome{cands.front().answer, 0, 0, 2};
  });
}

// ---------------------------------------------------------------- 6 difficulty-adaptive escalation

Outcome escalate(Channel& ch, int start, bool agreement) {
  return metered(ch, [&] {
    const int top = ch.models() - 1;
    AnswerId a = 0;
    int rounds = 0;
    for (int m = start; m <= top; ++m) {
      ++rounds;
      a = ch.generate(m);
      if (m == top) break;
      const bool pass = agreement ? ch.generate(m) == a : ch.verify(a);
      if (pass) break;
    }
    return Outcome{a, 0, 0, rounds};
  });
}

// ---------------------------------------------------------------- arms

Outcome run_arm(const Arm& arm, Channel& ch) {
  switch (arm.op) {
    case Operator::Single: return combine(ch, arm.model, 1, Combiner::Plurality);
    case Operator::Combine: return combine(ch, arm.model, arm.budget, arm.combiner);
    case Operator::CombineModels: return combine_models(ch, arm.budget, arm.combiner);
    case Operator::Harq: return harq(ch, arm.model, arm.budget, arm.flag);
    case Operator::Critic: return generator_critic(ch, arm.model, arm.budget);
    case Operator::Rateless: return rateless(ch, arm.model, arm.margin, arm.budget);
    case Operator::Verification: return redundant_verification(ch, arm.model, arm.budget, arm.rate);
    case Operator::Escalate: return escalate(ch, arm.model, arm.flag);
  }
  return {};
}

std::vector<Arm> standard_arms(int models) {
  std::vector<Arm> arms;
  const std::pair<Combiner, const char*> combiners[] = {
      {Combiner::Plurality, "plurality"}, {Combiner::Selection, "selection"}, {Combiner::Weighted, "weighted"}};
  for (int m = 0; m < models; ++m) {
    const std::string mm = fmt::format("m{}", m);
    arms.push_back({"single/" + mm, Operator::Single, m});
    for (const auto& [how, name] : combiners)
      for (int n : {3, 5, 9, 15}) {
        Arm a{fmt::format("{}/{}/n{}", name, mm, n), Operator::Combine, m, n};
        a.combiner = how;
        arms.push_back(a);
      }
    for (bool ir : {false, true})
      for (int n : {2, 3, 5}) {
        Arm a{fmt::format("harq-{}/{}/n{}", ir ? "ir" : "chase", mm, n), Operator::Harq, m, n};
        a.flag = ir;
        arms.push_back(a);
      }
    for (int r : {1, 2, 4}) arms.push_back({fmt::format("critic/{}/r{}", mm, r), Operator::Critic, m, r});
    for (int margin : {2, 3}) {
      Arm a{fmt::format("rateless/{}/m{}", mm, margin), Operator::Rateless, m, 15};
      a.margin = margin;
      arms.push_back(a);
    }
    for (double rate : {0.75, 0.5, 0.33}) {
      Arm a{fmt::format("verify/{}/r{:.2f}", mm, rate), Operator::Verification, m, 3};
      a.rate = rate;
      arms.push_back(a);
    }
  }
  for (const auto& [how, name] : combiners) {
    Arm a{fmt::format("{}/models/n1", name), Operator::CombineModels, 0, 1};
    a.combiner = how;
    arms.push_back(a);
  }
  for (int start = 0; start + 1 < models; ++start)
    for (bool agree : {false, true}) {
      Arm a{fmt::format("escalate/from-m{}/{}", start, agree ? "agree" : "verify"), Operator::Escalate, start, 1};
      a.flag = agree;
      arms.push_back(a);
    }
  return arms;
}

int find_arm(const std::vector<Arm>& arms, const std::string& name) {
  for (std::size_t i = 0; i < arms.size(); ++i)
    if (arms[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace llm_channel
