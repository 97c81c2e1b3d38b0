// design_bench: GraphicDesignBench's layout and template-variant tasks on layered designs. Registers the
// plugin's components with nexp; README.md maps the paper's tasks and metrics to the code.
#include <nexp/nexp.hpp>

#include "methods.hpp"

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  r.metric("score", Direction::Maximize, "the task's primary metric (README: which one per task)");
  r.metric("score_ci_low", Direction::Maximize, "95% bootstrap (over items) low of score");
  r.metric("score_ci_high", Direction::Maximize, "95% bootstrap (over items) high of score");
  r.metric("items", Direction::None, "items scored");
  r.metric("parse_failures", Direction::Minimize, "answers that did not parse (scored as wrong)");
  r.metric("rows", Direction::None, "rows of table.csv");
  const std::pair<const char*, const char*> up[] = {
      {"accuracy", "share of items answered right"},
      {"map50", "COCO mean average precision at IoU 0.5 (101-point, mean over TEXT/IMAGE)"},
      {"map", "COCO mean average precision over IoU 0.5:0.05:0.95"},
      {"kendall_tau", "Kendall's tau on overlapping pairs (2 x pair_accuracy - 1), mean over layouts"},
      {"pair_accuracy", "share of overlapping pairs put in the right order, mean over layouts"},
      {"ari", "adjusted Rand index, mean over items"},
      {"nmi", "normalised mutual information (arithmetic mean), mean over items"},
      {"ami", "adjusted mutual information (arithmetic mean), mean over items"},
      {"v_measure", "V-measure (beta = 1), mean over items"},
      {"miou", "mean IoU against the target elements (Hungarian matching; aspect_adapt: matched by id)"},
      {"recall", "share of missing elements recovered at IoU >= 0.5"},
      {"iou", "IoU of the inserted element with its true box"},
      {"alignment_kept", "aspect_adapt: share of the source's aligned pairs still aligned the same way"},
      {"f1", "F1 of `same template` answers"},
      {"roc_auc", "area under the ROC curve of the answers' scores"},
      {"mrr", "mean reciprocal rank of the sibling"},
      {"ndcg5", "nDCG@5 with one relevant candidate"},
      {"recall1", "share of queries whose sibling ranks first"},
      {"recall5", "share of queries whose sibling ranks in the top 5"},
      {"font_accuracy", "style_completion: share of hidden fonts named right (family, weight stripped)"},
      {"color_accuracy", "style_completion: share of hidden colours within CIEDE2000 < 10"},
      {"palette_adherence", "style_completion: share of answered colours within CIEDE2000 < 10 of the layout's palette"},
      {"adherence", "colour_transfer: share of colour slots within CIEDE2000 < 10 of the target palette"},
      {"coverage", "colour_transfer: share of the target palette's colours used"},
      {"contrast", "colour_transfer: share of texts with WCAG contrast >= 4.5 on the new background"}};
  for (const auto& [name, help] : up) r.metric(name, Direction::Maximize, help);
  r.metric("mae", Direction::Minimize, "mean absolute error of the count");
  r.metric("alignment", Direction::Minimize, "LayoutGAN++ alignment: mean -log(1 - d), 0 when all align");
  r.metric("overlap", Direction::Minimize, "mean over elements of the summed overlap share with the others");
  r.metric("distortion", Direction::Minimize, "aspect_adapt: mean |log| ratio of an element's aspect ratio to its source's");
  r.metric("violations", Direction::Minimize,
           "aspect_adapt: share of elements leaving the canvas or overlapping one they were clear of in the source");
  r.metric("hallucination", Direction::Minimize, "share of predicted elements matching no missing one at IoU 0.5");
  r.metric("size_error", Direction::Minimize, "style_completion: |font size error| / true size");
  r.metric("center_error", Direction::Minimize, "distance of the centres over the canvas diagonal");
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<design_bench::FamiliesOptions>("design_bench.families",
                                           "generated template families with sibling variants, in LICA's layout format",
                                           design_bench::make_families);
  r.dataset<design_bench::LicaOptions>("design_bench.lica", "LICA layouts (JSON and PNG) from a folder the user downloads",
                                       design_bench::make_lica);
  std::vector<std::string> eval_metrics = {"score", "score_ci_low", "score_ci_high", "items", "parse_failures"};
  for (const auto& t : design_bench::task_names())
    for (const auto& m : design_bench::task_metrics(t))
      if (std::find(eval_metrics.begin(), eval_metrics.end(), m) == eval_metrics.end()) eval_metrics.push_back(m);
  r.method("design_bench.eval", "one GraphicDesignBench task answered by one model, scored with the task's metrics",
           design_bench::run_eval)
      .options<design_bench::EvalOptions>()
      .produces(eval_metrics)
      .accepts({"design_bench.*"});
  r.method("design_bench.table", "tasks x baselines x generator seeds (x F, m, noise): table.csv with t intervals",
           design_bench::run_table)
      .options<design_bench::TableOptions>()
      .produces({"rows"});
}

}  // namespace

NEXP_PLUGIN(design_bench, "0.1.0",
            "GraphicDesignBench: spatial-composition and template-variant tasks on layered designs; baselines, "
            "metrics, a template-family generator, the LICA reader and a VLM path",
            "Deganutti, Hirsch, Zhu, Seol, Mehta. GraphicDesignBench: a diagnostic benchmark of layered graphic "
            "design. arXiv 2604.04192, 2026.",
            register_components)
