// functional_reg: deep scalar-on-function regression with functional predictors observed on irregular
// grids (basis coefficients in, an equal-width or bottleneck-equal-width network out). The nexp glue
// (methods.hpp: options, single fits, studies) and the registration of the plugin's metrics, data sets
// and methods; one file, so that the SDK headers are compiled once.
#include <fmt/format.h>
#include <nexp/nexp.hpp>
#include <nexp/options.hpp>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>

#include <algorithm>
#include <chrono>
#include <map>

#include "data.hpp"
#include "methods.hpp"

namespace functional_reg {

// ---------------------------------------------------------------- options

void BasisOptions::declare(nexp::Options<BasisOptions>& o) {
  o.add("M", &BasisOptions::M, "cubic B-spline functions per predictor (truncation level)").range(4, 200);
  o.add("penalty", &BasisOptions::penalty, "roughness penalty lambda of each curve's spline fit").min(0);
  o.add("basis", &BasisOptions::representation,
        "features: B-spline coefficients of each curve, FPC scores of those, or PACE scores (sparse curves)",
        {{"bspline", Representation::BSpline}, {"fpca", Representation::Fpca}, {"pace", Representation::Pace}});
  o.add("components", &BasisOptions::components, "FPC scores per predictor (basis fpca or pace)").range(1, 200);
}

void NetOptions::declare(nexp::Options<NetOptions>& o) {
  o.add("J", &NetOptions::J, "bottleneck: number of indices").range(1, 64);
  o.add("width", &NetOptions::width, "hidden width; 0: the sizing rule").range(0, 4096);
  o.add("depth", &NetOptions::depth, "hidden layers; 0: the sizing rule").range(0, 32);
  o.add("neurons", &NetOptions::neurons, "funcnn: functional neurons").range(1, 256);
  o.add("weight_functions", &NetOptions::weight_functions, "funcnn: basis functions per weight function")
      .range(1, 101);
  o.add("weight_basis", &NetOptions::weight_basis, "funcnn: basis of the weight functions (B-splines need >= 4)",
        {{"fourier", WeightBasis::Fourier}, {"bspline", WeightBasis::BSpline}});
  o.add("lr", &NetOptions::lr, "Adam step size").range(1e-6, 1);
  o.add("weight_decay", &NetOptions::weight_decay, "L2 penalty of Adam").min(0);
  o.add("batch_size", &NetOptions::batch_size, "minibatch size").range(1, 100000);
  o.add("max_epochs", &NetOptions::max_epochs, "most epochs").range(1, 100000);
  o.add("patience", &NetOptions::patience, "stop after this many epochs without a better validation loss")
      .range(1, 100000);
  o.add("linear_link", &NetOptions::linear_link, "bottleneck: identity link after the index layer (a linear model)");
}

void Arm::declare(nexp::Options<Arm>& o) {
  o.add("name", &Arm::name, "label of the arm in tables and summaries").required();
  o.add("method", &Arm::method, "model").required().choices({"equal_width", "bottleneck", "funcnn", "raw_mlp", "flm", "fpcr"});
  o.add("J", &Arm::J, "bottleneck indices; 0: the study's J").range(0, 64);
  o.add("M", &Arm::M, "B-spline functions; 0: the study's M").range(0, 200);
  o.add("predictors", &Arm::predictors, "predictors the arm sees; empty: all");
  o.add("basis", &Arm::basis, "features of this arm (bspline, fpca, pace); empty: the study's params.basis");
}

void StudyOptions::declare(nexp::Options<StudyOptions>& o) {
  o.inherit<FitOptions>();
  o.add("vary", &StudyOptions::vary, "what changes between draws: none, n, m (points per curve), M (basis size), "
        "irregular_points",
        {{"none", Axis::None}, {"n", Axis::N}, {"m", Axis::Points}, {"M", Axis::Basis},
         {"irregular_points", Axis::Irregular}});
  o.add("values", &StudyOptions::values, "values of the varied quantity (ignored with vary: none)");
  o.add("repeats", &StudyOptions::repeats,
        "draws (seeds, splits) per value; with dataset.folds = k, repeats of k-fold cross-validation").range(1, 1000);
  o.add("first_seed", &StudyOptions::first_seed, "split seed of the first repeat").min(1);
  o.add("arms", &StudyOptions::arms, "models to compare on every draw");
  o.add("compare", &StudyOptions::compare, "pairs 'a-b' of arm names: paired differences a minus b");
  o.add("metric", &StudyOptions::metric,
        "what to summarise (validation_rmse: for tuning on validation data only; with cross-validation the "
        "RMSE pools every fold's test or validation errors of one repeat)")
      .choices({"excess_risk", "test_rmse", "validation_rmse"});
}

Kind kind_of(const std::string& method) {
  static const std::map<std::string, Kind> kinds = {{"equal_width", Kind::EqualWidth}, {"bottleneck", Kind::Bottleneck},
                                                    {"funcnn", Kind::FuncNN},          {"raw_mlp", Kind::RawMlp},
                                                    {"flm", Kind::Flm},                {"fpcr", Kind::Fpcr}};
  const auto dot = method.rfind('.');
  return kinds.at(dot == std::string::npos ? method : method.substr(dot + 1));
}

namespace {

LinearFit fit_fpcr(const Design& d) {
  // K per predictor on the validation set: the first k scores of every predictor, k = 1..K.
  const std::int64_t P = static_cast<std::int64_t>(d.predictors.size()), K = d.per_predictor;
  LinearFit best;
  double best_rmse = INFINITY;
  for (std::int64_t k = 1; k <= K; ++k) {
    Matrix xt(d.train.rows(), P * k), xv(d.validation.rows(), P * k);
    for (std::int64_t p = 0; p < P; ++p)
      xt.middleCols(p * k, k) = d.train.middleCols(p * K, k), xv.middleCols(p * k, k) = d.validation.middleCols(p * K, k);
    LinearFit f = fit_ols(xt, d.y_train);
    const double r = rmse(f.predict(xv), d.y_validation);
    if (r < best_rmse) {
      best_rmse = r;
      // Embed in the full K columns per predictor (zeros beyond k).
      best = f;
      best.k = k;
      best.b = Vector::Zero(P * K);
      for (std::int64_t p = 0; p < P; ++p) best.b.segment(p * K, k) = f.b.segment(p * k, k);
    }
  }
  return best;
}

// FuncNN: int phi_m psi_q for the M curve B-splines and the Q weight functions.
Matrix weight_gram(std::int64_t M, WeightBasis w, std::int64_t Q) {
  const BSplineBasis basis(static_cast<int>(M));
  if (w == WeightBasis::Fourier)
    return basis.gram_with([Q](double t) { return Vector(fourier({t}, static_cast<int>(Q)).row(0).transpose()); },
                           static_cast<int>(Q));
  if (Q < 4)
    throw nexp::ConfigError(fmt::format("functional_reg.funcnn: params.weight_basis bspline needs "
                                        "params.weight_functions >= 4 (cubic B-splines); found {}",
                                        Q));
  const BSplineBasis weights(static_cast<int>(Q));
  return basis.gram_with([&weights](double t) { return Vector(weights.evaluate({t}).row(0).transpose()); },
                         static_cast<int>(Q));
}

Problem only(const Problem& p, const std::vector<std::string>& keep) {
  if (keep.empty()) return p;
  Problem out;
  out.regular = p.regular;
  out.train = p.train, out.validation = p.validation, out.test = p.test;
  for (Sample* s : {&out.train, &out.validation, &out.test}) s->curves.clear();
  for (const auto& name : keep) {
    const auto it = std::find(p.predictors.begin(), p.predictors.end(), name);
    if (it == p.predictors.end())
      throw nexp::ConfigError(fmt::format("arm predictors: '{}' is not a predictor of the data set (it has: {})", name,
                                          fmt::join(p.predictors, ", ")));
    const auto q = static_cast<std::size_t>(it - p.predictors.begin());
    out.predictors.push_back(name);
    out.train.curves.push_back(p.train.curves[q]);
    out.validation.curves.push_back(p.validation.curves[q]);
    out.test.curves.push_back(p.test.curves[q]);
  }
  return out;
}

}  // namespace

ArmResult fit_arm(Kind kind, const FitOptions& o, const Problem& p, bool simulated, std::uint64_t seed,
                  const std::string& method_name) {
  const auto start = std::chrono::steady_clock::now();
  ArmResult r;
  Vector validation;
  if (kind == Kind::Flm || kind == Kind::Fpcr) {
    BasisOptions b = o;
    // FLM integrates B-spline curves; FPCR takes PACE scores with basis pace, else FPC scores.
    b.representation = kind == Kind::Flm                             ? Representation::BSpline
                       : o.representation == Representation::Pace ? Representation::Pace
                                                                   : Representation::Fpca;
    const Design d = coefficient_design(p, b);
    LinearFit f;
    if (kind == Kind::Flm) {
      const BSplineBasis basis(static_cast<int>(o.M));
      f = fit_flm(d.train, d.y_train, basis.gram(), basis.roughness(), static_cast<std::int64_t>(d.predictors.size()));
    } else {
      f = fit_fpcr(d);
    }
    validation = f.predict(d.validation);
    r.test_predictions = f.predict(d.test);
    r.parameters = (kind == Kind::Flm ? d.train.cols() : f.k * static_cast<std::int64_t>(d.predictors.size())) + 1;
  } else {
    const Design d = kind == Kind::RawMlp ? raw_design(p, method_name) : coefficient_design(p, o);
    const Architecture a = kind == Kind::Bottleneck ? Architecture::Bottleneck
                         : kind == Kind::FuncNN     ? Architecture::FuncNN
                                                    : Architecture::EqualWidth;
    if (a == Architecture::FuncNN && o.representation != Representation::BSpline)
      throw nexp::ConfigError("functional_reg.funcnn integrates B-spline curves against its weight functions: "
                              "params.basis must be bspline");
    const Matrix gf = a == Architecture::FuncNN ? weight_gram(o.M, o.weight_basis, o.weight_functions) : Matrix();
    const NetFit f = fit_net(a, o, d.train, d.y_train, d.validation, d.y_validation, d.test, seed, gf, d.per_predictor);
    validation = f.validation;
    r.test_predictions = f.test;
    r.parameters = f.parameters;
    r.epochs = f.epochs;
  }
  const Vector y_test = Eigen::Map<const Vector>(p.test.y.data(), static_cast<Eigen::Index>(p.test.y.size()));
  const Vector y_val = Eigen::Map<const Vector>(p.validation.y.data(), static_cast<Eigen::Index>(p.validation.y.size()));
  r.test_rmse = rmse(r.test_predictions, y_test);
  r.validation_rmse = rmse(validation, y_val);
  if (simulated) {
    const Vector f = Eigen::Map<const Vector>(p.test.truth.data(), static_cast<Eigen::Index>(p.test.truth.size()));
    r.excess_risk = mean_square(r.test_predictions, f);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

namespace {

const std::vector<nexp::CsvColumn>& split_columns() {
  using C = nexp::CsvColumn;
  static const std::vector<C> columns = {C::integer("repeat"), C::integer("fold"), C::integer("split_seed"), C::text("id"),
                                         C::text("part")};
  return columns;
}

void write_splits(nexp::CsvWriter& csv, const Problem& p, std::int64_t repeat, std::int64_t fold, std::int64_t split_seed) {
  const std::pair<const Sample*, const char*> parts[] = {{&p.train, "train"}, {&p.validation, "validation"}, {&p.test, "test"}};
  for (const auto& [s, name] : parts)
    for (const auto& id : s->ids) csv.row(repeat, fold, split_seed, id, name);
}

}  // namespace

void run_single(nexp::RunContext& ctx, Kind kind) {
  const auto o = ctx.options<FitOptions>();
  const auto& data = ctx.dataset_as<FunctionalData>();
  const Problem p = data.draw({});
  const ArmResult r = fit_arm(kind, o, p, data.simulated(), ctx.seed(), ctx.method_name());
  ctx.summary("test_rmse", r.test_rmse);
  ctx.summary("validation_rmse", r.validation_rmse);
  ctx.summary("num_params", static_cast<double>(r.parameters));
  if (data.simulated()) ctx.summary("excess_risk", r.excess_risk);
  if (r.epochs > 0) ctx.summary("epochs", static_cast<double>(r.epochs));
  ctx.log().info("{}: test RMSE {:.4g}{}, {} parameters, {:.2f} s", ctx.method_name(), r.test_rmse,
                 data.simulated() ? fmt::format(", excess risk {:.4g}", r.excess_risk) : "", r.parameters, r.seconds);
  nexp::CsvWriter splits(ctx.artifacts_dir() / "splits.csv", split_columns());
  write_splits(splits, p, 0, 0, static_cast<std::int64_t>(ctx.seed()));
  using C = nexp::CsvColumn;
  nexp::CsvWriter pred(ctx.artifacts_dir() / "predictions.csv", {C::text("id"), C::real("y"), C::real("prediction"), C::real("truth")});
  for (std::size_t i = 0; i < p.test.size(); ++i)
    pred.row(p.test.ids[i], p.test.y[i], r.test_predictions(static_cast<Eigen::Index>(i)),
             p.test.truth.empty() ? NAN : p.test.truth[i]);
}

// ---------------------------------------------------------------- studies

namespace {

struct Cell {  // one (value, repeat, arm): the metric pooled over the repeat's folds
  double value;
  std::int64_t repeat;
  std::size_t arm;
  double metric;
};

// Pools one arm's results over the folds of a repeat: RMSEs from summed squared errors, excess risk
// weighted by test size. Without folds it passes the one draw's numbers through.
struct Pooled {
  double test_sse = 0, validation_sse = 0, excess_sum = 0;
  double test_n = 0, validation_n = 0;
  void add(const ArmResult& r, const Problem& p) {
    const auto nt = static_cast<double>(p.test.size()), nv = static_cast<double>(p.validation.size());
    test_sse += r.test_rmse * r.test_rmse * nt, validation_sse += r.validation_rmse * r.validation_rmse * nv;
    excess_sum += r.excess_risk * nt;
    test_n += nt, validation_n += nv;
  }
  double metric(const std::string& name) const {
    if (name == "excess_risk") return excess_sum / test_n;
    return std::sqrt(name == "test_rmse" ? test_sse / test_n : validation_sse / validation_n);
  }
};

std::string value_label(double v) { return v == std::floor(v) ? fmt::format("{}", static_cast<std::int64_t>(v)) : fmt::format("{}", v); }

void check_study(const StudyOptions& o, const FunctionalData& data) {
  if (o.arms.empty()) throw nexp::ConfigError("functional_reg.study: params.arms is empty; list the models to compare");
  if (o.vary != Axis::None && o.values.empty())
    throw nexp::ConfigError("functional_reg.study: params.values is empty; give the values of the varied quantity");
  if (o.metric == "excess_risk" && !data.simulated())
    throw nexp::ConfigError("functional_reg.study: metric excess_risk needs noiseless targets (functional_reg.simulated); "
                            "use params.metric: test_rmse on real data");
  for (const auto& arm : o.arms)
    if (!arm.basis.empty() && arm.basis != "bspline" && arm.basis != "fpca" && arm.basis != "pace")
      throw nexp::ConfigError(fmt::format("functional_reg.study: arm '{}' has basis '{}'; expected bspline, fpca, pace "
                                          "or none (the study's params.basis)", arm.name, arm.basis));
  for (const auto& pair : o.compare) {
    const auto dash = pair.find('-');
    auto known = [&](const std::string& n) {
      return std::any_of(o.arms.begin(), o.arms.end(), [&](const Arm& a) { return a.name == n; });
    };
    if (dash == std::string::npos || !known(pair.substr(0, dash)) || !known(pair.substr(dash + 1)))
      throw nexp::ConfigError(fmt::format("functional_reg.study: params.compare entry '{}' must be 'a-b' with a and b "
                                          "names of arms", pair));
  }
  for (double v : o.values)
    if (o.vary != Axis::None && (v < 1 || v != std::floor(v)))
      throw nexp::ConfigError(fmt::format("functional_reg.study: params.values must be whole numbers >= 1; found {}", v));
}

std::vector<double> metric_of(const std::vector<Cell>& cells, double value, std::size_t arm) {
  std::vector<double> out;
  for (const auto& c : cells)
    if (c.value == value && c.arm == arm) out.push_back(c.metric);
  return out;
}

// Per arm: the level at each value (mean, sd); in n, the log-log slope; in m, M or irregular points,
// the change between consecutive values, paired over repeats (the same split seeds) with a t
// interval: a change whose interval covers 0 is where the error has levelled off.
void summarise_arm(nexp::RunContext& ctx, const StudyOptions& o, const std::vector<double>& values,
                   const std::vector<Cell>& cells, std::size_t a) {
  const auto& name = o.arms[a].name;
  for (double v : values) {
    const auto x = metric_of(cells, v, a);
    const std::string key = values.size() == 1 ? fmt::format("{}_{}", name, o.metric)
                                               : fmt::format("{}_{}_at_{}", name, o.metric, value_label(v));
    ctx.summary(key, nexp::stats::mean(x));
    if (x.size() > 1) ctx.summary(key + "_sd", nexp::stats::stddev(x));
  }
  if (values.size() < 2) return;
  if (o.vary == Axis::N) {
    std::vector<std::vector<double>> samples;
    for (double v : values) samples.push_back(metric_of(cells, v, a));
    nexp::Random rng = ctx.stream("slope", a);
    ctx.summary_interval(name + "_slope", nexp::stats::loglog_slope_of_means(values, samples, rng));
  } else if (o.repeats > 1) {
    for (std::size_t k = 0; k + 1 < values.size(); ++k)
      ctx.summary_interval(fmt::format("{}_change_{}_to_{}", name, value_label(values[k]), value_label(values[k + 1])),
                           nexp::stats::paired_t_interval(metric_of(cells, values[k + 1], a), metric_of(cells, values[k], a)));
  }
}

void summarise(nexp::RunContext& ctx, const StudyOptions& o, const std::vector<double>& values,
               const std::vector<Cell>& cells) {
  for (std::size_t a = 0; a < o.arms.size(); ++a) summarise_arm(ctx, o, values, cells, a);
  auto arm_index = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find_if(o.arms.begin(), o.arms.end(), [&](const Arm& a) { return a.name == n; }) - o.arms.begin());
  };
  for (const auto& pair : o.compare) {
    const auto dash = pair.find('-');
    const std::size_t a = arm_index(pair.substr(0, dash)), b = arm_index(pair.substr(dash + 1));
    const std::string key = pair.substr(0, dash) + "_minus_" + pair.substr(dash + 1);
    nexp::Random rng = ctx.stream("compare", nexp::fnv1a64(pair));
    if (o.vary == Axis::N && values.size() > 1) {
      // Difference of log-log slopes; the bootstrap resamples repeats (paired: the same draws for both).
      auto slope = [&](std::size_t arm, const std::vector<std::size_t>& idx) {
        std::vector<double> means;
        for (double v : values) {
          const auto x = metric_of(cells, v, arm);
          double s = 0;
          for (auto i : idx) s += x[i];
          means.push_back(s / static_cast<double>(idx.size()));
        }
        return nexp::stats::fit_loglog(values, means).slope;
      };
      ctx.summary_interval(key + "_slope", nexp::stats::bootstrap(
                                               static_cast<std::size_t>(o.repeats),
                                               [&](const std::vector<std::size_t>& idx) { return slope(a, idx) - slope(b, idx); },
                                               rng));
    }
    const double last = values.back();
    ctx.summary_interval(key, nexp::stats::paired_bootstrap(metric_of(cells, last, a), metric_of(cells, last, b), rng));
  }
}

FitOptions arm_options(const StudyOptions& o, const Arm& arm, Axis vary, std::int64_t value) {
  FitOptions fo = o;
  if (arm.J > 0) fo.J = arm.J;
  if (arm.M > 0) fo.M = arm.M;
  if (vary == Axis::Basis) fo.M = value;
  if (!arm.basis.empty())
    fo.representation = arm.basis == "pace" ? Representation::Pace
                      : arm.basis == "fpca" ? Representation::Fpca
                                            : Representation::BSpline;
  return fo;
}

}  // namespace

void run_study(nexp::RunContext& ctx) {
  const auto o = ctx.options<StudyOptions>();
  const auto& data = ctx.dataset_as<FunctionalData>();
  check_study(o, data);
  const std::vector<double> values = o.vary == Axis::None ? std::vector<double>{0.0} : o.values;
  const std::int64_t folds = std::max<std::int64_t>(1, data.folds());
  using C = nexp::CsvColumn;
  nexp::CsvWriter csv(ctx.artifacts_dir() / "study.csv",
                      {C::real("value"), C::integer("repeat"), C::integer("fold"), C::integer("split_seed"), C::text("arm"),
                       C::text("method"), C::real("excess_risk"), C::real("test_rmse"), C::real("validation_rmse"),
                       C::integer("num_params"), C::integer("epochs"), C::real("seconds")});
  csv.flush_every_row(true);
  nexp::CsvWriter splits(ctx.artifacts_dir() / "splits.csv", split_columns());
  std::vector<Cell> cells;
  auto bar = ctx.progress(static_cast<std::int64_t>(values.size() * o.arms.size()) * o.repeats * folds, "study");
  for (double v : values) {
    const auto iv = static_cast<std::int64_t>(v);
    for (std::int64_t r = 0; r < o.repeats; ++r) {
      std::vector<Pooled> pools(o.arms.size());
      for (std::int64_t f = 0; f < folds; ++f) {
        if (ctx.stop_requested()) return;
        Draw d;
        d.split_seed = o.first_seed + r;
        if (folds > 1) d.fold = f;
        if (o.vary == Axis::N) d.n = iv;
        if (o.vary == Axis::Points) d.m = iv;
        if (o.vary == Axis::Irregular) d.irregular_points = iv;
        const Problem p = data.draw(d);
        if (v == values.front()) write_splits(splits, p, r, f, *d.split_seed);
        for (std::size_t a = 0; a < o.arms.size(); ++a) {
          const Arm& arm = o.arms[a];
          const auto seed = nexp::mix64(static_cast<std::uint64_t>(*d.split_seed) * 1000003ull + a + 1000ull * static_cast<std::uint64_t>(f));
          const ArmResult res = fit_arm(kind_of(arm.method), arm_options(o, arm, o.vary, iv), only(p, arm.predictors),
                                        data.simulated(), seed, "functional_reg." + arm.method);
          csv.row(v, r, f, *d.split_seed, arm.name, arm.method, res.excess_risk, res.test_rmse, res.validation_rmse,
                  res.parameters, res.epochs, res.seconds);
          pools[a].add(res, p);
          bar.advance();
        }
      }
      for (std::size_t a = 0; a < o.arms.size(); ++a) cells.push_back({v, r, a, pools[a].metric(o.metric)});
    }
  }
  summarise(ctx, o, values, cells);
}

}  // namespace functional_reg

// ---------------------------------------------------------------- registration

namespace {

using nexp::Direction;
namespace fr = functional_reg;

void register_components(nexp::Registrar& r) {
  r.metric("excess_risk", Direction::Minimize,
           "mean squared distance to the noiseless regression function on the test curves (simulation only)");
  r.metric("test_rmse", Direction::Minimize, "root mean squared error on the test responses");
  r.metric("validation_rmse", Direction::Minimize, "root mean squared error on the validation responses");
  r.metric("num_params", Direction::None, "fitted parameters of the model");
  r.metric("epochs", Direction::None, "training epochs until early stopping");

  r.dataset<fr::SimulatedOptions>("functional_reg.simulated",
                                  "Fourier curves seen at m random noisy points; truths linear, index2, general",
                                  fr::make_simulated);
  r.dataset<fr::RealOptions>("functional_reg.tecator", "Tecator NIR absorbance spectra (215 x 100), fat / water / protein",
                             fr::make_tecator);
  r.dataset<fr::RealOptions>("functional_reg.gasoline", "gasoline NIR spectra (60 x 401), octane", fr::make_gasoline);
  r.dataset<fr::RealOptions>("functional_reg.growth",
                             "Berkeley growth: heights at ages 1..10 (unequally spaced), height at 18",
                             fr::make_growth);
  r.dataset<fr::RealOptions>("functional_reg.csv", "any curves (id,predictor,t,value) and responses (id,y)",
                             fr::make_csv);

  const std::vector<std::string> single = {"test_rmse", "validation_rmse", "num_params", "excess_risk", "epochs"};
  struct Entry {
    const char* name;
    fr::Kind kind;
    const char* summary;
  };
  static const Entry entries[] = {
      {"functional_reg.equal_width", fr::Kind::EqualWidth, "equal-width ReLU network on the basis coefficients"},
      {"functional_reg.bottleneck", fr::Kind::Bottleneck,
       "bottleneck-equal-width network: a linear map to J indices, then an equal-width ReLU network"},
      {"functional_reg.funcnn", fr::Kind::FuncNN, "functional neural network of Thind, Multani and Cao (2023)"},
      {"functional_reg.raw_mlp", fr::Kind::RawMlp, "equal-width ReLU network on the raw grid values (regular grids)"},
      {"functional_reg.flm", fr::Kind::Flm, "penalised functional linear model, penalty by GCV"},
      {"functional_reg.fpcr", fr::Kind::Fpcr, "functional principal component regression"},
  };
  for (const auto& e : entries)
    r.method(e.name, e.summary, [kind = e.kind](nexp::RunContext& ctx) { fr::run_single(ctx, kind); })
        .options<fr::FitOptions>()
        .produces(single)
        .accepts({"functional_reg.*"});
  r.method("functional_reg.study",
           "redraw the problem over n, m, M or irregular points and repeats; fit several arms; slopes and paired "
           "differences with bootstrap intervals",
           fr::run_study)
      .options<fr::StudyOptions>()
      .produces({})
      .accepts({"functional_reg.*"});
}

}  // namespace

NEXP_PLUGIN(functional_reg, "0.1.0",
            "networks on basis coefficients of irregularly observed curves; the bottleneck-equal-width network "
            "exploits multiple-index structure (architecture matters)",
            "Deep scalar-on-function regression with irregularly observed functional predictors (NeurIPS 2026; "
            "authors not named in the abstract nexp implements)",
            register_components)
