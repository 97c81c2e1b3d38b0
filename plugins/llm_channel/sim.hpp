#pragma once
// The simulated world of llm_channel.sim: tasks, models, judge, verifier and critic. No LLM weights or
// benchmark items are available offline, so the channel is simulated; every constant lives in the
// editable channel file (configs/llm_channel/channels.yaml) or in the dataset's options.
//
// Task t (kind: 4-way choice, numeric, or code with partial test passes) has a latent difficulty d_t,
// a topic, candidates y_0 (right), y_1 (the shared attractor distractor) and others, each with a true
// quality (1 / 0; for code the share of tests passed), and a 32-dimensional embedding.
//
// Model m (skill a_m, slope b_m, attraction g_m) has logits
//     z_0 = a_m - b_m d_t,   z_1 = g_m s_t,   z_k = o_tk (k >= 2)
// where s_t is the task's attractor strength and o_tk fixed per task: both are shared by all models,
// so their errors are correlated. It samples y ~ softmax(z / T); T = 0 is greedy (argmax).
// Judge: score = clip(q + beta [y = y_1] + N(0, tau^2), 0, 1), beta its bias towards the attractor. Verifier: accepts with probability FPR + (TPR - FPR) q.
// Critic round (break rate a, fix rate b): a right answer is broken (redrawn among the wrong ones)
// with probability a, a wrong one fixed with probability b, so the accuracy map is
//     c' = b + (1 - a - b) c      (theory.hpp, refinement_accuracy)
// and for code, whose quality is graded, the score map q' = q* + kappa (q - q*) + N(0, sigma^2),
// q* = b / (a + b), kappa = 1 - a - b unless the file sets it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nexp/options.hpp>
#include <nexp/random.hpp>

#include "channel.hpp"

namespace llm_channel {

enum class Kind { Choice, Numeric, Code };
const char* kind_name(Kind k);

struct ModelSpec {
  std::string name;
  double skill = 1, slope = 1, attraction = 1;  // a_m, b_m, g_m
  double price = 1;                             // raw price of one call (1 / 4 / 20)
  static void declare(nexp::Options<ModelSpec>& o) {
    o.add("name", &ModelSpec::name, "the model's name").required();
    o.add("skill", &ModelSpec::skill, "a_m: logit of the right answer at difficulty 0");
    o.add("slope", &ModelSpec::slope, "b_m: how fast the right answer's logit falls with difficulty").min(0);
    o.add("attraction", &ModelSpec::attraction, "g_m: weight of the task's attractor logit").min(0);
    o.add("price", &ModelSpec::price, "raw price of one call").min(0);
  }
};

struct CriticSpec {
  double break_rate = 0.1, fix_rate = 0.3;  // a, b
  std::optional<double> kappa;              // score-map slope; default 1 - a - b
  double score_noise = 0.05;                // sigma of the score map
  double price = 1;                         // raw price of the review (the revision is a generator call)
  double fixed_point() const { return fix_rate / (break_rate + fix_rate); }
  double contraction() const { return kappa ? *kappa : 1 - break_rate - fix_rate; }
  static void declare(nexp::Options<CriticSpec>& o) {
    o.add("break_rate", &CriticSpec::break_rate, "a: probability that a round turns a right answer wrong").range(0, 1);
    o.add("fix_rate", &CriticSpec::fix_rate, "b: probability that a round turns a wrong answer right").range(0, 1);
    o.add("kappa", &CriticSpec::kappa, "slope of the code score map q' = q* + kappa (q - q*); default 1 - a - b")
        .range(-3, 3);
    o.add("score_noise", &CriticSpec::score_noise, "sigma of the score map's noise").min(0);
    o.add("price", &CriticSpec::price, "raw price of one review").min(0);
  }
};

// One channel configuration: three generators, a temperature, a judge, a verifier and a critic.
struct ChannelConfig {
  std::string name;
  double temperature = 1;
  std::vector<ModelSpec> models;  // cheapest first
  double judge_noise = 0.2;       // tau
  double judge_attractor = 0.3;   // the judge's bias towards the attractor (it is plausible to judges too)
  double judge_price = 1;
  double verifier_tpr = 0.9, verifier_fpr = 0.2;
  double verifier_price = 1;
  CriticSpec critic;
  double unit_price = 4;  // the raw price that normalises to 1 (the mid model's)
  static void declare(nexp::Options<ChannelConfig>& o) {
    o.add("name", &ChannelConfig::name, "the configuration's name (dataset.config picks one)").required();
    o.add("temperature", &ChannelConfig::temperature, "sampling temperature T; 0: greedy").range(0, 5);
    o.add("models", &ChannelConfig::models, "generators, cheapest first").required();
    o.add("judge_noise", &ChannelConfig::judge_noise, "tau: sd of the judge's score noise").min(0);
    o.add("judge_attractor", &ChannelConfig::judge_attractor,
          "added to the attractor's judge score: the judge's errors correlate with the generators'");
    o.add("judge_price", &ChannelConfig::judge_price, "raw price of one judge call").min(0);
    o.add("verifier_tpr", &ChannelConfig::verifier_tpr, "verifier's acceptance rate of a right answer").range(0, 1);
    o.add("verifier_fpr", &ChannelConfig::verifier_fpr, "verifier's acceptance rate of a wrong answer").range(0, 1);
    o.add("verifier_price", &ChannelConfig::verifier_price, "raw price of one verification").min(0);
    o.add("critic", &ChannelConfig::critic, "the generator-critic loop's critic");
    o.add("unit_price", &ChannelConfig::unit_price, "raw price that normalises to cost 1").min(1e-9);
  }
};

struct ChannelFile {
  std::vector<ChannelConfig> configurations;
  static void declare(nexp::Options<ChannelFile>& o) {
    o.add("configurations", &ChannelFile::configurations, "the channel configurations").required();
  }
};

// Reads the channel file; throws nexp::DataError naming the file, the key, what was expected and found.
std::vector<ChannelConfig> read_channel_file(const std::filesystem::path& file);
const ChannelConfig& find_config(const std::vector<ChannelConfig>& configs, const std::string& name,
                                 const std::filesystem::path& file);

struct Task {
  Kind kind = Kind::Choice;
  int topic = 0;
  double difficulty = 0;                // d_t
  double attractor = 0;                 // s_t
  std::vector<double> other_logits;     // o_tk for candidates 2..K-1
  std::vector<double> quality;          // true quality of each candidate; quality[0] = 1
  std::vector<double> embedding;        // 32 numbers
};

struct TaskSetOptions {
  int tasks = 69;
  double difficulty_mean = 1.0, difficulty_sd = 1.0;
  double topic_spread = 0.7;          // sd of the topics' difficulty offsets
  int topics = 12;
  double attractor_mean = 0.5, attractor_slope = 0.5, attractor_sd = 0.5;
  double embedding_info = 0.8;        // share of the embedding's variance that is signal (topic, d)
  int dimensions = 32;
  static void declare(nexp::Options<TaskSetOptions>& o) {
    o.add("tasks", &TaskSetOptions::tasks, "number of tasks (69: the paper's hard set; 300: its MMLU/GSM8K/HumanEval split)")
        .range(2, 100000);
    o.add("difficulty_mean", &TaskSetOptions::difficulty_mean, "mean latent difficulty d (hard sets: >= 1)");
    o.add("difficulty_sd", &TaskSetOptions::difficulty_sd, "sd of d within a topic").min(0);
    o.add("topics", &TaskSetOptions::topics, "topic clusters (topic t has kind t mod 3)").range(3, 1000);
    o.add("topic_spread", &TaskSetOptions::topic_spread, "sd of the topics' difficulty offsets").min(0);
    o.add("attractor_mean", &TaskSetOptions::attractor_mean, "attractor strength s_t = mean + slope d + sd N(0, 1)");
    o.add("attractor_slope", &TaskSetOptions::attractor_slope, "how the attractor grows with difficulty");
    o.add("attractor_sd", &TaskSetOptions::attractor_sd, "per-task spread of the attractor").min(0);
    o.add("embedding_info", &TaskSetOptions::embedding_info,
          "share of the embedding that carries the task's topic and difficulty (0: pure noise)")
        .range(0, 1);
    o.add("dimensions", &TaskSetOptions::dimensions, "embedding dimensions").range(2, 4096);
  }
};

// Tasks drawn from `rng`: topic t has kind t mod 3, so the three kinds are equally common.
std::vector<Task> make_tasks(const TaskSetOptions& o, nexp::Random rng);

// The channel of one task under one configuration, with its own random stream.
class SimChannel : public Channel {
 public:
  SimChannel(const ChannelConfig& config, const Task& task, nexp::Random rng);
  int models() const override { return static_cast<int>(config_.models.size()); }
  double price(int model) const override;
  AnswerId generate(int model, double temperature = -1) override;
  double judge(AnswerId answer) override;
  bool verify(AnswerId answer) override;
  AnswerId refine(int model, AnswerId answer) override;

  // Grading, outside the Channel interface: the true quality of an answer.
  double quality(AnswerId answer) const { return quality_.at(static_cast<std::size_t>(answer)); }
  // softmax(z / T) of `model` (T = 0: the argmax's indicator); for tests and theory.
  std::vector<double> distribution(int model, double temperature) const;

 private:
  AnswerId draw_wrong(int model);

  const ChannelConfig& config_;
  const Task& task_;
  nexp::Random rng_;
  std::vector<double> quality_;  // candidates, then refined code answers
};

}  // namespace llm_channel
