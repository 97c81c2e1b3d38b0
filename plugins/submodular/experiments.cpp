// Data sets, training and metrics of the submodular plugin (experiments.hpp).
#include "experiments.hpp"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <numeric>

#include <nexp/idx.hpp>
#include <nexp/table.hpp>

namespace submodular {

namespace {

const std::vector<std::pair<std::string, TargetKind>> kTargets = {{"facility_location", TargetKind::FacilityLocation},
                                                                  {"logdet", TargetKind::LogDet},
                                                                  {"coverage", TargetKind::Coverage},
                                                                  {"pairwise", TargetKind::Pairwise},
                                                                  {"alpha", TargetKind::Alpha}};

const std::vector<std::pair<std::string, ModelKind>> kModels = {
    {"pairwise", ModelKind::Pairwise}, {"pairwise_alpha", ModelKind::PairwiseAlpha},
    {"dsf", ModelKind::Dsf},           {"flexsubnet", ModelKind::FlexSubNet},
    {"mixture", ModelKind::Mixture},   {"deepsets", ModelKind::DeepSets},
    {"set_transformer", ModelKind::SetTransformer}};

ModelKind model_kind(const std::string& name) {
  for (const auto& [n, k] : kModels)
    if (n == name) return k;
  std::string all;
  for (const auto& [n, k] : kModels) all += (all.empty() ? "" : ", ") + n;
  throw nexp::ConfigError("params.methods: unknown model '" + name + "'; expected one of: " + all +
                          ". Fix the list in the config or the override.");
}

// Raw item features as a [items, dims] double tensor.
at::Tensor raw_features(const FeatureOptions& o) {
  if (!o.features_file.empty() || o.features == "digits") {
    const bool digits = o.features_file.empty();
    const std::filesystem::path file =
        digits ? nexp::data_dir() / "sklearn" / "digits.csv" : std::filesystem::path(o.features_file);
    if (!std::filesystem::exists(file))
      throw nexp::DataError("dataset.features_file: " + file.string() +
                            " does not exist; expected a CSV file with a header row and one item per row. " +
                            (digits ? "Run scripts/setup to install scikit-learn's digits." : "Check the path."));
    const nexp::CsvTable t = nexp::CsvTable::read(file);
    std::vector<std::string> cols;
    for (const std::string& c : t.header())
      if (!(digits && c == "target")) cols.push_back(c);
    if (t.size() < 2 || cols.empty())
      throw nexp::DataError("dataset.features_file: " + file.string() + " has " + std::to_string(t.size()) +
                            " rows and " + std::to_string(cols.size()) +
                            " feature columns; expected at least 2 items and 1 numeric column.");
    at::Tensor x = at::empty({static_cast<std::int64_t>(t.size()), static_cast<std::int64_t>(cols.size())}, at::kDouble);
    auto acc = x.accessor<double, 2>();
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::vector<double> v = t.reals(cols[c]);
      for (std::size_t r = 0; r < v.size(); ++r) {
        if (!std::isfinite(v[r]))
          throw nexp::DataError("dataset.features_file: " + file.string() + ", row " + std::to_string(r + 1) +
                                ", column '" + cols[c] + "': expected a finite number, found an empty or non-finite field.");
        acc[static_cast<std::int64_t>(r)][static_cast<std::int64_t>(c)] = v[r];
      }
    }
    return x;
  }
  const std::string folder = o.features == "mnist" ? "mnist" : "fashion-mnist";
  nexp::IdxArray px = nexp::read_idx(nexp::data_dir() / folder / "train-images-idx3-ubyte", "features", o.pool,
                                     "Run scripts/setup, or use dataset.features=digits or dataset.features_file=<csv>.");
  const std::int64_t n = px.shape[0], dims = static_cast<std::int64_t>(px.bytes.size()) / std::max<std::int64_t>(n, 1);
  return at::from_blob(px.bytes.data(), {n, dims}, at::kByte).to(at::kDouble) / 255.0;
}

Matrix to_matrix(const at::Tensor& t) {
  const at::Tensor c = t.contiguous().to(at::kDouble);
  Matrix m(static_cast<int>(c.size(0)), static_cast<int>(c.size(1)));
  std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), m.v.begin());
  return m;
}

at::Tensor to_tensor(const Matrix& m) {
  return at::from_blob(const_cast<double*>(m.v.data()), {m.rows, m.cols}, at::kDouble).clone();
}

Matrix rows_of(const Matrix& m, const Set& rows) {
  Matrix out(static_cast<int>(rows.size()), m.cols);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int c = 0; c < m.cols; ++c) out(static_cast<int>(r), c) = m(rows[r], c);
  return out;
}

// A planted pairwise G on the items: u_i = relu(R z_i) (R Gaussian, r = 8) scaled to a mean of
// sqrt(kappa) ||u_i|| = `norm`, a_i = log(1 + sqrt(kappa) ||u_i||) / kappa + rho_i: condition (B') holds.
Pairwise planted_pairwise(const Matrix& z, double kappa, double norm, nexp::Random& rng) {
  const int r = 8;
  Matrix proj(z.cols, r);
  for (double& v : proj.v) v = rng.normal();
  Pairwise g;
  g.u = Matrix(z.rows, r);
  double mean_norm = 0;
  for (int i = 0; i < z.rows; ++i) {
    double sq = 0;
    for (int k = 0; k < r; ++k) {
      double s = 0;
      for (int c = 0; c < z.cols; ++c) s += z(i, c) * proj(c, k);
      g.u(i, k) = std::max(0.0, s);
      sq += g.u(i, k) * g.u(i, k);
    }
    mean_norm += std::sqrt(sq) / z.rows;
  }
  const double scale = norm / (std::sqrt(kappa) * std::max(mean_norm, 1e-12));
  for (double& v : g.u.v) v *= scale;
  g.a.resize(z.rows);
  for (int i = 0; i < z.rows; ++i) {
    double sq = 0;
    for (int k = 0; k < r; ++k) sq += g.u(i, k) * g.u(i, k);
    g.a[i] = std::log1p(std::sqrt(kappa * sq)) / kappa + 0.05 * norm * rng.uniform() / kappa;
  }
  return g;
}

double sample_std(const std::vector<double>& v) { return v.size() > 1 ? nexp::stats::stddev(v) : 1.0; }

}  // namespace

// ---------------------------------------------------------------- options

void FeatureOptions::declare(nexp::Options<FeatureOptions>& o) {
  o.add("features", &FeatureOptions::features, "where the items come from (ignored when features_file is set)")
      .choices({"digits", "mnist", "fashion_mnist"});
  o.add("features_file", &FeatureOptions::features_file, "a CSV file (header row, one item per row, numeric columns)");
  o.add("ground", &FeatureOptions::ground, "items N of the ground set, drawn per seed from the pool").range(4, 2000);
  o.add("pca", &FeatureOptions::pca, "principal components kept").range(1, 784);
  o.add("pool", &FeatureOptions::pool, "MNIST / Fashion-MNIST images read (the pool the PCA is fitted on)").range(4, 60000);
  o.add("target", &FeatureOptions::target, "the set function to learn (hidden for select)", kTargets);
  o.add("coverage_fraction", &FeatureOptions::coverage_fraction, "coverage: c_v = fraction * sum_s sim_vs").range(1e-3, 1);
  o.add("alpha", &FeatureOptions::alpha, "alpha target: its closed-form alpha").range(0.01, 0.99);
  o.add("kappa", &FeatureOptions::kappa, "pairwise target: the rate kappa of its phi").range(1e-3, 1e3);
}

void FitDataOptions::declare(nexp::Options<FitDataOptions>& o) {
  o.inherit<FeatureOptions>();
  o.add("train", &FitDataOptions::train, "training sets").range(1, 1000000);
  o.add("test", &FitDataOptions::test, "test sets").range(2, 1000000);
  o.add("min_size", &FitDataOptions::min_size, "smallest |S|").range(1, 2000);
  o.add("max_size", &FitDataOptions::max_size, "largest |S|").range(1, 2000);
  o.add("noise", &FitDataOptions::noise, "Gaussian noise on the training values, in units of their std").range(0, 10);
}

void SelectDataOptions::declare(nexp::Options<SelectDataOptions>& o) {
  o.inherit<FeatureOptions>();
  o.add("subset", &SelectDataOptions::subset, "items |V| of each example").range(2, 2000);
  o.add("k", &SelectDataOptions::k, "size of the chosen subset S*").range(1, 2000);
  o.add("train", &SelectDataOptions::train, "training pairs (V, S*)").range(1, 1000000);
  o.add("test", &SelectDataOptions::test, "test pairs").range(1, 1000000);
}

void TrainOptions::declare(nexp::Options<TrainOptions>& o) {
  o.inherit<ModelOptions>();
  o.add("epochs", &TrainOptions::epochs, "passes over the training data").range(1, 100000);
  o.add("batch", &TrainOptions::batch, "examples per Adam step").range(1, 100000);
  o.add("lr", &TrainOptions::lr, "Adam step size").range(1e-6, 1);
  o.add("triples", &TrainOptions::triples, "random (S subset T, e) triples of the violation check").range(1, 10000000);
  o.add("tol", &TrainOptions::tol, "tolerance of the violation checks (float64)").range(0, 1);
}

void RunOptions::declare(nexp::Options<RunOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("methods", &RunOptions::methods, "models trained on the same data, the first one compared with the others "
                                         "(default: the method's own)");
  o.add("seeds", &RunOptions::seeds, "repetitions (new ground set, data and initialisation each)").range(1, 1000);
  o.add("greedy_k", &RunOptions::greedy_k, "k of greedy_ratio").range(1, 1000);
}

void CheckOptions::declare(nexp::Options<CheckOptions>& o) {
  o.inherit<TrainOptions>();
  o.add("model", &CheckOptions::model, "the model checked", kModels);
  o.add("trained", &CheckOptions::trained, "train it first, as the fitting methods do (else its random initialisation)");
  o.add("exhaustive_n", &CheckOptions::exhaustive_n, "every S and i, j on the first n items (2^n sets)").range(2, 12);
}

// ---------------------------------------------------------------- data

Matrix load_features(const FeatureOptions& o) {
  at::Tensor x = raw_features(o);
  if (o.pca > x.size(1))
    throw nexp::ConfigError("dataset.pca = " + std::to_string(o.pca) + " but the items have " +
                            std::to_string(x.size(1)) + " features; expected pca <= " + std::to_string(x.size(1)) + ".");
  if (o.ground > x.size(0))
    throw nexp::ConfigError("dataset.ground = " + std::to_string(o.ground) + " but only " + std::to_string(x.size(0)) +
                            " items are available; lower ground (or raise pool for MNIST).");
  x = x - x.mean(0, true);
  const at::Tensor cov = x.t().matmul(x) / static_cast<double>(x.size(0));
  auto [values, vectors] = at::linalg_eigh(cov);  // ascending
  at::Tensor z = x.matmul(vectors.narrow(1, x.size(1) - o.pca, o.pca).flip({1}));
  z = z / z.pow(2).sum(1).mean().sqrt().clamp_min(1e-12);
  return to_matrix(z);
}

std::string Problem::describe() const {
  return std::string(select ? "submodular.select" : "submodular.fit") + ": " + std::to_string(pool.rows) + " " + source +
         " items, " + std::to_string(pool.cols) + " PCA features";
}

namespace {
template <class O>
std::shared_ptr<Problem> load_problem(const O& o) {
  auto p = std::make_shared<Problem>();
  p->source = o.features_file.empty() ? o.features : o.features_file;
  p->pool = load_features(o);
  return p;
}
}  // namespace

std::shared_ptr<nexp::Dataset> make_fit(const FitDataOptions& o, nexp::RunContext&) {
  if (o.min_size > o.max_size || o.max_size >= o.ground)
    throw nexp::ConfigError("dataset: min_size = " + std::to_string(o.min_size) + ", max_size = " +
                            std::to_string(o.max_size) + ", ground = " + std::to_string(o.ground) +
                            "; expected min_size <= max_size < ground.");
  auto p = load_problem(o);
  p->fit = o;
  return p;
}

std::shared_ptr<nexp::Dataset> make_select(const SelectDataOptions& o, nexp::RunContext&) {
  if (o.subset > o.ground || o.k >= o.subset)
    throw nexp::ConfigError("dataset: k = " + std::to_string(o.k) + ", subset = " + std::to_string(o.subset) +
                            ", ground = " + std::to_string(o.ground) + "; expected k < subset <= ground.");
  auto p = load_problem(o);
  p->select = true;
  p->sel = o;
  static_cast<FeatureOptions&>(p->fit) = o;
  return p;
}

std::shared_ptr<SetFunction> make_target(const FeatureOptions& o, const Matrix& z, nexp::Random& rng, double* alpha) {
  *alpha = 1.0;
  switch (o.target) {
    case TargetKind::FacilityLocation: return std::make_shared<FacilityLocation>(gaussian_similarity(z));
    case TargetKind::LogDet: return std::make_shared<LogDet>(z);
    case TargetKind::Coverage: return std::make_shared<SaturatedCoverage>(gaussian_similarity(z), o.coverage_fraction);
    case TargetKind::Pairwise: return std::make_shared<PlantedPairwise>(planted_pairwise(z, o.kappa, 0.15, rng), o.kappa, 1.0);
    case TargetKind::Alpha: {
      auto fl = std::make_shared<FacilityLocation>(gaussian_similarity(z));
      std::vector<double> rho(z.rows);
      for (double& r : rho) r = 0.01 * rng.uniform();
      Pairwise g = with_alpha(planted_pairwise(z, 1.0, 0.1, rng), o.alpha, rho);
      // Scale G (a by c, u by sqrt(c): the alpha bound is unchanged) to half of F_fl on a 15-item set.
      const Set probe = random_subset(z.rows, 15, rng);
      const double c = 0.5 * fl->value(probe) / std::max(g.value(probe), 1e-12);
      for (double& a : g.a) a *= c;
      for (double& u : g.u.v) u *= std::sqrt(c);
      auto t = std::make_shared<AlphaSum>(fl, std::move(g));
      *alpha = t->alpha_bound();
      return t;
    }
  }
  return nullptr;
}

Instance make_instance(const Problem& p, nexp::Random& rng) {
  const FeatureOptions& o = p.fit;
  Instance in;
  in.z = rows_of(p.pool, random_subset(p.pool.rows, o.ground, rng));
  in.target = make_target(o, in.z, rng, &in.alpha_bound);
  const int n = in.z.rows;
  if (!p.select) {
    in.train_sets = random_sets(n, p.fit.train, p.fit.min_size, p.fit.max_size, rng);
    in.test_sets = random_sets(n, p.fit.test, p.fit.min_size, p.fit.max_size, rng);
    in.train_y = in.target->values(in.train_sets);
    in.test_y = in.target->values(in.test_sets);
    const double sd = sample_std(in.train_y);
    for (double& y : in.train_y) y += p.fit.noise * sd * rng.normal();
    return in;
  }
  const BatchFunction f = in.target->batch();
  for (int part = 0; part < 2; ++part) {
    auto& vs = part == 0 ? in.train_v : in.test_v;
    auto& stars = part == 0 ? in.train_star : in.test_star;
    for (int c = 0; c < (part == 0 ? p.sel.train : p.sel.test); ++c) {
      vs.push_back(random_subset(n, p.sel.subset, rng));
      stars.push_back(greedy_within(f, vs.back(), p.sel.k));
    }
  }
  return in;
}

// ---------------------------------------------------------------- training

BatchFunction model_function(SetModel& model, int n) {
  return [&model, n](const std::vector<Set>& sets) {
    torch::NoGradGuard no_grad;
    std::vector<double> out;
    out.reserve(sets.size());
    for (std::size_t start = 0; start < sets.size(); start += 512) {
      const std::size_t end = std::min(sets.size(), start + 512);
      const at::Tensor v = model.forward(masks_of({sets.begin() + start, sets.begin() + end}, n)).contiguous();
      out.insert(out.end(), v.data_ptr<double>(), v.data_ptr<double>() + v.numel());
    }
    return out;
  };
}

double train_regression(SetModel& model, const std::vector<Set>& sets, const std::vector<double>& y, int n,
                        const TrainOptions& o, nexp::Random& rng) {
  torch::optim::Adam opt(model.parameters(), torch::optim::AdamOptions(o.lr));
  const at::Tensor all_masks = masks_of(sets, n);
  const at::Tensor targets = at::tensor(y, at::kDouble);
  const std::int64_t probe = std::min<std::int64_t>(512, targets.size(0));
  model.calibrate(all_masks.narrow(0, 0, probe), targets.narrow(0, 0, probe));
  std::vector<std::int64_t> order(sets.size());
  std::iota(order.begin(), order.end(), 0);
  double last = 0;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    const at::Tensor perm = at::tensor(order, at::kLong);
    double total = 0;
    for (std::int64_t start = 0; start < static_cast<std::int64_t>(order.size()); start += o.batch) {
      const at::Tensor idx = perm.narrow(0, start, std::min<std::int64_t>(o.batch, perm.size(0) - start));
      const at::Tensor loss = (model.forward(all_masks.index_select(0, idx)) - targets.index_select(0, idx)).pow(2).mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
      total += loss.item<double>() * static_cast<double>(idx.size(0));
    }
    last = total / static_cast<double>(order.size());
  }
  return last;
}

namespace {

// Likelihood of the greedy choices of S* (FLEXSUBNET's subset-selection training), temperature learned.
double train_selection(SetModel& model, const Instance& in, int n, const TrainOptions& o, nexp::Random& rng) {
  at::Tensor log_beta = at::zeros({1}, at::kDouble).set_requires_grad(true);
  auto params = model.parameters();
  params.push_back(log_beta);
  torch::optim::Adam opt(params, torch::optim::AdamOptions(o.lr));
  const int pairs = static_cast<int>(in.train_v.size()), k = static_cast<int>(in.train_star[0].size());
  const int m = static_cast<int>(in.train_v[0].size());
  std::vector<int> order(pairs);
  std::iota(order.begin(), order.end(), 0);
  const int batch = std::max(1, o.batch / 8);
  double last = 0;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    double total = 0;
    for (int start = 0; start < pairs; start += batch) {
      const int b = std::min(batch, pairs - start);
      std::vector<Set> bases, cands;
      std::vector<std::int64_t> target, valid;
      for (int t = 0; t < k; ++t)
        for (int q = 0; q < b; ++q) {
          const Set& v = in.train_v[order[start + q]];
          const Set& star = in.train_star[order[start + q]];
          Set base(star.begin(), star.begin() + t);
          for (int c = 0; c < m; ++c) {
            Set s = base;
            const bool taken = std::find(base.begin(), base.end(), v[c]) != base.end();
            if (!taken) s.push_back(v[c]);
            cands.push_back(std::move(s));
            valid.push_back(taken ? 0 : 1);
            if (v[c] == star[t]) target.push_back(c);
          }
          bases.push_back(std::move(base));
        }
      const at::Tensor base_v = model.forward(masks_of(bases, n)).unsqueeze(1);  // [k b, 1]
      const at::Tensor gains = model.forward(masks_of(cands, n)).reshape({-1, m}) - base_v;
      const at::Tensor ok = at::tensor(valid, at::kLong).reshape({-1, m}).to(at::kBool);
      const at::Tensor logits = (at::exp(log_beta) * gains).masked_fill(~ok, -1e30);
      const at::Tensor loss = at::cross_entropy_loss(logits, at::tensor(target, at::kLong));
      opt.zero_grad();
      loss.backward();
      opt.step();
      total += loss.item<double>() * b;
    }
    last = total / pairs;
  }
  return last;
}

// Model `kind`, the m-th of seed s's list, initialised from its own stream and trained on the instance as
// the protocol trains it (least squares on F / scale, or the likelihood of S*'s greedy choices) when
// `train`; *loss gets the final training loss.
std::shared_ptr<SetModel> build_model(const nexp::RunContext& ctx, const Problem& p, const Instance& in, ModelKind kind,
                                      const TrainOptions& o, int s, int m, bool train, double scale, double* loss) {
  at::manual_seed(nexp::Random::stream(ctx.seed(), "init", static_cast<std::uint64_t>(s * 64 + m))());
  auto model = make_model(kind, o, to_tensor(in.z));
  *loss = 0;
  if (!train) return model;
  nexp::Random batch_rng = ctx.stream("batches", static_cast<std::uint64_t>(s * 64 + m));
  if (p.select) {
    *loss = train_selection(*model, in, in.z.rows, o, batch_rng);
  } else {
    std::vector<double> y = in.train_y;
    for (double& v : y) v /= scale;
    *loss = train_regression(*model, in.train_sets, y, in.z.rows, o, batch_rng);
  }
  return model;
}

std::int64_t parameter_count(SetModel& model) {
  std::int64_t count = 0;
  for (const auto& p : model.parameters()) count += p.numel();
  return count;
}

struct Measured {
  std::map<std::string, double> values;
};

Measured measure(SetModel& model, ModelKind kind, const Instance& in, bool select, const std::vector<Triple>& triples,
                 double scale, const RunOptions& o) {
  Measured r;
  const int n = in.z.rows;
  const BatchFunction f = model_function(model, n);
  const TripleReport check = check_triples(f, triples, o.tol);
  r.values["violation_rate"] = check.violation_rate;
  r.values["monotonicity_violations"] = static_cast<double>(check.monotonicity_violations);
  r.values["min_ratio"] = check.min_ratio;
  r.values["model_parameters"] = static_cast<double>(parameter_count(model));
  r.values["constrained"] = is_constrained(kind) ? 1.0 : 0.0;
  if (select) {
    std::vector<double> j;
    for (std::size_t c = 0; c < in.test_v.size(); ++c)
      j.push_back(jaccard(greedy_within(f, in.test_v[c], static_cast<int>(in.test_star[c].size())), in.test_star[c]));
    r.values["jaccard"] = nexp::stats::mean(j);
    return r;
  }
  const std::vector<double> pred = f(in.test_sets);
  double se = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) se += std::pow(pred[i] * scale - in.test_y[i], 2);
  r.values["test_nrmse"] = std::sqrt(se / static_cast<double>(pred.size())) / sample_std(in.test_y);
  const int k = std::min(o.greedy_k, n);
  const double best = in.target->value(greedy(in.target->batch(), n, k));
  r.values["greedy_ratio"] = in.target->value(greedy(f, n, k)) / best;
  return r;
}

const std::vector<std::string> kFitMetrics = {"test_nrmse", "violation_rate", "monotonicity_violations", "greedy_ratio",
                                              "min_ratio", "model_parameters", "seconds"};
const std::vector<std::string> kSelectMetrics = {"jaccard", "violation_rate", "monotonicity_violations", "min_ratio",
                                                 "model_parameters", "seconds"};

// Summaries: the first method's metrics (mean over seeds with a t interval when seeds > 1), the others as
// <method>.<metric>, and paired bootstrap intervals of (first - other) for the headline metric.
void summarise(nexp::RunContext& ctx, const std::vector<std::string>& methods, const std::vector<std::string>& metrics,
               const std::map<std::string, std::map<std::string, std::vector<double>>>& by, const std::string& headline) {
  for (std::size_t m = 0; m < methods.size(); ++m)
    for (const std::string& metric : metrics) {
      const std::vector<double>& v = by.at(methods[m]).at(metric);
      const std::string name = m == 0 ? metric : methods[m] + "." + metric;
      if (v.size() > 1 && m == 0)
        ctx.summary_interval(name, nexp::stats::mean_t_interval(v));
      else
        ctx.summary(name, nexp::stats::mean(v));
    }
  nexp::Random rng = ctx.stream("paired_bootstrap");
  const std::vector<double>& first = by.at(methods[0]).at(headline);
  for (std::size_t m = 1; m < methods.size() && first.size() > 1; ++m)
    ctx.summary_interval(headline + "_minus_" + methods[m],
                         nexp::stats::paired_bootstrap(first, by.at(methods[m]).at(headline), rng));
}

}  // namespace

void run(nexp::RunContext& ctx, const std::string& own) {
  RunOptions o = ctx.options<RunOptions>();
  if (o.methods.empty())
    o.methods = own == "compare" ? std::vector<std::string>{"pairwise", "dsf", "flexsubnet", "mixture", "deepsets"}
                                 : std::vector<std::string>{own};
  std::vector<ModelKind> kinds;
  for (const std::string& m : o.methods) kinds.push_back(model_kind(m));
  const Problem& p = ctx.dataset_as<Problem>();
  ctx.log().info("{}", p.describe());
  const std::vector<std::string>& metrics = p.select ? kSelectMetrics : kFitMetrics;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "runs.csv",
                      {nexp::CsvColumn::integer("seed"), nexp::CsvColumn::text("method"),
                       nexp::CsvColumn::text("metric"), nexp::CsvColumn::real("value")});
  std::map<std::string, std::map<std::string, std::vector<double>>> by;
  auto progress = ctx.progress(static_cast<std::int64_t>(o.seeds) * static_cast<std::int64_t>(kinds.size()), "fits");
  for (int s = 0; s < o.seeds; ++s) {
    nexp::Random data_rng = ctx.stream("instance", static_cast<std::uint64_t>(s));
    const Instance in = make_instance(p, data_rng);
    nexp::Random triple_rng = ctx.stream("triples", static_cast<std::uint64_t>(s));
    const std::vector<Triple> triples = random_triples(in.z.rows, o.triples, p.fit.max_size, triple_rng);
    const double scale = p.select ? 1.0 : sample_std(in.train_y);
    for (std::size_t m = 0; m < kinds.size(); ++m) {
      if (ctx.stop_requested()) return;
      const auto start = std::chrono::steady_clock::now();
      double loss = 0;
      auto model = build_model(ctx, p, in, kinds[m], o, s, static_cast<int>(m), true, scale, &loss);
      Measured r = measure(*model, kinds[m], in, p.select, triples, scale, o);
      r.values["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      r.values["train_loss"] = loss;
      if (in.alpha_bound < 1) r.values["target_alpha"] = in.alpha_bound;
      for (const auto& [name, value] : r.values) {
        csv.row(s, o.methods[m], name, value);
        by[o.methods[m]][name].push_back(value);
      }
      ctx.log().info("seed {} {}: {}", s, o.methods[m],
                     p.select ? fmt::format("jaccard {:.4f}", r.values["jaccard"])
                              : fmt::format("test_nrmse {:.4f} greedy_ratio {:.4f}", r.values["test_nrmse"],
                                            r.values["greedy_ratio"]));
      ctx.log().info("  violation_rate {} monotonicity_violations {} min_ratio {:.4f} ({:.1f} s)",
                     r.values["violation_rate"], r.values["monotonicity_violations"], r.values["min_ratio"],
                     r.values["seconds"]);
      progress.advance();
    }
  }
  summarise(ctx, o.methods, metrics, by, p.select ? "jaccard" : "test_nrmse");
  if (!p.select) summarise(ctx, o.methods, {}, by, "greedy_ratio");
  if (by.begin()->second.count("target_alpha")) ctx.summary("target_alpha", by.begin()->second.at("target_alpha")[0]);
}

// ---------------------------------------------------------------- submodular.check

void run_check(nexp::RunContext& ctx) {
  const CheckOptions o = ctx.options<CheckOptions>();
  const Problem& p = ctx.dataset_as<Problem>();
  if (o.exhaustive_n > p.fit.ground)
    throw nexp::ConfigError("params.exhaustive_n = " + std::to_string(o.exhaustive_n) + " but dataset.ground = " +
                            std::to_string(p.fit.ground) + "; expected exhaustive_n <= ground. Lower exhaustive_n.");
  ctx.log().info("{}; checking {} ({})", p.describe(), model_name(o.model), o.trained ? "trained" : "random");
  // Seed 0's instance, triples and model stream: the trained model is the one the fitting methods train first.
  nexp::Random data_rng = ctx.stream("instance", 0);
  const Instance in = make_instance(p, data_rng);
  nexp::Random triple_rng = ctx.stream("triples", 0);
  const std::vector<Triple> triples = random_triples(in.z.rows, o.triples, p.fit.max_size, triple_rng);
  const auto start = std::chrono::steady_clock::now();
  double loss = 0;
  auto model = build_model(ctx, p, in, o.model, o, 0, 0, o.trained, p.select ? 1.0 : sample_std(in.train_y), &loss);
  const CheckReport r = check_set_function(model_function(*model, in.z.rows), o.exhaustive_n, triples, o.tol);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // No gain above tol at all leaves the ratios undefined: reported as 1 (nothing to violate).
  const auto ratio = [](double v) { return v > 1e299 ? 1.0 : v; };
  ctx.summary("violation_rate", r.triples.violation_rate);
  ctx.summary("monotonicity_violations", static_cast<double>(r.triples.monotonicity_violations));
  ctx.summary("min_ratio", ratio(r.triples.min_ratio));
  ctx.summary("exhaustive_violations", static_cast<double>(r.exhaustive.submodularity_violations));
  ctx.summary("exhaustive_monotonicity_violations", static_cast<double>(r.exhaustive.monotonicity_violations));
  ctx.summary("exhaustive_checks", static_cast<double>(r.exhaustive.checks));
  ctx.summary("exhaustive_min_ratio", ratio(r.exhaustive.min_alpha));
  ctx.summary("worst_excess", r.exhaustive.worst_submodularity);
  ctx.summary("constrained", is_constrained(o.model) ? 1.0 : 0.0);
  ctx.summary("model_parameters", static_cast<double>(parameter_count(*model)));
  ctx.summary("seconds", seconds);
  if (o.trained) ctx.summary("train_loss", loss);
  ctx.log().info("{} triples: violation rate {}, monotonicity violations {}, smallest ratio {:.4f}", r.triples.triples,
                 r.triples.violation_rate, r.triples.monotonicity_violations, ratio(r.triples.min_ratio));
  ctx.log().info("every S, i, j on {} items: {} of {} checks violate (worst excess {:.3g}), {} negative gains, "
                 "smallest ratio {:.4f}",
                 o.exhaustive_n, r.exhaustive.submodularity_violations, r.exhaustive.checks,
                 r.exhaustive.worst_submodularity, r.exhaustive.monotonicity_violations,
                 ratio(r.exhaustive.min_alpha));
}

}  // namespace submodular
