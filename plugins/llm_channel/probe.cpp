// The real path (probe.hpp): the operators through nexp/llm.hpp, and the method llm_channel.probe.
#include "probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <nexp/run_context.hpp>
#include <nexp/table.hpp>

#include "methods.hpp"
#include "operators.hpp"

namespace llm_channel {

std::vector<Question> make_questions(int n, std::uint64_t seed) {
  nexp::Random rng(seed);
  std::vector<Question> out;
  for (int i = 0; i < n; ++i) {
    const int a = 10 + static_cast<int>(rng.below(90)), b = 10 + static_cast<int>(rng.below(90));
    std::vector<int> options = {a + b, a + b + 1, a + b - 10, a + b + 10};
    const int gold = static_cast<int>(rng.below(4));
    std::swap(options[0], options[static_cast<std::size_t>(gold)]);
    out.push_back({fmt::format("What is {} + {}? A) {} B) {} C) {} D) {}", a, b, options[0], options[1], options[2],
                               options[3]),
                   gold});
  }
  return out;
}

LlmChannel::LlmChannel(std::vector<nexp::llm::Client*> models, std::vector<double> prices, Question question,
                       double temperature, std::int64_t seed_base)
    : clients_(std::move(models)), prices_(std::move(prices)), question_(std::move(question)),
      temperature_(temperature), seed_(seed_base) {}

std::string LlmChannel::ask(int model, const std::string& system, const std::string& user, const std::string& grammar,
                            double temperature) {
  nexp::llm::Request r;
  r.messages = {nexp::llm::Message::system(system), nexp::llm::Message::user(user)};
  r.grammar = grammar;
  r.temperature = temperature;
  r.seed = seed_ + usage().calls;  // one seed per call: n samples are n seeded calls
  r.max_tokens = 4;
  const auto response = clients_.at(static_cast<std::size_t>(model))->chat(r);
  charge(price(model));
  tokens_ += response.usage.total();
  cached_ += response.cached ? 1 : 0;
  return response.text();
}

namespace {
const char* kLetters = "root ::= [A-D]";
int letter(const std::string& text) { return text.empty() ? 0 : std::clamp(text[0] - 'A', 0, 3); }
}  // namespace

AnswerId LlmChannel::generate(int model, double temperature) {
  return letter(ask(model, "Answer the multiple-choice question with one letter.", question_.text, kLetters,
                    temperature >= 0 ? temperature : temperature_));
}

double LlmChannel::judge(AnswerId answer) {
  const auto digit = ask(0, "Rate the proposed answer from 0 (wrong) to 9 (certainly right).",
                         fmt::format("{}\nProposed answer: {}", question_.text, static_cast<char>('A' + answer)),
                         "root ::= [0-9]", 0);
  return digit.empty() ? 0 : (digit[0] - '0') / 9.0;
}

bool LlmChannel::verify(AnswerId answer) {
  return ask(0, "Is the proposed answer right? Say yes or no.",
             fmt::format("{}\nProposed answer: {}", question_.text, static_cast<char>('A' + answer)),
             "root ::= \"yes\" | \"no\"", 0) == "yes";
}

AnswerId LlmChannel::refine(int model, AnswerId answer) {
  const auto review = ask(0, "Review the proposed answer; say keep or change.",
                          fmt::format("{}\nProposed answer: {}", question_.text, static_cast<char>('A' + answer)),
                          "root ::= \"keep\" | \"change\"", temperature_);
  if (review == "keep") return answer;
  return generate(model);
}

void check_probe_options(const ProbeOptions& o) {
  if (o.endpoints.empty())
    throw nexp::ConfigError(
        "llm_channel.probe: params.endpoints is empty, so there is no model to call (nexp never calls a model that "
        "the config does not name). Name the generators, cheapest first, e.g. params.endpoints=[local], and list "
        "them in the config's llm: section (configs/llm_channel/real_local.yaml shows how).");
  if (o.prices.size() < o.endpoints.size())
    throw nexp::ConfigError(fmt::format("llm_channel.probe: params.prices has {} values for {} endpoints; give one "
                                        "raw price per endpoint", o.prices.size(), o.endpoints.size()));
  if (o.temperatures.empty() || o.temperatures.size() > 8)
    throw nexp::ConfigError(fmt::format("llm_channel.probe: params.temperatures has {} values; give 1 to 8 "
                                        "(each is reported as entropy_t<i>)", o.temperatures.size()));
  const auto arms = standard_arms(static_cast<int>(o.endpoints.size()));
  for (const auto& name : o.arms)
    if (find_arm(arms, name) < 0)
      throw nexp::ConfigError(fmt::format("llm_channel.probe: params.arms names '{}', which is not an arm for {} "
                                          "generator(s); names look like single/m0, plurality/m0/n5 (arms.csv of "
                                          "llm_channel.arms lists them all)", name, o.endpoints.size()));
}

namespace {

double entropy_of(const std::map<int, int>& counts, int n) {
  double h = 0;
  for (const auto& [a, c] : counts) h -= static_cast<double>(c) / n * std::log(static_cast<double>(c) / n);
  return h;
}

}  // namespace

void run_probe(nexp::RunContext& ctx) {
  const auto o = ctx.options<ProbeOptions>();
  check_probe_options(o);
  std::vector<nexp::llm::Client*> clients;
  std::vector<double> prices;
  for (std::size_t i = 0; i < o.endpoints.size(); ++i)
    clients.push_back(&ctx.llm(o.endpoints[i])), prices.push_back(o.prices[i] / o.unit_price);
  const auto questions = make_questions(o.questions, ctx.seed());
  const auto seed = static_cast<std::int64_t>(ctx.seed() % 1000000) * 100000;
  using C = nexp::CsvColumn;
  nexp::CsvWriter channel_csv(ctx.artifacts_dir() / "channel.csv",
                              {C::real("temperature"), C::real("entropy"), C::real("distinct"), C::real("accuracy")});
  std::int64_t tokens = 0;
  int calls = 0, block = 0;
  // The channel itself: answer entropy (nats, per question, averaged) against temperature.
  for (std::size_t ti = 0; ti < o.temperatures.size(); ++ti) {
    double h = 0, distinct = 0, right = 0;
    for (const auto& q : questions) {
      LlmChannel ch(clients, prices, q, o.temperatures[ti], seed + 1000 * block++);
      std::map<int, int> counts;
      for (int s = 0; s < o.samples; ++s) {
        const AnswerId a = ch.generate(0);
        ++counts[a], right += ch.quality(a);
      }
      h += entropy_of(counts, o.samples) / questions.size(), distinct += counts.size() / double(questions.size());
      tokens += ch.tokens(), calls += ch.usage().calls;
    }
    channel_csv.row(o.temperatures[ti], h, distinct, right / (questions.size() * o.samples));
    ctx.summary(fmt::format("entropy_t{}", ti), h);
  }
  // The operators through the real channel.
  nexp::CsvWriter arm_csv(ctx.artifacts_dir() / "probe_arms.csv",
                          {C::text("arm"), C::real("quality"), C::real("normalized_cost"), C::real("calls")});
  const auto arms = standard_arms(static_cast<int>(clients.size()));
  for (const auto& name : o.arms) {
    const Arm& arm = arms[static_cast<std::size_t>(find_arm(arms, name))];
    double q = 0, cost = 0, n = 0;
    for (const auto& question : questions) {
      LlmChannel ch(clients, prices, question, o.temperatures.back(), seed + 1000 * block++);
      const Outcome out = run_arm(arm, ch);
      q += ch.quality(out.answer), cost += out.cost, n += out.calls;
      tokens += ch.tokens(), calls += ch.usage().calls;
    }
    const double m = static_cast<double>(questions.size());
    arm_csv.row(name, q / m, cost / m, n / m);
  }
  ctx.summary("probe_calls", calls);
  ctx.summary("probe_tokens", static_cast<double>(tokens));
}

}  // namespace llm_channel
