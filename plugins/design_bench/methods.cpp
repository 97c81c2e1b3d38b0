// The datasets and methods of design_bench (methods.hpp).
#include "methods.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include <nexp/error.hpp>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <nexp/text.hpp>

#include "vlm.hpp"

namespace design_bench {

namespace fs = std::filesystem;
using nlohmann::json;

// ================================================================ datasets

std::string CorpusDataset::describe() const {
  return fmt::format("{}: {} layouts in {} templates", source, corpus.layouts.size(), corpus.by_template.size());
}

std::shared_ptr<nexp::Dataset> make_families(const FamiliesOptions& o, nexp::RunContext& ctx) {
  auto d = std::make_shared<CorpusDataset>();
  auto rng = ctx.stream("families");
  d->corpus.layouts = generate_families(o, rng);
  d->corpus.index();
  d->source = fmt::format("families (F = {})", o.font_pool);
  return d;
}

namespace {

[[noreturn]] void no_lica(const std::string& dir, const std::string& why) {
  throw nexp::DataError(fmt::format(
      "design_bench.lica: {} ({}). Expected LICA's folder as downloaded (lica-world, CC BY 4.0; the `lica-data` "
      "folder): metadata.csv (layout_id, category, template_id, n_template_layouts, template_layout_index, width, "
      "height), layouts/<template_id>/<layout_id>.json (LICA's layout JSON: width, height, background, components "
      "with type, left, top, width, height, ...) and optionally images/<template_id>/<layout_id>.png; or a flat "
      "folder of <layout_id>.json files (+ .png). LICA is not shipped with nexp: download it and pass "
      "dataset.dir=FOLDER.",
      why, dir));
}

struct LicaMeta {
  std::string template_id, category;
  int index = -1;  // template_layout_index
};

// metadata.csv, when present: layout_id -> template, category and the layout's index in its template.
std::map<std::string, LicaMeta> read_metadata(const fs::path& file) {
  std::map<std::string, LicaMeta> out;
  if (!fs::exists(file)) return out;
  const auto t = nexp::CsvTable::read(file);
  for (std::size_t r = 0; r < t.size(); ++r) {
    LicaMeta m;
    if (t.has_column("template_id")) m.template_id = t.text(r, "template_id");
    if (t.has_column("category")) m.category = t.text(r, "category");
    if (t.has_column("template_layout_index")) m.index = static_cast<int>(t.integer(r, "template_layout_index"));
    out[t.text(r, "layout_id")] = m;
  }
  return out;
}

// The layout files: layouts/<template_id>/<layout_id>.json in LICA's tree, else <layout_id>.json.
std::vector<fs::path> layout_files(const fs::path& root, bool tree) {
  std::vector<fs::path> files;
  auto take = [&](const fs::directory_entry& e) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  };
  if (tree) for (const auto& e : fs::recursive_directory_iterator(root / "layouts")) take(e);
  else for (const auto& e : fs::directory_iterator(root)) take(e);
  std::sort(files.begin(), files.end());
  return files;
}

Layout read_lica_layout(const fs::path& f) {
  json j;
  try {
    j = json::parse(nexp::read_text_file(f, "a LICA layout (JSON)"));
  } catch (const json::parse_error& e) {
    throw nexp::DataError(fmt::format("{}: not JSON ({}). Expected one LICA layout object per file.", f.string(), e.what()));
  }
  Layout l = layout_from_json(j, f.string());
  if (l.id.empty()) l.id = f.stem().string();
  return l;
}

}  // namespace

Corpus read_lica_folder(const std::string& dir, int limit) {
  if (dir.empty() || !fs::is_directory(dir)) no_lica(dir, "the folder does not exist");
  const fs::path root(dir);
  const bool tree = fs::is_directory(root / "layouts");
  auto files = layout_files(root, tree);
  if (files.empty()) no_lica(dir, tree ? "layouts/ holds no <template_id>/<layout_id>.json" : "the folder holds no .json layout");
  if (limit > 0 && static_cast<int>(files.size()) > limit) files.resize(limit);
  const auto meta = read_metadata(root / "metadata.csv");
  Corpus c;
  for (const auto& f : files) {
    Layout l = read_lica_layout(f);
    const std::string folder = tree && f.parent_path() != root / "layouts" ? f.parent_path().filename().string() : "";
    if (auto m = meta.find(l.id); m != meta.end()) {
      if (l.template_id.empty()) l.template_id = m->second.template_id;
      if (l.category.empty()) l.category = m->second.category;
      if (m->second.index >= 0) l.variant_index = m->second.index;
    }
    if (l.template_id.empty()) l.template_id = folder;
    const fs::path png = tree ? root / "images" / folder / (f.stem().string() + ".png") : fs::path(f).replace_extension(".png");
    if (fs::exists(png)) l.image = png;
    c.layouts.push_back(std::move(l));
  }
  c.index();
  return c;
}

std::shared_ptr<nexp::Dataset> make_lica(const LicaOptions& o, nexp::RunContext&) {
  auto d = std::make_shared<CorpusDataset>();
  d->corpus = read_lica_folder(o.dir, o.limit);
  d->source = "lica " + o.dir;
  return d;
}

// ================================================================ evaluation

TaskSettings TaskOptions::settings() const {
  TaskSettings s;
  s.noise = noise, s.threshold = threshold, s.items = items, s.missing = missing, s.given = given;
  s.candidates = candidates, s.cluster_templates = cluster_templates;
  return s;
}

namespace {

struct Evaluation {
  std::vector<Item> items;
  std::vector<json> answers;
  Scored scored;
};

// {task, item_id, answer} lines of one task: item id -> answer.
std::map<std::string, json> read_predictions(const std::string& file, const std::string& task) {
  if (file.empty())
    throw nexp::ConfigError("design_bench.eval: params.model=predictions needs params.predictions=FILE (JSON lines "
                            "{\"task\": ..., \"item_id\": ..., \"answer\": ...})");
  const std::string text = nexp::read_text_file(file, "predictions (JSON lines {task, item_id, answer})");
  std::map<std::string, json> out;
  std::size_t line_no = 0, start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1, ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw nexp::DataError(fmt::format("{}:{}: not JSON ({}). Expected one object per line.", file, line_no, e.what()));
    }
    for (const char* k : {"task", "item_id", "answer"})
      if (!j.is_object() || !j.contains(k) || (std::string(k) != "answer" && !j[k].is_string()))
        throw nexp::DataError(fmt::format("{}:{}: field `{}` is missing or not a string; expected "
                                          "{{\"task\": ..., \"item_id\": ..., \"answer\": ...}}.", file, line_no, k));
    if (j["task"] == task) out[j["item_id"].get<std::string>()] = j["answer"];
  }
  return out;
}

void check_model(const std::string& model, const std::string& task) {
  if (model_answers(model, task)) return;
  std::string fit;
  for (const auto& m : model_names())
    if (model_answers(m, task)) fit += (fit.empty() ? "" : ", ") + m;
  throw nexp::ConfigError(fmt::format("design_bench: params.model={} does not answer params.task={}; models for {}: "
                                      "{}, predictions, vlm", model, task, task, fit));
}

Evaluation evaluate(const std::string& task, const std::string& model, const Corpus& c, const TaskSettings& s,
                    std::uint64_t seed, const std::map<std::string, json>* predictions, VlmModel* vlm) {
  Evaluation e;
  auto item_rng = nexp::Random::stream(seed, "items");
  e.items = make_items(task, c, s, item_rng);
  TaskSettings settings = s;
  if (model == "logistic") {
    auto fit_rng = nexp::Random::stream(seed, "logistic");
    settings.logistic = fit_logistic(c, s.items, fit_rng);
  }
  for (std::size_t i = 0; i < e.items.size(); ++i) {
    auto rng = nexp::Random::stream(seed, "answer", i);
    if (predictions) {
      auto it = predictions->find(e.items[i].id);
      e.answers.push_back(it == predictions->end() ? json() : it->second);
    } else if (vlm) {
      e.answers.push_back(vlm->answer(task, e.items[i], c));
    } else {
      e.answers.push_back(answer(model, task, e.items[i], c, settings, rng));
    }
  }
  e.scored = score(task, e.items, e.answers, c);
  return e;
}

}  // namespace

void EvalOptions::declare(nexp::Options<EvalOptions>& o) {
  o.inherit<TaskOptions>();
  o.add("task", &EvalOptions::task, "the task (README: nexp's 17 and the paper's 16)").choices(task_names());
  std::vector<std::string> models = model_names();
  models.insert(models.end(), {"predictions", "vlm"});
  o.add("model", &EvalOptions::model, "who answers: a baseline, a predictions file, or a VLM endpoint").choices(models);
  o.add("predictions", &EvalOptions::predictions, "model predictions: JSON lines {task, item_id, answer}");
  o.add("endpoint", &EvalOptions::endpoint, "model vlm: the endpoint of the config's llm: section");
  o.add("resamples", &EvalOptions::resamples, "bootstrap resamples of the items for score's interval").range(100, 100000);
}

void run_eval(nexp::RunContext& ctx) {
  const auto o = ctx.options<EvalOptions>();
  check_model(o.model, o.task);
  const Corpus& c = ctx.dataset_as<CorpusDataset>().corpus;
  std::map<std::string, json> predictions;
  if (o.model == "predictions") predictions = read_predictions(o.predictions, o.task);
  std::unique_ptr<VlmModel> vlm;
  if (o.model == "vlm") vlm = std::make_unique<VlmModel>(ctx.llm(o.endpoint), ctx.artifacts_dir() / "images", ctx.seed());
  ctx.log().info("{}: task {}, model {}", ctx.dataset_as<CorpusDataset>().describe(), o.task, o.model);
  const auto e = evaluate(o.task, o.model, c, o.settings(), ctx.seed(), o.model == "predictions" ? &predictions : nullptr,
                          vlm.get());
  const std::string primary = primary_metric(o.task);
  auto boot = ctx.stream("bootstrap");
  const auto interval = nexp::stats::bootstrap(
      e.items.size(),
      [&](const std::vector<std::size_t>& idx) { return score(o.task, e.items, e.answers, c, idx).metrics.at(primary); },
      boot, 0.95, o.resamples);
  ctx.summary_interval("score", interval);
  for (const auto& [name, value] : e.scored.metrics) ctx.summary(name, value);
  ctx.summary("items", static_cast<double>(e.items.size()));
  ctx.summary("parse_failures", e.scored.parse_failures);
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "items.csv", {C::text("task"), C::text("item_id"), C::text("model"),
                                                          C::text("prediction"), C::text("target"), C::real("score")});
  out.flush_every_row(false);
  for (std::size_t i = 0; i < e.items.size(); ++i)
    out.row(o.task, e.items[i].id, o.model, e.answers[i].dump(), e.items[i].target.dump(), e.scored.item_scores[i]);
}

// ================================================================ the table

void TableOptions::declare(nexp::Options<TableOptions>& o) {
  o.inherit<TaskOptions>();
  o.add("tasks", &TableOptions::tasks, "tasks (rows)").choices(task_names());
  o.add("models", &TableOptions::models, "baselines; a task x model pair that does not fit is skipped")
      .choices(model_names());
  o.add("seeds", &TableOptions::seeds, "generator seeds: each draws its own families, items and answers").min(0);
  o.add("font_pools", &TableOptions::font_pools, "F values to sweep (empty: families.font_pool)").range(1, 60);
  o.add("missings", &TableOptions::missings, "m values to sweep for partial_completion (empty: missing)").range(1, 20);
  o.add("noises", &TableOptions::noises, "noise values to sweep for the model noisy (empty: noise)").range(0, 1);
  o.add("rearranges", &TableOptions::rearranges, "generator rearrange values to sweep (empty: families.rearrange)")
      .range(0, 1);
  o.add("families", &TableOptions::families, "the generator's options");
}

namespace {

// (task, model, F, rearrange, m, noise, metric) -> one value per seed
using Cells = std::map<std::tuple<std::string, std::string, std::int64_t, double, std::int64_t, double, std::string>,
                       std::vector<double>>;

// Every task x model (x m, x noise) on one generated corpus.
void table_corpus(const TableOptions& o, const FamiliesOptions& fo, std::int64_t seed, const std::vector<std::int64_t>& ms,
                  const std::vector<double>& noises, Cells& cells) {
  auto gen = nexp::Random::stream(static_cast<std::uint64_t>(seed), "families");
  Corpus c;
  c.layouts = generate_families(fo, gen);
  c.index();
  for (const auto& task : o.tasks)
    for (const auto& model : o.models) {
      if (!model_answers(model, task)) continue;
      for (auto m : (task == "partial_completion" ? ms : std::vector<std::int64_t>{o.missing}))
        for (double noise : (model == "noisy" ? noises : std::vector<double>{o.noise})) {
          TaskSettings s = o.settings();
          s.missing = static_cast<int>(m), s.noise = noise;
          const auto e = evaluate(task, model, c, s, static_cast<std::uint64_t>(seed), nullptr, nullptr);
          for (const auto& [metric, value] : e.scored.metrics)
            cells[{task, model, fo.font_pool, fo.rearrange, m, noise, metric}].push_back(value);
        }
    }
}

}  // namespace

void run_table(nexp::RunContext& ctx) {
  const auto o = ctx.options<TableOptions>();
  const std::vector<std::int64_t> pools = o.font_pools.empty() ? std::vector<std::int64_t>{o.families.font_pool} : o.font_pools;
  const std::vector<std::int64_t> ms = o.missings.empty() ? std::vector<std::int64_t>{o.missing} : o.missings;
  const std::vector<double> noises = o.noises.empty() ? std::vector<double>{o.noise} : o.noises;
  const std::vector<double> rearranges = o.rearranges.empty() ? std::vector<double>{o.families.rearrange} : o.rearranges;
  Cells cells;
  bool any = false;
  for (const auto& task : o.tasks)
    for (const auto& model : o.models) any = any || model_answers(model, task);
  if (!any) throw nexp::ConfigError("design_bench.table: no model of params.models answers any task of params.tasks");
  auto progress = ctx.progress(static_cast<std::int64_t>(pools.size() * rearranges.size() * o.seeds.size()), "corpora");
  for (auto f : pools)
    for (double r : rearranges)
      for (auto seed : o.seeds) {
        FamiliesOptions fo = o.families;
        fo.font_pool = static_cast<int>(f), fo.rearrange = r;
        table_corpus(o, fo, seed, ms, noises, cells);
        progress.advance();
        if (ctx.stop_requested()) return;
      }
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "table.csv",
                      {C::text("task"), C::text("model"), C::integer("font_pool"), C::real("rearrange"),
                       C::integer("missing"), C::real("noise"), C::text("metric"), C::real("mean").fixed(4),
                       C::real("ci_low").fixed(4), C::real("ci_high").fixed(4), C::integer("seeds"), C::text("values")});
  for (const auto& [key, values] : cells) {
    const auto& [task, model, f, r, m, noise, metric] = key;
    const auto ci = nexp::stats::mean_t_interval(values, 0.95);
    std::string shown;
    for (double v : values) shown += (shown.empty() ? "" : " ") + fmt::format("{:.4f}", v);
    out.row(task, model, f, r, m, noise, metric, ci.estimate, ci.low, ci.high, values.size(), shown);
  }
  ctx.summary("rows", static_cast<double>(out.rows()));
}

}  // namespace design_bench
