#include "preferences.hpp"

#include <cmath>

namespace cb_pbrl {

namespace {

// -[y log sigmoid(z) + (1 - y) log sigmoid(-z)], stable.
double bce(double z, double y) { return std::max(z, 0.0) - y * z + std::log1p(std::exp(-std::abs(z))); }

int draw(const VectorXd& p, double u) {
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    u -= p(i);
    if (u < 0) return static_cast<int>(i);
  }
  return static_cast<int>(p.size() - 1);
}

double label(double logit, const LabelModel& l, nexp::Random& rng) {
  if (l.noise_free) return logit > 0 ? 1.0 : logit < 0 ? 0.0 : 0.5;
  if (l.soft) return sigmoid(logit);
  return rng.bernoulli(sigmoid(logit)) ? 1.0 : 0.0;
}

}  // namespace

VectorXd sample_segment(const Cmdp& m, const MatrixXd* pi, int horizon, int length, nexp::Random& rng) {
  int s = draw(m.mu0, rng.uniform());
  const int offset = static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, horizon - length + 1))));
  VectorXd counts = VectorXd::Zero(m.S);
  for (int t = 0; t < offset + length; ++t) {
    if (t >= offset) counts(s) += 1;
    const int a = pi ? draw(pi->row(s).transpose(), rng.uniform()) : static_cast<int>(rng.below(m.A));
    const auto& next = m.next(s, a);
    double u = rng.uniform();
    int to = next.back().next;
    for (const auto& tr : next) {
      u -= tr.p;
      if (u < 0) {
        to = tr.next;
        break;
      }
    }
    s = to;
  }
  return counts;
}

void label_query(Query& q, const VectorXd& r, const VectorXd& c, double lam, const LabelModel& l, nexp::Random& rng) {
  const VectorXd delta = q.n1 - q.n2;
  const double du = l.utility ? delta.dot(r - lam * c) : delta.dot(r);
  q.better = label(l.beta * du, l, rng);
  q.safer = label(-l.beta * delta.dot(c), l, rng);
  q.unsafe1 = label(l.beta * (q.n1.dot(c) - l.tau), l, rng);
  q.unsafe2 = label(l.beta * (q.n2.dot(c) - l.tau), l, rng);
}

std::vector<Query> sample_queries(const Cmdp& m, const std::vector<Source>& sources, int count, int horizon,
                                  int segment_min, int segment_max, double true_lam, const LabelModel& labels,
                                  nexp::Random& rng) {
  VectorXd weights(static_cast<Eigen::Index>(sources.size()));
  for (std::size_t i = 0; i < sources.size(); ++i) weights(static_cast<Eigen::Index>(i)) = sources[i].weight;
  weights /= weights.sum();
  std::vector<Query> out(static_cast<std::size_t>(count));
  for (auto& q : out) {
    const int length = segment_min + static_cast<int>(rng.below(static_cast<std::uint64_t>(segment_max - segment_min + 1)));
    q.n1 = sample_segment(m, sources[static_cast<std::size_t>(draw(weights, rng.uniform()))].pi, horizon, length, rng);
    q.n2 = sample_segment(m, sources[static_cast<std::size_t>(draw(weights, rng.uniform()))].pi, horizon, length, rng);
    label_query(q, m.r, m.c, true_lam, labels, rng);
  }
  return out;
}

Likelihood likelihood(const std::vector<Query>& queries, const VectorXd& r, const VectorXd& c, double lam,
                      Coupling coupling, const LabelModel& l) {
  Likelihood out;
  out.dr = VectorXd::Zero(r.size());
  out.dc = VectorXd::Zero(c.size());
  const double n = static_cast<double>(queries.size());
  if (queries.empty()) return out;
  const bool lagrangian = coupling == Coupling::Lagrangian;
  const VectorXd u = lagrangian ? VectorXd(r - lam * c) : r;
  for (const auto& q : queries) {
    const VectorXd delta = q.n1 - q.n2;
    const double zb = l.beta * delta.dot(u);
    out.F += bce(zb, q.better);
    const double gb = (sigmoid(zb) - q.better) * l.beta;
    out.dr += gb * delta;
    if (lagrangian) {
      out.dc -= lam * gb * delta;
      out.dlam -= gb * delta.dot(c);
    }
    if (coupling == Coupling::RewardOnly) continue;
    const double zs = -l.beta * delta.dot(c);
    out.F += bce(zs, q.safer);
    out.dc -= (sigmoid(zs) - q.safer) * l.beta * delta;
    for (const auto& [counts, y] : {std::pair<const VectorXd*, double>{&q.n1, q.unsafe1}, {&q.n2, q.unsafe2}}) {
      const double zu = l.beta * (counts->dot(c) - l.tau);
      out.F += bce(zu, y);
      out.dc += (sigmoid(zu) - y) * l.beta * *counts;
    }
  }
  out.F /= n, out.dr /= n, out.dc /= n, out.dlam /= n;
  return out;
}

double better_accuracy(const std::vector<Query>& queries, const VectorXd& r_true, const VectorXd& c_true,
                       double lam_true, bool utility, const VectorXd& r, const VectorXd& c, double lam) {
  double right = 0, total = 0;
  for (const auto& q : queries) {
    const VectorXd delta = q.n1 - q.n2;
    const double truth = utility ? delta.dot(r_true - lam_true * c_true) : delta.dot(r_true);
    if (std::abs(truth) < 1e-12) continue;
    total += 1;
    right += (truth > 0) == (delta.dot(r - lam * c) > 0);
  }
  return total > 0 ? right / total : std::nan("");
}

double safer_accuracy(const std::vector<Query>& queries, const VectorXd& c_true, const VectorXd& c) {
  double right = 0, total = 0;
  for (const auto& q : queries) {
    const VectorXd delta = q.n1 - q.n2;
    const double truth = delta.dot(c_true);
    if (std::abs(truth) < 1e-12) continue;
    total += 1;
    right += (truth > 0) == (delta.dot(c) > 0);
  }
  return total > 0 ? right / total : std::nan("");
}

}  // namespace cb_pbrl
