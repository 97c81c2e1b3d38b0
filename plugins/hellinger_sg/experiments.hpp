#pragma once
// The plugin's methods and their options.
//   hellinger_sg.train     one predictor trained with one loss; test metrics and the downstream layout score
//   hellinger_sg.compare   several losses x several seeds on the same scenes and initialisations; paired
//                          differences to `ce` with t intervals over the seeds
//   hellinger_sg.generate  the downstream part of compare alone: a layout generator trained on the true graphs
//                          of the training rooms, fed the graphs each loss's predictor gives on the test rooms
//   hellinger_sg.distance  D and its terms between two scene-graph JSON files
#include <nexp/options.hpp>
#include <nexp/run_context.hpp>

#include <string>
#include <vector>

#include "hellinger.hpp"

namespace hellinger_sg {

// ce: SGFN's object cross-entropy + class-weighted predicate BCE. chtg: ce + lambda (triplet term + w node
// term) with contextual targets. The ablations drop one term or the context.
enum class Loss { Ce, Chtg, ChtgNoNode, ChtgNoTriplet, ChtgNoContext };
const std::vector<std::string>& loss_names();  // in the enum's order

struct TrainOptions {
  Loss loss = Loss::Chtg;
  int epochs = 20;
  int batch_scenes = 16;
  double lr = 2e-3;
  double weight_decay = 1e-4;
  double hellinger_weight = 1.0;
  double node_weight = 1.0;
  Context context = Context::Both;
  double context_eps = 0.1;
  int width = 128;
  bool downstream = true;
  int generator_steps = 300;
  static void declare(nexp::Options<TrainOptions>& o) {
    o.add("loss", &TrainOptions::loss, "training objective",
          {{"ce", Loss::Ce}, {"chtg", Loss::Chtg}, {"chtg_no_node", Loss::ChtgNoNode},
           {"chtg_no_triplet", Loss::ChtgNoTriplet}, {"chtg_no_context", Loss::ChtgNoContext}});
    o.add("epochs", &TrainOptions::epochs, "passes over the training scenes").range(1, 1000);
    o.add("batch_scenes", &TrainOptions::batch_scenes, "scenes per optimisation step").range(1, 1024);
    o.add("lr", &TrainOptions::lr, "Adam learning rate").range(1e-6, 1);
    o.add("weight_decay", &TrainOptions::weight_decay, "Adam L2 penalty").range(0, 1);
    o.add("hellinger_weight", &TrainOptions::hellinger_weight,
          "lambda: chtg adds lambda (triplet term + w node term) to the ce loss")
        .range(0, 100);
    o.add("node_weight", &TrainOptions::node_weight, "w: weight of the node term in D (training and evaluation)")
        .range(0, 100);
    o.add("context", &TrainOptions::context, "contextual targets of the Hellinger terms (chtg_no_context: none)",
          {{"none", Context::None}, {"hierarchy", Context::Hierarchy}, {"cooccurrence", Context::Cooccurrence},
           {"both", Context::Both}});
    o.add("context_eps", &TrainOptions::context_eps, "eps: mass the context moves off the hard label").range(0, 0.5);
    o.add("width", &TrainOptions::width, "feature width of the predictor").range(8, 1024);
    o.add("downstream", &TrainOptions::downstream, "train the layout generator and score the predicted graphs");
    o.add("generator_steps", &TrainOptions::generator_steps, "full-batch Adam steps of the layout generator")
        .range(1, 100000);
  }
};

struct CompareOptions : TrainOptions {
  int seeds = 5;
  std::vector<std::string> losses = {"ce", "chtg"};
  static void declare(nexp::Options<CompareOptions>& o) {
    o.inherit<TrainOptions>();
    o.add("seeds", &CompareOptions::seeds, "replicas: scenes, initialisation and batch order of each").range(2, 100);
    o.add("losses", &CompareOptions::losses, "losses compared (ce first is the baseline of every delta)")
        .choices({"ce", "chtg", "chtg_no_node", "chtg_no_triplet", "chtg_no_context"});
  }
};

struct DistanceOptions {
  std::string pred;
  std::string target;
  double node_weight = 1.0;
  std::string predicates = "bernoulli";
  static void declare(nexp::Options<DistanceOptions>& o) {
    o.add("pred", &DistanceOptions::pred, "predicted scene graph (JSON, README: format)").required();
    o.add("target", &DistanceOptions::target, "target scene graph (JSON) over the same nodes and edges").required();
    o.add("node_weight", &DistanceOptions::node_weight, "w in D").range(0, 100);
    o.add("predicates", &DistanceOptions::predicates, "predicate model of the edge probabilities")
        .choices({"bernoulli", "categorical"});
  }
};

// Speed of the factorised triplet term against the materialised C x R x C one (categorical predicates,
// forward and backward), on random fields.
struct BenchOptions {
  int classes = 160;
  int predicates = 27;
  std::vector<std::int64_t> edges = {100, 250, 500, 1000, 2000};
  int repeats = 3;
  int chunk = 32;
  static void declare(nexp::Options<BenchOptions>& o) {
    o.add("classes", &BenchOptions::classes, "C (3DSSG's large label set: 160)").range(2, 10000);
    o.add("predicates", &BenchOptions::predicates, "R (3DSSG: 26 + none)").range(1, 1000);
    o.add("edges", &BenchOptions::edges, "edge counts timed").range(1, 1000000);
    o.add("repeats", &BenchOptions::repeats, "timings per size (the median is kept)").range(1, 100);
    o.add("chunk", &BenchOptions::chunk, "edges per materialised block (bounds its memory)").range(1, 100000);
  }
};

// The test metrics of one trained predictor (and of the layout generator fed its graphs).
const std::vector<std::string>& evaluation_metrics();
// The layout generator's part of them (what `generate` reports).
const std::vector<std::string>& layout_metrics();

void run_train(nexp::RunContext& ctx);
void run_compare(nexp::RunContext& ctx);
void run_generate(nexp::RunContext& ctx);  // options: CompareOptions, `downstream` always on
void run_distance(nexp::RunContext& ctx);
void run_bench(nexp::RunContext& ctx);

}  // namespace hellinger_sg
