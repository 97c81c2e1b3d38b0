// approx_pc's options, teacher data set and methods (experiments.hpp).
#include "experiments.hpp"

#include <fmt/format.h>
#include <nexp/table.hpp>
#include <nexp/torch.hpp>
#include <torch/serialize.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

namespace approx_pc {

namespace fs = std::filesystem;

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::Bp: return "bp";
    case Rule::Pc: return "pc";
    case Rule::Dfc: return "dfc";
    case Rule::ApproxPc: return "approx_pc";
  }
  return "?";
}

// ------------------------------------------------------------------ options

void RuleOptions::declare(nexp::Options<RuleOptions>& o) {
  o.add("activation", &RuleOptions::activation, "hidden nonlinearity f",
        {{"linear", Activation::Linear}, {"tanh", Activation::Tanh}});
  o.add("gain", &RuleOptions::gain, "f(a) = tanh(gain a)").range(1e-6, 100);
  o.add("init_scale", &RuleOptions::init_scale, "W_l ~ N(0, init_scale^2 / n_{l-1})").range(0, 100);
  o.add("rule", &RuleOptions::rule, "learning rule",
        {{"bp", Rule::Bp}, {"pc", Rule::Pc}, {"dfc", Rule::Dfc}, {"approx_pc", Rule::ApproxPc}});
  o.add("nudge", &RuleOptions::nudge, "target y* = yhat + nudge (y - yhat), in (0, 1]").range(0, 1);
  o.add("clamp", &RuleOptions::clamp, "clamp the output to y* (PC: x_L = y*; control: leak alpha = 0)");
  o.add("beta", &RuleOptions::beta, "output precision when not clamped (control leak alpha = 1/beta)").min(1e-12);
  o.add("pc_steps", &RuleOptions::pc_steps, "PC: inference steps T").range(0, 10000000);
  o.add("pc_step", &RuleOptions::pc_step, "PC: inference step size gamma").range(1e-9, 10);
  o.add("pc_tol", &RuleOptions::pc_tol, "PC: stop inference at ||dF/dx|| <= tol ||dF/dx||_0 (0: run T steps)").min(0);
  o.add("subgoals", &RuleOptions::subgoals, "Approx PC: subgoals K between yhat and y* (K = 1 is DFC)").range(1, 100000);
  o.add("refine", &RuleOptions::refine, "Approx PC: re-linearisations of Q at the final goal").range(0, 100000);
  o.add("refine_tol", &RuleOptions::refine_tol, "Approx PC: stop refining when the state moves by less (relative)").min(0);
  o.add("controller", &RuleOptions::controller, "controller: Euler dynamics or chord-Newton steady-state solve",
        {{"iterate", Controller::Iterate}, {"solve", Controller::Solve}});
  o.add("max_iters", &RuleOptions::max_iters, "controller iterations per subgoal").range(0, 10000000);
  o.add("control_tol", &RuleOptions::control_tol, "controller: stop at ||e - alpha u|| <= tol ||y* - yhat||").min(0);
  o.add("dt", &RuleOptions::dt, "Euler step of the iterate controller").range(1e-9, 10);
}

void RuleOptions::check() const {
  if (!(nudge > 0 && nudge <= 1))
    throw nexp::ConfigError(fmt::format("params.nudge = {}: expected a value in (0, 1] (the share of the way from the "
                                        "prediction to the label the target moves); set e.g. params.nudge=0.1",
                                        nudge));
}

PcSettings RuleOptions::pc() const {
  PcSettings s;
  s.beta = beta, s.clamp = clamp, s.step = pc_step, s.max_steps = pc_steps, s.tol = pc_tol;
  return s;
}

ControlSettings RuleOptions::control(Rule r) const {
  ControlSettings s;
  s.alpha = clamp ? 0.0 : 1.0 / beta;
  s.mode = controller;
  s.subgoals = r == Rule::Dfc ? 1 : subgoals;
  s.refine = r == Rule::Dfc ? 0 : refine;
  s.refine_tol = refine_tol, s.max_iters = max_iters, s.tol = control_tol, s.dt = dt;
  return s;
}

void CompareOptions::declare(nexp::Options<CompareOptions>& o) {
  o.inherit<RuleOptions>();
  o.add("depth", &CompareOptions::depth, "hidden layers").range(1, 64);
  o.add("width", &CompareOptions::width, "units per hidden layer").range(1, 100000);
  o.add("batch", &CompareOptions::batch, "samples in the compared batch (the first of the training set)").range(1, 1000000);
  o.add("pretrain_steps", &CompareOptions::pretrain_steps, "backprop steps before the comparison").range(0, 10000000);
  o.add("pretrain_lr", &CompareOptions::pretrain_lr, "learning rate of those steps").range(0, 100);
  o.add("subgoals_grid", &CompareOptions::subgoals_grid, "K of the Approx PC rows of deviation.csv").range(1, 100000);
  o.add("nudge_grid", &CompareOptions::nudge_grid, "nudges of the rows of deviation.csv (empty: params.nudge)")
      .range(1e-12, 1);
  o.add("reference_steps", &CompareOptions::reference_steps, "PC reference: descent steps before Newton's").range(1, 100000000);
  o.add("reference_newton", &CompareOptions::reference_newton, "PC reference: most Newton steps").range(0, 100000);
  o.add("reference_tol", &CompareOptions::reference_tol, "PC reference: relative gradient norm to stop at").min(0);
  o.add("reference_step", &CompareOptions::reference_step, "PC reference: step size").range(1e-9, 10);
  o.add("target_rel_err", &CompareOptions::target_rel_err, "passes_to_target: the state error to reach").min(0);
}

void TrainOptions::declare(nexp::Options<TrainOptions>& o) {
  o.inherit<RuleOptions>();
  o.add("hidden", &TrainOptions::hidden, "hidden layer widths").min(1);
  o.add("lr", &TrainOptions::lr, "SGD learning rate (on the batch-mean update)").range(0, 100);
  o.add("epochs", &TrainOptions::epochs, "passes over the training set").range(1, 100000);
  o.add("batch_size", &TrainOptions::batch_size, "samples per step").range(1, 1000000);
  o.add("max_steps", &TrainOptions::max_steps, "stop after this many steps (0: all epochs)").min(0);
  o.add("eval_every", &TrainOptions::eval_every, "steps between test evaluations").min(1);
  o.add("cos_every", &TrainOptions::cos_every, "steps between cosines of the update with backprop's").min(1);
  o.add("target_accuracy", &TrainOptions::target_accuracy, "seconds_to_target: test accuracy to reach").range(0, 1);
  o.add("checkpoint_every", &TrainOptions::checkpoint_every, "steps between checkpoints (0: none)").min(0);
  o.add("use_double", &TrainOptions::use_double, "train in double precision (else float)");
}

void TeacherOptions::declare(nexp::Options<TeacherOptions>& o) {
  o.add("train_size", &TeacherOptions::train_size, "training samples").range(1, 100000000);
  o.add("test_size", &TeacherOptions::test_size, "test samples").range(1, 100000000);
  o.add("input_dim", &TeacherOptions::input_dim, "input dimension").range(1, 100000);
  o.add("hidden", &TeacherOptions::hidden, "the teacher's hidden widths").min(1);
  o.add("classes", &TeacherOptions::classes, "classes (the teacher's outputs; label = argmax)").range(2, 100000);
  o.add("gain", &TeacherOptions::gain, "teacher nonlinearity tanh(gain a)").range(1e-6, 100);
  o.add("label_noise", &TeacherOptions::label_noise, "share of labels replaced by a uniform class").range(0, 1);
  o.add("teacher_seed", &TeacherOptions::teacher_seed, "seed of the teacher and the inputs (fixed across run seeds)").min(0);
}

// ------------------------------------------------------------------ data

namespace {

at::Tensor normal_tensor(nexp::Random& rng, std::int64_t rows, std::int64_t cols) {
  at::Tensor t = at::empty({rows, cols}, at::kDouble);
  double* p = t.data_ptr<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = rng.normal();
  return t;
}

std::vector<std::int64_t> with_ends(std::int64_t in, const std::vector<std::int64_t>& hidden, std::int64_t out) {
  std::vector<std::int64_t> sizes{in};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(out);
  return sizes;
}

}  // namespace

std::shared_ptr<nexp::Dataset> make_teacher(const TeacherOptions& o, nexp::RunContext&) {
  nexp::Random rng = nexp::Random::stream(static_cast<std::uint64_t>(o.teacher_seed), "teacher");
  const Mlp teacher = Mlp::init(with_ends(o.input_dim, o.hidden, o.classes), Activation::Tanh, o.gain, 1.0, rng, at::kDouble);
  auto labelled = [&](std::int64_t n, at::Tensor& x, at::Tensor& y) {
    x = normal_tensor(rng, n, o.input_dim);
    y = teacher.forward(x).back().argmax(1);
    auto* label = y.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < n; ++i)
      if (rng.bernoulli(o.label_noise)) label[i] = static_cast<std::int64_t>(rng.below(o.classes));
    x = x.to(at::kFloat);
  };
  auto d = std::make_shared<nexp::TensorDataset>();
  d->name = "approx_pc.teacher";
  labelled(o.train_size, d->train_x, d->train_y);
  labelled(o.test_size, d->test_x, d->test_y);
  d->num_classes = o.classes;
  return d;
}

namespace {

struct Data {
  at::Tensor x, y, test_x, test_y;  // x: [N, n_0] flattened; y: int64 labels
  std::int64_t classes = 0;
};

Data read_data(nexp::RunContext& ctx, at::ScalarType dtype) {
  const auto& d = ctx.dataset_as<nexp::TensorDataset>();
  if (d.num_classes <= 0 || !d.test_x.defined())
    throw nexp::ConfigError(fmt::format("dataset '{}': approx_pc needs a classification data set with a test split "
                                        "(mnist, fashion_mnist, digits, approx_pc.teacher)",
                                        d.name));
  Data out;
  out.x = d.train_x.reshape({d.train_x.size(0), -1}).to(dtype);
  out.test_x = d.test_x.reshape({d.test_x.size(0), -1}).to(dtype);
  out.y = d.train_y.to(at::kLong);
  out.test_y = d.test_y.to(at::kLong);
  out.classes = d.num_classes;
  return out;
}

at::Tensor one_hot(const at::Tensor& labels, std::int64_t classes, at::ScalarType dtype) {
  at::Tensor y = at::zeros({labels.size(0), classes}, at::TensorOptions().dtype(dtype));
  y.scatter_(1, labels.unsqueeze(1), 1.0);
  return y;
}

void scale_update(Updates& u, double factor) {
  for (std::size_t l = 1; l < u.dW.size(); ++l) {
    u.dW[l].mul_(factor);
    u.db[l].mul_(factor);
  }
}

}  // namespace

Step rule_step(Rule rule, const RuleOptions& o, const Mlp& net, const std::vector<at::Tensor>& ff,
               const at::Tensor& labels_onehot) {
  Step s;
  if (rule == Rule::Bp) {
    s.settled.v = ff;
    s.update = net.backprop(ff, labels_onehot, &s.settled.cost);
    s.settled.converged = true;
    return s;
  }
  const at::Tensor y_star = ff.back() + o.nudge * (labels_onehot - ff.back());
  s.settled = rule == Rule::Pc ? pc_inference(net, ff, y_star, o.pc()) : control(net, ff, y_star, o.control(rule));
  s.update = net.local_update(s.settled.v, s.settled.e, &s.settled.cost);
  // eps_L ~ nudge (y - yhat) when clamped, beta nudge (y - yhat) for weak beta: back to backprop's units.
  scale_update(s.update, 1.0 / (o.nudge * (o.clamp ? 1.0 : o.beta)));
  return s;
}

// ------------------------------------------------------------------ compare

namespace {

struct Measured {
  double state_rel_err = NAN, update_rel_err = NAN, cos_pc = NAN, cos_bp = NAN;
  double passes = 0, passes_to_target = -1;
  int iterations = 0;
  double residual = NAN;
  bool converged = false;
};

Measured measure(Rule rule, const RuleOptions& o, const Mlp& net, const std::vector<at::Tensor>& ff,
                 const at::Tensor& onehot, const Settled& ref, const Updates& ref_update, const Updates& bp,
                 double target) {
  Measured m;
  const at::Tensor y_star = ff.back() + o.nudge * (onehot - ff.back());
  auto first_hit = [&](const std::vector<at::Tensor>& v, double passes) {
    if (m.passes_to_target < 0 && state_relative_error(v, ref.v, ff) <= target) m.passes_to_target = passes;
  };
  Step s;
  if (rule == Rule::Bp) {
    s = rule_step(rule, o, net, ff, onehot);
  } else {
    s.settled = rule == Rule::Pc ? pc_inference(net, ff, y_star, o.pc(), first_hit)
                                 : control(net, ff, y_star, o.control(rule), first_hit);
    m.passes = s.settled.cost.passes;  // inference only, without the update
    s.update = net.local_update(s.settled.v, s.settled.e);
    scale_update(s.update, 1.0 / (o.nudge * (o.clamp ? 1.0 : o.beta)));
    m.state_rel_err = state_relative_error(s.settled.v, ref.v, ff);
    m.update_rel_err = relative_error(s.update, ref_update);
  }
  if (rule == Rule::Bp) m.passes = s.settled.cost.passes;
  m.cos_pc = cosine(s.update, ref_update);
  m.cos_bp = cosine(s.update, bp);
  m.iterations = s.settled.iterations;
  m.residual = s.settled.residual;
  m.converged = s.settled.converged;
  return m;
}

Mlp pretrained_net(nexp::RunContext& ctx, const CompareOptions& o, const Data& data) {
  nexp::Random init = ctx.stream("init");
  Mlp net = Mlp::init(with_ends(data.x.size(1), std::vector<std::int64_t>(o.depth, o.width), data.classes),
                      o.activation, o.gain, o.init_scale, init, at::kDouble);
  nexp::Random pick = ctx.stream("pretrain");
  const std::int64_t n = data.x.size(0);
  for (int s = 0; s < o.pretrain_steps; ++s) {
    at::Tensor idx = at::empty({o.batch}, at::kLong);
    for (std::int64_t i = 0; i < o.batch; ++i) idx[i] = static_cast<std::int64_t>(pick.below(n));
    const auto ff = net.forward(data.x.index_select(0, idx));
    net.apply(net.backprop(ff, one_hot(data.y.index_select(0, idx), data.classes, at::kDouble)), o.pretrain_lr / o.batch);
  }
  return net;
}

}  // namespace

namespace {

// PC's converged equilibrium at one nudge: the reference every rule is measured against.
struct Reference {
  at::Tensor y_star;
  Settled settled;
  Updates update, bp;
};

Reference reference(const CompareOptions& o, const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& onehot) {
  Reference r;
  PcSettings rs = o.pc();
  rs.max_steps = o.reference_steps, rs.tol = o.reference_tol, rs.step = o.reference_step;
  r.y_star = ff.back() + o.nudge * (onehot - ff.back());
  r.settled = pc_equilibrium(net, ff, r.y_star, rs, o.reference_newton);
  r.update = net.local_update(r.settled.v, r.settled.e);
  scale_update(r.update, 1.0 / (o.nudge * (o.clamp ? 1.0 : o.beta)));
  r.bp = net.backprop(ff, onehot);
  return r;
}

}  // namespace

void run_compare(nexp::RunContext& ctx) {
  const auto o = ctx.options<CompareOptions>();
  o.check();
  const Data data = read_data(ctx, at::kDouble);
  if (o.batch > data.x.size(0))
    throw nexp::ConfigError(fmt::format("params.batch = {} exceeds the {} training samples of the data set; lower it",
                                        o.batch, data.x.size(0)));
  const Mlp net = pretrained_net(ctx, o, data);
  const at::Tensor x = data.x.slice(0, 0, o.batch), onehot = one_hot(data.y.slice(0, 0, o.batch), data.classes, at::kDouble);
  const std::vector<at::Tensor> ff = net.forward(x);

  using C = nexp::CsvColumn;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "deviation.csv",
                      {C::text("rule"), C::integer("subgoals"), C::integer("depth"), C::text("activation"),
                       C::real("gain"), C::real("nudge"), C::integer("seed"), C::real("state_rel_err"),
                       C::real("update_rel_err"), C::real("update_cos_pc"), C::real("update_cos_bp"),
                       C::real("layer_passes"), C::real("passes_to_target"), C::integer("iterations"),
                       C::real("residual"), C::boolean("converged"), C::real("reference_residual")});
  const char* act = o.activation == Activation::Linear ? "linear" : "tanh";
  const double target = o.target_rel_err;
  std::vector<double> nudges = o.nudge_grid;
  if (std::find(nudges.begin(), nudges.end(), o.nudge) == nudges.end()) nudges.push_back(o.nudge);
  for (double nudge : nudges) {
    CompareOptions at_nudge = o;
    at_nudge.nudge = nudge;
    const Reference ref = reference(at_nudge, net, ff, onehot);
    if (!ref.settled.converged)
      ctx.log().warn("nudge {}: PC reference not converged (residual {:.3g}); raise params.reference_newton", nudge,
                     ref.settled.residual);
    auto run = [&](Rule rule, int k) {
      RuleOptions ko = at_nudge;
      if (k > 0) ko.subgoals = k;
      const Measured m = measure(rule, ko, net, ff, onehot, ref.settled, ref.update, ref.bp, target);
      csv.row(rule_name(rule), k, o.depth, act, o.gain, nudge, static_cast<std::int64_t>(ctx.seed()), m.state_rel_err,
              m.update_rel_err, m.cos_pc, m.cos_bp, m.passes, m.passes_to_target, m.iterations, m.residual,
              m.converged, ref.settled.residual);
      return m;
    };
    run(Rule::Bp, 0);
    const Measured pc = run(Rule::Pc, 0);
    run(Rule::Dfc, 1);
    for (std::int64_t k : o.subgoals_grid) run(Rule::ApproxPc, static_cast<int>(k));
    if (nudge != o.nudge) continue;

    // The summary: the configured rule (and K) at params.nudge.
    ctx.summary("reference_residual", ref.settled.residual);
    ctx.summary("reference_steps", ref.settled.iterations);  // Newton steps after the descent
    const Measured m = o.rule == Rule::Pc ? pc : measure(o.rule, o, net, ff, onehot, ref.settled, ref.update, ref.bp, target);
    if (o.rule != Rule::Bp) {
      ctx.summary("state_rel_err", m.state_rel_err);
      ctx.summary("update_rel_err", m.update_rel_err);
      ctx.summary("passes_to_target", m.passes_to_target);
      ctx.summary("pc_passes_to_target", pc.passes_to_target);
      const bool both = m.passes_to_target > 0 && pc.passes_to_target > 0;
      ctx.summary("speedup_vs_pc", both ? pc.passes_to_target / m.passes_to_target : -1);
    }
    ctx.summary("update_cos_pc", m.cos_pc);
    ctx.summary("update_cos_bp", m.cos_bp);
    ctx.summary("layer_passes", m.passes);
  }
}

// ------------------------------------------------------------------ train

namespace {

double accuracy(const Mlp& net, const at::Tensor& x, const at::Tensor& y) {
  return net.forward(x).back().argmax(1).eq(y).to(at::kDouble).mean().item<double>();
}

// The order of epoch e's samples: a Fisher-Yates shuffle from the run's stream ("shuffle", e).
at::Tensor epoch_order(nexp::RunContext& ctx, std::int64_t n, std::int64_t epoch) {
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  nexp::Random rng = ctx.stream("shuffle", static_cast<std::uint64_t>(epoch));
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  return at::tensor(order, at::kLong);
}

// What a training run carries between steps (and through a checkpoint).
struct Progress {
  std::int64_t step = 0;
  double seconds = 0, passes = 0, seconds_to_target = -1, passes_to_target = -1, cos_sum = 0, cos_n = 0;
  double accuracy = NAN;
  at::Tensor pack() const {
    return at::tensor({static_cast<double>(step), seconds, passes, seconds_to_target, passes_to_target, cos_sum, cos_n,
                       accuracy},
                      at::kDouble);
  }
  static Progress unpack(const at::Tensor& t) {
    const auto* p = t.data_ptr<double>();
    Progress g;
    g.step = static_cast<std::int64_t>(p[0]);
    g.seconds = p[1], g.passes = p[2], g.seconds_to_target = p[3], g.passes_to_target = p[4];
    g.cos_sum = p[5], g.cos_n = p[6], g.accuracy = p[7];
    return g;
  }
};

void save_state(nexp::RunContext& ctx, const Mlp& net, const Progress& g) {
  ctx.save_checkpoint([&](const fs::path& dir) {
    std::vector<at::Tensor> all{g.pack()};
    for (int l = 1; l <= net.depth(); ++l) all.push_back(net.W[l]), all.push_back(net.b[l]);
    torch::save(all, (dir / "state.pt").string());
  });
}

void load_state(const fs::path& dir, Mlp& net, Progress& g) {
  std::vector<at::Tensor> all;
  torch::load(all, (dir / "state.pt").string());
  g = Progress::unpack(all.at(0));
  for (int l = 1; l <= net.depth(); ++l) net.W[l] = all.at(2 * l - 1), net.b[l] = all.at(2 * l);
}

}  // namespace

void run_train(nexp::RunContext& ctx) {
  const auto o = ctx.options<TrainOptions>();
  o.check();
  const at::ScalarType dtype = o.use_double ? at::kDouble : at::kFloat;
  const Data data = read_data(ctx, dtype);
  nexp::Random init = ctx.stream("init");
  Mlp net = Mlp::init(with_ends(data.x.size(1), o.hidden, data.classes), o.activation, o.gain, o.init_scale, init, dtype);
  const std::int64_t n = data.x.size(0), per_epoch = std::max<std::int64_t>(1, n / o.batch_size);
  std::int64_t total = per_epoch * o.epochs;
  if (o.max_steps > 0) total = std::min(total, o.max_steps);

  Progress g;
  if (auto dir = ctx.checkpoint()) {
    load_state(*dir, net, g);
    ctx.restore_rng_state();
  }
  at::Tensor order;
  auto bar = ctx.progress(total, fmt::format("{} training", rule_name(o.rule)));
  bar.set(g.step);
  using Clock = std::chrono::steady_clock;
  while (g.step < total) {
    const std::int64_t epoch = g.step / per_epoch, within = g.step % per_epoch;
    if (!order.defined() || within == 0) order = epoch_order(ctx, n, epoch);
    const at::Tensor idx = order.slice(0, within * o.batch_size, std::min(n, (within + 1) * o.batch_size));
    const at::Tensor xb = data.x.index_select(0, idx), yb = one_hot(data.y.index_select(0, idx), data.classes, dtype);

    const auto start = Clock::now();
    Cost cost;
    const std::vector<at::Tensor> ff = net.forward(xb, &cost);
    Step s = rule_step(o.rule, o, net, ff, yb);
    const double lr = o.lr / static_cast<double>(idx.size(0));
    if (g.step % o.cos_every == 0) {  // measured outside the clock and the pass count
      const auto paused = Clock::now();
      g.cos_sum += cosine(s.update, net.backprop(ff, yb)), g.cos_n += 1;
      g.seconds -= std::chrono::duration<double>(Clock::now() - paused).count();
    }
    net.apply(s.update, lr);
    g.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    g.passes += cost.passes + s.settled.cost.passes;
    ++g.step;
    bar.advance();

    if (g.step % o.eval_every == 0 || g.step == total) {
      g.accuracy = accuracy(net, data.test_x, data.test_y);
      if (g.seconds_to_target < 0 && g.accuracy >= o.target_accuracy) {
        g.seconds_to_target = g.seconds;
        g.passes_to_target = g.passes;
      }
      ctx.log_metrics(g.step, {{"test_accuracy", g.accuracy}, {"wall_seconds", g.seconds}, {"layer_passes", g.passes}});
      bar.note(fmt::format("accuracy {:.4f}", g.accuracy));
    }
    const bool stop = ctx.stop_requested();
    if (o.checkpoint_every > 0 && (g.step % o.checkpoint_every == 0 || g.step == total || stop)) save_state(ctx, net, g);
    if (stop) return;
  }
  ctx.summary("test_accuracy", g.accuracy);
  ctx.summary("update_cos_bp", g.cos_n > 0 ? g.cos_sum / g.cos_n : NAN);
  ctx.summary("layer_passes_per_step", g.passes / static_cast<double>(total));
  ctx.summary("ms_per_step", 1000.0 * g.seconds / static_cast<double>(total));
  ctx.summary("seconds_to_target", g.seconds_to_target);
  ctx.summary("passes_to_target", g.passes_to_target);
}

}  // namespace approx_pc
