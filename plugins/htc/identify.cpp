#include "identify.hpp"

#include <nexp/stats.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "edgewise.hpp"
#include "generators.hpp"

namespace htc {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One equation: row `node` of Sigma minus lambda_{u, node} Sigma[u, .] for u in `removed`.
struct Equation {
  int node;
  std::vector<int> removed;
};

// The equations of the nodes allowed for a step besides its sources, given the edges the earlier
// steps identified. HTC: every y outside htr(v), and every solved y in htr(v) that is not a sibling,
// with its parents removed. Edgewise: every allowed source whose support lies in the targets, with its
// identified parents removed (`state` has replayed the earlier steps).
std::vector<Equation> extra_equations(const MixedGraph& g, const Identification& id, const IdStep& step,
                                      const std::vector<std::vector<int>>& identified, Reach& reach,
                                      const EdgewiseState* state) {
  std::vector<Equation> out;
  auto is_source = [&](int y) { return std::find(step.sources.begin(), step.sources.end(), y) != step.sources.end(); };
  const int v = step.node;
  if (id.criterion == "htc") {
    std::vector<char> htr;
    reach.htr_from(v, htr);
    for (int y = 0; y < g.num_nodes(); ++y) {
      const bool solved = identified[y].size() == g.parents(y).size();
      if (y == v || is_source(y) || (htr[y] && (!solved || g.is_sibling(v, y)))) continue;
      out.push_back({y, htr[y] ? g.parents(y) : std::vector<int>{}});
    }
    return out;
  }
  std::vector<int> allowed;
  std::vector<std::vector<char>> support;
  state->sources(v, allowed, support);
  const auto& u = state->unsolved(v);
  std::vector<char> in(u.size(), 0);
  for (std::size_t p = 0; p < u.size(); ++p)
    in[p] = std::find(step.targets.begin(), step.targets.end(), u[p]) != step.targets.end();
  for (std::size_t a = 0; a < allowed.size(); ++a)
    if (!is_source(allowed[a]) && within(support[a], in)) out.push_back({allowed[a], identified[allowed[a]]});
  return out;
}

// Standard normals by Box-Muller on 53-bit uniforms (the same on every platform), two per draw.
void fill_normal(double* out, long long count, std::mt19937_64& rng) {
  for (long long i = 0; i < count; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(1.0 - uniform01(rng))), angle = 2.0 * M_PI * uniform01(rng);
    out[i] = r * std::cos(angle);
    if (i + 1 < count) out[i + 1] = r * std::sin(angle);
  }
}
}  // namespace

Estimate identify(const MixedGraph& g, const Identification& id, const Eigen::MatrixXd& sigma, bool all_equations) {
  const int n = g.num_nodes();
  std::size_t stepped = 0;
  for (const auto& s : id.steps) stepped += s.targets.size();
  if (stepped != static_cast<std::size_t>(id.solved_edges()))
    throw std::invalid_argument("this identification carries no identification steps for its edges (a Tian "
                                "decomposition result); decide without tian to identify numerically");
  Estimate e;
  e.lambda = Eigen::MatrixXd::Zero(n, n);
  for (const auto& edge : g.directed()) e.lambda(edge.from, edge.to) = kNaN;
  Reach reach(g);
  std::vector<std::vector<int>> identified(n);  // per node, the parents identified by the steps so far
  std::unique_ptr<EdgewiseState> state;
  if (all_equations && id.criterion == "edgewise") state = std::make_unique<EdgewiseState>(g);
  for (const auto& step : id.steps) {
    const int k = static_cast<int>(step.targets.size());
    std::vector<int> sources = step.sources;
    std::vector<std::vector<int>> removed = step.removed;
    if (all_equations) {
      for (auto& eq : extra_equations(g, id, step, identified, reach, state.get())) {
        sources.push_back(eq.node);
        removed.push_back(std::move(eq.removed));
      }
      if (state) state->solve(step.node, step.targets, step.sources, step.round);
    }
    for (int t : step.targets) identified[step.node].push_back(t);
    std::sort(identified[step.node].begin(), identified[step.node].end());
    const int m = static_cast<int>(sources.size());
    Eigen::MatrixXd a(m, k);
    Eigen::VectorXd b(m);
    for (int r = 0; r < m; ++r) {
      const int src = sources[r];
      Eigen::RowVectorXd row = sigma.row(src);
      for (int u : removed[r]) row -= e.lambda(u, src) * sigma.row(u);
      for (int c = 0; c < k; ++c) a(r, c) = row(step.targets[c]);
      b(r) = row(step.node);
      for (int known : step.known) b(r) -= row(known) * e.lambda(known, step.node);
    }
    const Eigen::VectorXd x = m == k ? Eigen::VectorXd(a.fullPivLu().solve(b)) : Eigen::VectorXd(a.colPivHouseholderQr().solve(b));
    for (int c = 0; c < k; ++c) e.lambda(step.targets[c], step.node) = x(c);
  }
  // Omega[i, j] = (e_i - Lambda[., i])^T Sigma (e_j - Lambda[., j]) where both columns are known.
  const Eigen::MatrixXd b = Eigen::MatrixXd::Identity(n, n) - e.lambda;
  e.omega = Eigen::MatrixXd::Constant(n, n, kNaN);
  std::vector<int> solved;
  for (int v = 0; v < n; ++v)
    if (id.node_solved(g, v)) solved.push_back(v);
  for (int i : solved)
    for (int j : solved) e.omega(i, j) = b.col(i).dot(sigma * b.col(j));
  return e;
}

Sem random_sem(const MixedGraph& g, std::mt19937_64& rng) {
  const int n = g.num_nodes();
  Sem s;
  s.lambda = Eigen::MatrixXd::Zero(n, n);
  s.omega = Eigen::MatrixXd::Zero(n, n);
  for (const auto& e : g.directed()) {
    const double magnitude = 0.3 + 0.5 * uniform01(rng);
    s.lambda(e.from, e.to) = (rng() & 1) ? magnitude : -magnitude;
  }
  for (const auto& e : g.bidirected()) {
    const double magnitude = 0.2 + 0.3 * uniform01(rng);
    s.omega(e.from, e.to) = s.omega(e.to, e.from) = (rng() & 1) ? magnitude : -magnitude;
  }
  for (int v = 0; v < n; ++v) s.omega(v, v) = 1.0 + s.omega.row(v).cwiseAbs().sum();
  return s;
}

Eigen::MatrixXd covariance(const Sem& sem) {
  const int n = static_cast<int>(sem.lambda.rows());
  const Eigen::MatrixXd inv = (Eigen::MatrixXd::Identity(n, n) - sem.lambda).inverse();
  return inv.transpose() * sem.omega * inv;
}

Eigen::MatrixXd sample_covariance(const Sem& sem, long long samples, std::mt19937_64& rng) {
  const int n = static_cast<int>(sem.lambda.rows());
  // X = (I - Lambda)^{-T} L z with Omega = L L^T: one matrix maps standard normals to samples.
  const Eigen::MatrixXd map = (Eigen::MatrixXd::Identity(n, n) - sem.lambda).transpose().inverse() *
                              Eigen::MatrixXd(sem.omega.llt().matrixL());
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(n, n);
  const long long batch = 4096;
  Eigen::MatrixXd z(n, batch);
  for (long long done = 0; done < samples; done += batch) {
    const long long m = std::min(batch, samples - done);
    fill_normal(z.data(), m * n, rng);
    const Eigen::MatrixXd x = map * z.leftCols(m);
    sum.selfadjointView<Eigen::Lower>().rankUpdate(x);
  }
  Eigen::MatrixXd full = sum.selfadjointView<Eigen::Lower>();
  return full / static_cast<double>(samples);
}

Errors errors(const MixedGraph& g, const Estimate& estimate, const Sem& truth) {
  std::vector<double> e;
  for (const auto& edge : g.directed())
    if (!std::isnan(estimate.lambda(edge.from, edge.to)))
      e.push_back(std::fabs(estimate.lambda(edge.from, edge.to) - truth.lambda(edge.from, edge.to)));
  for (int i = 0; i < estimate.omega.rows(); ++i)
    for (int j = i; j < estimate.omega.cols(); ++j)
      if (!std::isnan(estimate.omega(i, j))) e.push_back(std::fabs(estimate.omega(i, j) - truth.omega(i, j)));
  Errors out;
  out.entries = static_cast<int>(e.size());
  if (e.empty()) return out;
  out.max = *std::max_element(e.begin(), e.end());
  out.median = nexp::stats::median(e);
  return out;
}

}  // namespace htc
