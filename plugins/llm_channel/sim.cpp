// The simulated channel (sim.hpp): task generation, sampling, judge, verifier, critic; the channel file.
#include "sim.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include <nexp/error.hpp>
#include <nexp/runtime/experiment.hpp>

namespace llm_channel {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Choice: return "choice";
    case Kind::Numeric: return "numeric";
    case Kind::Code: return "code";
  }
  return "?";
}

// ---------------------------------------------------------------- the channel file

std::vector<ChannelConfig> read_channel_file(const std::filesystem::path& file) {
  const std::string hint = "Fix the file (configs/llm_channel/channels.yaml documents every key) or point "
                           "dataset.channels at another one.";
  if (!std::filesystem::is_regular_file(file))
    throw nexp::DataError(fmt::format("llm_channel.sim: the channel file '{}' does not exist (expected a YAML file "
                                      "with a `configurations:` list). {}", file.string(), hint));
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) {
    throw nexp::DataError(fmt::format("llm_channel.sim: the channel file '{}' is not valid YAML: {}. {}", file.string(),
                                      e.what(), hint));
  }
  auto parsed = nexp::bind<ChannelFile>(
      nexp::params_from_yaml(root, nexp::options_schema<ChannelFile>(), "", "llm_channel.sim", file.string()));
  for (std::size_t i = 0; i < parsed.configurations.size(); ++i) {
    const auto& c = parsed.configurations[i];
    if (c.models.empty())
      throw nexp::DataError(fmt::format("llm_channel.sim: channel file '{}', configuration '{}': `models` is empty "
                                        "(expected at least one generator). {}", file.string(), c.name, hint));
    for (std::size_t j = 0; j < i; ++j)
      if (parsed.configurations[j].name == c.name)
        throw nexp::DataError(fmt::format("llm_channel.sim: channel file '{}': configuration '{}' is defined twice "
                                          "(entries {} and {}). {}", file.string(), c.name, j, i, hint));
  }
  if (parsed.configurations.empty())
    throw nexp::DataError(fmt::format("llm_channel.sim: channel file '{}' lists no configuration. {}", file.string(), hint));
  return parsed.configurations;
}

const ChannelConfig& find_config(const std::vector<ChannelConfig>& configs, const std::string& name,
                                 const std::filesystem::path& file) {
  std::string names;
  for (const auto& c : configs) {
    if (c.name == name) return c;
    names += (names.empty() ? "" : ", ") + c.name;
  }
  throw nexp::DataError(fmt::format("llm_channel.sim: dataset.config is '{}', but the channel file '{}' defines only: "
                                    "{}. Pick one of them (or `all` where the method takes every configuration).",
                                    name, file.string(), names));
}

// ---------------------------------------------------------------- tasks

namespace {

std::vector<double> gaussian_vector(int n, nexp::Random& rng) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = rng.normal();
  return v;
}

// Candidates per kind: 4 choices; 8 numeric values; 6 programs whose quality is their pass rate.
int candidates(Kind k) { return k == Kind::Choice ? 4 : k == Kind::Numeric ? 8 : 6; }

}  // namespace

std::vector<Task> make_tasks(const TaskSetOptions& o, nexp::Random rng) {
  // Topics: a kind, a difficulty offset, a centre in embedding space. One unit direction u carries
  // the difficulty (standardised), scaled like a topic centre.
  struct Topic {
    Kind kind;
    double offset;
    std::vector<double> centre;
  };
  std::vector<Topic> topics;
  for (int t = 0; t < o.topics; ++t)
    topics.push_back({static_cast<Kind>(t % 3), o.topic_spread * rng.normal(), gaussian_vector(o.dimensions, rng)});
  auto u = gaussian_vector(o.dimensions, rng);
  double norm = 0;
  for (double x : u) norm += x * x;
  for (auto& x : u) x *= std::sqrt(o.dimensions / norm);

  const double sd_total = std::sqrt(o.difficulty_sd * o.difficulty_sd + o.topic_spread * o.topic_spread);
  const double signal = std::sqrt(o.embedding_info), noise = std::sqrt(1 - o.embedding_info);
  std::vector<Task> tasks(static_cast<std::size_t>(o.tasks));
  for (auto& task : tasks) {
    const auto& topic = topics[rng.below(static_cast<std::uint64_t>(o.topics))];
    task.topic = static_cast<int>(&topic - topics.data());
    task.kind = topic.kind;
    task.difficulty = o.difficulty_mean + topic.offset + o.difficulty_sd * rng.normal();
    task.attractor = o.attractor_mean + o.attractor_slope * task.difficulty + o.attractor_sd * rng.normal();
    const int k = candidates(task.kind);
    task.quality.assign(static_cast<std::size_t>(k), 0.0);
    task.quality[0] = 1;
    for (int i = 2; i < k; ++i) task.other_logits.push_back(-1 + 0.7 * rng.normal());
    if (task.kind == Kind::Code) {
      task.quality[1] = rng.uniform(0.3, 0.8);  // the attractor passes many tests, not all
      for (int i = 2; i < k; ++i) task.quality[static_cast<std::size_t>(i)] = rng.uniform(0, 0.5);
    }
    // e = sqrt(info) (centre + z_d u + 0.3 xi) + sqrt(1 - info) xi'
    const double z = (task.difficulty - o.difficulty_mean) / sd_total;
    task.embedding.resize(static_cast<std::size_t>(o.dimensions));
    for (std::size_t i = 0; i < task.embedding.size(); ++i)
      task.embedding[i] = signal * (topic.centre[i] + z * u[i] + 0.3 * rng.normal()) + noise * rng.normal();
  }
  return tasks;
}

// ---------------------------------------------------------------- the channel of one task

SimChannel::SimChannel(const ChannelConfig& config, const Task& task, nexp::Random rng)
    : config_(config), task_(task), rng_(rng), quality_(task.quality) {}

double SimChannel::price(int model) const {
  return config_.models.at(static_cast<std::size_t>(model)).price / config_.unit_price;
}

std::vector<double> SimChannel::distribution(int model, double temperature) const {
  const auto& m = config_.models.at(static_cast<std::size_t>(model));
  std::vector<double> z = {m.skill - m.slope * task_.difficulty, m.attraction * task_.attractor};
  z.insert(z.end(), task_.other_logits.begin(), task_.other_logits.end());
  const auto top = static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin());
  std::vector<double> p(z.size(), 0.0);
  if (temperature <= 0) {
    p[top] = 1;
    return p;
  }
  double sum = 0;
  for (std::size_t i = 0; i < z.size(); ++i) sum += p[i] = std::exp((z[i] - z[top]) / temperature);
  for (auto& x : p) x /= sum;
  return p;
}

AnswerId SimChannel::generate(int model, double temperature) {
  charge(price(model));
  const auto p = distribution(model, temperature >= 0 ? temperature : config_.temperature);
  double u = rng_.uniform();
  for (std::size_t i = 0; i + 1 < p.size(); ++i) {
    if (u < p[i]) return static_cast<AnswerId>(i);
    u -= p[i];
  }
  return static_cast<AnswerId>(p.size() - 1);
}

double SimChannel::judge(AnswerId answer) {
  charge(config_.judge_price / config_.unit_price);
  const double bias = answer == 1 ? config_.judge_attractor : 0.0;
  return std::clamp(quality(answer) + bias + config_.judge_noise * rng_.normal(), 0.0, 1.0);
}

bool SimChannel::verify(AnswerId answer) {
  charge(config_.verifier_price / config_.unit_price);
  const double q = quality(answer);
  return rng_.bernoulli(config_.verifier_fpr + (config_.verifier_tpr - config_.verifier_fpr) * q);
}

// A wrong candidate, drawn in proportion to the model's probabilities of the wrong ones.
AnswerId SimChannel::draw_wrong(int model) {
  const auto p = distribution(model, std::max(config_.temperature, 1.0));
  double u = rng_.uniform() * (1 - p[0]);
  for (std::size_t i = 1; i + 1 < p.size(); ++i) {
    if (u < p[i]) return static_cast<AnswerId>(i);
    u -= p[i];
  }
  return static_cast<AnswerId>(p.size() - 1);
}

AnswerId SimChannel::refine(int model, AnswerId answer) {
  charge(config_.critic.price / config_.unit_price);  // the review
  charge(price(model));                               // the revision
  const auto& c = config_.critic;
  if (task_.kind == Kind::Code) {
    const double q = quality(answer), star = c.fixed_point();
    const double next = std::clamp(star + c.contraction() * (q - star) + c.score_noise * rng_.normal(), 0.0, 1.0);
    if (next >= 1) return 0;
    quality_.push_back(next);  // a new program: its own answer
    return static_cast<AnswerId>(quality_.size() - 1);
  }
  if (answer == 0) return rng_.bernoulli(c.break_rate) ? draw_wrong(model) : 0;
  return rng_.bernoulli(c.fix_rate) ? 0 : answer;
}

}  // namespace llm_channel
