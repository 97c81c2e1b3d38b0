// The benchmark's metrics; see metrics.hpp for the definitions and their sources.
#include "metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace design_bench {

double intersection(const Box& a, const Box& b) {
  const double w = std::min(a.right(), b.right()) - std::max(a.x, b.x);
  const double h = std::min(a.bottom(), b.bottom()) - std::max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0.0;
}

double iou(const Box& a, const Box& b) {
  const double i = intersection(a, b);
  const double u = a.area() + b.area() - i;
  return u > 0 ? i / u : 0.0;
}

// ---------------------------------------------------------------- assignment

namespace {
// Kuhn-Munkres with row potentials u and column potentials v, rows <= columns; 1-based internally.
std::vector<int> hungarian_rows_le_cols(const std::vector<std::vector<double>>& a) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(a[0].size());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(n + 1, 0), v(m + 1, 0);
  std::vector<int> p(m + 1, 0), way(m + 1, 0);
  for (int i = 1; i <= n; ++i) {
    p[0] = i;
    int j0 = 0;
    std::vector<double> minv(m + 1, inf);
    std::vector<char> used(m + 1, 0);
    do {
      used[j0] = 1;
      const int i0 = p[j0];
      double delta = inf;
      int j1 = 0;
      for (int j = 1; j <= m; ++j)
        if (!used[j]) {
          const double cur = a[i0 - 1][j - 1] - u[i0] - v[j];
          if (cur < minv[j]) minv[j] = cur, way[j] = j0;
          if (minv[j] < delta) delta = minv[j], j1 = j;
        }
      for (int j = 0; j <= m; ++j)
        if (used[j]) u[p[j]] += delta, v[j] -= delta;
        else minv[j] -= delta;
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const int j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0);
  }
  std::vector<int> row_to_col(n, -1);
  for (int j = 1; j <= m; ++j)
    if (p[j]) row_to_col[p[j] - 1] = j - 1;
  return row_to_col;
}
}  // namespace

std::vector<int> hungarian(const std::vector<std::vector<double>>& cost) {
  if (cost.empty() || cost[0].empty()) return std::vector<int>(cost.size(), -1);
  const std::size_t n = cost.size(), m = cost[0].size();
  if (n <= m) return hungarian_rows_le_cols(cost);
  std::vector<std::vector<double>> t(m, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) t[j][i] = cost[i][j];
  const auto col_to_row = hungarian_rows_le_cols(t);
  std::vector<int> out(n, -1);
  for (std::size_t j = 0; j < m; ++j) out[col_to_row[j]] = static_cast<int>(j);
  return out;
}

Matching matched_iou(const std::vector<Box>& pred, const std::vector<Box>& truth, const std::vector<Kind>* pred_kind,
                     const std::vector<Kind>* truth_kind) {
  Matching m;
  m.truth_to_pred.assign(truth.size(), -1);
  m.ious.assign(truth.size(), 0.0);
  if (truth.empty() || pred.empty()) return m;
  std::vector<std::vector<double>> cost(truth.size(), std::vector<double>(pred.size()));
  for (std::size_t t = 0; t < truth.size(); ++t)
    for (std::size_t p = 0; p < pred.size(); ++p) {
      const bool allowed = !pred_kind || !truth_kind || (*pred_kind)[p] == (*truth_kind)[t];
      cost[t][p] = allowed ? -iou(truth[t], pred[p]) : 0.0;
    }
  const auto a = hungarian(cost);
  for (std::size_t t = 0; t < truth.size(); ++t)
    if (a[t] >= 0 && cost[t][a[t]] < 0) m.truth_to_pred[t] = a[t], m.ious[t] = -cost[t][a[t]];
  return m;
}

// ---------------------------------------------------------------- detection

double average_precision(const std::vector<DetectionImage>& images, Kind kind, double threshold) {
  struct Scored {
    double score;
    std::size_t image, index;
  };
  std::vector<Scored> preds;
  std::size_t n_truth = 0;
  for (std::size_t i = 0; i < images.size(); ++i) {
    for (const auto& t : images[i].truth) n_truth += t.kind == kind;
    for (std::size_t p = 0; p < images[i].pred.size(); ++p)
      if (images[i].pred[p].kind == kind) preds.push_back({images[i].pred[p].score, i, p});
  }
  if (n_truth == 0) return std::nan("");
  std::stable_sort(preds.begin(), preds.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
  std::vector<std::vector<char>> taken(images.size());
  for (std::size_t i = 0; i < images.size(); ++i) taken[i].assign(images[i].truth.size(), 0);
  std::vector<double> precision, recall;
  double tp = 0, fp = 0;
  for (const auto& s : preds) {
    const auto& img = images[s.image];
    double best = threshold;
    int best_t = -1;
    for (std::size_t t = 0; t < img.truth.size(); ++t) {
      if (img.truth[t].kind != kind || taken[s.image][t]) continue;
      const double o = iou(img.pred[s.index].box, img.truth[t].box);
      if (o >= best) best = o, best_t = static_cast<int>(t);
    }
    if (best_t >= 0) taken[s.image][best_t] = 1, ++tp;
    else ++fp;
    precision.push_back(tp / (tp + fp));
    recall.push_back(tp / static_cast<double>(n_truth));
  }
  for (std::size_t i = precision.size(); i-- > 1;) precision[i - 1] = std::max(precision[i - 1], precision[i]);
  double sum = 0;
  for (int r = 0; r <= 100; ++r) {
    const double level = r / 100.0;
    const auto it = std::lower_bound(recall.begin(), recall.end(), level - 1e-12);
    if (it != recall.end()) sum += precision[it - recall.begin()];
  }
  return sum / 101.0;
}

std::vector<double> coco_thresholds() {
  std::vector<double> t;
  for (int i = 0; i < 10; ++i) t.push_back(0.5 + 0.05 * i);
  return t;
}

double coco_map(const std::vector<DetectionImage>& images, const std::vector<double>& thresholds) {
  double sum = 0;
  int n = 0;
  for (Kind k : {Kind::Text, Kind::Image, Kind::Group}) {
    double class_sum = 0;
    bool present = true;
    for (double t : thresholds) {
      const double ap = average_precision(images, k, t);
      if (std::isnan(ap)) present = false;
      class_sum += ap;
    }
    if (present) sum += class_sum / thresholds.size(), ++n;
  }
  return n ? sum / n : std::nan("");
}

// ---------------------------------------------------------------- generation

double alignment_score(const std::vector<Box>& boxes, double width, double height) {
  if (boxes.size() < 2) return 0.0;
  auto coords = [&](const Box& b) {
    return std::array<double, 6>{b.x / width,        (b.x + b.w / 2) / width,  b.right() / width,
                                 b.y / height,       (b.y + b.h / 2) / height, b.bottom() / height};
  };
  double sum = 0;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    double d = 1.0;
    const auto ci = coords(boxes[i]);
    for (std::size_t j = 0; j < boxes.size(); ++j) {
      if (i == j) continue;
      const auto cj = coords(boxes[j]);
      for (int k = 0; k < 6; ++k) d = std::min(d, std::abs(ci[k] - cj[k]));
    }
    sum += -std::log(std::max(1e-12, 1.0 - d));
  }
  return sum / boxes.size();
}

double overlap_score(const std::vector<Box>& boxes) {
  if (boxes.empty()) return 0.0;
  double sum = 0;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].area() <= 0) continue;
    for (std::size_t j = 0; j < boxes.size(); ++j)
      if (i != j) sum += intersection(boxes[i], boxes[j]) / boxes[i].area();
  }
  return sum / boxes.size();
}

double max_iou(const std::vector<Box>& pred, const std::vector<Kind>& pred_kind, const std::vector<Box>& truth,
               const std::vector<Kind>& truth_kind) {
  if (truth.empty()) return std::nan("");
  const auto m = matched_iou(pred, truth, &pred_kind, &truth_kind);
  return std::accumulate(m.ious.begin(), m.ious.end(), 0.0) / truth.size();
}

// ---------------------------------------------------------------- clustering agreement

namespace {
struct Contingency {
  std::vector<std::vector<double>> n;  // n[i][j]: items in cluster i of a and j of b
  std::vector<double> a, b;            // marginals
  double total = 0;
};

Contingency contingency(const std::vector<int>& x, const std::vector<int>& y) {
  std::map<int, int> ix, iy;
  for (int v : x) ix.emplace(v, static_cast<int>(ix.size()));
  for (int v : y) iy.emplace(v, static_cast<int>(iy.size()));
  Contingency c;
  c.n.assign(ix.size(), std::vector<double>(iy.size(), 0));
  c.a.assign(ix.size(), 0);
  c.b.assign(iy.size(), 0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    const int i = ix[x[k]], j = iy[y[k]];
    c.n[i][j] += 1, c.a[i] += 1, c.b[j] += 1;
  }
  c.total = static_cast<double>(x.size());
  return c;
}

double choose2(double v) { return v * (v - 1) / 2; }
}  // namespace

double adjusted_rand_index(const std::vector<int>& a, const std::vector<int>& b) {
  const auto c = contingency(a, b);
  double index = 0, sa = 0, sb = 0;
  for (const auto& row : c.n)
    for (double v : row) index += choose2(v);
  for (double v : c.a) sa += choose2(v);
  for (double v : c.b) sb += choose2(v);
  const double expected = sa * sb / choose2(c.total);
  const double maximum = (sa + sb) / 2;
  if (maximum == expected) return 1.0;  // both trivial (one cluster, or all singletons): identical
  return (index - expected) / (maximum - expected);
}

double entropy(const std::vector<int>& a) {
  const auto c = contingency(a, a);
  double h = 0;
  for (double v : c.a) h -= v / c.total * std::log(v / c.total);
  return h;
}

double mutual_information(const std::vector<int>& a, const std::vector<int>& b) {
  const auto c = contingency(a, b);
  double mi = 0;
  for (std::size_t i = 0; i < c.a.size(); ++i)
    for (std::size_t j = 0; j < c.b.size(); ++j)
      if (c.n[i][j] > 0) mi += c.n[i][j] / c.total * std::log(c.total * c.n[i][j] / (c.a[i] * c.b[j]));
  return mi;
}

double normalized_mutual_information(const std::vector<int>& a, const std::vector<int>& b) {
  const double ha = entropy(a), hb = entropy(b);
  if (ha == 0 && hb == 0) return 1.0;
  return mutual_information(a, b) / ((ha + hb) / 2);
}

double adjusted_mutual_information(const std::vector<int>& a, const std::vector<int>& b) {
  const auto c = contingency(a, b);
  const double N = c.total;
  if ((c.a.size() == 1 && c.b.size() == 1) || (c.a.size() == N && c.b.size() == N)) return 1.0;
  // E[MI] under the hypergeometric model of random labelings with these marginals (Vinh et al., eq. 24a).
  double emi = 0;
  for (double ai : c.a)
    for (double bj : c.b)
      for (double nij = std::max(1.0, ai + bj - N); nij <= std::min(ai, bj); nij += 1) {
        const double log_p = std::lgamma(ai + 1) + std::lgamma(bj + 1) + std::lgamma(N - ai + 1) +
                             std::lgamma(N - bj + 1) - std::lgamma(N + 1) - std::lgamma(nij + 1) -
                             std::lgamma(ai - nij + 1) - std::lgamma(bj - nij + 1) -
                             std::lgamma(N - ai - bj + nij + 1);
        emi += nij / N * std::log(N * nij / (ai * bj)) * std::exp(log_p);
      }
  const double mi = mutual_information(a, b), mean_h = (entropy(a) + entropy(b)) / 2;
  const double denominator = mean_h - emi;
  if (std::abs(denominator) < 1e-15) return 1.0;
  return (mi - emi) / denominator;
}

std::vector<int> average_linkage(const std::vector<std::vector<double>>& distance, int k) {
  const int n = static_cast<int>(distance.size());
  std::vector<std::vector<double>> d = distance;
  std::vector<int> size(n, 1), cluster(n);
  std::iota(cluster.begin(), cluster.end(), 0);
  std::vector<char> alive(n, 1);
  for (int clusters = n; clusters > std::max(k, 1); --clusters) {
    int bi = -1, bj = -1;
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i)
      if (alive[i])
        for (int j = i + 1; j < n; ++j)
          if (alive[j] && d[i][j] < best) best = d[i][j], bi = i, bj = j;
    // Lance-Williams update for average linkage: d(k, i u j) = (|i| d(k, i) + |j| d(k, j)) / (|i| + |j|).
    for (int m = 0; m < n; ++m)
      if (alive[m] && m != bi && m != bj)
        d[bi][m] = d[m][bi] = (size[bi] * d[bi][m] + size[bj] * d[bj][m]) / (size[bi] + size[bj]);
    size[bi] += size[bj];
    alive[bj] = 0;
    for (int& c : cluster)
      if (c == bj) c = bi;
  }
  std::map<int, int> relabel;
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i) out[i] = relabel.emplace(cluster[i], static_cast<int>(relabel.size())).first->second;
  return out;
}

double ndcg_at(int rank, int k) { return rank >= 1 && rank <= k ? 1.0 / std::log2(rank + 1.0) : 0.0; }

// ---------------------------------------------------------------- colour

std::array<double, 3> hex_to_rgb(const std::string& hex) {
  std::array<double, 3> rgb{0, 0, 0};
  if (hex.size() != 7 || hex[0] != '#') return rgb;
  for (int i = 0; i < 3; ++i) rgb[i] = std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16) / 255.0;
  return rgb;
}

namespace {
double srgb_linear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }
}  // namespace

Lab srgb_to_lab(const std::array<double, 3>& rgb) {
  const double r = srgb_linear(rgb[0]), g = srgb_linear(rgb[1]), b = srgb_linear(rgb[2]);
  const double x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
  const double z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
  auto f = [](double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

double ciede2000(const Lab& x, const Lab& y) {
  constexpr double pi = 3.14159265358979323846;
  auto deg = [&](double r) { return r * 180 / pi; };
  auto rad = [&](double d) { return d * pi / 180; };
  const double c1 = std::hypot(x.a, x.b), c2 = std::hypot(y.a, y.b), cbar = (c1 + c2) / 2;
  const double c7 = std::pow(cbar, 7), g = 0.5 * (1 - std::sqrt(c7 / (c7 + std::pow(25.0, 7))));
  const double a1 = (1 + g) * x.a, a2 = (1 + g) * y.a;
  const double cp1 = std::hypot(a1, x.b), cp2 = std::hypot(a2, y.b);
  auto hue = [&](double b, double a) {
    if (a == 0 && b == 0) return 0.0;
    double h = deg(std::atan2(b, a));
    return h < 0 ? h + 360 : h;
  };
  const double h1 = hue(x.b, a1), h2 = hue(y.b, a2);
  const double dl = y.l - x.l, dc = cp2 - cp1;
  double dh = 0;
  if (cp1 * cp2 != 0) {
    dh = h2 - h1;
    if (dh > 180) dh -= 360;
    else if (dh < -180) dh += 360;
  }
  const double dH = 2 * std::sqrt(cp1 * cp2) * std::sin(rad(dh / 2));
  const double lbar = (x.l + y.l) / 2, cpbar = (cp1 + cp2) / 2;
  double hbar = h1 + h2;
  if (cp1 * cp2 != 0) {
    if (std::abs(h1 - h2) <= 180) hbar = (h1 + h2) / 2;
    else hbar = h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2;
  }
  const double t = 1 - 0.17 * std::cos(rad(hbar - 30)) + 0.24 * std::cos(rad(2 * hbar)) +
                   0.32 * std::cos(rad(3 * hbar + 6)) - 0.20 * std::cos(rad(4 * hbar - 63));
  const double dtheta = 30 * std::exp(-std::pow((hbar - 275) / 25, 2));
  const double cp7 = std::pow(cpbar, 7), rc = 2 * std::sqrt(cp7 / (cp7 + std::pow(25.0, 7)));
  const double sl = 1 + 0.015 * std::pow(lbar - 50, 2) / std::sqrt(20 + std::pow(lbar - 50, 2));
  const double sc = 1 + 0.045 * cpbar, sh = 1 + 0.015 * cpbar * t;
  const double rt = -std::sin(rad(2 * dtheta)) * rc;
  return std::sqrt(std::pow(dl / sl, 2) + std::pow(dc / sc, 2) + std::pow(dH / sh, 2) + rt * (dc / sc) * (dH / sh));
}

double relative_luminance(const std::array<double, 3>& rgb) {
  auto lin = [](double c) { return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
  return 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
}

double wcag_contrast(const std::string& hex_a, const std::string& hex_b) {
  const double la = relative_luminance(hex_to_rgb(hex_a)), lb = relative_luminance(hex_to_rgb(hex_b));
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

}  // namespace design_bench
