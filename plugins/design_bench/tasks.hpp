#pragma once
// The benchmark's tasks and the models that answer them, over one corpus of layouts.
//
// Every task turns the corpus into items (an id, the layouts and components it is about, the target as
// JSON); every model answers an item with JSON of the task's answer form; every answer is scored by the
// same code whether it came from a baseline, a file of predictions made elsewhere, or a language model.
// An answer that does not parse is scored as wrong and counted in `parse_failures`.
//
//   task                 answer form                                   primary metric (others)
//   aspect_ratio         "4:5" (a class of canvas_formats())           accuracy
//   count                12 (components that are not GROUPs)           accuracy (mae)
//   type                 "TEXT" | "IMAGE" | "GROUP" for one box        accuracy
//   detection            [{"box":[x,y,w,h],"type":..,"score":..}]      map50 (map: COCO 0.5:0.95)
//   layer_order          ["id", ...] back to front                     kendall_tau on overlapping pairs (pair_accuracy)
//   alignment            left|center|right|top|middle|bottom|none      accuracy
//   overlap              disjoint|overlap|contains|inside              accuracy
//   grouping             [["id", ...], ...]                            ari (nmi)
//   intent_to_layout     [{"id":..,"box":[..]}]                        miou (alignment, overlap)
//   partial_completion   [{"type":..,"box":[..]}] for m missing        miou (recall, hallucination)
//   aspect_adapt         [{"id":..,"box":[..]}] on the target canvas   miou (distortion, violations, alignment_kept)
//   insertion            {"box":[x,y,w,h]} of a given element          iou (center_error)
//   sibling_matching     {"same":true,"score":0.8}                     f1 (accuracy, roc_auc)
//   retrieval            ["layout id", ...] best first                 mrr (ndcg5, recall1, recall5)
//   clustering           [label per layout]                            ari (nmi, ami, v_measure)
//   style_completion     {"font":..,"size":..,"color":"#rrggbb"}       font_accuracy (color_accuracy, size_error,
//                                                                      palette_adherence)
//   colour_transfer      {"colors":{"background":..,"<id>":..}}        adherence (coverage, contrast: WCAG >= 4.5)
#include <array>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <nexp/random.hpp>

#include "layout.hpp"

namespace design_bench {

struct Corpus {
  std::vector<Layout> layouts;
  std::map<std::string, std::vector<int>> by_template;  // template id -> layout indices
  void index();
};

struct TaskSettings {
  int items = 400;          // at most this many items
  int missing = 1;          // partial_completion: m elements removed
  int given = 0;            // partial_completion: k elements shown (0: every other element)
  int candidates = 20;      // retrieval: candidates per query, one of them a sibling
  int cluster_templates = 8;  // clustering: templates per item (K, given to the model)
  double threshold = 0.5;   // sibling_matching: a similarity at or above it says "same template"
  double noise = 0.5;       // model noisy
  std::array<double, 4> logistic{};  // model logistic: weights of [1, font J, palette J, geometry]
};

struct Item {
  std::string id;
  std::vector<int> layouts;     // corpus indices
  std::vector<int> components;  // component indices in layouts[0] the item asks about
  nlohmann::json input;         // what the model is told besides the layouts
  nlohmann::json target;
};

struct Scored {
  std::vector<double> item_scores;
  std::map<std::string, double> metrics;  // the primary one included
  int parse_failures = 0;
};

const std::vector<std::string>& task_names();
const std::vector<std::string>& model_names();  // every model but `predictions` and `vlm`
std::string primary_metric(const std::string& task);
std::vector<std::string> task_metrics(const std::string& task);
// The models that can answer `task` (oracle, chance and noisy answer every task).
bool model_answers(const std::string& model, const std::string& task);

std::vector<Item> make_items(const std::string& task, const Corpus& c, const TaskSettings& s, nexp::Random& rng);
// A baseline's answer; `rng` is the item's own stream.
nlohmann::json answer(const std::string& model, const std::string& task, const Item& item, const Corpus& c,
                      const TaskSettings& s, nexp::Random& rng);
// Scores `answers[i]` against items[i] for the items listed in `subset` (all when empty).
Scored score(const std::string& task, const std::vector<Item>& items, const std::vector<nlohmann::json>& answers,
             const Corpus& c, const std::vector<std::size_t>& subset = {});

// Logistic regression of "same template" on [1, font J, palette J, geometry] by Newton's method (IRLS,
// a small ridge), on `pairs` balanced pairs drawn from the corpus.
std::array<double, 4> fit_logistic(const Corpus& c, int pairs, nexp::Random& rng);

// ---- pieces the baselines share (tested on their own)
double font_jaccard(const Layout& a, const Layout& b);     // weight suffix stripped
double palette_jaccard(const Layout& a, const Layout& b);  // colours within CIEDE2000 < 10 count as one
double geometry_similarity(const Layout& a, const Layout& b);  // Hungarian mean IoU of canvas-normalised boxes
// The layout as a perception model with noise in [0, 1] sees it: boxes jittered with a relative error
// ~ noise / sqrt(area share), elements under 2% of the canvas missed with probability up to noise,
// types confused and the z-order perturbed with probability ~ noise, fonts swapped.
Layout noisy_view(const Layout& l, double noise, nexp::Random& rng);
// The largest empty axis-aligned rectangle among `occupied` on a 48 x 48 grid of the canvas.
Box largest_empty_rectangle(const std::vector<Box>& occupied, double width, double height);

}  // namespace design_bench
