// Rates, Lipschitz constants, the base predictors, program (4), the certificate (5) and the
// composition shift (fairness.hpp).
#include "fairness.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <nexp/stats.hpp>

namespace stable_fairness {

std::vector<int> notion_blocks(Notion n) {
  switch (n) {
    case Notion::DP: return {-1};
    case Notion::EO: return {0, 1};
    case Notion::EOPP: return {1};
  }
  return {-1};
}

namespace {
bool in_block(const Sample& s, std::size_t i, int block) { return block < 0 || s.y[i] == block; }

Eigen::MatrixXd rates_for(const Sample& s, const Eigen::VectorXd& pred, const std::vector<int>& blocks) {
  const auto B = static_cast<Eigen::Index>(blocks.size());
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(s.groups, B), count = Eigen::MatrixXd::Zero(s.groups, B);
  for (std::size_t i = 0; i < s.size(); ++i)
    for (Eigen::Index b = 0; b < B; ++b)
      if (in_block(s, i, blocks[static_cast<std::size_t>(b)])) {
        sum(s.g[i], b) += pred(static_cast<Eigen::Index>(i));
        count(s.g[i], b) += 1;
      }
  return sum.cwiseQuotient(count.cwiseMax(1.0));
}
double max_min_gap(const Eigen::MatrixXd& r) {
  double gap = 0;
  for (Eigen::Index b = 0; b < r.cols(); ++b) gap = std::max(gap, r.col(b).maxCoeff() - r.col(b).minCoeff());
  return gap;
}
}  // namespace

Eigen::MatrixXd group_rates(const Sample& s, const Eigen::VectorXd& pred, Notion n) {
  return rates_for(s, pred, notion_blocks(n));
}

Eigen::MatrixXd centering(int groups) {
  return Eigen::MatrixXd::Identity(groups, groups) - Eigen::MatrixXd::Constant(groups, groups, 1.0 / groups);
}

double lipschitz_constant(const Eigen::MatrixXd& rates, Norm norm) {
  if (norm == Norm::TV) return max_min_gap(rates);
  const Eigen::MatrixXd p = centering(static_cast<int>(rates.rows())) * rates;
  return p.colwise().norm().maxCoeff();
}

double dp_gap(const Sample& s, const Eigen::VectorXd& pred) { return max_min_gap(rates_for(s, pred, {-1})); }
double eo_gap(const Sample& s, const Eigen::VectorXd& pred) { return max_min_gap(rates_for(s, pred, {0, 1})); }

double accuracy(const Sample& s, const Eigen::VectorXd& pred) {
  double a = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double p = pred(static_cast<Eigen::Index>(i));
    a += s.y[i] ? p : 1 - p;
  }
  return a / static_cast<double>(s.size());
}

std::vector<std::vector<double>> composition_grid(const std::vector<double>& observed, const std::vector<double>& shares) {
  std::vector<std::vector<double>> out;
  const std::size_t G = observed.size();
  for (std::size_t j = (G == 2 ? 1 : 0); j < G; ++j)
    for (double s : shares) {
      std::vector<double> pi(G);
      const double rest = 1 - observed[j];
      for (std::size_t g = 0; g < G; ++g) pi[g] = g == j ? s : (1 - s) * observed[g] / rest;
      out.push_back(pi);
    }
  return out;
}

BasePredictors train_base(const Split& split, Notion notion, const BaseOptions& o) {
  const Sample& tr = split.train;
  Eigen::VectorXd y(static_cast<Eigen::Index>(tr.size()));
  for (std::size_t i = 0; i < tr.size(); ++i) y(static_cast<Eigen::Index>(i)) = tr.y[i];
  BasePredictors b;
  b.models.push_back(fit_logistic(tr.x, y, Eigen::VectorXd::Ones(y.size()), o.l2));
  b.names.push_back("unweighted");
  const auto observed = group_shares(tr);
  std::vector<int> classes = notion == Notion::EO ? std::vector<int>{1, 0} : std::vector<int>{1};
  for (int cls : classes)
    for (const auto& pi : composition_grid(observed, o.shares)) {
      b.models.push_back(fit_logistic(tr.x, y, composition_weights(tr, cls, pi), o.l2, &b.models.front().w));
      std::ostringstream name;
      name << "y" << cls << ":";
      for (std::size_t g = 0; g < pi.size(); ++g) name << (g ? "/" : "") << pi[g];
      b.names.push_back(name.str());
    }
  const auto K = static_cast<Eigen::Index>(b.models.size());
  b.val.resize(static_cast<Eigen::Index>(split.val.size()), K);
  b.test.resize(static_cast<Eigen::Index>(split.test.size()), K);
  for (Eigen::Index k = 0; k < K; ++k) {
    b.val.col(k) = b.models[static_cast<std::size_t>(k)].predict(split.val.x);
    b.test.col(k) = b.models[static_cast<std::size_t>(k)].predict(split.test.x);
  }
  return b;
}

ConeProgram mixture_program(const Sample& val, const Eigen::MatrixXd& pred, Notion notion, Norm norm, double tau) {
  const Eigen::Index K = pred.cols();
  const auto blocks = notion_blocks(notion);
  ConeProgram p;
  p.c.resize(K);
  std::vector<Eigen::MatrixXd> rates;  // per block: G x K
  for (std::size_t b = 0; b < blocks.size(); ++b) rates.push_back(Eigen::MatrixXd(val.groups, K));
  for (Eigen::Index k = 0; k < K; ++k) {
    p.c(k) = 1 - accuracy(val, pred.col(k));
    const Eigen::MatrixXd r = rates_for(val, pred.col(k), blocks);
    for (std::size_t b = 0; b < blocks.size(); ++b) rates[b].col(k) = r.col(static_cast<Eigen::Index>(b));
  }
  const int G = val.groups;
  p.a.resize(0, K);
  if (norm == Norm::L2) {
    for (const auto& r : rates) p.cones.push_back(centering(G) * r), p.tau.push_back(tau);
  } else {
    std::vector<Eigen::RowVectorXd> rows;
    for (const auto& r : rates)
      for (int g = 0; g < G; ++g)
        for (int h = 0; h < G; ++h)
          if (g != h) rows.push_back(r.row(g) - r.row(h));
    p.a.resize(static_cast<Eigen::Index>(rows.size()), K);
    for (std::size_t i = 0; i < rows.size(); ++i) p.a.row(static_cast<Eigen::Index>(i)) = rows[i];
    p.b = Eigen::VectorXd::Constant(p.a.rows(), tau);
  }
  return p;
}

double confidence_term(const Sample& val, const Sample& test, Notion notion, Norm norm, int K, double delta) {
  if (delta <= 0) return 0;
  const auto blocks = notion_blocks(notion);
  const Eigen::VectorXd ones_v = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(val.size()));
  const Eigen::VectorXd ones_t = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(test.size()));
  // Member counts per (group, block): the rate of the constant 1 times the count is the count itself.
  Eigen::MatrixXd nv = Eigen::MatrixXd::Zero(val.groups, static_cast<Eigen::Index>(blocks.size())), nt = nv;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (std::size_t i = 0; i < val.size(); ++i)
      if (in_block(val, i, blocks[b])) nv(val.g[i], static_cast<Eigen::Index>(b)) += 1;
    for (std::size_t i = 0; i < test.size(); ++i)
      if (in_block(test, i, blocks[b])) nt(test.g[i], static_cast<Eigen::Index>(b)) += 1;
  }
  const double N = static_cast<double>(nv.size());
  const double log_term = std::log(2.0 * K * N / delta);
  const Eigen::MatrixXd e = ((nv.cwiseInverse() + nt.cwiseInverse()) * log_term / 2).cwiseSqrt();
  double term = 0;
  for (Eigen::Index b = 0; b < e.cols(); ++b) {
    if (norm == Norm::L2) {
      // sup of ||P u||_2 over the box |u_g| <= e_g: a convex function, largest at a vertex.
      const Eigen::MatrixXd P = centering(static_cast<int>(e.rows()));
      for (unsigned mask = 0; mask < (1u << e.rows()); ++mask) {
        Eigen::VectorXd u = e.col(b);
        for (Eigen::Index g = 0; g < u.size(); ++g)
          if (mask >> g & 1u) u(g) = -u(g);
        term = std::max(term, (P * u).norm());
      }
    } else {
      Eigen::VectorXd col = e.col(b);
      std::sort(col.data(), col.data() + col.size(), std::greater<>());
      term = std::max(term, col(0) + col(1));
    }
  }
  return term;
}

Eigen::VectorXd sample_mixture(const Eigen::MatrixXd& pred, const Eigen::VectorXd& alpha, nexp::Random& rng) {
  Eigen::VectorXd out(pred.rows());
  for (Eigen::Index i = 0; i < pred.rows(); ++i) {
    double u = rng.uniform(), acc = 0;
    Eigen::Index k = 0;
    for (; k + 1 < alpha.size(); ++k) {
      acc += alpha(k);
      if (u < acc) break;
    }
    out(i) = pred(i, k);
  }
  return out;
}

ShiftResult composition_shift(const Sample& test, const Eigen::VectorXd& pred, Notion notion, Norm norm,
                              nexp::Random& rng, int points, int draws) {
  ShiftResult res;
  res.slope = -1;
  const double unit = norm == Norm::L2 ? std::sqrt(2.0) : 1.0;
  for (int block : notion_blocks(notion))
    for (int g0 = 0; g0 < test.groups; ++g0)
      for (int g1 = g0 + 1; g1 < test.groups; ++g1) {
        std::vector<std::size_t> m0, m1;
        for (std::size_t i = 0; i < test.size(); ++i) {
          if (!in_block(test, i, block)) continue;
          if (test.g[i] == g0) m0.push_back(i);
          if (test.g[i] == g1) m1.push_back(i);
        }
        std::vector<double> xs, ys;
        for (int p = 0; p < points; ++p) {
          const double s = 0.1 + 0.8 * p / std::max(1, points - 1);
          double rate = 0, acc = 0;
          for (int d = 0; d < draws; ++d) {
            const auto& from = rng.bernoulli(s) ? m1 : m0;
            const std::size_t i = from[rng.below(from.size())];
            const double h = pred(static_cast<Eigen::Index>(i));
            rate += h, acc += test.y[i] ? h : 1 - h;
          }
          rate /= draws, acc /= draws;
          res.points.push_back({block, g0, g1, s, rate, acc});
          xs.push_back(s), ys.push_back(rate);
        }
        const auto fit = nexp::stats::fit_line(xs, ys);
        const auto ci = fit.slope_interval(0.95);
        const double slope = std::abs(fit.slope) / unit;
        if (slope > res.slope) {
          res.slope = slope;
          const double lo = std::abs(ci.low) / unit, hi = std::abs(ci.high) / unit;
          res.slope_low = ci.low * ci.high <= 0 ? 0.0 : std::min(lo, hi);
          res.slope_high = std::max(lo, hi);
        }
      }
  return res;
}

}  // namespace stable_fairness
