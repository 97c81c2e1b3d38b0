#pragma once
// The nexp methods of cb_pbrl: their options, run functions and studies.
//   cb_pbrl.train          CB-PbRL (learner.hpp), hypergradient implicit | naive
//   cb_pbrl.safe_rlhf      separate BT fits (reward from `better`, cost from `safer` + safe/unsafe),
//                          the same Lagrangian inner loop and on-policy rounds, no coupling through lam*
//   cb_pbrl.unconstrained  PbRL: reward only from `better`, soft value iteration without a constraint
//   cb_pbrl.two_stage      reward and cost fit once on offline expert and random queries, CMDP solved once
//   cb_pbrl.oracle         the occupancy LP's optimum at d (an upper bound: reads the true r, c)
//   cb_pbrl.compare        studies: methods x worlds x seeds (x query budgets), bootstrap intervals
//   cb_pbrl.rate           average squared held-out hypergradient norm against K (step eta0 / sqrt(K))
#include <cstdint>
#include <string>
#include <vector>

#include <nexp/nexp.hpp>

#include "learner.hpp"
#include "world.hpp"

namespace cb_pbrl {

enum class Labels { Utility, Reward };

struct TrainOptions {
  int outer_steps = 200;
  int queries_per_step = 8;
  int inner_steps = 0;
  double alpha = 0.01;
  double lr = 0.05;
  double lam_lr = 0.5;
  std::string optimizer = "adam";
  bool replay = true;
  std::string hypergradient = "implicit";
  Labels better_label = Labels::Utility;
  double beta = 10;
  bool noise_free = false;
  double unsafe_threshold = 0.5;
  int segment_min = 10, segment_max = 20;
  double mix_learner = 0.4, mix_expert = 0.3, mix_random = 0.3;
  int heldout = 500;
  bool track_hypergradient = true;
  bool transfer = true;
  int checkpoint_every = 50;
  static void declare(nexp::Options<TrainOptions>& o);
  LearnerConfig config(Mode mode) const;  // throws nexp::ConfigError on inconsistent values
};

struct CompareOptions : TrainOptions {
  std::vector<std::string> methods = {"train", "safe_rlhf", "unconstrained", "two_stage", "oracle"};
  std::vector<std::string> worlds = {"hazard_band", "cliff", "random"};
  int seeds = 10;
  std::vector<std::int64_t> queries = {};  // queries_per_step values; empty: the one of the options
  GridOptions grid;
  static void declare(nexp::Options<CompareOptions>& o);
};

struct RateOptions : TrainOptions {
  std::vector<std::int64_t> ks = {25, 50, 100, 200, 400, 800, 1600};
  std::vector<std::int64_t> inner = {1, 5, 20, 0};  // 0: converged
  double eta0 = 1.0;
  int seeds = 3;
  int main_inner = 20;  // whose slope is `rate_slope`
  GridOptions grid;
  static void declare(nexp::Options<RateOptions>& o);
};

// The dataset factory of cb_pbrl.grid: the world of the run's seed, described in the log.
std::shared_ptr<nexp::Dataset> make_grid(const GridOptions& o, nexp::RunContext& ctx);
std::vector<std::string> run_metrics();
void run_train(nexp::RunContext& ctx);
void run_safe_rlhf(nexp::RunContext& ctx);
void run_unconstrained(nexp::RunContext& ctx);
void run_two_stage(nexp::RunContext& ctx);
void run_oracle(nexp::RunContext& ctx);
void run_compare(nexp::RunContext& ctx);
void run_rate(nexp::RunContext& ctx);

}  // namespace cb_pbrl
