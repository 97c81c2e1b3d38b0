// Logistic regression, reweighting, Hardt et al.'s post-processing and exponentiated gradient
// (models.hpp).
#include "models.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nexp/error.hpp>

#include "socp.hpp"

namespace stable_fairness {
namespace {

double log1pexp(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }
double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

double logistic_objective(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& v, double l2,
                          const Eigen::VectorXd& w) {
  const Eigen::VectorXd z = x * w;
  double f = 0;
  for (Eigen::Index i = 0; i < z.size(); ++i) f += v(i) * (log1pexp(z(i)) - y(i) * z(i));
  return f / v.sum() + 0.5 * l2 * w.head(w.size() - 1).squaredNorm();
}

}  // namespace

Eigen::VectorXd Logistic::predict(const Eigen::MatrixXd& x) const {
  return (score(x).array() > 0).cast<double>().matrix();
}

Logistic fit_logistic(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& weights, double l2,
                      const Eigen::VectorXd* warm) {
  const Eigen::Index d = x.cols();
  Eigen::VectorXd w = warm ? *warm : Eigen::VectorXd::Zero(d);
  const double total = weights.sum();
  Eigen::VectorXd penal = Eigen::VectorXd::Constant(d, l2);
  penal(d - 1) = 1e-10;
  double f = logistic_objective(x, y, weights, l2, w);
  for (int it = 0; it < 100; ++it) {
    const Eigen::VectorXd z = x * w;
    Eigen::VectorXd r(z.size()), h(z.size());
    for (Eigen::Index i = 0; i < z.size(); ++i) {
      const double p = sigmoid(z(i));
      r(i) = weights(i) * (p - y(i)) / total;
      h(i) = std::sqrt(weights(i) * p * (1 - p) / total);
    }
    Eigen::VectorXd grad = x.transpose() * r + (penal.array() * w.array()).matrix();
    grad(d - 1) = (x.transpose() * r)(d - 1);
    Eigen::MatrixXd hess = Eigen::MatrixXd::Zero(d, d);
    hess.selfadjointView<Eigen::Lower>().rankUpdate((h.asDiagonal() * x).transpose());
    hess.diagonal() += penal;
    const Eigen::VectorXd step = hess.selfadjointView<Eigen::Lower>().ldlt().solve(-grad);
    const double decrement = -grad.dot(step);
    if (decrement < 1e-14) break;
    double t = 1;
    double f_new = logistic_objective(x, y, weights, l2, w + step);
    while (f_new > f - 0.25 * t * decrement && t > 1e-10) {
      t /= 2;
      f_new = logistic_objective(x, y, weights, l2, w + t * step);
    }
    w += t * step;
    f = f_new;
    if (decrement < 1e-10) break;
  }
  return Logistic{w};
}

std::vector<double> group_shares(const Sample& s) {
  std::vector<double> p(static_cast<std::size_t>(s.groups), 0.0);
  for (int g : s.g) p[static_cast<std::size_t>(g)] += 1.0 / static_cast<double>(s.size());
  return p;
}

// Cell counts n(g, y).
static std::vector<std::array<double, 2>> cell_counts(const Sample& s) {
  std::vector<std::array<double, 2>> n(static_cast<std::size_t>(s.groups), {0.0, 0.0});
  for (std::size_t i = 0; i < s.size(); ++i) n[static_cast<std::size_t>(s.g[i])][static_cast<std::size_t>(s.y[i])] += 1;
  return n;
}

Eigen::VectorXd reweighing_weights(const Sample& s) {
  return composition_weights(s, 1, group_shares(s));
}

Eigen::VectorXd composition_weights(const Sample& s, int cls, const std::vector<double>& share) {
  const auto n = cell_counts(s);
  const auto pg = group_shares(s);
  const double total = static_cast<double>(s.size());
  std::array<double, 2> ny{0, 0};
  for (const auto& c : n) ny[0] += c[0], ny[1] += c[1];
  Eigen::VectorXd w(static_cast<Eigen::Index>(s.size()));
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto g = static_cast<std::size_t>(s.g[i]);
    const int y = s.y[i];
    const double target = (y == cls ? share[g] : pg[g]) * ny[static_cast<std::size_t>(y)] / total;  // P_w(g, y)
    const double cell = n[g][static_cast<std::size_t>(y)] / total;
    w(static_cast<Eigen::Index>(i)) = target / cell;
  }
  return w;
}

// ---------------------------------------------------------------- Hardt et al.

namespace {
struct RocPoint {
  double fpr, tpr, threshold;  // predict 1 when score >= threshold
};
// The upper convex hull of one group's ROC curve, from (0, 0) to (1, 1).
std::vector<RocPoint> roc_hull(const Eigen::VectorXd& score, const std::vector<int>& y, const std::vector<int>& g,
                               int group) {
  std::vector<std::pair<double, int>> items;
  double pos = 0, neg = 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (g[i] == group) {
      items.push_back({score(static_cast<Eigen::Index>(i)), y[i]});
      (y[i] ? pos : neg) += 1;
    }
  std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<RocPoint> roc{{0, 0, INFINITY}};
  double tp = 0, fp = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    (items[i].second ? tp : fp) += 1;
    if (i + 1 == items.size() || items[i + 1].first < items[i].first)
      roc.push_back({neg > 0 ? fp / neg : 0, pos > 0 ? tp / pos : 0, items[i].first});
  }
  roc.back().threshold = -INFINITY;  // the last point predicts 1 for all
  std::vector<RocPoint> hull;
  for (const auto& p : roc) {
    while (hull.size() >= 2) {
      const auto& a = hull[hull.size() - 2];
      const auto& b = hull.back();
      const double cross = (b.fpr - a.fpr) * (p.tpr - a.tpr) - (b.tpr - a.tpr) * (p.fpr - a.fpr);
      if (cross >= 0) hull.pop_back();
      else break;
    }
    hull.push_back(p);
  }
  return hull;
}
// The hull's TPR at fpr f, with the segment and the weight of its left end.
double hull_at(const std::vector<RocPoint>& hull, double f, std::size_t* seg = nullptr, double* q = nullptr) {
  for (std::size_t i = 0; i + 1 < hull.size(); ++i)
    if (f <= hull[i + 1].fpr || i + 2 == hull.size()) {
      const double span = hull[i + 1].fpr - hull[i].fpr;
      const double wl = span > 0 ? (hull[i + 1].fpr - f) / span : 0.0;
      if (seg) *seg = i;
      if (q) *q = wl;
      return wl * hull[i].tpr + (1 - wl) * hull[i + 1].tpr;
    }
  return 1;
}
}  // namespace

HardtPost fit_hardt(const Eigen::VectorXd& score, const std::vector<int>& y, const std::vector<int>& g, int groups,
                    int grid) {
  std::vector<std::vector<RocPoint>> hulls;
  std::vector<double> n0(static_cast<std::size_t>(groups), 0), n1(static_cast<std::size_t>(groups), 0);
  for (std::size_t i = 0; i < y.size(); ++i) (y[i] ? n1 : n0)[static_cast<std::size_t>(g[i])] += 1;
  for (int k = 0; k < groups; ++k) hulls.push_back(roc_hull(score, y, g, k));
  const double n = static_cast<double>(y.size());
  double best_err = INFINITY;
  HardtPost post;
  for (int j = 0; j < grid; ++j) {
    const double f = static_cast<double>(j) / (grid - 1);
    double t = 1;
    for (const auto& h : hulls) t = std::min(t, hull_at(h, f));
    double err = 0;
    for (int k = 0; k < groups; ++k) err += (n0[static_cast<std::size_t>(k)] * f + n1[static_cast<std::size_t>(k)] * (1 - t)) / n;
    if (err < best_err) best_err = err, post.fpr = f, post.tpr = t;
  }
  for (const auto& h : hulls) {
    std::size_t seg = 0;
    double q = 1;
    const double top = hull_at(h, post.fpr, &seg, &q);
    HardtRule r{h[seg].threshold, h[seg + 1].threshold, q, 1.0};
    r.lambda = top - post.fpr > 1e-12 ? (post.tpr - post.fpr) / (top - post.fpr) : 1.0;
    post.rules.push_back(r);
  }
  return post;
}

Eigen::VectorXd HardtPost::predict(const Eigen::VectorXd& score, const std::vector<int>& g) const {
  Eigen::VectorXd p(score.size());
  for (Eigen::Index i = 0; i < score.size(); ++i) {
    const auto& r = rules[static_cast<std::size_t>(g[static_cast<std::size_t>(i)])];
    const double s = score(i);
    p(i) = r.lambda * (r.q * (s >= r.a) + (1 - r.q) * (s >= r.b)) + (1 - r.lambda) * fpr;
  }
  return p;
}

// ---------------------------------------------------------------- exponentiated gradient

EgResult exponentiated_gradient(double err0, const Eigen::VectorXd& cost, const Eigen::MatrixXd& a, double eps,
                                const EgOptions& o, const BestResponse& best_response) {
  const double B = o.bound > 0 ? o.bound : 1.0 / eps;
  const Eigen::Index J = a.rows();
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(J), lambda_sum = Eigen::VectorXd::Zero(J);
  std::vector<Eigen::VectorXd> preds;  // every call's predictions, in call order
  std::vector<bool> in_average;
  auto lagrangian = [&](const Eigen::VectorXd& h, const Eigen::VectorXd& lambda) {
    return err0 + cost.dot(h) + lambda.dot(a * h - Eigen::VectorXd::Constant(J, eps));
  };
  EgResult res;
  Eigen::VectorXd q_avg = Eigen::VectorXd::Zero(cost.size());
  for (int t = 1; t <= o.iterations; ++t) {
    const Eigen::VectorXd e = theta.array().exp();
    const Eigen::VectorXd lambda = B * e / (1 + e.sum());
    preds.push_back(best_response(cost + a.transpose() * lambda));
    in_average.push_back(true);
    const Eigen::VectorXd h = preds.back();  // a copy: preds grows below
    q_avg += (h - q_avg) / t;
    lambda_sum += lambda;
    const Eigen::VectorXd lambda_hat = lambda_sum / t;
    // nu_t: how far (Q-hat, lambda-hat) is from a saddle point.
    const Eigen::VectorXd viol = a * q_avg - Eigen::VectorXd::Constant(J, eps);
    Eigen::Index jmax = 0;
    const double vmax = viol.maxCoeff(&jmax);
    const double l_hat = lagrangian(q_avg, lambda_hat);
    const double l_best_lambda = err0 + cost.dot(q_avg) + (vmax > 0 ? B * vmax : 0.0);
    preds.push_back(best_response(cost + a.transpose() * lambda_hat));
    in_average.push_back(false);
    const double l_best_h = lagrangian(preds.back(), lambda_hat);
    res.gap = std::max(l_best_lambda - l_hat, l_hat - l_best_h);
    res.iterations = t;
    theta += (o.eta / B) * (a * h - Eigen::VectorXd::Constant(J, eps));
    if (res.gap <= o.nu) break;
  }
  const double count = static_cast<double>(std::count(in_average.begin(), in_average.end(), true));
  for (bool in : in_average) res.weights.push_back(in ? 1.0 / count : 0.0);
  return res;
}

Eigen::VectorXd eg_final_lp(const Eigen::MatrixXd& h, const Eigen::VectorXd& cost, const Eigen::MatrixXd& a, double eps) {
  ConeProgram lp;
  lp.c = h.transpose() * cost;
  lp.a = a * h;
  lp.b = Eigen::VectorXd::Constant(lp.a.rows(), eps);
  const auto sol = solve_cone_program(lp);
  if (!sol.feasible) return {};
  Eigen::VectorXd q = sol.alpha.cwiseMax(0.0);
  return q / q.sum();
}

Eigen::MatrixXd dp_moments(const Sample& s) {
  const auto n = static_cast<double>(s.size());
  std::vector<double> ng(static_cast<std::size_t>(s.groups), 0);
  for (int g : s.g) ng[static_cast<std::size_t>(g)] += 1;
  Eigen::MatrixXd a(2 * s.groups, static_cast<Eigen::Index>(s.size()));
  for (std::size_t i = 0; i < s.size(); ++i)
    for (int g = 0; g < s.groups; ++g) {
      const double v = (s.g[i] == g ? 1.0 / ng[static_cast<std::size_t>(g)] : 0.0) - 1.0 / n;
      a(2 * g, static_cast<Eigen::Index>(i)) = v;
      a(2 * g + 1, static_cast<Eigen::Index>(i)) = -v;
    }
  return a;
}

Eigen::MatrixXd eo_moments(const Sample& s) {
  std::vector<std::array<double, 2>> n(static_cast<std::size_t>(s.groups), {0.0, 0.0});
  std::array<double, 2> ny{0, 0};
  for (std::size_t i = 0; i < s.size(); ++i) {
    n[static_cast<std::size_t>(s.g[i])][static_cast<std::size_t>(s.y[i])] += 1;
    ny[static_cast<std::size_t>(s.y[i])] += 1;
  }
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(4 * s.groups, static_cast<Eigen::Index>(s.size()));
  for (std::size_t i = 0; i < s.size(); ++i)
    for (int g = 0; g < s.groups; ++g) {
      const auto y = static_cast<std::size_t>(s.y[i]);
      const double v = (s.g[i] == g ? 1.0 / n[static_cast<std::size_t>(g)][y] : 0.0) - 1.0 / ny[y];
      const Eigen::Index row = 4 * g + 2 * static_cast<Eigen::Index>(y);
      a(row, static_cast<Eigen::Index>(i)) = v;
      a(row + 1, static_cast<Eigen::Index>(i)) = -v;
    }
  return a;
}

}  // namespace stable_fairness
