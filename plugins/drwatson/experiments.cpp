#include "experiments.hpp"

#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <nlohmann/json.hpp>
#include <fmt/ranges.h>
#include <tbb/parallel_for.h>
#include <nexp/torch.hpp>
#include <torch/serialize.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>

#include "estimate.hpp"
#include "model.hpp"
#include "parsers.hpp"
#include "policies.hpp"
#include "rng.hpp"

namespace drwatson {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- statistics

Interval paired_reduction(const std::vector<double>& base, const std::vector<double>& treated, nexp::Random& rng,
                          int resamples) {
  if (base.size() != treated.size())
    throw nexp::Error(fmt::format("paired_reduction: {} base and {} treated replicas; expected one of each per replica",
                                  base.size(), treated.size()));
  auto reduction = [&](const std::vector<std::size_t>& replicas) {
    double b = 0, t = 0;
    for (std::size_t i : replicas) b += base[i], t += treated[i];
    return b > 0 ? 1.0 - t / b : 0.0;
  };
  if (base.size() < 2) {
    const double r = reduction(std::vector<std::size_t>(base.size(), 0));
    return {r, r, r};
  }
  return nexp::stats::bootstrap(base.size(), reduction, rng, 0.95, resamples);
}

std::vector<ReplicaMetrics> run_replicas(const FleetSpec& fleet, const Policy& policy, int platform, std::uint64_t seed,
                                         int replicas, double horizon_days) {
  std::vector<ReplicaMetrics> out(static_cast<std::size_t>(replicas));
  tbb::parallel_for(0, replicas, [&](int r) {
    SimOptions o;
    o.platform = platform;
    o.seed = nexp::Random::stream(seed, "replica", static_cast<std::uint64_t>(r))();
    o.horizon_days = horizon_days;
    out[static_cast<std::size_t>(r)] = simulate(fleet, policy, o);
  });
  return out;
}

namespace {

// ---------------------------------------------------------------- parameters

// The name of an enum option's value, from its name table.
template <class E>
const std::string& name_of(const std::vector<std::pair<std::string, E>>& table, E value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  throw nexp::Error("drwatson: an enum value is missing from its name table");
}

FleetSpec fleet_of(const FleetOptions& o) {
  FleetSpec f = load_fleet(o.fleet);
  if (o.ambiguity >= 0) f.noise.ambiguity = o.ambiguity;
  return f;
}

int platform_of(const FleetSpec& f, const std::string& name) {
  const int p = f.platform_index(name);
  if (p == kNoIndex) {
    std::vector<std::string> names;
    for (const auto& x : f.platforms) names.push_back(x.name);
    throw nexp::ConfigError(fmt::format("params.platform '{}' is not a platform of the fleet file {} (it has: {}). "
                                        "Name one of those, or add the platform to the fleet file.",
                                        name, f.source, fmt::join(names, ", ")));
  }
  return p;
}

std::vector<int> platforms_of(const FleetSpec& f, const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const auto& n : names) out.push_back(platform_of(f, n));
  return out;
}

std::vector<double> column(const std::vector<ReplicaMetrics>& ms, const std::string& key) {
  std::vector<double> out;
  for (const auto& m : ms) out.push_back(m.as_map().at(key));
  return out;
}

using nexp::stats::mean;  // of one measure over replicas (never empty: a run has at least one replica)
using C = nexp::CsvColumn;

// ---------------------------------------------------------------- training pipeline

// The training options as the method adjusts them, with their platforms resolved in the fleet.
struct TrainSpec : TrainingOptions {
  std::vector<int> pretrain_on, label_on;  // indices of pretrain_platforms and label_platforms
  std::uint64_t seed = 0;
  std::string init_from;  // a pretrained encoder to fine-tune (drwatson.finetune)
  bool logistic = true;
};

ModelConfig model_config(const TrainingOptions& o) {
  ModelConfig c;
  c.dim = o.dim, c.heads = o.heads, c.layers = o.layers, c.ff = 2 * o.dim, c.max_len = o.max_len;
  c.dropout = o.dropout;
  return c;
}

struct LabelledSet {
  std::vector<Example> examples;
  std::vector<std::vector<float>> features;
  std::vector<std::int64_t> labels;
};

LabelledSet labelled(const FleetSpec& fleet, const Vocabulary& vocab, const BagOfEvents& bag, const ClassTable& classes,
                     const std::vector<int>& platforms, std::int64_t per_platform, std::uint64_t seed, std::int64_t max_len,
                     std::int64_t from = 0) {
  LabelledSet s;
  for (int p : platforms) {
    IncidentGenerator gen(fleet, p);
    for (std::int64_t i = from; i < from + per_platform; ++i) {
      auto [obs, truth] = gen.sample(seed, static_cast<std::uint64_t>(i));
      for (std::size_t c = 0; c < obs.candidates.size(); ++c) {
        const std::int64_t y = static_cast<int>(c) == truth.culprit ? classes.of(truth.cause, truth.fix) : ClassTable::kHealthy;
        s.examples.push_back({vocab.tokens(p, obs.candidates[c], static_cast<int>(max_len)), y});
        s.features.push_back(bag.features(p, obs.candidates[c]));
        s.labels.push_back(y);
      }
    }
  }
  return s;
}

struct Trained {
  EventEncoder model{nullptr};
  double temperature = 1.0;
  std::shared_ptr<BagOfEvents> logistic;
  double test_accuracy = 0, logistic_test_accuracy = 0, majority_accuracy = 0;
  at::Tensor test_probs, test_labels;
  bool stopped = false;
};

void save_state(nexp::RunContext& ctx, const std::string& phase, std::int64_t step, EventEncoder& model,
                torch::optim::Optimizer& opt) {
  ctx.save_checkpoint([&](const fs::path& dir) {
    save_encoder(model, 1.0, dir / "model.pt");
    torch::save(opt, (dir / "optim.pt").string());
    std::ofstream(dir / "state.txt") << phase << " " << step << "\n";
  });
}

// Pretraining (if any) and fine-tuning (if any), with a checkpoint every checkpoint_every steps; a
// resumed run continues inside whichever phase it was stopped in.
Trained train(nexp::RunContext& ctx, const FleetSpec& fleet, const TrainSpec& spec) {
  Trained t;
  const Vocabulary vocab(fleet);
  const ClassTable classes(fleet);
  ModelConfig config = model_config(spec);
  config.raw_size = vocab.raw_size();
  config.family_size = vocab.family_size();
  config.platforms = static_cast<std::int64_t>(fleet.platforms.size());
  config.classes = classes.size();

  std::string phase = "pretrain";
  std::int64_t step = 0;
  EventEncoder model{nullptr};
  if (!spec.init_from.empty()) {
    model = load_encoder(spec.init_from).first;
    if (model->config().raw_size != config.raw_size || model->config().classes != config.classes)
      throw nexp::ConfigError(fmt::format("the pretrained encoder {} was made for another fleet description ({} raw codes, "
                                          "{} classes; this fleet has {} and {}). Pretrain with the same fleet file.",
                                          spec.init_from, model->config().raw_size, model->config().classes, config.raw_size,
                                          config.classes));
    config = model->config();
  } else {
    model = EventEncoder(config);
  }
  // Training runs on the run's device (the HAL's); the optimiser is built after the move.
  const c10::Device device = nexp::torch_device(ctx);
  model->to(device);
  std::unique_ptr<torch::optim::Adam> opt;
  if (auto dir = ctx.checkpoint()) {
    std::ifstream(*dir / "state.txt") >> phase >> step;
    if (phase != "none") {
      model = load_encoder(*dir / "model.pt").first;
      model->to(device);
      opt = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(
                                                                          phase == "pretrain" ? spec.pretrain_lr : spec.finetune_lr));
      torch::load(*opt, (*dir / "optim.pt").string());
    }
    ctx.restore_rng_state();
    ctx.log().info("resuming in the {} phase at step {}", phase, step);
  }

  // ---- masked-event pretraining
  if (phase == "pretrain" && spec.pretrain_steps > 0 && !spec.pretrain_on.empty()) {
    CorpusSpec cs{spec.pretrain_on, spec.pretrain_incidents, nexp::Random::stream(spec.seed, "pretrain-corpus")()};
    const auto corpus = build_corpus(fleet, vocab, classes, cs, config.max_len);
    ctx.log().info("pretraining on {} unlabelled node sequences from {} platform(s)", corpus.size(), spec.pretrain_on.size());
    if (!opt) opt = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(spec.pretrain_lr));
    auto bar = ctx.progress(spec.pretrain_steps, "pretrain");
    bar.set(step);
    double running = 0;
    int count = 0;
    while (step < spec.pretrain_steps) {
      const auto idx = batch_indices(cs.seed, step, corpus.size(), static_cast<std::size_t>(spec.batch));
      running += pretrain_step(model, *opt, corpus, idx, nexp::Random::stream(cs.seed, "pretrain-step", static_cast<std::uint64_t>(step))());
      ++count;
      ++step;
      bar.advance();
      if (step % spec.checkpoint_every == 0 || step == spec.pretrain_steps) {
        ctx.log_metrics(step, {{"pretrain_loss", running / count}});
        ctx.summary("pretrain_loss", running / count);
        bar.note(fmt::format("loss {:.3f}", running / count));
        running = 0, count = 0;
        save_state(ctx, "pretrain", step, model, *opt);
        if (ctx.stop_requested()) return t.stopped = true, t;
      }
    }
  }
  // ---- few-label fine-tuning
  const std::int64_t base = spec.pretrain_steps;
  BagOfEvents bag(fleet);
  const LabelledSet labels = labelled(fleet, vocab, bag, classes, spec.label_on, spec.labels_per_platform,
                                      nexp::Random::stream(spec.seed, "labelled")(), config.max_len);
  // The last fifth of each platform's labelled incidents calibrates (temperature), the rest trains.
  LabelledSet fit, cal;
  {
    const std::size_t per = labels.examples.size() / std::max<std::size_t>(1, spec.label_on.size());
    for (std::size_t i = 0; i < labels.examples.size(); ++i) {
      LabelledSet& into = (i % per) >= per * 4 / 5 ? cal : fit;
      into.examples.push_back(labels.examples[i]);
      into.features.push_back(labels.features[i]);
      into.labels.push_back(labels.labels[i]);
    }
  }
  if (spec.finetune_steps > 0) {
    if (phase != "finetune") {
      model->reset_head();
      opt = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(spec.finetune_lr));
      phase = "finetune", step = 0;
    }
    ctx.log().info("fine-tuning on {} labelled node sequences ({} incidents per platform)", fit.examples.size(),
                   spec.labels_per_platform);
    auto bar = ctx.progress(spec.finetune_steps, "finetune");
    bar.set(step);
    double running = 0;
    int count = 0;
    const std::uint64_t seed = nexp::Random::stream(spec.seed, "finetune")();
    while (step < spec.finetune_steps) {
      running += finetune_step(model, *opt, fit.examples, batch_indices(seed, step, fit.examples.size(), static_cast<std::size_t>(spec.batch)));
      ++count;
      ++step;
      bar.advance();
      if (step % spec.checkpoint_every == 0 || step == spec.finetune_steps) {
        ctx.log_metrics(base + step, {{"finetune_loss", running / count}});
        ctx.summary("finetune_loss", running / count);
        bar.note(fmt::format("loss {:.3f}", running / count));
        running = 0, count = 0;
        save_state(ctx, "finetune", step, model, *opt);
        if (ctx.stop_requested()) return t.stopped = true, t;
      }
    }
    t.temperature = fit_temperature(predict_logits(model, cal.examples), labels_of(cal.examples));
  }
  // The simulator's replicas call the model from many threads with tiny batches: keep it on the CPU.
  model->to(at::kCPU);
  t.model = model;
  model->eval();

  // ---- held-out test incidents: node-level classification accuracy, and the majority class
  const LabelledSet test = labelled(fleet, vocab, bag, classes, spec.label_on, spec.test_per_platform,
                                    nexp::Random::stream(spec.seed, "test")(), config.max_len);
  if (spec.finetune_steps > 0) {
    t.test_probs = at::softmax(predict_logits(model, test.examples) / t.temperature, 1);
    t.test_labels = labels_of(test.examples);
    t.test_accuracy = (t.test_probs.argmax(1) == t.test_labels).to(at::kDouble).mean().item<double>();
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(classes.size()), 0);
  for (auto y : fit.labels) ++counts[static_cast<std::size_t>(y)];
  const auto majority = static_cast<std::int64_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  t.majority_accuracy = static_cast<double>(std::count(test.labels.begin(), test.labels.end(), majority)) /
                        static_cast<double>(std::max<std::size_t>(1, test.labels.size()));
  if (spec.logistic) {
    t.logistic = std::make_shared<BagOfEvents>(fleet);
    t.logistic->fit(fit.features, fit.labels, cal.features, cal.labels, 1.0, 200);
    std::int64_t right = 0;
    for (std::size_t i = 0; i < test.features.size(); ++i) {
      const auto p = t.logistic->predict(test.features[i]);
      right += static_cast<std::int64_t>(std::max_element(p.begin(), p.end()) - p.begin()) == test.labels[i];
    }
    t.logistic_test_accuracy = static_cast<double>(right) / static_cast<double>(std::max<std::size_t>(1, test.features.size()));
  }
  return t;
}

TrainSpec train_spec(const TrainingOptions& o, const FleetSpec& fleet, std::uint64_t seed) {
  TrainSpec s;
  static_cast<TrainingOptions&>(s) = o;
  s.pretrain_on = platforms_of(fleet, o.pretrain_platforms);
  if (o.pretrain_incidents.size() != s.pretrain_on.size())
    throw nexp::ConfigError(fmt::format("params.pretrain_incidents has {} entries but params.pretrain_platforms names {} "
                                        "platforms: give one corpus size per platform, in the same order",
                                        o.pretrain_incidents.size(), s.pretrain_on.size()));
  s.label_on = platforms_of(fleet, o.label_platforms);
  s.seed = seed;
  return s;
}

void write_text(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// The cost model's parameters, estimated from `days` of the incumbent's tickets on the platform (its own random streams, apart from the evaluated fleets). The estimate and its
// evidence go to artifacts/cost_estimate.csv.
CostParameters cost_parameters(nexp::RunContext& ctx, const FleetSpec& fleet, const FleetSpec& known, int platform,
                               double days) {
  std::int64_t incidents = 0;
  CostParameters p = estimate_parameters(known, training_period(fleet, platform, ctx.stream("training-period")(), days, &incidents));
  p.days = days, p.incidents = incidents;
  p.source = fmt::format("estimated from {:g} days ({} interruptions)", days, incidents);
  nexp::CsvWriter csv(ctx.artifacts_dir() / "cost_estimate.csv", {C::text("parameter"), C::text("of"), C::text("given"),
                                                                   C::real("hits"), C::real("trials"), C::real("mean"),
                                                                   C::real("ci_low"), C::real("ci_high")});
  auto row = [&](const char* what, const std::string& of, const std::string& given, const Count& c) {
    const auto [lo, hi] = c.interval();
    csv.row(what, of, given, c.hits, c.trials, c.mean(), lo, hi);
  };
  const ClassTable classes(known);
  auto class_name = [&](std::size_t k) {
    const auto& e = classes.entries[k];
    return e.cause == kNoIndex ? std::string("healthy")
                               : known.causes[static_cast<std::size_t>(e.cause)].name + "/" + known.actions[static_cast<std::size_t>(e.action)].name;
  };
  for (std::size_t a = 0; a < known.actions.size(); ++a)
    for (std::size_t k = 1; k < p.fix_counts[a].size(); ++k)
      if (p.fix_counts[a][k].trials > 0) row("fix", known.actions[a].name, class_name(k), p.fix_counts[a][k]);
  for (std::size_t t = 0; t < known.tests.size(); ++t) {
    row("false_alarm", known.tests[t].name, "healthy", p.false_alarm_counts[t]);
    for (std::size_t c = 0; c < known.causes.size(); ++c)
      if (known.causes[c].node_fault) row("detect", known.tests[t].name, known.causes[c].name, p.detect_counts[t][c]);
  }
  for (std::size_t c = 0; c < known.causes.size(); ++c) row("sweep_find", "sweep", known.causes[c].name, p.sweep_counts[c]);
  ctx.summary("training_days", days);
  ctx.summary("training_incidents", static_cast<double>(incidents));
  ctx.log().info("cost model {}", p.source);
  return p;
}

}  // namespace

// ---------------------------------------------------------------- drwatson.calibrate

void run_calibrate(nexp::RunContext& ctx) {
  const auto o = ctx.options<CalibrateOptions>();
  FleetSpec fleet = fleet_of(o);
  const int platform = platform_of(fleet, o.platform);
  const int replicas = o.seeds;
  const double horizon = o.horizon_days;
  IncumbentPolicy incumbent(fleet);
  OraclePolicy oracle(fleet);
  const double own = fleet.noise.ambiguity;
  std::vector<double> grid = o.ambiguities;
  if (std::find(grid.begin(), grid.end(), own) == grid.end()) grid.push_back(own);
  std::sort(grid.begin(), grid.end());
  const double days = (horizon > 0 ? horizon : fleet.job.horizon_days);
  const double node_days = fleet.job.nodes * days;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "calibration.csv",
                      {C::real("ambiguity"), C::real("incumbent_accuracy"), C::real("incumbent_fix_rate"),
                       C::real("incumbent_ettr"), C::real("interruption_rate"), C::real("repeat_rate"),
                       C::real("oracle_ettr")});
  std::int64_t step = 0;
  for (double a : grid) {
    FleetSpec f = fleet;
    f.noise.ambiguity = a;
    IncumbentPolicy inc(f);
    const auto m = run_replicas(f, inc, platform, ctx.seed(), replicas, horizon);
    const auto best = run_replicas(f, OraclePolicy(f), platform, ctx.seed(), replicas, horizon);
    const double acc = mean(column(m, "accuracy")), ettr = mean(column(m, "ettr"));
    const double rate = mean(column(m, "interruptions")) / node_days;
    csv.row(a, acc, mean(column(m, "fix_rate")), ettr, rate, mean(column(m, "repeat_rate")), mean(column(best, "ettr")));
    ctx.log().info("ambiguity {:.2f}: incumbent accuracy {:.3f}, ETTR {:.3f}, {:.3g} interruptions per node-day", a, acc, ettr, rate);
    ctx.log_metrics(++step, {{"incumbent_accuracy", acc}, {"incumbent_ettr", ettr}, {"interruption_rate", rate}});
  }

  // The fleet as configured: the numbers the calibration is judged by, and the seeded mix.
  std::vector<std::vector<IncidentRecord>> logs(static_cast<std::size_t>(replicas));
  std::vector<ReplicaMetrics> m(static_cast<std::size_t>(replicas));
  tbb::parallel_for(0, replicas, [&](int r) {
    SimOptions sim;
    sim.platform = platform;
    sim.seed = ctx.stream("replica", static_cast<std::uint64_t>(r))();
    sim.horizon_days = horizon;
    sim.log = &logs[static_cast<std::size_t>(r)];
    m[static_cast<std::size_t>(r)] = simulate(fleet, incumbent, sim);
  });
  IncidentGenerator gen(fleet, platform);
  std::vector<double> first(fleet.causes.size(), 0.0);
  double total_first = 0;
  for (const auto& log : logs)
    for (const auto& r : log)
      if (r.occurrence == 0) first[static_cast<std::size_t>(r.cause)] += 1, total_first += 1;
  double tv = 0;
  nexp::CsvWriter mix(ctx.artifacts_dir() / "mix.csv", {C::text("cause"), C::real("seeded_share"),
                                                       C::real("simulated_share"), C::real("incumbent_accuracy")});
  std::vector<double> right(fleet.causes.size(), 0.0), seen(fleet.causes.size(), 0.0);
  for (const auto& log : logs)
    for (const auto& r : log) seen[static_cast<std::size_t>(r.cause)] += 1, right[static_cast<std::size_t>(r.cause)] += r.correct;
  for (std::size_t c = 0; c < fleet.causes.size(); ++c) {
    const double sim = total_first > 0 ? first[c] / total_first : 0;
    tv += 0.5 * std::abs(sim - gen.mix()[c]);
    mix.row(fleet.causes[c].name, gen.mix()[c], sim, seen[c] > 0 ? right[c] / seen[c] : 0.0);
  }
  const double rate = mean(column(m, "interruptions")) / node_days;
  const PlatformSpec& ps = fleet.platforms[static_cast<std::size_t>(platform)];
  ctx.summary("incumbent_accuracy", mean(column(m, "accuracy")));
  ctx.summary("incumbent_fix_rate", mean(column(m, "fix_rate")));
  ctx.summary("incumbent_ettr", mean(column(m, "ettr")));
  ctx.summary("interruption_rate", rate);
  ctx.summary("target_rate", ps.target_rate_per_node_day);
  ctx.summary("first_fault_rate", mean(column(m, "first_faults")) / node_days);
  ctx.summary("seeded_rate", ps.rate_per_node_day);
  ctx.summary("repeat_rate", mean(column(m, "repeat_rate")));
  ctx.summary("mix_tv", tv);
  // The hazard that would make the incumbent's interruption rate meet the target.
  if (ps.target_rate_per_node_day > 0 && rate > 0)
    ctx.summary("calibrated_rate", ps.rate_per_node_day * ps.target_rate_per_node_day / rate);
  ctx.log().info("{} at ambiguity {}: incumbent accuracy {:.3f} (target 0.70-0.80), ETTR {:.3f} (target ~0.90), {:.3g} "
                 "interruptions per node-day (published {:.3g}); simulated vs seeded cause mix: total variation {:.3f}",
                 ps.name, own, mean(column(m, "accuracy")), mean(column(m, "ettr")), rate, ps.target_rate_per_node_day, tv);
}

// ---------------------------------------------------------------- drwatson.pretrain / finetune

void run_pretrain(nexp::RunContext& ctx) {
  const auto o = ctx.options<PretrainOptions>();
  const FleetSpec fleet = fleet_of(o);
  TrainSpec spec = train_spec(o, fleet, ctx.seed());
  spec.finetune_steps = 0;
  spec.logistic = false;
  spec.labels_per_platform = 0;
  spec.test_per_platform = 0;
  Trained t = train(ctx, fleet, spec);
  if (t.stopped) return;
  save_encoder(t.model, 1.0, ctx.artifacts_dir() / "encoder.pt");
  // Held-out masked-event accuracy: how well the encoder predicts hidden raw codes.
  const Vocabulary vocab(fleet);
  const ClassTable classes(fleet);
  CorpusSpec held{spec.pretrain_on, std::vector<std::int64_t>(spec.pretrain_on.size(), 100), ctx.stream("held-out-corpus")()};
  const auto corpus = build_corpus(fleet, vocab, classes, held, t.model->config().max_len);
  torch::NoGradGuard no_grad;
  t.model->eval();
  std::vector<std::vector<Token>> seqs;
  for (const auto& e : corpus) seqs.push_back(e.tokens);
  TokenBatch target = make_batch(seqs, t.model->config().max_len);
  Rng rng(ctx.seed(), Purpose::Mask, 1);
  for (auto& s : seqs)
    for (std::size_t j = 2; j < s.size(); ++j)
      if (rng.bernoulli(0.15)) s[j].raw = Vocabulary::kMask, s[j].family = 0, s[j].value = 0;
  TokenBatch input = make_batch(seqs, t.model->config().max_len);
  at::Tensor masked = input.raw == Vocabulary::kMask;
  auto [raw_logits, value_logits] = t.model->masked(input);
  const double acc = (raw_logits.argmax(2).index({masked}) == target.raw.index({masked})).to(at::kDouble).mean().item<double>();
  ctx.summary("masked_accuracy", acc);
  ctx.log().info("masked-event accuracy on held-out sequences: {:.3f}; encoder written to {}", acc,
                 (ctx.artifacts_dir() / "encoder.pt").string());
}

void run_finetune(nexp::RunContext& ctx) {
  const auto o = ctx.options<FinetuneOptions>();
  const FleetSpec fleet = fleet_of(o);
  TrainSpec spec = train_spec(o, fleet, ctx.seed());
  spec.pretrain_steps = 0;
  spec.init_from = o.pretrained;
  Trained t = train(ctx, fleet, spec);
  if (t.stopped) return;
  save_encoder(t.model, t.temperature, ctx.artifacts_dir() / "model.pt");
  nexp::score_predictions(ctx, spec.finetune_steps, "test", t.test_probs, t.test_labels);
  ctx.summary("majority_accuracy", t.majority_accuracy);
  ctx.summary("logistic_test_accuracy", t.logistic_test_accuracy);
  ctx.summary("temperature", t.temperature);
  ctx.log().info("node-level test accuracy {:.3f} (logistic {:.3f}, majority class {:.3f}); model written to {}", t.test_accuracy,
                 t.logistic_test_accuracy, t.majority_accuracy, (ctx.artifacts_dir() / "model.pt").string());
}

// ---------------------------------------------------------------- drwatson.headline

void run_headline(nexp::RunContext& ctx) {
  const auto o = ctx.options<HeadlineOptions>();
  FleetSpec fleet = fleet_of(o);
  if (o.variant == Variant::ZeroAmbiguity) fleet.noise.ambiguity = 0.0;
  const int platform = platform_of(fleet, o.platform);
  const int replicas = o.seeds;
  const double horizon = o.horizon_days;

  TrainSpec spec = train_spec(o, fleet, ctx.seed());
  if (o.variant == Variant::NoPretrain) spec.pretrain_steps = 0;
  if (o.variant == Variant::SinglePlatform) {
    std::vector<int> only;
    std::vector<std::int64_t> sizes;
    for (std::size_t i = 0; i < spec.pretrain_on.size(); ++i)
      if (spec.pretrain_on[i] == platform) only.push_back(platform), sizes.push_back(spec.pretrain_incidents[i]);
    spec.pretrain_on = only;
    spec.pretrain_incidents = sizes;
  }
  Trained t;
  if (!o.model.empty()) {
    auto [m, temperature] = load_encoder(o.model);
    t.model = m, t.temperature = temperature;
    spec.pretrain_steps = spec.finetune_steps = 0;
    t.logistic = train(ctx, fleet, spec).logistic;  // the baseline is cheap: fit it here
    ctx.log().info("using the fine-tuned model {}", o.model);
  } else {
    t = train(ctx, fleet, spec);
    if (t.stopped) return;
  }

  // What the policies are given: the fleet's public view and, for planning, a cost model estimated
  // from a year of the incumbent's repair tickets on this platform. Only the oracle policies see the
  // fleet itself: `oracle` the faults, `drwatson_oracle_costs` the true repair, QA and sweep odds.
  const FleetSpec known = public_view(fleet);
  const CostParameters params = cost_parameters(ctx, fleet, known, platform, o.training_days);
  DecisionOptions options;
  options.residual_risk = o.residual_risk;
  DecisionOptions argmax = options;
  argmax.cost_aware = false;
  auto fm_classifier = std::make_shared<TransformerClassifier>(t.model, t.temperature, known);
  IncumbentPolicy incumbent(known);
  PosteriorPolicy logistic("logistic", known, t.logistic, params, argmax);
  PosteriorPolicy logistic_decision("logistic_decision", known, t.logistic, params, options);
  PosteriorPolicy fm_argmax("drwatson_no_decision", known, fm_classifier, params, argmax);
  PosteriorPolicy fm("drwatson", known, fm_classifier, params, options);
  PosteriorPolicy fm_oracle_costs("drwatson_oracle_costs", known, fm_classifier, oracle_parameters(fleet), options);
  OraclePolicy oracle(fleet);
  const std::vector<const Policy*> policies = {&incumbent, &logistic,         &logistic_decision, &fm_argmax,
                                               &fm,        &fm_oracle_costs, &oracle};
  constexpr std::size_t kFm = 4;
  std::vector<std::vector<ReplicaMetrics>> results;
  std::int64_t step = spec.pretrain_steps + spec.finetune_steps;
  {
    auto bar = ctx.progress(static_cast<std::int64_t>(policies.size()), "simulate");
    for (const Policy* policy : policies) {
      results.push_back(run_replicas(fleet, *policy, platform, ctx.seed(), replicas, horizon));
      bar.advance();
      const auto& r = results.back();
      ctx.log().info("{:>20}: downtime {:8.1f} h, QA {:6.1f} h, job downtime {:6.1f} h, ETTR {:.3f}, accuracy {:.3f}, "
                     "repeats {:.3f}",
                     policy->name(), mean(column(r, "downtime")), mean(column(r, "qa_time")), mean(column(r, "job_downtime")),
                     mean(column(r, "ettr")), mean(column(r, "accuracy")), mean(column(r, "repeat_rate")));
      ctx.log_metrics(++step, {{policy->name() + "_downtime", mean(column(r, "downtime"))},
                               {policy->name() + "_qa_time", mean(column(r, "qa_time"))}});
    }
  }

  // Reductions against the incumbent, paired over replicas (common random numbers).
  const auto& base = results[0];
  const std::vector<std::string> keys = {"downtime", "qa_time", "job_downtime", "node_downtime"};
  auto reductions = [&](const std::vector<ReplicaMetrics>& treated, const std::string& key) {
    auto rng = ctx.stream("reduction:" + key);  // the same resamples for every policy
    return paired_reduction(column(base, key), column(treated, key), rng);
  };
  auto report = [&](const std::string& name, const Interval& r) {
    ctx.summary(name, r.estimate);
    ctx.summary(name + "_ci_low", r.low);
    ctx.summary(name + "_ci_high", r.high);
  };
  for (const auto& key : {"downtime", "qa_time", "job_downtime"}) report(std::string(key) + "_reduction", reductions(results[kFm], key));
  for (std::size_t i = 1; i < policies.size(); ++i)
    if (i != kFm)
      for (const auto& key : {"downtime", "qa_time"})
        report(policies[i]->name() + "_" + key + "_reduction", reductions(results[i], key));
  // What each part adds, paired on the same fleets: the transformer over the logistic classifier
  // (both with the decision layer), and the decision layer over argmax decisions (both with the
  // transformer). 1 - sum(drwatson) / sum(the arm without that part).
  for (const auto& key : {"downtime", "qa_time"}) {
    auto gain = [&](std::size_t without, const std::string& part) {
      auto rng = ctx.stream(std::string("contribution:") + part + ":" + key);
      report(part + "_" + key + "_gain", paired_reduction(column(results[without], key), column(results[kFm], key), rng));
    };
    gain(2, "classifier");
    gain(3, "decision");
  }
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const std::string n = policies[i]->name() == "drwatson" ? "fm" : policies[i]->name();
    ctx.summary(n + "_accuracy", mean(column(results[i], "accuracy")));
    ctx.summary(n + "_ettr", mean(column(results[i], "ettr")));
    ctx.summary(n + "_repeat_rate", mean(column(results[i], "repeat_rate")));
    ctx.summary(n + "_escape_rate", mean(column(results[i], "escape_rate")));
  }
  if (t.test_probs.defined()) ctx.summary("fm_test_accuracy", t.test_accuracy);
  ctx.summary("logistic_test_accuracy", t.logistic_test_accuracy);

  // DrWatson at other QA targets: the same model, cost model and fleets.
  if (!o.risk_curve.empty()) {
    nexp::CsvWriter curve(ctx.artifacts_dir() / "risk_curve.csv",
                          {C::text("residual_risk"), C::real("downtime_reduction"), C::real("downtime_ci_low"),
                           C::real("downtime_ci_high"), C::real("qa_time_reduction"), C::real("qa_time_ci_low"),
                           C::real("qa_time_ci_high"), C::real("escape_rate")});
    std::vector<double> risks = o.risk_curve;
    risks.push_back(o.residual_risk);
    std::sort(risks.begin(), risks.end());
    risks.erase(std::unique(risks.begin(), risks.end()), risks.end());
    for (double risk : risks) {
      DecisionOptions at = options;
      at.residual_risk = risk;
      const auto r = risk == o.residual_risk
                         ? results[kFm]
                         : run_replicas(fleet, PosteriorPolicy("drwatson", known, fm_classifier, params, at), platform,
                                        ctx.seed(), replicas, horizon);
      const Interval d = reductions(r, "downtime"), q = reductions(r, "qa_time");
      curve.row(fmt::format("{:g}", risk), d.estimate, d.low, d.high, q.estimate, q.low, q.high, mean(column(r, "escape_rate")));
      ctx.log().info("residual risk {:g}: downtime {:+.1f}%, QA {:+.1f}%, escapes {:.3f}", risk, -100 * d.estimate,
                     -100 * q.estimate, mean(column(r, "escape_rate")));
    }
  }

  // The table: every policy, every measure, mean over replicas, and reductions with intervals.
  // reduction, ci_low, ci_high: empty for the measures that are not reduced against the incumbent.
  nexp::CsvWriter csv(ctx.artifacts_dir() / "headline.csv", {C::text("policy"), C::text("measure"), C::real("mean"),
                                                             C::real("reduction"), C::real("ci_low"), C::real("ci_high")});
  std::string md = fmt::format("# {} fleet, variant {}, {} replicas of {} days\n\n| policy | downtime h | QA h | job downtime h | "
                               "node downtime h | ETTR | accuracy | repeat rate | downtime vs incumbent | QA vs incumbent |\n"
                               "|---|---|---|---|---|---|---|---|---|---|\n",
                               fleet.platforms[static_cast<std::size_t>(platform)].name, name_of(kVariants, o.variant), replicas,
                               horizon > 0 ? horizon : fleet.job.horizon_days);
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const auto& r = results[i];
    for (const auto& [k, v] : r.front().as_map()) {
      (void)v;
      const auto col = column(r, k);
      const bool reducible = std::find(keys.begin(), keys.end(), k) != keys.end();
      const Interval red = reducible ? reductions(r, k) : Interval{};
      auto reduced = [&](double v) { return reducible ? std::optional<double>(v) : std::nullopt; };
      csv.row(policies[i]->name(), k, mean(col), reduced(red.estimate), reduced(red.low), reduced(red.high));
    }
    const Interval d = reductions(r, "downtime"), q = reductions(r, "qa_time");
    md += fmt::format("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.3f} | {:.3f} | {:.3f} | {:+.1f}% [{:+.1f}, {:+.1f}] | {:+.1f}% [{:+.1f}, {:+.1f}] |\n",
                      policies[i]->name(), mean(column(r, "downtime")), mean(column(r, "qa_time")), mean(column(r, "job_downtime")),
                      mean(column(r, "node_downtime")), mean(column(r, "ettr")), mean(column(r, "accuracy")),
                      mean(column(r, "repeat_rate")), -100 * d.estimate, -100 * d.high, -100 * d.low, -100 * q.estimate,
                      -100 * q.high, -100 * q.low);
  }
  write_text(ctx.artifacts_dir() / "headline.md", md);
  ctx.log().info("\n{}", md);
}

// ---------------------------------------------------------------- drwatson.diagnose

namespace {

// A kernel log (dmesg / journalctl -k), a dcgm-exporter scrape or `nvidia-smi -q` output: UTF-8 text.
std::string read_text(const fs::path& file) {
  return nexp::read_text_file(file, "params.log (a kernel log, dcgm-exporter scrape or nvidia-smi -q output; empty: "
                                    "diagnose only the device)");
}

// The format of a log, recognised from its content.
LogFormat recognise(const std::string& text) {
  if (text.find("DCGM_FI_") != std::string::npos) return LogFormat::Dcgm;
  if (text.find("NVSMI LOG") != std::string::npos || text.find("Attached GPUs") != std::string::npos)
    return LogFormat::NvidiaSmi;
  return LogFormat::Kernel;
}

NodeView events_of(const std::string& text, LogFormat format, const RawCodes& codes) {
  if (format == LogFormat::Dcgm) return events_from_dcgm(parse_dcgm(text), codes);
  if (format == LogFormat::NvidiaSmi) return events_from_smi(parse_nvidia_smi(text), codes);
  return events_from_log(parse_kernel_log(text), codes);
}

// Times a known-answer matmul on the device, step by step; each step is reported to core, which calls
// the device's on_step hook (where a simulated accelerator injects its faults).
ProbeResult probe_device(nexp::RunContext& ctx, std::int64_t steps, std::int64_t n) {
  ProbeResult r;
  if (steps <= 0) return r;
  const c10::Device device = nexp::torch_device(ctx);
  auto grid = at::arange(n * n, at::kDouble).reshape({n, n});
  const at::Tensor a64 = at::sin(grid * 0.37), b64 = at::cos(grid * 0.11) / static_cast<double>(n);
  const at::Tensor reference = a64.matmul(b64);
  const at::Tensor a = a64.to(at::kFloat).to(device), b = b64.to(at::kFloat).to(device);
  std::vector<double> times;
  for (std::int64_t s = 1; s <= steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    const at::Tensor c = a.matmul(b).to(at::kCPU).to(at::kDouble);
    const double err = (c - reference).abs().max().item<double>() / std::max(1e-12, reference.abs().max().item<double>());
    ctx.log_metrics(s, {{"probe_error", err}});  // core calls Device::on_step here
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    times.push_back(dt);
    r.wrong_answer = r.wrong_answer || !(err < 1e-3);
  }
  r.steps = static_cast<int>(steps);
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  r.expected_seconds_per_step = sorted.front();
  r.seconds_per_step = nexp::stats::median(sorted);
  r.timed_out = sorted.back() > std::max(0.5, 50.0 * sorted.front());
  // Only a clear and sizeable slowdown counts: a shared host's scheduler jitter does not.
  if (r.seconds_per_step < 10.0 * r.expected_seconds_per_step || r.seconds_per_step - r.expected_seconds_per_step < 0.02)
    r.seconds_per_step = r.expected_seconds_per_step;
  return r;
}

}  // namespace

void run_diagnose(nexp::RunContext& ctx) {
  const auto o = ctx.options<DiagnoseOptions>();
  const FleetSpec fleet = fleet_of(o);
  nexp::Device& device = ctx.device();
  const nexp::DeviceInfo info = device.info();
  std::string pname = o.platform;
  if (pname == "auto") pname = info.backend == "cuda" || info.backend == "cpu" ? "gpu" : "acc_t";
  const int platform = platform_of(fleet, pname);
  const RawCodes codes(fleet, fleet.platform_index("gpu") != kNoIndex ? fleet.platform_index("gpu") : platform);

  // ---- the machine's own telemetry around an active probe
  const nexp::Telemetry before = device.telemetry();
  const ProbeResult probe = probe_device(ctx, o.probe_steps, o.probe_size);
  const nexp::Telemetry after = device.telemetry();
  const nexp::Health health = device.health();
  NodeView node = events_from_telemetry(before, after, probe, fleet, platform, std::max(0, info.index));
  for (const auto& line : health.problems) ctx.log().warn("{} health: {}", info.id, line);

  // ---- and a log file, if one was given
  if (!o.log.empty()) {
    const std::string text = read_text(o.log);
    const LogFormat format = o.format == LogFormat::Auto ? recognise(text) : o.format;
    const NodeView from = events_of(text, format, codes);
    ctx.log().info("{}: {} events from {} ({})", info.id, from.events.size(), o.log, name_of(kLogFormats, format));
    merge_into(node, from);
  }
  Observation obs;
  obs.platform = platform;
  obs.candidates = {node};
  const Vocabulary vocab(fleet);
  std::vector<std::string> seen;
  for (const auto& e : node.events)
    seen.push_back(fmt::format("{}[{}]{}", vocab.raw_name(vocab.raw_of(platform, e.kind)), e.slot,
                               e.value > 0 ? fmt::format("={:g}", e.value) : ""));
  ctx.log().info("{} ({}, platform {}): {} events: {}", info.id, info.name, pname, node.events.size(),
                 seen.empty() ? "none" : fmt::format("{}", fmt::join(seen, " ")));

  // ---- the incumbent's rules
  const IncumbentPolicy incumbent(fleet);
  const Decision rule = incumbent.decide(obs, SweepResult{}, nullptr);
  const auto [rule_node, rule_index] = incumbent.match(obs);
  (void)rule_node;
  auto tests_text = [&](const std::vector<int>& plan) {
    std::vector<std::string> names;
    double minutes = 0;
    for (int t : plan) names.push_back(fleet.tests[static_cast<std::size_t>(t)].name), minutes += fleet.tests[static_cast<std::size_t>(t)].minutes;
    return plan.empty() ? std::string("none") : fmt::format("{} ({:g} min)", fmt::join(names, ", "), minutes);
  };
  auto name_of_cause = [&](int c) { return c == kNoIndex ? std::string("none") : fleet.causes[static_cast<std::size_t>(c)].name; };
  auto name_of_action = [&](int a) { return a == kNoIndex ? std::string("keep in service") : fleet.actions[static_cast<std::size_t>(a)].name; };
  ctx.log().info("incumbent rules: {}; diagnosis {}, action {}, QA {}",
                 rule_index == kNoIndex ? std::string("no rule matched")
                 : rule.sweep ? std::string("collective symptoms only (would run a triage sweep)")
                              : "matched " + fleet.platforms[static_cast<std::size_t>(platform)].rules[static_cast<std::size_t>(rule_index)].raw,
                 name_of_cause(rule.cause), name_of_action(rule.node == kNoIndex ? kNoIndex : rule.action), tests_text(rule.qa));

  // ---- DrWatson
  EventEncoder model{nullptr};
  double temperature = 1.0;
  if (!o.model.empty()) {
    std::tie(model, temperature) = load_encoder(o.model);
  } else {
    ctx.log().info("no params.model given: training a small model first (pass a drwatson.finetune run's model.pt to skip this)");
    Trained t = train(ctx, fleet, train_spec(o, fleet, ctx.seed()));
    if (t.stopped) return;
    model = t.model, temperature = t.temperature;
  }
  const FleetSpec known = public_view(fleet);
  auto classifier = std::make_shared<TransformerClassifier>(model, temperature, known);
  DecisionOptions options;
  options.residual_risk = o.residual_risk;
  const PosteriorPolicy drwatson("drwatson", known, classifier,
                                 cost_parameters(ctx, fleet, known, platform, o.training_days), options);
  // The model's posterior is that of a node taking part in an interruption, one culprit among
  // noise.candidates; a machine in production is faulty with prior probability fault_prior instead.
  std::vector<double> q = classifier->posteriors(obs)[0];
  const bool interrupted = o.interrupted;
  if (!interrupted) {
    const double trained = 1.0 / fleet.noise.candidates, wanted = o.fault_prior;
    const double scale = (wanted / (1 - wanted)) / (trained / (1 - trained));
    double z = q[ClassTable::kHealthy];
    for (std::size_t k = 1; k < q.size(); ++k) z += (q[k] *= scale);
    for (auto& x : q) x /= z;
  }
  // Taking a machine out of a running job means draining and restarting the job.
  const double overhead = interrupted ? 0.0 : fleet.job.nodes * (fleet.job.restart_minutes + fleet.job.host_select_minutes);
  const Decision d = drwatson.decide_single(q, overhead);
  const ClassTable& classes = drwatson.cost_model().classes();
  std::vector<std::size_t> order(q.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return q[a] > q[b]; });
  nlohmann::json out;
  out["device"] = {{"id", info.id}, {"name", info.name}, {"platform", pname}};
  out["events"] = seen;
  out["probe"] = {{"steps", probe.steps}, {"seconds_per_step", probe.seconds_per_step},
                  {"fastest_step", probe.expected_seconds_per_step}, {"wrong_answer", probe.wrong_answer},
                  {"timed_out", probe.timed_out}};
  std::vector<std::string> top;
  for (std::size_t i = 0; i < std::min<std::size_t>(5, order.size()); ++i) {
    const auto& e = classes.entries[order[i]];
    const std::string label = e.cause == kNoIndex ? "healthy" : fmt::format("{} (needs {})", name_of_cause(e.cause), name_of_action(e.action));
    top.push_back(fmt::format("{} {:.2f}", label, q[order[i]]));
    out["posterior"].push_back({{"class", label}, {"p", q[order[i]]}});
  }
  ctx.log().info("DrWatson posterior: {}", fmt::join(top, "; "));
  ctx.log().info("DrWatson: suspected cause {}, action {}, QA plan {}", name_of_cause(d.cause),
                 name_of_action(d.node == kNoIndex ? kNoIndex : d.action), tests_text(d.qa));
  out["incumbent"] = {{"cause", name_of_cause(rule.cause)}, {"action", name_of_action(rule.node == kNoIndex ? kNoIndex : rule.action)},
                      {"qa", tests_text(rule.qa)}, {"sweep", rule.sweep}};
  out["drwatson"] = {{"cause", name_of_cause(d.cause)}, {"action", name_of_action(d.node == kNoIndex ? kNoIndex : d.action)},
                     {"qa", tests_text(d.qa)}, {"p_healthy", q[ClassTable::kHealthy]}};
  write_text(ctx.artifacts_dir() / "diagnosis.json", out.dump(2) + "\n");
  ctx.summary("events", static_cast<double>(node.events.size()));
  ctx.summary("fault_probability", 1.0 - q[ClassTable::kHealthy]);
  ctx.summary("probe_seconds", probe.seconds_per_step);
  ctx.summary("fm_pull", d.node == kNoIndex ? 0.0 : 1.0);
  ctx.summary("incumbent_pull", rule.node == kNoIndex ? 0.0 : 1.0);
}

}  // namespace drwatson
