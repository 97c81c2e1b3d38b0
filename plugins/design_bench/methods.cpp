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
      "design_bench.lica: {} ({}). Expected: a folder holding one LICA layout per file, <layout_id>.json (width, "
      "height, components with type, left, top, width, height, ...), optionally <layout_id>.png and metadata.csv "
      "(columns layout_id, template_id, category). LICA is not shipped with nexp: download it (lica-world, CC BY 4.0) "
      "and pass dataset.dir=FOLDER.",
      why, dir));
}

// metadata.csv, when present: layout_id -> (template_id, category).
std::map<std::string, std::pair<std::string, std::string>> read_metadata(const fs::path& file) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  if (!fs::exists(file)) return out;
  const auto t = nexp::CsvTable::read(file);
  for (std::size_t r = 0; r < t.size(); ++r)
    out[t.text(r, "layout_id")] = {t.text(r, "template_id"),
                                   t.has_column("category") ? t.text(r, "category") : std::string()};
  return out;
}

}  // namespace

Corpus read_lica_folder(const std::string& dir, int limit) {
  if (dir.empty() || !fs::is_directory(dir)) no_lica(dir, "the folder does not exist");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  if (files.empty()) no_lica(dir, "the folder holds no .json layout");
  std::sort(files.begin(), files.end());
  if (limit > 0 && static_cast<int>(files.size()) > limit) files.resize(limit);
  const auto meta = read_metadata(fs::path(dir) / "metadata.csv");
  Corpus c;
  for (const auto& f : files) {
    json j;
    try {
      j = json::parse(nexp::read_text_file(f, "a LICA layout (JSON)"));
    } catch (const json::parse_error& e) {
      throw nexp::DataError(fmt::format("{}: not JSON ({}). Expected one LICA layout object per file.", f.string(), e.what()));
    }
    Layout l = layout_from_json(j, f.string());
    if (l.id.empty()) l.id = f.stem().string();
    if (auto m = meta.find(l.id); m != meta.end()) {
      if (l.template_id.empty()) l.template_id = m->second.first;
      if (l.category.empty()) l.category = m->second.second;
    }
    if (fs::path png = f; fs::exists(png.replace_extension(".png"))) l.image = png;
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
  o.add("task", &EvalOptions::task, "the task (README: the paper's 16 and nexp's 14)").choices(task_names());
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
  o.add("families", &TableOptions::families, "the generator's options");
}

void run_table(nexp::RunContext& ctx) {
  const auto o = ctx.options<TableOptions>();
  const std::vector<std::int64_t> pools = o.font_pools.empty() ? std::vector<std::int64_t>{o.families.font_pool} : o.font_pools;
  const std::vector<std::int64_t> ms = o.missings.empty() ? std::vector<std::int64_t>{o.missing} : o.missings;
  const std::vector<double> noises = o.noises.empty() ? std::vector<double>{o.noise} : o.noises;
  // (task, model, F, m, noise, metric) -> one value per seed
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t, double, std::string>, std::vector<double>> cells;
  bool any = false;
  for (const auto& task : o.tasks)
    for (const auto& model : o.models) any = any || model_answers(model, task);
  if (!any) throw nexp::ConfigError("design_bench.table: no model of params.models answers any task of params.tasks");
  auto progress = ctx.progress(static_cast<std::int64_t>(pools.size() * o.seeds.size()), "corpora");
  for (auto f : pools)
    for (auto seed : o.seeds) {
      FamiliesOptions fo = o.families;
      fo.font_pool = static_cast<int>(f);
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
              for (const auto& [metric, value] : e.scored.metrics) cells[{task, model, f, m, noise, metric}].push_back(value);
            }
        }
      progress.advance();
      if (ctx.stop_requested()) return;
    }
  using C = nexp::CsvColumn;
  nexp::CsvWriter out(ctx.artifacts_dir() / "table.csv",
                      {C::text("task"), C::text("model"), C::integer("font_pool"), C::integer("missing"), C::real("noise"),
                       C::text("metric"), C::real("mean").fixed(4), C::real("ci_low").fixed(4), C::real("ci_high").fixed(4),
                       C::integer("seeds"), C::text("values")});
  for (const auto& [key, values] : cells) {
    const auto& [task, model, f, m, noise, metric] = key;
    const auto ci = nexp::stats::mean_t_interval(values, 0.95);
    std::string shown;
    for (double v : values) shown += (shown.empty() ? "" : " ") + fmt::format("{:.4f}", v);
    out.row(task, model, f, m, noise, metric, ci.estimate, ci.low, ci.high, values.size(), shown);
  }
  ctx.summary("rows", static_cast<double>(out.rows()));
}

}  // namespace design_bench
