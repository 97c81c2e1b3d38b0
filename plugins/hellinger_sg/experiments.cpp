#include "experiments.hpp"

#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>
#include <nexp/torch.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "model.hpp"
#include "rooms.hpp"

namespace hellinger_sg {

namespace {

// ---------------------------------------------------------------- the loss of one batch

// What the training loss needs besides the batch: the contextual kernels and SGFN's predicate weights.
struct LossSetup {
  Loss loss = Loss::Ce;
  double lambda = 1, w = 1, eps = 0.1;
  Context context = Context::Both;
  at::Tensor kernel, prior, pos_weight;
};

LossSetup loss_setup(const TrainOptions& o, Loss loss, const Batch& train, const Taxonomy& taxonomy) {
  LossSetup s;
  s.loss = loss, s.lambda = o.hellinger_weight, s.w = o.node_weight, s.eps = o.context_eps;
  s.context = loss == Loss::ChtgNoContext ? Context::None : o.context;
  std::vector<int> groups;
  for (const auto& c : taxonomy.classes) groups.push_back(c.group);
  s.kernel = hierarchy_kernel(groups, o.context_eps, true);
  const at::Tensor cs = train.classes.index_select(0, train.edges.select(1, 0));
  const at::Tensor co = train.classes.index_select(0, train.edges.select(1, 1));
  s.prior = cooccurrence_prior(cs, co, train.labels, taxonomy.num_classes());
  // SGFN's class-weighted BCE: positives of predicate r weighted by sqrt(mean frequency / frequency of r).
  const at::Tensor freq = train.labels.mean(0).clamp_min(1e-4);
  s.pos_weight = (freq.mean() / freq).sqrt();
  return s;
}

struct LossParts {
  at::Tensor total, ce, node, triplet;
};

LossParts batch_loss(const LossSetup& s, const at::Tensor& node_logits, const at::Tensor& pred_logits, const Batch& b) {
  LossParts l;
  l.ce = at::cross_entropy_loss(node_logits, b.classes) +
         at::binary_cross_entropy_with_logits(pred_logits, b.labels, {}, s.pos_weight);
  l.total = l.ce;
  if (s.loss == Loss::Ce) return l;
  const RootField p = root_from_logits(node_logits, pred_logits, b.edges);
  const RootField q = contextual_targets(b.classes, b.labels, b.edges, s.kernel, s.prior, s.eps, s.context);
  l.node = node_terms(p, q).mean();
  l.triplet = b.edges.size(0) ? triplet_terms(p, q).mean() : at::zeros({});
  if (s.loss != Loss::ChtgNoTriplet) l.total = l.total + s.lambda * l.triplet;
  if (s.loss != Loss::ChtgNoNode) l.total = l.total + s.lambda * s.w * l.node;
  return l;
}

// ---------------------------------------------------------------- training

std::vector<Batch> batches(const std::vector<Scene>& scenes, int per_batch, int predicates, nexp::Random rng) {
  std::vector<std::size_t> order(scenes.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  for (std::size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[rng.below(k)]);
  std::vector<Batch> out;
  for (std::size_t a = 0; a < order.size(); a += per_batch) {
    std::vector<std::size_t> which(order.begin() + a, order.begin() + std::min(order.size(), a + per_batch));
    out.push_back(make_batch(scenes, which, predicates));
  }
  return out;
}

std::vector<std::size_t> all_scenes(const std::vector<Scene>& scenes) {
  std::vector<std::size_t> all(scenes.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  return all;
}

// Trains a predictor from the initialisation drawn by torch seed `init_seed`; the batch order of epoch k
// is the stream ("batches", k) of `order_seed`. Both are shared by every loss of a comparison.
Predictor train_predictor(nexp::RunContext& ctx, const SceneGraphDataset& data, const TrainOptions& o, Loss loss,
                          std::uint64_t init_seed, std::uint64_t order_seed, const std::string& label) {
  torch::manual_seed(init_seed);
  const int R = data.taxonomy.num_predicates();
  Predictor model(data.taxonomy.num_classes(), R, o.width);
  const Batch everything = make_batch(data.train, all_scenes(data.train), R);
  const LossSetup setup = loss_setup(o, loss, everything, data.taxonomy);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  auto bar = ctx.progress(o.epochs, label);
  for (int epoch = 0; epoch < o.epochs && !ctx.stop_requested(); ++epoch) {
    double sum = 0, ce = 0;
    const auto bs = batches(data.train, o.batch_scenes, R, nexp::Random::stream(order_seed, "batches", epoch));
    for (const Batch& b : bs) {
      auto [nl, pl] = model->forward(b);
      const LossParts l = batch_loss(setup, nl, pl, b);
      opt.zero_grad();
      l.total.backward();
      opt.step();
      sum += l.total.item<double>(), ce += l.ce.item<double>();
    }
    bar.advance();
    bar.note(fmt::format("loss {:.3f}", sum / bs.size()));
    if (label == "train") {
      ctx.log_metrics(epoch, {{"train_loss", sum / bs.size()}, {"train_ce", ce / bs.size()}});
      ctx.summary("train_loss", sum / bs.size());
      ctx.summary("train_ce", ce / bs.size());
    }
  }
  model->eval();
  return model;
}

LayoutGenerator train_generator(const SceneGraphDataset& data, const TrainOptions& o, std::uint64_t init_seed) {
  torch::manual_seed(init_seed);
  const int R = data.taxonomy.num_predicates();
  LayoutGenerator gen(data.taxonomy.num_classes(), R);
  const Batch b = make_batch(data.train, all_scenes(data.train), R);
  torch::optim::Adam opt(gen->parameters(), torch::optim::AdamOptions(3e-3));
  for (int step = 0; step < o.generator_steps; ++step) {
    const at::Tensor boxes = gen->forward(b.classes, b.clean, b.edges);
    const at::Tensor loss = at::smooth_l1_loss(boxes, b.boxes, at::Reduction::Mean, 0.1);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  gen->eval();
  return gen;
}

// ---------------------------------------------------------------- evaluation

Box box_at(const at::Tensor& boxes, std::int64_t i) {
  const float* p = boxes.data_ptr<float>() + i * 6;
  return {{p[0], p[1], p[2]}, {p[3], p[4], p[5]}};
}

// Downstream: the generator lays out boxes from a graph (classes [N], predicate bits [E, R]); the share of
// the true relations that hold in those boxes (loose contact tolerance), box IoU to the true boxes, and
// the share of object pairs whose boxes interpenetrate (> 10% of the smaller one). Rooms only: the
// relations are checked with predicates(), which knows the rooms taxonomy.
std::map<std::string, double> layout_scores(LayoutGenerator& gen, const Batch& t, const at::Tensor& classes,
                                            const at::Tensor& relations) {
  torch::NoGradGuard no_grad;
  const at::Tensor boxes = gen->forward(classes, relations, t.edges).contiguous();
  const auto* e = t.edges.data_ptr<std::int64_t>();
  const auto* y = t.classes.data_ptr<std::int64_t>();
  const auto* c = t.clean.data_ptr<float>();
  const Tolerance loose{0.1, 0.5};
  double facts = 0, held = 0, iou = 0, pairs = 0, collisions = 0;
  for (std::int64_t k = 0; k < t.edges.size(0); ++k) {
    const std::int64_t i = e[2 * k], j = e[2 * k + 1];
    const std::uint32_t bits = predicates(y[i], box_at(boxes, i), y[j], box_at(boxes, j), loose);
    for (int r = 0; r < kNumPredicates; ++r)
      if (c[k * kNumPredicates + r] > 0.5f) facts += 1, held += (bits >> r & 1u);
    if (i < j && y[i] > 1 && y[j] > 1) {
      const Box a = box_at(boxes, i), b = box_at(boxes, j);
      const double inter = box_iou(a, b) * (a.volume() + b.volume()) / (1 + box_iou(a, b));
      pairs += 1, collisions += inter > 0.1 * std::min(a.volume(), b.volume());
    }
  }
  const at::Tensor truth = t.boxes.contiguous();
  for (std::int64_t i = 0; i < t.classes.size(0); ++i) iou += box_iou(box_at(boxes, i), box_at(truth, i));
  return {{"relation_satisfaction", held / std::max(1.0, facts)},
          {"box_iou", iou / std::max<std::int64_t>(1, t.classes.size(0))},
          {"collision_rate", collisions / std::max(1.0, pairs)}};
}

// Triplet R@50 (3DSSG's protocol): a true fact (i, r, j) is recalled when (y_i, r, y_j) is among the 50
// highest-scoring of the C x R x C triplets p_i (x) p_ij (x) p_j of its edge.
double triplet_recall(const at::Tensor& pn, const at::Tensor& pp, const Batch& t, std::int64_t k) {
  const std::int64_t C = pn.size(1), R = pp.size(1);
  double hits = 0, facts = 0;
  for (std::int64_t a = 0; a < t.edges.size(0); a += 512) {
    const std::int64_t b = std::min(t.edges.size(0), a + 512);
    const at::Tensor s = t.edges.slice(0, a, b).select(1, 0), o = t.edges.slice(0, a, b).select(1, 1);
    const at::Tensor ps = pn.index_select(0, s), po = pn.index_select(0, o), pr = pp.slice(0, a, b);
    const at::Tensor cube = (ps.view({-1, C, 1, 1}) * pr.view({-1, 1, R, 1}) * po.view({-1, 1, 1, C})).view({b - a, -1});
    const at::Tensor kth = std::get<0>(cube.topk(k, 1)).select(1, k - 1);  // [e]
    const at::Tensor ys = t.classes.index_select(0, s), yo = t.classes.index_select(0, o);
    const at::Tensor index = (ys.unsqueeze(1) * R + at::arange(R).unsqueeze(0)) * C + yo.unsqueeze(1);  // [e, R]
    const at::Tensor truth = t.clean.slice(0, a, b) > 0.5;
    const at::Tensor hit = cube.gather(1, index) >= kth.unsqueeze(1);
    hits += hit.logical_and(truth).sum().item<double>(), facts += truth.sum().item<double>();
  }
  return hits / std::max(1.0, facts);
}

double object_ece(nexp::RunContext& ctx, const at::Tensor& pn, const at::Tensor& y) {
  for (const auto* m : ctx.prediction_metrics("object"))
    if (m->name == "ece") return m->from_predictions(pn.to(at::kDouble), y);
  return NAN;
}

std::map<std::string, double> evaluate(nexp::RunContext& ctx, Predictor& model, LayoutGenerator* gen, const Batch& t,
                                       double node_weight) {
  torch::NoGradGuard no_grad;
  auto [nl, pl] = model->forward(t);
  const at::Tensor pn = at::softmax(nl, 1), pp = at::sigmoid(pl);
  std::map<std::string, double> m;
  m["object_acc"] = pn.argmax(1).eq(t.classes).to(at::kDouble).mean().item<double>();
  m["object_ece"] = object_ece(ctx, pn, t.classes);
  const at::Tensor truth = t.clean > 0.5, any = truth.any(1);
  const at::Tensor top1 = truth.gather(1, pp.argmax(1, true)).squeeze(1);
  m["predicate_r1"] = top1.masked_select(any).to(at::kDouble).mean().item<double>();
  const at::Tensor in_top3 = at::zeros_like(truth).scatter_(1, std::get<1>(pp.topk(3, 1)), true);
  const at::Tensor per_pred = in_top3.logical_and(truth).sum(0).to(at::kDouble) / truth.sum(0).to(at::kDouble);
  m["predicate_mr3"] = per_pred.masked_select(truth.sum(0) > 0).mean().item<double>();
  m["triplet_r50"] = triplet_recall(pn, pp, t, 50);
  const at::Tensor predicted = pp > 0.5;
  m["relation_precision"] = predicted.logical_and(truth).sum().item<double>() / std::max(1.0, predicted.sum().item<double>());
  // D to the one-hot truth, per scene, averaged over scenes.
  const RootField p = root_from_logits(nl, pl, t.edges);
  const RootField q = root_from_probs(at::one_hot(t.classes, pn.size(1)).to(at::kFloat), t.clean, t.edges);
  const at::Tensor node = node_terms(p, q), trip = triplet_terms(p, q);
  const at::Tensor edge_scene = t.scene.index_select(0, t.edges.select(1, 0));
  auto per_scene_mean = [&](const at::Tensor& x, const at::Tensor& scene) {
    const at::Tensor ones = at::ones_like(x);
    return at::zeros({t.scenes}).index_add(0, scene, x) / at::zeros({t.scenes}).index_add(0, scene, ones).clamp_min(1);
  };
  const at::Tensor nt = per_scene_mean(node, t.scene), tt = per_scene_mean(trip, edge_scene);
  m["node_term"] = nt.mean().item<double>(), m["triplet_term"] = tt.mean().item<double>();
  m["graph_distance"] = (tt + node_weight * nt).sqrt().mean().item<double>();
  if (gen) {
    for (const auto& [k, v] : layout_scores(*gen, t, pn.argmax(1), predicted.to(at::kFloat))) m[k] = v;
    m["relation_satisfaction_true_graph"] = layout_scores(*gen, t, t.classes, t.clean).at("relation_satisfaction");
  }
  return m;
}

const SceneGraphDataset& scene_data(nexp::RunContext& ctx) { return ctx.dataset_as<SceneGraphDataset>(); }

// The downstream score checks relations geometrically, which only the rooms' predicates allow.
void require_geometric(const SceneGraphDataset& data, const TrainOptions& o) {
  if (o.downstream && !data.geometric)
    throw nexp::ConfigError(fmt::format(
        "params.downstream = true needs hellinger_sg.rooms: the layout score checks each relation in the generated "
        "boxes, and {}'s predicates have no geometric check here. Set params.downstream=false",
        data.name));
}

}  // namespace

// ---------------------------------------------------------------- methods

const std::vector<std::string>& loss_names() {
  static const std::vector<std::string> n = {"ce", "chtg", "chtg_no_node", "chtg_no_triplet", "chtg_no_context"};
  return n;
}

const std::vector<std::string>& evaluation_metrics() {
  static const std::vector<std::string> m = {
      "object_acc",  "object_ece",     "predicate_r1", "predicate_mr3",         "triplet_r50",
      "graph_distance", "node_term",   "triplet_term", "relation_precision",    "relation_satisfaction",
      "box_iou",     "collision_rate", "relation_satisfaction_true_graph"};
  return m;
}

void run_train(nexp::RunContext& ctx) {
  const auto o = ctx.options<TrainOptions>();
  const SceneGraphDataset& data = scene_data(ctx);
  require_geometric(data, o);
  Predictor model = train_predictor(ctx, data, o, o.loss, ctx.seed(), ctx.seed(), "train");
  std::optional<LayoutGenerator> gen;
  if (o.downstream) gen = train_generator(data, o, ctx.seed() + 1);
  const Batch test = make_batch(data.test, all_scenes(data.test), data.taxonomy.num_predicates());
  const auto m = evaluate(ctx, model, gen ? &*gen : nullptr, test, o.node_weight);
  ctx.log_metrics(o.epochs, m);
  for (const auto& [k, v] : m) ctx.summary(k, v);
}

// ---------------------------------------------------------------- compare

namespace {

struct Arm {
  std::string name;
  Loss loss;
  std::map<std::string, std::vector<double>> values;  // metric -> one value per replica
};

void report_comparison(nexp::RunContext& ctx, const std::vector<Arm>& arms) {
  const Arm& base = arms.front();
  for (const Arm& arm : arms) {
    // Metrics no replica measured (the downstream ones without `downstream`) are left out.
    auto measured = [](const std::vector<double>& v) { return std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); }); };
    for (const auto& [metric, v] : arm.values)
      if (measured(v)) ctx.summary(arm.name + "_" + metric, nexp::stats::mean(v));
    if (&arm == &base) continue;
    // chtg against ce is the headline (delta_<metric>); every other arm: delta_<metric>_<arm>.
    const std::string suffix = arm.name == "chtg" ? "" : "_" + arm.name;
    for (const auto& [metric, v] : arm.values) {
      if (!measured(v)) continue;
      const auto d = nexp::stats::paired_t_interval(v, base.values.at(metric));
      ctx.summary_interval("delta_" + metric + suffix, d);
      ctx.log().info("{} - {}: {} {:+.4f} [{:+.4f}, {:+.4f}]", arm.name, base.name, metric, d.estimate, d.low, d.high);
    }
  }
}

}  // namespace

namespace {

// Losses x replicas on the same scenes and initialisations (compare and generate); `reported`: the
// evaluation metrics summarised per loss and as deltas to ce (replicas.csv holds them all).
void compare_losses(nexp::RunContext& ctx, const CompareOptions& o, const std::vector<std::string>& reported) {
  if (o.losses.size() < 2 || o.losses.front() != "ce")
    throw nexp::ConfigError(fmt::format("params.losses = [{}]: a comparison needs `ce` first (the baseline of every "
                                        "delta) and at least one other loss, e.g. [ce, chtg]",
                                        fmt::join(o.losses, ", ")));
  std::vector<Arm> arms;
  for (const auto& name : o.losses) {
    const auto at = std::find(loss_names().begin(), loss_names().end(), name) - loss_names().begin();
    arms.push_back({name, static_cast<Loss>(at), {}});
  }
  const SceneGraphDataset& given = scene_data(ctx);
  require_geometric(given, o);
  const auto* rooms = dynamic_cast<const RoomsDataset*>(&given);
  using C = nexp::CsvColumn;
  std::vector<C> columns = {C::integer("replica"), C::text("loss")};
  for (const auto& m : evaluation_metrics()) columns.push_back(C::real(m));
  nexp::CsvWriter csv(ctx.artifacts_dir() / "replicas.csv", columns);
  for (int r = 0; r < o.seeds && !ctx.stop_requested(); ++r) {
    // Replica r: its own initialisation and batch order (and, for the rooms, its own scenes), the same for
    // every loss. A data set read from files keeps its scenes.
    const std::uint64_t key = nexp::Random::stream(ctx.seed(), "replica", r)();
    std::optional<RoomsDataset> fresh;
    if (rooms) fresh = build_rooms(rooms->options, key);
    const SceneGraphDataset& data = fresh ? static_cast<const SceneGraphDataset&>(*fresh) : given;
    std::optional<LayoutGenerator> gen;
    if (o.downstream) gen = train_generator(data, o, key + 1);
    const Batch test = make_batch(data.test, all_scenes(data.test), data.taxonomy.num_predicates());
    for (Arm& arm : arms) {
      Predictor model = train_predictor(ctx, data, o, arm.loss, key, key, fmt::format("seed {} {}", r, arm.name));
      const auto m = evaluate(ctx, model, gen ? &*gen : nullptr, test, o.node_weight);
      std::vector<nexp::CsvCell> row = {std::int64_t{r}, arm.name};
      for (const auto& name : evaluation_metrics()) {
        const double v = m.count(name) ? m.at(name) : NAN;
        if (std::find(reported.begin(), reported.end(), name) != reported.end()) arm.values[name].push_back(v);
        row.emplace_back(v);
      }
      csv.row(row);
    }
  }
  report_comparison(ctx, arms);
}

}  // namespace

const std::vector<std::string>& layout_metrics() {
  static const std::vector<std::string> m = {"relation_satisfaction", "box_iou", "collision_rate",
                                             "relation_satisfaction_true_graph"};
  return m;
}

void run_compare(nexp::RunContext& ctx) { compare_losses(ctx, ctx.options<CompareOptions>(), evaluation_metrics()); }

void run_generate(nexp::RunContext& ctx) {
  auto o = ctx.options<CompareOptions>();
  o.downstream = true;  // the generator is what this method measures
  compare_losses(ctx, o, layout_metrics());
}

// ---------------------------------------------------------------- distance between two files

namespace {

// A scene-graph file: {"nodes": [{"label": "chair"} | {"probs": [C numbers]}],
//                      "edges": [{"subject": i, "object": j, "labels": ["left", ...] | "probs": [R numbers]}]}
// over the rooms taxonomy's classes and predicates (or any C and R when every entry gives probs).
struct GraphFile {
  at::Tensor node, pred, edges;
};

[[noreturn]] void bad_graph(const std::string& file, const std::string& what) {
  throw nexp::DataError(fmt::format("{}: {}. Expected a scene-graph JSON file (plugins/hellinger_sg/README.md, "
                                    "\"Scene-graph files\"); fix the file or point params.pred/params.target elsewhere",
                                    file, what));
}

std::vector<float> distribution(const nlohmann::json& entry, const std::string& names_key, const std::vector<std::string>& names,
                                bool one_label, const std::string& file, const std::string& where) {
  std::vector<float> out;
  if (entry.contains("probs")) {
    for (const auto& v : entry.at("probs")) {
      if (!v.is_number()) bad_graph(file, where + ".probs holds a non-number");
      out.push_back(v.get<float>());
    }
    return out;
  }
  if (!entry.contains(names_key)) bad_graph(file, where + " has neither \"probs\" nor \"" + names_key + "\"");
  out.assign(names.size(), 0.0f);
  const nlohmann::json labels = one_label ? nlohmann::json::array({entry.at(names_key)}) : entry.at(names_key);
  for (const auto& l : labels) {
    const auto it = l.is_string() ? std::find(names.begin(), names.end(), l.get<std::string>()) : names.end();
    if (it == names.end())
      bad_graph(file, fmt::format("{}.{} = {} is not one of [{}]", where, names_key, l.dump(), fmt::join(names, ", ")));
    out[it - names.begin()] = 1.0f;
  }
  return out;
}

at::Tensor stack_rows(const std::vector<std::vector<float>>& rows, const std::string& file, const std::string& what) {
  if (rows.empty()) return at::zeros({0, 1});
  for (const auto& r : rows)
    if (r.size() != rows.front().size())
      bad_graph(file, fmt::format("{} rows differ in length ({} and {})", what, rows.front().size(), r.size()));
  at::Tensor t = at::empty({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows.front().size())});
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i].begin(), rows[i].end(), t[i].data_ptr<float>());
  return t;
}

GraphFile read_graph(const std::string& file) {
  std::ifstream in(file);
  if (!in) bad_graph(file, "cannot be opened");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    bad_graph(file, std::string("is not JSON (") + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("nodes") || !j["nodes"].is_array()) bad_graph(file, "has no \"nodes\" array");
  std::vector<std::string> classes, preds = rooms_taxonomy().predicates;
  for (const auto& c : rooms_taxonomy().classes) classes.push_back(c.name);
  std::vector<std::vector<float>> nodes, rels;
  std::vector<std::int64_t> ends;
  for (std::size_t i = 0; i < j["nodes"].size(); ++i)
    nodes.push_back(distribution(j["nodes"][i], "label", classes, true, file, fmt::format("nodes[{}]", i)));
  const auto edges = j.value("edges", nlohmann::json::array());
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const auto& e = edges[k];
    for (const char* end : {"subject", "object"}) {
      if (!e.contains(end) || !e[end].is_number_integer() || e[end].get<std::int64_t>() < 0 ||
          e[end].get<std::size_t>() >= nodes.size())
        bad_graph(file, fmt::format("edges[{}].{} must be a node index in [0, {})", k, end, nodes.size()));
      ends.push_back(e[end].get<std::int64_t>());
    }
    rels.push_back(distribution(e, "labels", preds, false, file, fmt::format("edges[{}]", k)));
  }
  GraphFile g{stack_rows(nodes, file, "node"), stack_rows(rels, file, "edge"),
              at::tensor(ends, at::kLong).view({-1, 2})};
  if (g.node.lt(0).any().item<bool>() || g.pred.lt(0).any().item<bool>() || g.pred.gt(1).any().item<bool>())
    bad_graph(file, "holds a probability outside [0, 1]");
  return g;
}

}  // namespace

void run_distance(nexp::RunContext& ctx) {
  const auto o = ctx.options<DistanceOptions>();
  const GraphFile a = read_graph(o.pred), b = read_graph(o.target);
  if (a.node.sizes() != b.node.sizes() || a.pred.sizes() != b.pred.sizes() || !a.edges.equal(b.edges))
    throw nexp::DataError(fmt::format(
        "params.pred ({}) and params.target ({}) are not fields over the same graph: nodes [{} x {}] vs [{} x {}], "
        "edges {} vs {} (same subject/object order required). Align the two files' nodes and edges",
        o.pred, o.target, a.node.size(0), a.node.size(1), b.node.size(0), b.node.size(1), a.edges.size(0),
        b.edges.size(0)));
  const auto model = o.predicates == "categorical" ? PredicateModel::Categorical : PredicateModel::Bernoulli;
  const RootField p = root_from_probs(a.node, a.pred, a.edges, model), q = root_from_probs(b.node, b.pred, b.edges, model);
  const GraphDistance d = graph_distance(p, q, o.node_weight);
  ctx.summary("graph_distance", d.distance.item<double>());
  ctx.summary("node_term", d.node_term.item<double>());
  ctx.summary("triplet_term", d.triplet_term.item<double>());
}

// ---------------------------------------------------------------- loss benchmark

namespace {

struct Logits {
  at::Tensor node, pred, edges;
};

// Median seconds of forward + backward of `term` (a [E] tensor of triplet terms) on fresh logits.
template <class Term>
double time_term(const Logits& l, int repeats, Term term) {
  std::vector<double> seconds;
  for (int k = 0; k < repeats; ++k) {
    const at::Tensor node = l.node.detach().requires_grad_(true), pred = l.pred.detach().requires_grad_(true);
    const auto start = std::chrono::steady_clock::now();
    const RootField p = root_from_logits(node, pred, l.edges, PredicateModel::Categorical);
    term(p).mean().backward();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return nexp::stats::median(seconds);
}

}  // namespace

void run_bench(nexp::RunContext& ctx) {
  const auto o = ctx.options<BenchOptions>();
  const std::int64_t C = o.classes, R = o.predicates;
  using Col = nexp::CsvColumn;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "bench.csv",
                      {Col::integer("edges"), Col::real("factorised_s"), Col::real("materialised_s"), Col::real("speedup"),
                       Col::integer("factorised_bytes"), Col::integer("materialised_bytes"), Col::real("max_abs_diff")});
  nexp::Random rng = ctx.stream("bench");
  double speedup = NAN;
  for (const std::int64_t E : o.edges) {
    torch::manual_seed(rng());
    const std::int64_t N = std::max<std::int64_t>(2, E / 4);
    const Logits l{at::randn({N, C}), at::randn({E, R}), at::randint(0, N, {E, 2}, at::kLong)};
    const RootField q = root_from_logits(at::randn({N, C}), at::randn({E, R}), l.edges, PredicateModel::Categorical);
    const double fast = time_term(l, o.repeats, [&](const RootField& p) { return triplet_terms(p, q); });
    const double slow = time_term(l, o.repeats, [&](const RootField& p) { return triplet_terms_materialised(p, q, o.chunk); });
    const RootField p = root_from_logits(l.node, l.pred, l.edges, PredicateModel::Categorical);
    const double diff = (triplet_terms(p, q) - triplet_terms_materialised(p, q, o.chunk)).abs().max().item<double>();
    // The largest tensors each holds at once (float32): per-edge gathers of the two roots and the
    // per-edge coefficients against one block of two C x R x C cubes and their product.
    const std::int64_t fast_bytes = 4 * E * (4 * C + 2 * R + 4);
    const std::int64_t slow_bytes = 4 * std::min<std::int64_t>(E, o.chunk) * C * R * C * 3;
    speedup = slow / fast;
    csv.row(E, fast, slow, speedup, fast_bytes, slow_bytes, diff);
    ctx.log().info("E = {}: factorised {:.2e} s, materialised {:.2e} s ({:.0f}x), max |diff| {:.1e}", E, fast, slow,
                   speedup, diff);
  }
  ctx.summary("speedup", speedup);
}

}  // namespace hellinger_sg
