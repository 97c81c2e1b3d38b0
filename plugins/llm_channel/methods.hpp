#pragma once
// The nexp side: the dataset llm_channel.sim and the methods' options; the experiments are in
// experiments.cpp (simulated channel) and probe.cpp (a real model through nexp/llm.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nexp/dataset.hpp>
#include <nexp/run_context.hpp>

#include "operators.hpp"
#include "sim.hpp"

namespace llm_channel {

// ---------------------------------------------------------------- dataset llm_channel.sim

struct SimOptions : TaskSetOptions {
  std::string channels = "configs/llm_channel/channels.yaml";
  std::string config = "all";
  static void declare(nexp::Options<SimOptions>& o) {
    o.inherit<TaskSetOptions>();
    o.add("channels", &SimOptions::channels, "the channel file (YAML: `configurations:` list); relative to the "
                                             "working directory");
    o.add("config", &SimOptions::config, "a configuration's name, or `all`");
  }
};

class SimDataset : public nexp::Dataset {
 public:
  std::string file;
  std::vector<ChannelConfig> configs;  // the selected one, or all of the file
  std::vector<Task> tasks;
  std::string describe() const override;
};

std::shared_ptr<nexp::Dataset> make_sim(const SimOptions& o, nexp::RunContext& ctx);

// ---------------------------------------------------------------- methods

// Every arm on every task of every configuration.
struct ArmsOptions {
  int repeats = 16;    // independent draws per (task, arm)
  double lam = 0.05;   // utility Q - lam C that names a winner
  static void declare(nexp::Options<ArmsOptions>& o) {
    o.add("repeats", &ArmsOptions::repeats, "independent draws of each arm on each task").range(1, 10000);
    o.add("lam", &ArmsOptions::lam, "a task's winning arm maximises mean quality - lam x mean normalised cost").min(0);
  }
};

// 0, then 41 log-spaced values from 0.001 to 50.
std::vector<double> default_lams();

struct RouterOptions {
  int k = 20;
  bool similarity_weights = true;
  int folds = 5;
  int table_repeats = 4;  // draws per (task, arm) in the training table
  int test_repeats = 4;   // independent draws per (task, arm) for evaluation
  std::vector<double> lams;  // empty: default_lams()
  double tolerance_se = 1;
  int resamples = 2000;
  static void declare(nexp::Options<RouterOptions>& o) {
    o.add("k", &RouterOptions::k, "neighbours (cosine similarity of embeddings)").range(1, 1000000);
    o.add("similarity_weights", &RouterOptions::similarity_weights,
          "weight neighbours by their similarity (false: equally)");
    o.add("folds", &RouterOptions::folds, "cross-validation folds over tasks").range(2, 1000);
    o.add("table_repeats", &RouterOptions::table_repeats, "draws per (task, arm) in the training table")
        .range(1, 1000);
    o.add("test_repeats", &RouterOptions::test_repeats, "independent draws per (task, arm) for evaluation")
        .range(1, 1000);
    o.add("lams", &RouterOptions::lams, "the Lagrangian knob: argmax Qhat - lam Chat, one router point each; empty: 0 and 41 "
                                         "log-spaced values from 0.001 to 50").min(0);
    o.add("tolerance_se", &RouterOptions::tolerance_se,
          "matched quality and frontier cover: within this many standard errors (over tasks)")
        .min(0);
    o.add("resamples", &RouterOptions::resamples, "paired bootstrap resamples of the test tasks").range(100, 1000000);
  }
};

struct TheoryOptions {
  double tau = -1;  // < 0: tau* itself
  double precision_min = 10, precision_max = 20;
  int branches = 64;
  int replicas = 20000;
  double c0 = 0.55;
  double weak_break = 0.35, weak_fix = 0.15;
  double strong_break = 0.08, strong_fix = 0.30;
  int rounds = 4;
  int chains = 20000;
  bool sweep = true;
  static void declare(nexp::Options<TheoryOptions>& o) {
    o.add("sweep", &TheoryOptions::sweep, "also sweep tau over 0.25 .. 2 tau* (averaging.csv, tau_star_monte_carlo)");
    o.add("tau", &TheoryOptions::tau, "judge noise tau of the averaging check; < 0: tau*");
    o.add("precision_min", &TheoryOptions::precision_min, "branch precisions p_i evenly in [min, max]").min(1e-9);
    o.add("precision_max", &TheoryOptions::precision_max, "largest branch precision").min(1e-9);
    o.add("branches", &TheoryOptions::branches, "N branches averaged").range(2, 100000);
    o.add("replicas", &TheoryOptions::replicas, "Monte Carlo replicas per tau").range(100, 10000000);
    o.add("c0", &TheoryOptions::c0, "accuracy before refinement").range(0, 1);
    o.add("weak_break", &TheoryOptions::weak_break, "break rate a of the weak critic").range(0, 1);
    o.add("weak_fix", &TheoryOptions::weak_fix, "fix rate b of the weak critic").range(0, 1);
    o.add("strong_break", &TheoryOptions::strong_break, "break rate a of the strong critic").range(0, 1);
    o.add("strong_fix", &TheoryOptions::strong_fix, "fix rate b of the strong critic").range(0, 1);
    o.add("rounds", &TheoryOptions::rounds, "refinement rounds").range(1, 1000);
    o.add("chains", &TheoryOptions::chains, "simulated answers per critic").range(100, 10000000);
  }
};

void run_arms(nexp::RunContext& ctx);
void run_router(nexp::RunContext& ctx);
void run_theory(nexp::RunContext& ctx);
void run_probe(nexp::RunContext& ctx);

}  // namespace llm_channel

// Each options struct's binding is instantiated once, in plugin.cpp.
extern template llm_channel::SimOptions nexp::bind<llm_channel::SimOptions>(const nexp::Params&);
extern template llm_channel::ArmsOptions nexp::bind<llm_channel::ArmsOptions>(const nexp::Params&);
extern template llm_channel::RouterOptions nexp::bind<llm_channel::RouterOptions>(const nexp::Params&);
extern template llm_channel::TheoryOptions nexp::bind<llm_channel::TheoryOptions>(const nexp::Params&);
