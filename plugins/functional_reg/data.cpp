#include "data.hpp"

#include <fmt/format.h>
#include <nexp/table.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "basis.hpp"

namespace functional_reg {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr std::uint64_t kTrain = 1, kValidation = 2, kTest = 3, kSplit = 4, kPoints = 5;
}  // namespace

void SimulatedOptions::declare(nexp::Options<SimulatedOptions>& o) {
  o.add("truth", &SimulatedOptions::truth,
        "regression function: linear <beta, x>; index2 g(<beta1, x>, <beta2, x>); general int sin(pi x(t)) dt (scaled to unit variance)",
        {{"linear", Truth::Linear}, {"index2", Truth::Index2}, {"general", Truth::General}});
  o.add("n", &SimulatedOptions::n, "training curves").range(10, 1000000);
  o.add("n_test", &SimulatedOptions::n_test, "test curves (noiseless targets: the excess risk is exact)")
      .range(10, 1000000);
  o.add("validation_share", &SimulatedOptions::validation_share, "validation curves per training curve")
      .range(0.05, 1);
  o.add("m", &SimulatedOptions::m, "random observation points per curve").range(2, 10000);
  o.add("terms", &SimulatedOptions::terms, "Fourier terms of the curves").range(3, 201);
  o.add("decay", &SimulatedOptions::decay, "sd of the frequency-k pair is (1 + k)^-decay").range(0.5, 5);
  o.add("point_noise", &SimulatedOptions::point_noise, "sd of the measurement noise on x").min(0);
  o.add("noise", &SimulatedOptions::noise, "sd of the response noise (the signal has unit variance)").min(0);
  o.add("split_seed", &SimulatedOptions::split_seed, "seed of the draw; 0: the run's seed").min(0);
}

void RealOptions::declare(nexp::Options<RealOptions>& o) {
  o.add("response", &RealOptions::response, "response column (tecator: fat, water or protein); empty: default");
  o.add("irregular_points", &RealOptions::irregular_points,
        "> 0: keep a seeded random subset of this many points of every curve").min(0);
  o.add("derivative", &RealOptions::derivative,
        "add the second derivative (central differences) of each predictor as another predictor");
  o.add("split_seed", &RealOptions::split_seed, "seed of the random split; 0: the run's seed").min(0);
  o.add("split", &RealOptions::split, "train, validation, test sizes (empty: the data set's default)").min(1);
  o.add("folds", &RealOptions::folds,
        "k > 1: repeated k-fold cross-validation (each fold is the test part once; the rest is split into "
        "training and validation in the proportions of dataset.split); 0: random splits of dataset.split")
      .range(0, 100);
  o.add("file", &RealOptions::file, "functional_reg.csv: curves, columns id,predictor,t,value");
  o.add("responses", &RealOptions::responses, "functional_reg.csv: responses, columns id,<response>");
}

// ---------------------------------------------------------------- simulation

double Simulator::sd(std::int64_t k) const { return std::pow(1.0 + static_cast<double>((k + 1) / 2), -o.decay); }

Simulator make_simulator(const SimulatedOptions& o) {
  Simulator s;
  s.o = o;
  // Two fixed index directions with smooth coefficient functions, scaled to unit index variance.
  for (int j = 0; j < 2; ++j) {
    std::vector<double> b(static_cast<std::size_t>(o.terms));
    double var = 0;
    for (std::int64_t k = 0; k < o.terms; ++k) {
      const double v = j == 0 ? 1.0 / (1.0 + k) : std::cos(1.0 + 2.0 * k) / (1.0 + k);
      b[static_cast<std::size_t>(k)] = v;
      var += v * v * s.sd(k) * s.sd(k);
    }
    for (auto& v : b) v /= std::sqrt(var);
    s.beta.push_back(b);
  }
  if (o.truth == Truth::General) {  // scale to unit variance, estimated once on 4000 fixed draws
    const Sample probe = s.sample(4000, 0x5EED, 99, 2);
    double m = 0, v = 0;
    for (double f : probe.truth) m += f;
    m /= static_cast<double>(probe.truth.size());
    for (double f : probe.truth) v += (f - m) * (f - m);
    s.general_scale = 1.0 / std::sqrt(v / static_cast<double>(probe.truth.size()));
  }
  return s;
}

double Simulator::f(const std::vector<double>& xi) const {
  auto index = [&](int j) {
    double u = 0;
    for (std::size_t k = 0; k < xi.size(); ++k) u += beta[static_cast<std::size_t>(j)][k] * xi[k];
    return u;
  };
  switch (o.truth) {
    case Truth::Linear: return index(0);
    case Truth::Index2: {  // a smooth link of two indices: sd about 1 (checked in the tests)
      const double u = index(0), v = index(1);
      return std::sin(1.5 * u) + 0.5 * u * v;
    }
    case Truth::General: {  // int_0^1 sin(pi x(t)) dt, midpoint rule on 200 points
      double sum = 0;
      for (int q = 0; q < 200; ++q) {
        const double t = (q + 0.5) / 200.0;
        double x = 0;
        for (std::size_t k = 0; k < xi.size(); ++k) {
          const int freq = static_cast<int>((k + 1) / 2);
          x += xi[k] * (k == 0 ? 1.0 : std::sqrt(2.0) * (k % 2 ? std::cos(2 * kPi * freq * t) : std::sin(2 * kPi * freq * t)));
        }
        sum += std::sin(kPi * x);
      }
      return general_scale * sum / 200.0;
    }
  }
  return 0;
}

Sample Simulator::sample(std::int64_t n, std::uint64_t seed, std::uint64_t purpose, std::int64_t m) const {
  Sample s;
  s.curves.assign(1, {});
  nexp::Random rng = nexp::Random::stream({seed, purpose});
  std::vector<double> xi(static_cast<std::size_t>(o.terms));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < o.terms; ++k) xi[static_cast<std::size_t>(k)] = sd(k) * rng.normal();
    Curve c;
    for (std::int64_t j = 0; j < m; ++j) c.t.push_back(rng.uniform());
    std::sort(c.t.begin(), c.t.end());
    const Matrix psi = fourier(c.t, static_cast<int>(o.terms));
    const Eigen::Map<const Vector> coef(xi.data(), o.terms);
    const Vector x = psi * coef;
    for (std::int64_t j = 0; j < m; ++j) c.x.push_back(x(j) + o.point_noise * rng.normal());
    const double fi = f(xi);
    s.truth.push_back(fi);
    s.y.push_back(fi + o.noise * rng.normal());
    s.ids.push_back(std::to_string(i));
    s.curves[0].push_back(std::move(c));
  }
  return s;
}

namespace {

class SimulatedData : public FunctionalData {
 public:
  SimulatedData(const SimulatedOptions& o, std::uint64_t seed) : sim_(make_simulator(o)), seed_(seed) {}
  bool simulated() const override { return true; }
  std::string describe() const override {
    return fmt::format("functional_reg.simulated: n = {}, m = {} points per curve, {} Fourier terms", sim_.o.n,
                       sim_.o.m, sim_.o.terms);
  }
  Problem draw(const Draw& d) const override {
    const std::int64_t n = d.n.value_or(sim_.o.n), m = d.m.value_or(sim_.o.m);
    const auto seed = static_cast<std::uint64_t>(d.split_seed.value_or(static_cast<std::int64_t>(seed_)));
    Problem p;
    p.predictors = {"x"};
    p.regular = false;
    p.train = sim_.sample(n, seed, kTrain, m);
    p.validation = sim_.sample(std::max<std::int64_t>(10, std::llround(sim_.o.validation_share * n)), seed, kValidation, m);
    p.test = sim_.sample(sim_.o.n_test, seed, kTest, m);
    return p;
  }

 private:
  Simulator sim_;
  std::uint64_t seed_;
};

// ---------------------------------------------------------------- real data

struct Pool {
  std::string name;
  std::vector<std::string> predictors;
  std::vector<std::vector<Curve>> curves;  // [predictor][sample]
  std::vector<double> y;
  std::vector<std::string> ids;
  std::vector<std::int64_t> split;  // default sizes
};

// Reads the long format: curves (id,predictor,t,value) and responses (id,<column>). Every id of the
// responses must have a curve for every predictor; t is rescaled per predictor to [0, 1].
Pool read_long(const std::string& name, const std::filesystem::path& curves, const std::filesystem::path& responses,
               const std::string& column) {
  for (const auto& f : {curves, responses})
    if (!std::filesystem::exists(f))
      throw nexp::DataError(fmt::format("{}: file '{}' not found. {}", name, f.string(),
                                        name == "functional_reg.csv"
                                            ? "Give dataset.file (id,predictor,t,value) and dataset.responses (id,y)"
                                            : "Run scripts/setup (it converts the R data sets; needs Rscript)"));
  const auto resp = nexp::CsvTable::read(responses);
  const auto tab = nexp::CsvTable::read(curves);
  for (const char* c : {"id", "predictor", "t", "value"}) (void)tab.column(c);
  (void)resp.column("id");
  const std::string col = column.empty() ? resp.header().at(1) : column;
  (void)resp.column(col);
  Pool p;
  p.name = name;
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < resp.size(); ++r) {
    index[resp.text(r, "id")] = r;
    p.ids.push_back(resp.text(r, "id"));
    p.y.push_back(resp.real(r, col));
  }
  std::map<std::string, std::size_t> pred;
  for (std::size_t r = 0; r < tab.size(); ++r) {
    const std::string& pn = tab.text(r, "predictor");
    auto [it, fresh] = pred.emplace(pn, p.predictors.size());
    if (fresh) {
      p.predictors.push_back(pn);
      p.curves.emplace_back(p.y.size());
    }
    const auto id = index.find(tab.text(r, "id"));
    if (id == index.end()) continue;  // a curve without a response is not used
    Curve& c = p.curves[it->second][id->second];
    c.t.push_back(tab.real(r, "t"));
    c.x.push_back(tab.real(r, "value"));
  }
  for (std::size_t q = 0; q < p.predictors.size(); ++q) {
    double lo = INFINITY, hi = -INFINITY;
    for (std::size_t i = 0; i < p.y.size(); ++i) {
      const Curve& c = p.curves[q][i];
      if (c.t.empty())
        throw nexp::DataError(fmt::format("{}: id '{}' has a response in '{}' but no points of predictor '{}' in '{}'",
                                          name, p.ids[i], responses.string(), p.predictors[q], curves.string()));
      lo = std::min(lo, *std::min_element(c.t.begin(), c.t.end()));
      hi = std::max(hi, *std::max_element(c.t.begin(), c.t.end()));
    }
    if (!(hi > lo))
      throw nexp::DataError(fmt::format("{}: predictor '{}' has all its points at t = {}; curves need a range of t",
                                        name, p.predictors[q], lo));
    for (auto& c : p.curves[q]) {
      std::vector<std::size_t> order(c.t.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](auto a, auto b) { return c.t[a] < c.t[b]; });
      Curve s;
      for (auto k : order) s.t.push_back((c.t[k] - lo) / (hi - lo)), s.x.push_back(c.x[k]);
      c = std::move(s);
    }
  }
  return p;
}

bool same_points(const std::vector<Curve>& curves) {
  for (const auto& c : curves)
    if (c.t != curves.front().t) return false;
  return true;
}

class RealData : public FunctionalData {
 public:
  RealData(Pool pool, const RealOptions& o, std::uint64_t seed) : pool_(std::move(pool)), o_(o), seed_(seed) {
    if (o.derivative) {
      const std::size_t base = pool_.predictors.size();
      for (std::size_t q = 0; q < base; ++q) {
        if (!same_points(pool_.curves[q]))
          throw nexp::ConfigError(fmt::format("{}: dataset.derivative needs a common regular grid, and predictor '{}' "
                                              "is irregular; leave derivative off",
                                              pool_.name, pool_.predictors[q]));
        std::vector<Curve> d;
        for (const auto& c : pool_.curves[q]) d.push_back(second_derivative(c));
        pool_.predictors.push_back(pool_.predictors[q] + "_d2");
        pool_.curves.push_back(std::move(d));
      }
    }
    if (!o.split.empty()) pool_.split = o.split;
    if (pool_.split.size() != 3)
      throw nexp::ConfigError(fmt::format("{}: dataset.split needs three sizes (train, validation, test); found {}",
                                          pool_.name, pool_.split.size()));
    if (o.folds == 1 || o.folds > static_cast<std::int64_t>(pool_.y.size()))
      throw nexp::ConfigError(fmt::format("{}: dataset.folds must be 0 (random splits) or 2..{}; found {}", pool_.name,
                                          pool_.y.size(), o.folds));
    const auto total = pool_.split[0] + pool_.split[1] + pool_.split[2];
    if (total > static_cast<std::int64_t>(pool_.y.size()))
      throw nexp::ConfigError(fmt::format("{}: dataset.split {}+{}+{} = {} exceeds the {} samples", pool_.name,
                                          pool_.split[0], pool_.split[1], pool_.split[2], total, pool_.y.size()));
  }
  std::string describe() const override {
    return fmt::format("{}: {} samples, predictors {}, split {}/{}/{}{}{}", pool_.name, pool_.y.size(),
                       fmt::join(pool_.predictors, ", "), pool_.split[0], pool_.split[1], pool_.split[2],
                       o_.irregular_points > 0 ? fmt::format(", {} random points per curve", o_.irregular_points) : "",
                       o_.folds > 1 ? fmt::format(", {}-fold cross-validation", o_.folds) : "");
  }
  std::int64_t folds() const override { return o_.folds; }
  Problem draw(const Draw& d) const override {
    const auto seed = static_cast<std::uint64_t>(
        d.split_seed.value_or(o_.split_seed > 0 ? o_.split_seed : static_cast<std::int64_t>(seed_)));
    const std::int64_t keep = d.irregular_points.value_or(o_.irregular_points);
    std::vector<std::size_t> order(pool_.y.size());
    std::iota(order.begin(), order.end(), 0);
    nexp::Random rng = nexp::Random::stream({seed, kSplit});
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    std::vector<std::int64_t> sizes = pool_.split;
    if (o_.folds > 1) {
      const std::int64_t f = d.fold.value_or(0);
      if (f < 0 || f >= o_.folds)
        throw nexp::ConfigError(fmt::format("{}: fold {} of {}-fold cross-validation does not exist", pool_.name, f, o_.folds));
      order = cv_fold(order, o_.folds, f, pool_.split, seed, sizes);
    }
    Problem p;
    p.predictors = pool_.predictors;
    p.regular = keep == 0;
    for (auto& q : pool_.curves) p.regular = p.regular && same_points(q);
    Sample* parts[3] = {&p.train, &p.validation, &p.test};
    std::size_t at = 0;
    for (int s = 0; s < 3; ++s) {
      Sample& out = *parts[s];
      out.curves.assign(pool_.predictors.size(), {});
      for (std::int64_t k = 0; k < sizes[static_cast<std::size_t>(s)]; ++k, ++at) {
        const std::size_t i = order[at];
        out.y.push_back(pool_.y[i]);
        out.ids.push_back(pool_.ids[i]);
        for (std::size_t q = 0; q < pool_.predictors.size(); ++q)
          out.curves[q].push_back(thin(pool_.curves[q][i], keep, seed, i));
      }
    }
    return p;
  }

 private:
  // A seeded random subset of `keep` points of the curve (all of them when keep is 0 or larger); the
  // same sample keeps the same wavelengths for every predictor (the stream depends on the sample).
  static Curve thin(const Curve& c, std::int64_t keep, std::uint64_t seed, std::size_t sample) {
    if (keep <= 0 || keep >= static_cast<std::int64_t>(c.t.size())) return c;
    std::vector<std::size_t> idx(c.t.size());
    std::iota(idx.begin(), idx.end(), 0);
    nexp::Random rng = nexp::Random::stream({seed, kPoints, sample});
    for (std::int64_t k = 0; k < keep; ++k) std::swap(idx[static_cast<std::size_t>(k)], idx[k + rng.below(idx.size() - k)]);
    idx.resize(static_cast<std::size_t>(keep));
    std::sort(idx.begin(), idx.end());
    Curve out;
    for (auto j : idx) out.t.push_back(c.t[j]), out.x.push_back(c.x[j]);
    return out;
  }
  Pool pool_;
  RealOptions o_;
  std::uint64_t seed_;
};

std::shared_ptr<nexp::Dataset> make_named(const std::string& name, const std::string& stem, const std::string& column,
                                          std::vector<std::int64_t> split, const RealOptions& o, nexp::RunContext& ctx) {
  const auto dir = nexp::data_dir() / "functional_reg";
  Pool p = read_long(name, dir / (stem + "_curves.csv"), dir / (stem + "_responses.csv"),
                     o.response.empty() ? column : o.response);
  p.split = std::move(split);
  return std::make_shared<RealData>(std::move(p), o, ctx.seed());
}

}  // namespace

std::vector<std::size_t> cv_fold(const std::vector<std::size_t>& order, std::int64_t k, std::int64_t fold,
                                 const std::vector<std::int64_t>& split, std::uint64_t seed,
                                 std::vector<std::int64_t>& sizes) {
  const auto n = static_cast<std::int64_t>(order.size());
  const std::int64_t lo = fold * n / k, hi = (fold + 1) * n / k;
  std::vector<std::size_t> rest, test;
  for (std::int64_t i = 0; i < n; ++i) (i >= lo && i < hi ? test : rest).push_back(order[static_cast<std::size_t>(i)]);
  nexp::Random rng = nexp::Random::stream({seed, kSplit, static_cast<std::uint64_t>(fold) + 1});
  for (std::size_t i = rest.size(); i > 1; --i) std::swap(rest[i - 1], rest[rng.below(i)]);
  const auto r = static_cast<std::int64_t>(rest.size());
  const double share = static_cast<double>(split[1]) / static_cast<double>(split[0] + split[1]);
  const std::int64_t validation = std::clamp<std::int64_t>(std::llround(static_cast<double>(r) * share), 1, r - 1);
  sizes = {r - validation, validation, hi - lo};
  rest.insert(rest.end(), test.begin(), test.end());
  return rest;
}

Curve second_derivative(const Curve& c) {
  Curve d;
  d.t = c.t;
  const std::size_t n = c.x.size();
  d.x.assign(n, 0.0);
  if (n < 3) return d;
  for (std::size_t j = 1; j + 1 < n; ++j) {
    const double h1 = c.t[j] - c.t[j - 1], h2 = c.t[j + 1] - c.t[j];
    d.x[j] = 2.0 * (h1 * c.x[j + 1] - (h1 + h2) * c.x[j] + h2 * c.x[j - 1]) / (h1 * h2 * (h1 + h2));
  }
  d.x[0] = d.x[1], d.x[n - 1] = d.x[n - 2];
  return d;
}

std::shared_ptr<nexp::Dataset> make_simulated(const SimulatedOptions& o, nexp::RunContext& ctx) {
  return std::make_shared<SimulatedData>(o, o.split_seed > 0 ? static_cast<std::uint64_t>(o.split_seed) : ctx.seed());
}
std::shared_ptr<nexp::Dataset> make_tecator(const RealOptions& o, nexp::RunContext& ctx) {
  return make_named("functional_reg.tecator", "tecator", "fat", {129, 43, 43}, o, ctx);
}
std::shared_ptr<nexp::Dataset> make_gasoline(const RealOptions& o, nexp::RunContext& ctx) {
  return make_named("functional_reg.gasoline", "gasoline", "octane", {36, 12, 12}, o, ctx);
}
std::shared_ptr<nexp::Dataset> make_growth(const RealOptions& o, nexp::RunContext& ctx) {
  return make_named("functional_reg.growth", "growth", "height18", {55, 19, 19}, o, ctx);
}
std::shared_ptr<nexp::Dataset> make_csv(const RealOptions& o, nexp::RunContext& ctx) {
  if (o.file.empty() || o.responses.empty())
    throw nexp::ConfigError("functional_reg.csv needs dataset.file (columns id,predictor,t,value) and "
                            "dataset.responses (columns id,<response>)");
  Pool p = read_long("functional_reg.csv", o.file, o.responses, o.response);
  const auto n = static_cast<std::int64_t>(p.y.size());
  p.split = {n * 6 / 10, n * 2 / 10, n - n * 6 / 10 - n * 2 / 10};
  return std::make_shared<RealData>(std::move(p), o, ctx.seed());
}

}  // namespace functional_reg
