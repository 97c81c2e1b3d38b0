#include "methods.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nexp/idx.hpp>
#include <nexp/table.hpp>

namespace dsminimax {

// ---------------------------------------------------------------- data set

void NcplOptions::declare(nexp::Options<NcplOptions>& o) {
  o.add("nodes", &NcplOptions::nodes, "number of nodes M").range(1, 4096);
  o.add("topology", &NcplOptions::topology, "communication graph",
        {{"ring", Topology::Ring}, {"erdos_renyi", Topology::ErdosRenyi}});
  o.add("edge_probability", &NcplOptions::edge_probability, "Erdos-Renyi edge probability p").range(0.01, 1);
  o.add("kappa", &NcplOptions::kappa, "1 / (smallest nonzero eigenvalue of A): the PL condition number").range(1, 1e8);
  o.add("instance", &NcplOptions::instance, "instance number: draws A, B_k, c_k (and an Erdos-Renyi graph)").min(0);
  o.add("dim_x", &NcplOptions::dim_x, "primal dimension (at most rank, so that Phi is bounded below)").range(1, 10000);
  o.add("dim_y", &NcplOptions::dim_y, "dual dimension").range(1, 10000);
  o.add("rank", &NcplOptions::rank, "rank of A (dim_y - rank zero eigenvalues: PL, not strongly concave)").range(1, 10000);
  o.add("lam", &NcplOptions::lam, "weight of the nonconvex term lam sum a x^2 / (1 + a x^2)").min(0);
  o.add("a", &NcplOptions::a, "curvature a of the nonconvex term").min(0);
  o.add("coupling", &NcplOptions::coupling, "scale of the coupling matrices B_k").min(0);
  o.add("coupling_mode", &NcplOptions::coupling_mode,
        "B_k inside range(A) at random (range) or scaled by sqrt of A's spectrum (aligned: Phi independent of kappa)",
        {{"aligned", Coupling::Aligned}, {"range", Coupling::Range}});
  o.add("heterogeneity", &NcplOptions::heterogeneity, "relative spread of B_k, c_k across nodes").min(0);
  o.add("noise", &NcplOptions::noise, "standard deviation of the stochastic gradient noise; 0: exact gradients").min(0);
}

std::string Instance::describe() const {
  return fmt::format("{}; graph lambda_2 {:.4f}, spectral gap {:.4f}", problem->describe(), mixing.lambda,
                     mixing.spectral_gap());
}

Mixing make_mixing(Topology topology, int nodes, double p, std::uint64_t instance) {
  if (topology == Topology::Ring) return ring_mixing(nodes);
  auto rng = nexp::Random::stream(instance, "dsminimax.graph");
  return erdos_renyi_mixing(nodes, p, rng);
}

namespace {

NcplSpec spec_of(const NcplOptions& o) {
  NcplSpec s;
  s.nodes = o.nodes, s.dim_x = o.dim_x, s.dim_y = o.dim_y, s.rank = o.rank;
  s.kappa = o.kappa, s.lam = o.lam, s.a = o.a, s.coupling = o.coupling, s.heterogeneity = o.heterogeneity;
  s.noise = o.noise, s.coupling_mode = o.coupling_mode, s.instance = static_cast<std::uint64_t>(o.instance);
  return s;
}

}  // namespace

std::shared_ptr<nexp::Dataset> make_ncpl(const NcplOptions& o, nexp::RunContext&) {
  if (o.rank > o.dim_y)
    throw nexp::ConfigError(fmt::format("dataset.rank = {} exceeds dataset.dim_y = {}; use rank <= dim_y", o.rank, o.dim_y));
  auto mixing = make_mixing(o.topology, o.nodes, o.edge_probability, static_cast<std::uint64_t>(o.instance));
  return std::make_shared<Instance>(std::make_shared<Ncpl>(spec_of(o)), std::move(mixing));
}

void LogregOptions::declare(nexp::Options<LogregOptions>& o) {
  o.add("source", &LogregOptions::source,
        "a9a (Adult, <data>/stable_fairness/adult/a9a.txt), mnist_3_8 (<data>/mnist), or a file: libsvm, csv",
        {{"a9a", Source::A9a}, {"mnist_3_8", Source::Mnist38}, {"libsvm", Source::Libsvm}, {"csv", Source::Csv}});
  o.add("file", &LogregOptions::file, "source libsvm or csv: the file to read");
  o.add("label", &LogregOptions::label, "source csv: the label column (> 0: +1, else -1); other columns are features");
  o.add("features", &LogregOptions::features, "source libsvm: feature dimension (a9a: 123)").range(1, 1000000);
  o.add("samples", &LogregOptions::samples, "training rows used, a random subset drawn from `instance`; 0: all").min(0);
  o.add("nodes", &LogregOptions::nodes, "number of nodes M").range(1, 4096);
  o.add("topology", &LogregOptions::topology, "communication graph",
        {{"ring", Topology::Ring}, {"erdos_renyi", Topology::ErdosRenyi}});
  o.add("edge_probability", &LogregOptions::edge_probability, "Erdos-Renyi edge probability p").range(0.01, 1);
  o.add("split", &LogregOptions::split, "rows to nodes: iid (shuffled) or label_skewed (sorted by label)",
        {{"iid", Split::Iid}, {"label_skewed", Split::LabelSkewed}});
  o.add("batch", &LogregOptions::batch, "minibatch per node and step; 0: full local gradients").min(0);
  o.add("rho", &LogregOptions::rho, "weight rho of the dual regulariser rho/2 ||y - 1/n||^2 (1: the notes' form)")
      .min(1e-12);
  o.add("instance", &LogregOptions::instance, "draws the row subset and the shuffle").min(0);
}

LogregData read_libsvm(const std::filesystem::path& file, int features) {
  std::ifstream in(file);
  if (!in)
    throw nexp::DataError(fmt::format("dsminimax.robust_logreg: cannot open '{}'; install the data with "
                                      "scripts/setup or give dataset.file=<a LIBSVM file>",
                                      file.string()));
  std::vector<std::vector<int>> idx;
  std::vector<double> labels;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    std::istringstream ss(line);
    std::string tok;
    if (!(ss >> tok)) continue;
    const double label = std::stod(tok);
    labels.push_back(label > 0 ? 1.0 : -1.0);
    idx.emplace_back();
    while (ss >> tok) {
      const auto colon = tok.find(':');
      const int j = colon == std::string::npos ? -1 : std::atoi(tok.substr(0, colon).c_str());
      if (j < 1 || j > features)
        throw nexp::DataError(fmt::format("{}:{}: expected index:value with 1 <= index <= {} (dataset.features), "
                                          "found '{}'",
                                          file.string(), lineno, features, tok));
      idx.back().push_back(j - 1);
    }
  }
  LogregData d;
  d.a = Matrix::Zero(static_cast<Eigen::Index>(labels.size()), features);
  d.b = Eigen::Map<Vector>(labels.data(), static_cast<Eigen::Index>(labels.size()));
  for (size_t i = 0; i < idx.size(); ++i)
    for (int j : idx[i]) d.a(static_cast<Eigen::Index>(i), j) = 1.0;
  return d;
}

LogregData read_mnist_3_8(const std::filesystem::path& dir) {
  const std::string hint = "scripts/setup installs MNIST; or give dataset.source=csv dataset.file=<a CSV table>";
  const auto images = nexp::read_idx(dir / "train-images-idx3-ubyte", "dsminimax.robust_logreg: mnist", 0, hint);
  const auto labels = nexp::read_idx(dir / "train-labels-idx1-ubyte", "dsminimax.robust_logreg: mnist", 0, hint);
  const std::int64_t pixels = images.shape.size() == 3 ? images.shape[1] * images.shape[2] : 0;
  if (pixels == 0 || labels.shape.size() != 1 || labels.shape[0] != images.shape[0])
    throw nexp::DataError(fmt::format("dsminimax.robust_logreg: {}: expected images (n, 28, 28) and n labels; {}",
                                      dir.string(), hint));
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < labels.shape[0]; ++i)
    if (labels.bytes[static_cast<size_t>(i)] == 3 || labels.bytes[static_cast<size_t>(i)] == 8) keep.push_back(i);
  LogregData d;
  d.a.resize(static_cast<Eigen::Index>(keep.size()), pixels);
  d.b.resize(static_cast<Eigen::Index>(keep.size()));
  for (size_t r = 0; r < keep.size(); ++r) {
    const std::uint8_t* px = images.bytes.data() + keep[r] * pixels;
    for (std::int64_t j = 0; j < pixels; ++j) d.a(static_cast<Eigen::Index>(r), j) = px[j] / 255.0;
    d.b(static_cast<Eigen::Index>(r)) = labels.bytes[static_cast<size_t>(keep[r])] == 3 ? 1.0 : -1.0;
  }
  return d;
}

LogregData read_csv_logreg(const std::filesystem::path& file, const std::string& label) {
  const nexp::CsvTable t = nexp::CsvTable::read(file);
  const std::size_t y = t.column(label);
  std::vector<std::string> features;
  for (const auto& h : t.header())
    if (h != label) features.push_back(h);
  if (features.empty() || t.size() == 0)
    throw nexp::DataError(fmt::format("{}: expected a header with '{}' and at least one feature column, and rows; "
                                      "found {} columns and {} rows", file.string(), label, t.header().size(), t.size()));
  LogregData d;
  d.a.resize(static_cast<Eigen::Index>(t.size()), static_cast<Eigen::Index>(features.size()));
  d.b.resize(static_cast<Eigen::Index>(t.size()));
  for (std::size_t r = 0; r < t.size(); ++r) {
    d.b(static_cast<Eigen::Index>(r)) = t.real(r, t.header()[y]) > 0 ? 1.0 : -1.0;
    for (std::size_t j = 0; j < features.size(); ++j)
      d.a(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = t.real(r, features[j]);
  }
  return d;
}

namespace {

// The rows a source provides and how many of the first ones are its training split.
std::pair<LogregData, std::int64_t> load_logreg(const LogregOptions& o) {
  const bool wants_file = o.source == Source::Libsvm || o.source == Source::Csv;
  if (wants_file == o.file.empty())
    throw nexp::ConfigError(wants_file ? "dataset.file: expected the file to read with dataset.source=libsvm or csv, "
                                         "found none; give dataset.file=<path>"
                                       : "dataset.file is read only with dataset.source=libsvm or csv; set the source "
                                         "or leave the file out");
  LogregData all;
  switch (o.source) {
    case Source::A9a: all = read_libsvm(nexp::data_dir() / "stable_fairness" / "adult" / "a9a.txt", 123); break;
    case Source::Mnist38: all = read_mnist_3_8(nexp::data_dir() / "mnist"); break;
    case Source::Libsvm: all = read_libsvm(o.file, o.features); break;
    case Source::Csv: all = read_csv_logreg(o.file, o.label); break;
  }
  const auto n_all = static_cast<std::int64_t>(all.b.size());
  return {std::move(all), o.source == Source::A9a ? std::min<std::int64_t>(n_all, 32561) : n_all};  // a9a: train split first
}

}  // namespace

std::shared_ptr<nexp::Dataset> make_logreg(const LogregOptions& o, nexp::RunContext&) {
  auto [all, train] = load_logreg(o);
  const std::int64_t features = all.a.cols();
  const std::int64_t n = o.samples > 0 ? std::min(o.samples, train) : train;
  if (n < o.nodes)
    throw nexp::ConfigError(fmt::format("dataset.samples = {} leaves nodes without rows (dataset.nodes = {})", n, o.nodes));
  auto rng = nexp::Random::stream(static_cast<std::uint64_t>(o.instance), "dsminimax.logreg");
  std::vector<int> order(static_cast<size_t>(train));
  std::iota(order.begin(), order.end(), 0);
  for (std::int64_t i = train - 1; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<std::uint64_t>(i + 1))]);
  order.resize(static_cast<size_t>(n));
  if (o.split == Split::LabelSkewed)
    std::stable_sort(order.begin(), order.end(), [&](int p, int q) { return all.b(p) < all.b(q); });
  LogregData d;
  d.a.resize(n, features);
  d.b.resize(n);
  d.rows.resize(static_cast<size_t>(o.nodes));
  for (std::int64_t i = 0; i < n; ++i) {
    d.a.row(i) = all.a.row(order[i]);
    d.b(i) = all.b(order[i]);
    d.rows[static_cast<size_t>(i * o.nodes / n)].push_back(static_cast<int>(i));
  }
  auto mixing = make_mixing(o.topology, o.nodes, o.edge_probability, static_cast<std::uint64_t>(o.instance));
  return std::make_shared<Instance>(std::make_shared<RobustLogreg>(std::move(d), static_cast<int>(o.batch), o.rho),
                                    std::move(mixing));
}

// ---------------------------------------------------------------- single runs

void RunOptions::declare(nexp::Options<RunOptions>& o) {
  o.add("steps", &RunOptions::steps, "iterations at most (the cap)").min(1);
  o.add("eps", &RunOptions::eps, "target: ||grad Phi(xbar)||^2 + consensus error <= eps^2").min(0);
  o.add("stop_at_eps", &RunOptions::stop_at_eps, "stop at the first iteration that meets eps");
  o.add("step_scale", &RunOptions::step_scale, "multiplies the rule's step sizes (DS-GDA: also beta and mu)").min(0);
  o.add("eta", &RunOptions::eta, "eta_y, overriding the rule (ds_gda: eta_x = eta_y = eta)").min(0);
  o.add("ratio", &RunOptions::ratio, "gt_gda, dm_hsgd, dream, dm_gda: eta_y / eta_x; 0: the theory rule's kappa^2").min(0);
  o.add("r1", &RunOptions::r1, "ds_gda: primal smoothing r1, overriding the rule").min(0);
  o.add("r2", &RunOptions::r2, "ds_gda: dual smoothing r2, overriding the rule").min(0);
  o.add("beta", &RunOptions::beta, "ds_gda: z step beta, overriding the rule").range(0, 1);
  o.add("mu", &RunOptions::mu, "ds_gda: v step mu, overriding the rule").range(0, 1);
  o.add("hybrid", &RunOptions::hybrid, "dm_hsgd, dm_gda: weight b of the fresh gradient in the hybrid estimator").range(0, 1);
  o.add("refresh", &RunOptions::refresh, "dream: exact local gradients every `refresh` iterations (its large batch)").range(1, 1000000);
  o.add("momentum", &RunOptions::momentum, "dm_gda: theta of x+ = x + theta (x~ - x) (1: none)").range(1e-6, 1);
  o.add("aux", &RunOptions::aux, "ds_gda: z, v kept local or gossiped with x, y",
        {{"local", AuxMode::Local}, {"mixed", AuxMode::Mixed}});
  o.add("backend", &RunOptions::backend,
        "sim: all nodes in this process; comm: M / P nodes on each rank of distributed.processes = P",
        {{"sim", Backend::Sim}, {"comm", Backend::Comm}});
  o.add("log_every", &RunOptions::log_every, "iterations between lines of metrics.jsonl; 0: steps / 200").min(0);
}

std::vector<std::string> run_metrics() {
  return {"grad_phi_norm", "phi", "consensus_error", "iterations_to_eps", "grad_calls", "comm_rounds", "spectral_gap"};
}

StepSizes steps_for(Algorithm a, const RunOptions& o, const Problem& p, double gap) {
  const double L = p.smoothness(), mu = p.pl_constant();
  StepSizes s = a == Algorithm::DsGda ? ds_gda_rule(L, mu, gap) : gt_gda_rule(L, mu, gap, o.ratio);
  const double ratio = s.eta_y / s.eta_x;
  s.eta_x *= o.step_scale, s.eta_y *= o.step_scale, s.beta *= o.step_scale, s.mu *= o.step_scale;
  if (o.eta) s.eta_y = *o.eta, s.eta_x = a == Algorithm::DsGda ? *o.eta : *o.eta / ratio;
  if (a == Algorithm::DsGda) {
    if (o.r1) s.r1 = *o.r1;
    if (o.r2) s.r2 = *o.r2;
    if (o.beta) s.beta = *o.beta;
    if (o.mu) s.mu = *o.mu;
    s.aux_mixed = o.aux == AuxMode::Mixed;
  }
  if (a == Algorithm::DmHsgd || a == Algorithm::DmGda) s.hybrid = p.stochastic() ? o.hybrid : 1.0;
  if (a == Algorithm::DmGda) s.momentum = o.momentum;
  s.refresh = o.refresh;
  s.beta = std::min(s.beta, 1.0), s.mu = std::min(s.mu, 1.0);
  return s;
}

Trace run_to_eps(const Problem& p, const Mixing& w, Algorithm a, const StepSizes& s, const RunOptions& o,
                 std::uint64_t seed, const std::function<void(std::int64_t, const Trace&)>& log) {
  SimNetwork net(w);
  return run_to_eps(p, net, a, s, o, seed, log);
}

Trace run_to_eps(const Problem& p, Network& net, Algorithm a, const StepSizes& s, const RunOptions& o,
                 std::uint64_t seed, const std::function<void(std::int64_t, const Trace&)>& log) {
  auto init = nexp::Random::stream(seed, "init");
  Decentralized run(p, net, a, s, seed, p.initial_x(init));
  const std::int64_t every = o.log_every > 0 ? o.log_every : std::max<std::int64_t>(1, o.steps / 200);
  const int ranks = net.nodes() / net.local();  // every node makes the same number of gradient calls
  Trace tr;
  for (std::int64_t t = 0;; ++t) {
    const auto [xbar, c] = run.average();
    const double g = p.grad_phi(xbar).norm();
    tr.grad_phi_norm = g, tr.consensus = c, tr.grad_calls = run.grad_calls() * ranks, tr.rounds = net.rounds();
    const bool reached = g * g + c <= o.eps * o.eps;
    if (reached && tr.iterations_to_eps < 0) tr.iterations_to_eps = t;
    if (log && (t % every == 0 || t == o.steps)) tr.phi = p.phi(xbar), log(t, tr);
    if (!std::isfinite(g) || g > 1e12) {
      tr.diverged = true;
      break;
    }
    if (t == o.steps || (reached && o.stop_at_eps)) break;
    run.step();
  }
  tr.phi = p.phi(run.mean_x());
  return tr;
}

// ---------------------------------------------------------------- the kappa study

void ScalingOptions::declare(nexp::Options<ScalingOptions>& o) {
  o.add("kappas", &ScalingOptions::kappas, "condition numbers kappa (A's spectrum)").range(1, 1e8);
  o.add("instances", &ScalingOptions::instances, "NC-PL instances per kappa (0, 1, ...)").range(1, 1000);
  o.add("methods", &ScalingOptions::methods,
        "methods: ds_gda, gt_gda (theory ratio ~ kappa^2), gt_gda_ratio1, gt_gda_best_ratio (ratio_grid), dm_hsgd, "
        "dream, dm_gda")
      .choices({"ds_gda", "gt_gda", "gt_gda_ratio1", "gt_gda_best_ratio", "dm_hsgd", "dream", "dm_gda"});
  o.add("ratio_grid", &ScalingOptions::ratio_grid, "gt_gda_best_ratio: eta_y / eta_x values tried").range(1, 1e12);
  o.add("step_grid", &ScalingOptions::step_grid, "multiples of each rule's step sizes tried for the best step")
      .range(1e-6, 1e6);
  o.add("cap", &ScalingOptions::cap, "iterations at most; a run that has not reached eps by then is censored").min(1);
  o.add("eps", &ScalingOptions::eps, "target ||grad Phi(xbar)||^2 + consensus <= eps^2").min(0);
  o.add("nodes", &ScalingOptions::nodes, "nodes on a ring").range(1, 4096);
}

namespace {

struct Arm {
  Algorithm algorithm;
  double ratio;                // 0: the rule's kappa^2
  std::vector<double> ratios;  // the grid's ratios (empty: `ratio` only)
};

Arm arm_of(const std::string& m, const std::vector<double>& ratio_grid) {
  if (m == "ds_gda") return {Algorithm::DsGda, 0, {}};
  if (m == "gt_gda") return {Algorithm::GtGda, 0, {}};
  if (m == "gt_gda_ratio1") return {Algorithm::GtGda, 1, {}};
  if (m == "gt_gda_best_ratio") return {Algorithm::GtGda, 0, ratio_grid};
  if (m == "dream") return {Algorithm::Dream, 0, {}};
  if (m == "dm_gda") return {Algorithm::DmGda, 0, {}};
  return {Algorithm::DmHsgd, 0, {}};
}

double at_rule_ratio(Algorithm a, const RunOptions& o, const Problem& p, const Mixing& w) {
  const StepSizes s = steps_for(a, o, p, w.spectral_gap());
  return s.eta_y / s.eta_x;
}

// Runs every candidate in lockstep and returns (first t at which one meets eps, its index), or (-1, -1)
// when none does within `cap`. A diverged candidate leaves the race. Cost: candidates x the winner's t.
std::pair<std::int64_t, size_t> race(const Problem& p, const Mixing& w, Algorithm a, const std::vector<StepSizes>& grid,
                                     double eps, std::int64_t cap, std::uint64_t seed) {
  std::vector<std::unique_ptr<SimNetwork>> nets;
  std::vector<std::unique_ptr<Decentralized>> runs;
  for (const auto& s : grid) {
    auto init = nexp::Random::stream(seed, "init");
    nets.push_back(std::make_unique<SimNetwork>(w));
    runs.push_back(std::make_unique<Decentralized>(p, *nets.back(), a, s, seed, p.initial_x(init)));
  }
  std::vector<char> live(grid.size(), 1);
  for (std::int64_t t = 0; t <= cap; ++t)
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!live[i]) continue;
      const auto [xbar, c] = runs[i]->average();
      const double g = p.grad_phi(xbar).norm();
      if (g * g + c <= eps * eps) return {t, i};
      if (!std::isfinite(g) || g > 1e12) live[i] = 0;
      if (t < cap) runs[i]->step();
    }
  return {-1, 0};
}

// The slope of log iterations on log kappa over the uncensored runs, with a bootstrap interval that
// resamples instances within each kappa; kappas with no uncensored run are left out.
void report_slope(nexp::RunContext& ctx, const std::string& name, const std::vector<double>& kappas,
                  const std::vector<std::vector<double>>& iterations, std::int64_t censored) {
  std::vector<double> x;
  std::vector<std::vector<double>> samples;
  for (size_t i = 0; i < kappas.size(); ++i)
    if (!iterations[i].empty()) x.push_back(kappas[i]), samples.push_back(iterations[i]);
  ctx.summary("censored_" + name.substr(6), static_cast<double>(censored));
  if (x.size() < 2) {
    ctx.log().warn("{}: fewer than two kappas reached eps; no slope", name);
    return;
  }
  auto rng = ctx.stream("bootstrap", std::hash<std::string>{}(name));
  const auto b = nexp::stats::loglog_slope_of_means(x, samples, rng);
  ctx.summary(name, b.estimate);
  ctx.summary(name + "_lo", b.low);
  ctx.summary(name + "_hi", b.high);
  ctx.log().info("{} = {:.3f} [{:.3f}, {:.3f}] over {} kappas, {} censored", name, b.estimate, b.low, b.high,
                 x.size(), censored);
}

}  // namespace

void run_kappa_scaling(nexp::RunContext& ctx) {
  const auto o = ctx.options<ScalingOptions>();
  const Mixing w = ring_mixing(o.nodes);
  nexp::CsvWriter csv(ctx.artifacts_dir() / "scaling.csv",
                      {nexp::CsvColumn::text("method"), nexp::CsvColumn::real("kappa"),
                       nexp::CsvColumn::integer("instance"), nexp::CsvColumn::integer("iterations_to_eps"),
                       nexp::CsvColumn::real("best_step_scale").significant(4), nexp::CsvColumn::real("best_ratio").significant(4),
                       nexp::CsvColumn::integer("iterations_rule")});
  const auto total = static_cast<std::int64_t>(o.methods.size() * o.kappas.size()) * o.instances;
  auto bar = ctx.progress(total, "runs");
  for (const auto& m : o.methods) {
    const Arm arm = arm_of(m, o.ratio_grid);
    std::vector<std::vector<double>> best(o.kappas.size()), rule(o.kappas.size());
    std::int64_t censored_best = 0, censored_rule = 0;
    for (size_t ki = 0; ki < o.kappas.size(); ++ki)
      for (std::int64_t inst = 0; inst < o.instances; ++inst) {
        NcplSpec spec;
        spec.nodes = o.nodes, spec.kappa = o.kappas[ki], spec.instance = static_cast<std::uint64_t>(inst);
        const Ncpl p(spec);
        RunOptions ro;
        ro.eps = o.eps, ro.steps = o.cap, ro.ratio = arm.ratio;
        const Trace at_rule = run_to_eps(p, w, arm.algorithm, steps_for(arm.algorithm, ro, p, w.spectral_gap()), ro, ctx.seed());
        std::vector<StepSizes> grid;
        for (double g : o.step_grid)
          for (double ratio : arm.ratios.empty() ? std::vector<double>{arm.ratio} : arm.ratios) {
            if (g == 1 && arm.ratios.empty()) continue;  // the rule itself, already run
            RunOptions go = ro;
            go.step_scale = g, go.ratio = ratio;
            grid.push_back(steps_for(arm.algorithm, go, p, w.spectral_gap()));
          }
        const std::int64_t cap = at_rule.iterations_to_eps >= 0 ? at_rule.iterations_to_eps : o.cap;
        const auto [raced, winner] = race(p, w, arm.algorithm, grid, o.eps, cap, ctx.seed());
        std::int64_t best_it = at_rule.iterations_to_eps;
        double best_scale = 1, best_ratio = at_rule_ratio(arm.algorithm, ro, p, w);
        if (raced >= 0 && (best_it < 0 || raced < best_it))
          best_it = raced, best_scale = grid[winner].eta_y / steps_for(arm.algorithm, ro, p, w.spectral_gap()).eta_y,
          best_ratio = grid[winner].eta_y / grid[winner].eta_x;
        if (at_rule.iterations_to_eps >= 0) rule[ki].push_back(static_cast<double>(at_rule.iterations_to_eps));
        else ++censored_rule;
        if (best_it >= 0) best[ki].push_back(static_cast<double>(best_it));
        else ++censored_best;
        csv.row(m, o.kappas[ki], inst, best_it, best_scale, best_ratio, at_rule.iterations_to_eps);
        bar.advance();
        ctx.log().info("{} kappa {} instance {}: best {} (step x{:.3g}, ratio {:.3g}), rule {}", m, o.kappas[ki], inst,
                       best_it, best_scale, best_ratio, at_rule.iterations_to_eps);
      }
    report_slope(ctx, "slope_" + m, o.kappas, best, censored_best);
    report_slope(ctx, "slope_" + m + "_rule", o.kappas, rule, censored_rule);
  }
}

// ---------------------------------------------------------------- the comparison on one data set

void CompareOptions::declare(nexp::Options<CompareOptions>& o) {
  o.add("methods", &CompareOptions::methods, "methods compared").choices({"ds_gda", "gt_gda", "dm_hsgd", "dream", "dm_gda"});
  o.add("step_grid", &CompareOptions::step_grid, "multiples of each rule's step sizes: one grid for every method")
      .range(1e-6, 1e6);
  o.add("seeds", &CompareOptions::seeds, "seeds per (method, grid value): minibatches and the start").range(2, 1000);
  o.add("steps", &CompareOptions::steps, "gossip rounds per run").min(1);
  o.add("target", &CompareOptions::target,
        "reported: the round from which ||grad Phi(xbar)|| stays <= target (at every later curve point)").min(0);
  o.add("log_every", &CompareOptions::log_every, "rounds between the points of curves.csv").min(1);
  o.add("run", &CompareOptions::run,
        "the methods' own options (ratio, hybrid, refresh, momentum, aux); steps, eps and step_scale are the study's");
}

namespace {

Algorithm algorithm_of(const std::string& m) {
  if (m == "ds_gda") return Algorithm::DsGda;
  if (m == "gt_gda") return Algorithm::GtGda;
  if (m == "dream") return Algorithm::Dream;
  if (m == "dm_gda") return Algorithm::DmGda;
  return Algorithm::DmHsgd;
}

// One run's curve: (round, gradient calls, ||grad Phi(xbar)||) every log_every rounds, and the round from
// which the norm stays at or below the target at every later point (the study's steps + 1 when the last
// point is above it). A first passage would count the dips of a noisy trajectory.
struct Curve {
  std::vector<std::array<double, 3>> points;
  double rounds_to_target = 0, final_norm = 0;
};

Curve run_curve(const Instance& inst, Algorithm a, const StepSizes& s, const CompareOptions& o, std::uint64_t seed) {
  RunOptions ro = o.run;
  ro.steps = o.steps, ro.eps = 0, ro.stop_at_eps = false, ro.log_every = o.log_every;
  Curve c;
  const Trace tr = run_to_eps(*inst.problem, inst.mixing, a, s, ro, seed, [&](std::int64_t, const Trace& x) {
    c.points.push_back({static_cast<double>(x.rounds), static_cast<double>(x.grad_calls), x.grad_phi_norm});
  });
  c.rounds_to_target = static_cast<double>(o.steps + 1);
  for (auto p = c.points.rbegin(); p != c.points.rend() && (*p)[2] <= o.target; ++p) c.rounds_to_target = (*p)[0];
  c.final_norm = tr.diverged ? INFINITY : tr.grad_phi_norm;
  if (tr.diverged) c.rounds_to_target = static_cast<double>(o.steps + 1);
  return c;
}

}  // namespace

void run_compare(nexp::RunContext& ctx) {
  const auto o = ctx.options<CompareOptions>();
  const auto& inst = ctx.dataset_as<Instance>();
  ctx.log().info("{}", inst.describe());
  nexp::CsvWriter csv(ctx.artifacts_dir() / "curves.csv",
                      {nexp::CsvColumn::text("method"), nexp::CsvColumn::real("step_scale"), nexp::CsvColumn::integer("seed"),
                       nexp::CsvColumn::integer("round"), nexp::CsvColumn::integer("grad_calls"),
                       nexp::CsvColumn::real("grad_phi_norm").significant(6), nexp::CsvColumn::boolean("best")});
  auto bar = ctx.progress(static_cast<std::int64_t>(o.methods.size() * o.step_grid.size()) * o.seeds, "runs");
  std::map<std::string, std::vector<double>> rounds_of_best;
  for (const auto& m : o.methods) {
    const Algorithm a = algorithm_of(m);
    std::vector<std::vector<Curve>> grid(o.step_grid.size());
    size_t best = 0;
    double best_mean = INFINITY;
    for (size_t g = 0; g < o.step_grid.size(); ++g) {
      RunOptions ro = o.run;
      ro.step_scale = o.step_grid[g];
      const StepSizes s = steps_for(a, ro, *inst.problem, inst.mixing.spectral_gap());
      for (std::int64_t seed = 0; seed < o.seeds; ++seed) {
        grid[g].push_back(run_curve(inst, a, s, o, ctx.stream("compare", static_cast<std::uint64_t>(seed))()));
        bar.advance();
      }
      std::vector<double> finals;
      for (const Curve& c : grid[g]) finals.push_back(c.final_norm);
      const double mean = nexp::stats::mean(finals);
      ctx.log().info("{} x{}: mean final ||grad Phi|| {:.4g}", m, o.step_grid[g], mean);
      if (mean < best_mean) best_mean = mean, best = g;
    }
    std::vector<double> rounds, finals;
    for (size_t g = 0; g < o.step_grid.size(); ++g)
      for (std::int64_t seed = 0; seed < o.seeds; ++seed) {
        const Curve& c = grid[g][static_cast<size_t>(seed)];
        for (const auto& p : c.points) csv.row(m, o.step_grid[g], seed, static_cast<std::int64_t>(p[0]), static_cast<std::int64_t>(p[1]), p[2], g == best);
        if (g == best) rounds.push_back(c.rounds_to_target), finals.push_back(c.final_norm);
      }
    ctx.summary_interval("rounds_to_target_" + m, nexp::stats::mean_t_interval(rounds));
    ctx.summary_interval("final_grad_norm_" + m, nexp::stats::mean_t_interval(finals));
    ctx.summary("best_step_" + m, o.step_grid[best]);
    rounds_of_best[m] = rounds;
  }
  // DS-GDA against the baseline that needs the fewest rounds on average, paired over seeds.
  if (rounds_of_best.count("ds_gda") && rounds_of_best.size() > 1) {
    std::string rival;
    for (const auto& [m, r] : rounds_of_best)
      if (m != "ds_gda" && (rival.empty() || nexp::stats::mean(r) < nexp::stats::mean(rounds_of_best[rival]))) rival = m;
    ctx.log().info("best baseline by rounds to {}: {}", o.target, rival);
    ctx.summary_interval("ds_gda_rounds_minus_best_baseline",
                         nexp::stats::paired_t_interval(rounds_of_best["ds_gda"], rounds_of_best[rival]));
  }
}


}  // namespace dsminimax
