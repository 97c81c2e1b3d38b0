#pragma once
// The nexp side: the datasets design_bench.families and design_bench.lica, and the methods
// design_bench.eval (one task, one model) and design_bench.table (tasks x models x generator seeds x
// font pools x m x noise, with intervals over seeds).
#include <memory>
#include <string>
#include <vector>

#include <nexp/dataset.hpp>
#include <nexp/run_context.hpp>

#include "families.hpp"
#include "tasks.hpp"

namespace design_bench {

class CorpusDataset : public nexp::Dataset {
 public:
  Corpus corpus;
  std::string source;  // "families" or the LICA folder
  std::string describe() const override;
};

std::shared_ptr<nexp::Dataset> make_families(const FamiliesOptions& o, nexp::RunContext& ctx);

struct LicaOptions {
  std::string dir;
  int limit = 0;
  static void declare(nexp::Options<LicaOptions>& o) {
    o.add("dir", &LicaOptions::dir, "LICA's folder: metadata.csv, layouts/<template_id>/<layout_id>.json and "
                                    "images/<template_id>/<layout_id>.png; or a flat folder of <layout_id>.json")
        .required();
    o.add("limit", &LicaOptions::limit, "read at most this many layouts (0: all)").min(0);
  }
};
std::shared_ptr<nexp::Dataset> make_lica(const LicaOptions& o, nexp::RunContext& ctx);
// The reader itself (tested on hand-written folders): DataError naming the file and field on bad input.
Corpus read_lica_folder(const std::string& dir, int limit);

// What both methods share: how items are drawn and answered.
struct TaskOptions {
  double noise = 0.5;
  double threshold = 0.5;
  int items = 400;
  int missing = 1;
  int given = 0;
  int candidates = 20;
  int cluster_templates = 8;
  int logistic_pairs = 1000;
  static void declare(nexp::Options<TaskOptions>& o) {
    o.add("noise", &TaskOptions::noise, "model noisy: perception noise (0: the oracle)").range(0, 1);
    o.add("threshold", &TaskOptions::threshold, "sibling_matching: similarity at or above it says `same template`")
        .range(0, 1);
    o.add("items", &TaskOptions::items, "at most this many items per task").range(1, 1000000);
    o.add("missing", &TaskOptions::missing, "partial_completion: m elements removed").range(1, 20);
    o.add("given", &TaskOptions::given, "partial_completion: k elements shown (0: all the others)").range(0, 50);
    o.add("candidates", &TaskOptions::candidates, "retrieval: candidates per query (one sibling)").range(2, 1000);
    o.add("cluster_templates", &TaskOptions::cluster_templates, "clustering: templates per set (K, told to the model)")
        .range(2, 1000);
    o.add("logistic_pairs", &TaskOptions::logistic_pairs, "model logistic: training pairs (its own stream)")
        .range(10, 1000000);
  }
  TaskSettings settings() const;
};

struct EvalOptions : TaskOptions {
  std::string task = "sibling_matching";
  std::string model = "font_jaccard";
  std::string predictions;
  std::string endpoint = "vlm";
  int resamples = 1000;
  static void declare(nexp::Options<EvalOptions>& o);
};
void run_eval(nexp::RunContext& ctx);

struct TableOptions : TaskOptions {
  std::vector<std::string> tasks = {"sibling_matching", "clustering"};
  std::vector<std::string> models = {"oracle", "chance", "font_jaccard"};
  std::vector<std::int64_t> seeds = {0, 1, 2};
  std::vector<std::int64_t> font_pools;  // empty: families.font_pool
  std::vector<std::int64_t> missings;    // empty: missing
  std::vector<double> noises;            // empty: noise
  std::vector<double> rearranges;        // empty: families.rearrange
  FamiliesOptions families;
  static void declare(nexp::Options<TableOptions>& o);
};
void run_table(nexp::RunContext& ctx);

}  // namespace design_bench
