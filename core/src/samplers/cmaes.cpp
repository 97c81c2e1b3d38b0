// CMA-ES with IPOP restarts (samplers/cmaes.hpp).
#include "cmaes.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nexp/linalg.hpp"

namespace nexp::samplers {

namespace {

using Vec = Eigen::VectorXd;
using Mat = Eigen::MatrixXd;

std::vector<std::size_t> numeric_dims(const Space& space) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < space.size(); ++i)
    if (space[i].kind != Dimension::Kind::Categorical) out.push_back(i);
  return out;
}

// A dimension's working-space bounds (before scaling to [0, 1]).
void work_bounds(const Dimension& d, double& lo, double& hi) {
  const bool integer = d.kind == Dimension::Kind::Int;
  lo = integer ? d.lo - 0.5 : d.lo;
  hi = integer ? d.hi + 0.5 : d.hi;
  if (d.log) lo = std::log(lo), hi = std::log(hi);
}

double to_unit(const Dimension& d, double x) {
  double lo, hi;
  work_bounds(d, lo, hi);
  return ((d.log ? std::log(x) : x) - lo) / (hi - lo);
}

double from_unit(const Dimension& d, double u) {
  double lo, hi;
  work_bounds(d, lo, hi);
  double x = lo + std::clamp(u, 0.0, 1.0) * (hi - lo);
  if (d.log) x = std::exp(x);
  if (d.kind == Dimension::Kind::Int) x = std::round(x);
  return std::clamp(x, d.lo, d.hi);
}

// The strategy's parameters and state for one run (between restarts).
struct Strategy {
  int n, lambda, mu;
  Vec w;
  double mueff, cc, cs, c1, cmu, ds, chi;
  Vec mean, ps, pc;
  Mat C, B;
  Vec D;  // square roots of C's eigenvalues
  double sigma;
  int generation = 0;
  std::vector<double> bests;  // best value of each generation

  Strategy(int dims, int population, Vec m) : n(dims), lambda(population), mu(population / 2) {
    w.resize(mu);
    for (int i = 0; i < mu; ++i) w[i] = std::log(mu + 0.5) - std::log(i + 1.0);
    w /= w.sum();
    mueff = 1.0 / w.squaredNorm();
    cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n);
    cs = (mueff + 2) / (n + mueff + 5);
    c1 = 2 / ((n + 1.3) * (n + 1.3) + mueff);
    cmu = std::min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) * (n + 2) + mueff));
    ds = 1 + 2 * std::max(0.0, std::sqrt((mueff - 1) / (n + 1)) - 1) + cs;
    chi = std::sqrt(n) * (1 - 1.0 / (4 * n) + 1.0 / (21.0 * n * n));
    mean = std::move(m);
    ps = pc = Vec::Zero(n);
    C = B = Mat::Identity(n, n);
    D = Vec::Ones(n);
    sigma = 1.0 / 6;
  }

  // One generation's update from its lambda points (working space) and values.
  void tell(const std::vector<Vec>& xs, const std::vector<double>& values) {
    std::vector<int> order(xs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return values[a] < values[b]; });
    bests.push_back(values[order[0]]);
    Vec yw = Vec::Zero(n);
    Mat rank_mu = Mat::Zero(n, n);
    for (int i = 0; i < mu; ++i) {
      const Vec y = (xs[order[i]] - mean) / sigma;
      yw += w[i] * y;
      rank_mu += w[i] * y * y.transpose();
    }
    mean += sigma * yw;
    const Mat inv_sqrt = B * D.cwiseInverse().asDiagonal() * B.transpose();
    ps = (1 - cs) * ps + std::sqrt(cs * (2 - cs) * mueff) * inv_sqrt * yw;
    ++generation;
    const bool hs = ps.norm() / std::sqrt(1 - std::pow(1 - cs, 2.0 * generation)) < (1.4 + 2.0 / (n + 1)) * chi;
    pc = (1 - cc) * pc + (hs ? std::sqrt(cc * (2 - cc) * mueff) : 0.0) * yw;
    C = (1 - c1 - cmu) * C + c1 * (pc * pc.transpose() + (hs ? 0.0 : cc * (2 - cc)) * C) + cmu * rank_mu;
    sigma *= std::exp((cs / ds) * (ps.norm() / chi - 1));
    decompose();
  }

  void decompose() {
    C = 0.5 * (C + C.transpose());
    linalg::SymmetricEigen eig = linalg::symmetric_eigen(C);
    B = std::move(eig.vectors);
    D = eig.values.cwiseMax(1e-300).cwiseSqrt();
  }

  // IPOP's stopping rules: converged, stagnant, or ill-conditioned.
  bool should_restart() const {
    if (sigma * D.maxCoeff() < 1e-12) return true;
    if (D.maxCoeff() / D.minCoeff() > 1e7) return true;  // condition number of C > 1e14
    const std::size_t window = static_cast<std::size_t>(10 + std::ceil(30.0 * n / lambda));
    if (bests.size() >= window) {
      const auto first = bests.end() - static_cast<long>(window);
      const auto [lo, hi] = std::minmax_element(first, bests.end());
      if (*hi - *lo < 1e-12) return true;
    }
    return false;
  }

  Vec sample(Random& rng) const {
    for (int tries = 0;; ++tries) {
      Vec z(n);
      for (int i = 0; i < n; ++i) z[i] = rng.normal();
      Vec x = mean + sigma * (B * D.asDiagonal() * z);
      if ((x.array() >= 0).all() && (x.array() <= 1).all()) return x;
      if (tries == 100) return x.cwiseMax(0.0).cwiseMin(1.0);  // repaired onto the box
    }
  }
};

int default_lambda(int n) { return 4 + static_cast<int>(std::floor(3 * std::log(static_cast<double>(n)))); }

Vec restart_mean(std::uint64_t seed, int restart, int n) {
  if (restart == 0) return Vec::Constant(n, 0.5);
  Random rng = Random::stream(seed, "cmaes restart", static_cast<std::uint64_t>(restart));
  Vec m(n);
  for (int i = 0; i < n; ++i) m[i] = rng.uniform();
  return m;
}

// Replays the history into a strategy: consecutive generations of lambda completed trials.
Strategy replay(const Space& space, std::uint64_t seed, const std::vector<Observation>& history, int& restarts) {
  const auto dims = numeric_dims(space);
  const int n = static_cast<int>(dims.size());
  restarts = 0;
  Strategy s(n, default_lambda(n), restart_mean(seed, 0, n));
  std::vector<Vec> xs;
  std::vector<double> values;
  for (const auto& o : history) {
    if (o.outcome != Outcome::Complete || o.values.empty() || !std::isfinite(o.values[0])) continue;
    Vec x(n);
    for (int i = 0; i < n; ++i) x[i] = to_unit(space[dims[static_cast<std::size_t>(i)]], o.x[dims[static_cast<std::size_t>(i)]]);
    xs.push_back(std::move(x));
    values.push_back(o.values[0]);
    if (static_cast<int>(xs.size()) < s.lambda) continue;
    s.tell(xs, values);
    xs.clear(), values.clear();
    if (s.should_restart()) {
      ++restarts;
      s = Strategy(n, s.lambda * 2, restart_mean(seed, restarts, n));
    }
  }
  return s;
}

}  // namespace

CmaesState cmaes_replay(const Space& space, std::uint64_t seed, const std::vector<Observation>& history) {
  int restarts = 0;
  const Strategy s = replay(space, seed, history, restarts);
  CmaesState out;
  out.dims = s.n, out.lambda = s.lambda, out.generation = s.generation, out.restarts = restarts;
  out.mean.assign(s.mean.data(), s.mean.data() + s.n);
  out.sigma = s.sigma;
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.n; ++j) out.cov.push_back(s.C(i, j));
  return out;
}

Point CmaesSampler::ask(const std::vector<Observation>& history, int number) {
  Random rng = Random::stream(seed_, "cmaes", static_cast<std::uint64_t>(number));
  Point x = draw_uniform(space_, rng);  // categorical dimensions stay uniform draws
  const auto dims = numeric_dims(space_);
  if (dims.empty()) return x;
  int restarts = 0;
  const Vec u = replay(space_, seed_, history, restarts).sample(rng);
  for (std::size_t i = 0; i < dims.size(); ++i) x[dims[i]] = from_unit(space_[dims[i]], u[static_cast<long>(i)]);
  return x;
}

}  // namespace nexp::samplers
