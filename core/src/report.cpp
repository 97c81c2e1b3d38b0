// HTML reports with inline SVG plots (nexp/runtime/report.hpp).
#include "nexp/runtime/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "nexp/error.hpp"
#include "nexp/runtime/reproduce.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/runtime/util.hpp"
#include "samplers/nsga2.hpp"

namespace nexp {

namespace fs = std::filesystem;

namespace {

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  return fmt::format("{:.4g}", v);
}

// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) out.push_back(std::fabs(t) < 1e-12 * step ? 0 : t);
  return out;
}

struct Frame {
  double x0, x1, y0, y1;
  static constexpr double W = 620, H = 280, L = 64, R = 16, T = 28, B = 44;
  double px(double x) const { return L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R); }
  double py(double y) const { return H - B - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (H - T - B); }
};

// Axes, grid and labels; `xcats` replaces numeric x ticks with category names.
// `legend_width`: room to the right of the frame for a legend, so that it never covers a curve.
std::string axes_svg(const Frame& f, const std::string& title, const std::string& xlabel, const std::string& ylabel,
                     const std::vector<std::string>& xcats = {}, double legend_width = 0) {
  std::string s = fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' class='plot'>",
                              Frame::W + legend_width, Frame::H);
  s += fmt::format("<text x='{}' y='18' class='title'>{}</text>", Frame::L, esc(title));
  for (double t : ticks(f.y0, f.y1))
    s += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' class='grid'/><text x='{3}' y='{4:.1f}' class='tick' "
                     "text-anchor='end'>{5}</text>",
                     Frame::L, Frame::W - Frame::R, f.py(t), Frame::L - 6, f.py(t) + 4, num(t));
  if (xcats.empty()) {
    for (double t : ticks(f.x0, f.x1))
      s += fmt::format("<text x='{:.1f}' y='{}' class='tick' text-anchor='middle'>{}</text>", f.px(t), Frame::H - Frame::B + 16, num(t));
  } else {
    for (size_t i = 0; i < xcats.size(); ++i)
      s += fmt::format("<text x='{:.1f}' y='{}' class='tick' text-anchor='middle'>{}</text>", f.px(static_cast<double>(i)),
                       Frame::H - Frame::B + 16, esc(xcats[i]));
  }
  s += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' class='frame'/>", Frame::L, Frame::T,
                   Frame::W - Frame::L - Frame::R, Frame::H - Frame::T - Frame::B);
  s += fmt::format("<text x='{}' y='{}' class='label' text-anchor='middle'>{}</text>", (Frame::L + Frame::W - Frame::R) / 2,
                   Frame::H - 8, esc(xlabel));
  s += fmt::format("<text x='14' y='{}' class='label' text-anchor='middle' transform='rotate(-90 14 {})'>{}</text>",
                   (Frame::T + Frame::H - Frame::B) / 2, (Frame::T + Frame::H - Frame::B) / 2, esc(ylabel));
  return s;
}

Frame frame_of(const std::vector<std::pair<double, double>>& pts) {
  Frame f{INFINITY, -INFINITY, INFINITY, -INFINITY};
  for (auto [x, y] : pts) {
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    f.x0 = std::min(f.x0, x), f.x1 = std::max(f.x1, x), f.y0 = std::min(f.y0, y), f.y1 = std::max(f.y1, y);
  }
  if (!std::isfinite(f.x0)) f = {0, 1, 0, 1};
  if (f.x1 == f.x0) f.x0 -= 0.5, f.x1 += 0.5;
  const double xpad = 0.03 * (f.x1 - f.x0);
  f.x0 -= xpad, f.x1 += xpad;
  const double pad = f.y1 > f.y0 ? 0.05 * (f.y1 - f.y0) : std::max(0.5, std::fabs(f.y0) * 0.1);
  f.y0 -= pad, f.y1 += pad;
  return f;
}

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;
  bool muted = false;  // drawn grey (a pruned trial)
  bool dots = false;   // markers, no line
};

// Series in one panel; a legend beside the frame names each. Muted series are grey and dashed.
std::string line_chart(const std::string& title, const std::vector<Series>& series, const std::string& xlabel = "step") {
  std::vector<std::pair<double, double>> all;
  for (const auto& s : series) all.insert(all.end(), s.points.begin(), s.points.end());
  Frame f = frame_of(all);
  const bool legend = series.size() > 1 || (series.size() == 1 && series[0].muted);
  std::string svg = axes_svg(f, title, xlabel, title, {}, legend ? 190 : 0);
  size_t colour = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = series[i].muted ? "#b5b5b5" : kPalette[colour++ % 10];
    std::string path;
    for (auto [x, y] : series[i].points)
      if (std::isfinite(y)) path += fmt::format("{:.1f},{:.1f} ", f.px(x), f.py(y));
    if (!series[i].dots)
      svg += fmt::format("<polyline points='{}' fill='none' stroke='{}' stroke-width='1.6'{}/>", path, color,
                         series[i].muted ? " stroke-dasharray='4 3'" : "");
    if (series[i].dots || series[i].points.size() == 1)
      for (auto [x, y] : series[i].points)
        if (std::isfinite(y))
          svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}' fill-opacity='0.7'/>", f.px(x), f.py(y), color);
    if (legend) {
      const double y = Frame::T + 10 + 15 * static_cast<double>(i);
      std::string label = series[i].label.size() > 30 ? series[i].label.substr(0, 27) + "..." : series[i].label;
      svg += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='{3}' stroke-width='2'/>"
                         "<text x='{4}' y='{5:.1f}' class='legend'>{6}</text>",
                         Frame::W + 4, Frame::W + 22, y - 4, color, Frame::W + 27, y, esc(label));
    }
  }
  return svg + "</svg>";
}

bool is_number(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

// The objective against one swept parameter: numeric x, or categories in first-seen order.
std::string scatter_chart(const std::string& xlabel, const std::string& ylabel, const std::vector<std::string>& xs,
                          const std::vector<double>& ys) {
  bool numeric = true;
  std::vector<double> xv(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) numeric = numeric && is_number(xs[i], xv[i]);
  std::vector<std::string> cats;
  if (!numeric) {
    for (const auto& x : xs)
      if (std::find(cats.begin(), cats.end(), x) == cats.end()) cats.push_back(x);
    for (size_t i = 0; i < xs.size(); ++i) xv[i] = static_cast<double>(std::find(cats.begin(), cats.end(), xs[i]) - cats.begin());
  }
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < xs.size(); ++i) pts.emplace_back(xv[i], ys[i]);
  Frame f = frame_of(pts);
  if (!numeric) f.x0 = -0.5, f.x1 = static_cast<double>(cats.size()) - 0.5;
  std::string svg = axes_svg(f, ylabel + " vs " + xlabel, xlabel, ylabel, cats);
  for (auto [x, y] : pts)
    if (std::isfinite(y))
      svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='4' fill='{}' fill-opacity='0.75'/>", f.px(x), f.py(y), kPalette[0]);
  return svg + "</svg>";
}

// One vertical axis per swept parameter and one for the objective; one line per trial, coloured
// from worst (grey) to best (blue) objective.
std::string parallel_coordinates(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows,
                                 const std::vector<double>& objective, bool maximize) {
  const double W = 620, H = 300, top = 30, bottom = 40, left = 50, right = 50;
  const size_t k = names.size() + 1;
  auto ax = [&](size_t i) { return left + (k > 1 ? i * (W - left - right) / (k - 1) : 0); };
  // Per axis: a position in [0, 1] for each value (numeric: scaled; else categories spread evenly).
  std::vector<std::vector<double>> pos(rows.size(), std::vector<double>(k, 0.5));
  std::vector<std::pair<std::string, std::string>> range_labels;
  for (size_t a = 0; a < k; ++a) {
    std::vector<std::string> values;
    for (size_t r = 0; r < rows.size(); ++r) values.push_back(a < names.size() ? rows[r][a] : num(objective[r]));
    std::vector<double> v(values.size());
    bool numeric = true;
    for (size_t r = 0; r < values.size(); ++r) numeric = numeric && (a == names.size() ? std::isfinite(objective[r]) || true : is_number(values[r], v[r]));
    if (a == names.size()) for (size_t r = 0; r < values.size(); ++r) v[r] = objective[r];
    if (numeric) {
      double lo = INFINITY, hi = -INFINITY;
      for (double x : v) if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
      for (size_t r = 0; r < v.size(); ++r) pos[r][a] = std::isfinite(v[r]) && hi > lo ? (v[r] - lo) / (hi - lo) : 0.5;
      range_labels.emplace_back(std::isfinite(lo) ? num(lo) : "", std::isfinite(hi) ? num(hi) : "");
    } else {
      std::vector<std::string> cats;
      for (const auto& x : values) if (std::find(cats.begin(), cats.end(), x) == cats.end()) cats.push_back(x);
      for (size_t r = 0; r < values.size(); ++r) {
        size_t c = static_cast<size_t>(std::find(cats.begin(), cats.end(), values[r]) - cats.begin());
        pos[r][a] = cats.size() > 1 ? static_cast<double>(c) / static_cast<double>(cats.size() - 1) : 0.5;
      }
      range_labels.emplace_back(cats.front(), cats.back());
    }
  }
  double lo = INFINITY, hi = -INFINITY;
  for (double o : objective) if (std::isfinite(o)) lo = std::min(lo, o), hi = std::max(hi, o);
  std::string svg = fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' class='plot'>", W, H);
  svg += "<text x='50' y='16' class='title'>parallel coordinates (blue: best objective)</text>";
  for (size_t r = 0; r < rows.size(); ++r) {
    double q = std::isfinite(objective[r]) && hi > lo ? (objective[r] - lo) / (hi - lo) : 0.0;
    if (!maximize) q = 1 - q;
    const int red = static_cast<int>(190 - 159 * q), green = static_cast<int>(190 - 71 * q), blue = static_cast<int>(190 + 40 * q);
    std::string path;
    for (size_t a = 0; a < k; ++a) path += fmt::format("{:.1f},{:.1f} ", ax(a), H - bottom - pos[r][a] * (H - top - bottom));
    svg += fmt::format("<polyline points='{}' fill='none' stroke='rgb({},{},{})' stroke-width='{}' stroke-opacity='0.8'/>", path,
                       red, green, blue, q > 0.999 ? 2.5 : 1.2);
  }
  for (size_t a = 0; a < k; ++a) {
    svg += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' class='axis'/>", ax(a), top, H - bottom);
    svg += fmt::format("<text x='{:.1f}' y='{}' class='label' text-anchor='middle'>{}</text>", ax(a), H - 12,
                       esc(a < names.size() ? names[a] : "objective"));
    svg += fmt::format("<text x='{:.1f}' y='{}' class='tick' text-anchor='middle'>{}</text>", ax(a), top - 4, esc(range_labels[a].second));
    svg += fmt::format("<text x='{:.1f}' y='{}' class='tick' text-anchor='middle'>{}</text>", ax(a), H - bottom + 14, esc(range_labels[a].first));
  }
  return svg + "</svg>";
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string s = "<table><tr>";
  for (const auto& h : header) s += "<th>" + esc(h) + "</th>";
  s += "</tr>";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const auto& c : row) s += "<td>" + esc(c) + "</td>";
    s += "</tr>";
  }
  return s + "</table>";
}

const char* kStyle = R"css(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1300px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; } th { background: #f3f3f3; }
pre { background: #f7f7f7; padding: 10px; font-size: 12px; overflow-x: auto; max-height: 420px; }
.plots { display: flex; flex-wrap: wrap; gap: 10px; }
.plot { border: 1px solid #e5e5e5; background: #fff; }
.plot .title { font-size: 13px; font-weight: bold; } .plot .tick { font-size: 10px; fill: #555; }
.plot .label { font-size: 11px; fill: #333; } .plot .legend { font-size: 11px; }
.plot .grid { stroke: #eee; } .plot .frame { fill: none; stroke: #999; } .plot .axis { stroke: #666; }
.verdict-passed, .check-ok { color: #2a7d2a; } .verdict-failed, .verdict-error, .check-out { color: #b22; font-weight: bold; }
.verdict-skipped { color: #888; } td.claim { max-width: 420px; } td code { font-size: 11px; }
.status-completed { color: #2a7d2a; } .status-failed { color: #b22; } .status-interrupted { color: #b70; }
)css";

std::string page(const std::string& title, const std::string& body) {
  return fmt::format("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{}</title><style>{}</style></head>"
                     "<body><h1>{}</h1>\n{}\n<p style='color:#888;font-size:11px'>nexp report, {}</p></body></html>\n",
                     esc(title), kStyle, esc(title), body, now_iso8601());
}

// Metric curves of several runs, one row of panels per metric, at most 5 runs per panel (more in one
// panel cannot be told apart). Runs named in `muted` (pruned trials) are drawn grey.
std::string metric_plots(const std::vector<RunRecord>& runs, size_t max_runs, const std::set<std::string>& muted = {}) {
  constexpr size_t kPerPanel = 5;
  std::map<std::string, std::vector<Series>> by_metric;
  for (size_t i = 0; i < runs.size() && i < max_runs; ++i)
    for (auto& [name, points] : read_metric_series(runs[i].folder)) {
      Series s{runs[i].id, {}};
      s.muted = muted.count(runs[i].id) > 0;
      if (s.muted) s.label += " (pruned)";
      for (auto [step, v] : points) s.points.emplace_back(static_cast<double>(step), v);
      by_metric[name].push_back(std::move(s));
    }
  if (by_metric.empty()) return "<p>No metric was logged over steps.</p>";
  std::string out;
  for (const auto& [name, series] : by_metric) {
    out += "<div class='plots'>";
    const size_t panels = (series.size() + kPerPanel - 1) / kPerPanel;
    const size_t per = (series.size() + panels - 1) / panels;  // balanced: 6 curves are 3 + 3, not 5 + 1
    for (size_t p = 0; p < panels; ++p) {
      const std::vector<Series> part(series.begin() + static_cast<long>(std::min(series.size(), p * per)),
                                     series.begin() + static_cast<long>(std::min(series.size(), (p + 1) * per)));
      out += line_chart(panels > 1 ? fmt::format("{} ({}/{})", name, p + 1, panels) : name, part);
    }
    out += "</div>";
  }
  return out;
}

// Best objective so far against trial number, with each trial's own value.
std::string best_so_far_chart(const std::string& metric, const std::vector<std::pair<int, double>>& by_trial, bool maximize) {
  Series each{"each trial", {}}, best{"best so far", {}};
  each.dots = true;
  double b = NAN;
  for (auto [index, v] : by_trial) {
    if (!std::isfinite(v)) continue;
    each.points.emplace_back(index, v);
    if (std::isnan(b) || (maximize ? v > b : v < b)) b = v;
    best.points.emplace_back(index, b);
  }
  return line_chart(metric, {best, each}, "trial");
}

// How much of the objective's variance each parameter explains on its own: the correlation ratio
// eta^2 = between-group variance / total variance, grouping a numeric parameter into quintiles of its
// values and a categorical one by value. A screening measure: it ignores interactions (fANOVA would not).
std::vector<double> variance_explained(const std::vector<std::vector<std::string>>& values, const std::vector<double>& y,
                                       size_t params) {
  std::vector<double> out(params, 0.0);
  std::vector<size_t> ok;
  for (size_t r = 0; r < y.size(); ++r)
    if (std::isfinite(y[r])) ok.push_back(r);
  if (ok.size() < 3) return out;
  double mean = 0, total = 0;
  for (size_t r : ok) mean += y[r] / static_cast<double>(ok.size());
  for (size_t r : ok) total += (y[r] - mean) * (y[r] - mean);
  if (total <= 0) return out;
  for (size_t a = 0; a < params; ++a) {
    std::map<std::string, std::vector<double>> groups;
    std::vector<std::pair<double, size_t>> numeric;
    for (size_t r : ok) {
      double v;
      if (is_number(values[r][a], v)) numeric.emplace_back(v, r);
      else groups[values[r][a]].push_back(y[r]);
    }
    if (groups.empty() && numeric.size() == ok.size()) {  // quintiles of a numeric parameter
      std::sort(numeric.begin(), numeric.end());
      std::set<double> distinct;
      for (auto& [v, r] : numeric) distinct.insert(v);
      for (size_t i = 0; i < numeric.size(); ++i) {
        const std::string key = distinct.size() <= 5 ? num(numeric[i].first) : std::to_string(5 * i / numeric.size());
        groups[key].push_back(y[numeric[i].second]);
      }
    }
    double between = 0;
    for (const auto& [_, g] : groups) {
      double m = 0;
      for (double v : g) m += v / static_cast<double>(g.size());
      between += static_cast<double>(g.size()) * (m - mean) * (m - mean);
    }
    out[a] = between / total;
  }
  return out;
}

// Two objectives of the completed trials, the non-dominated ones (the Pareto front) in blue and joined.
std::string pareto_chart(const std::vector<Objective>& objectives, const std::vector<std::vector<double>>& values) {
  std::vector<std::vector<double>> oriented;
  std::vector<std::pair<double, double>> pts;
  for (const auto& v : values) {
    if (!std::isfinite(v[0]) || !std::isfinite(v[1])) continue;
    pts.emplace_back(v[0], v[1]);
    oriented.push_back({objectives[0].mode == Direction::Minimize ? v[0] : -v[0],
                        objectives[1].mode == Direction::Minimize ? v[1] : -v[1]});
  }
  const std::vector<int> ranks = samplers::nondominated_ranks(oriented);
  Series front{"Pareto front", {}}, rest{"dominated", {}};
  rest.dots = true, rest.muted = true;
  for (std::size_t i = 0; i < pts.size(); ++i) (ranks[i] == 0 ? front : rest).points.push_back(pts[i]);
  std::sort(front.points.begin(), front.points.end());
  return line_chart(objectives[1].metric, {front, rest}, objectives[0].metric);
}

std::string importance_table(const std::vector<std::string>& names, const std::vector<double>& eta2) {
  std::string s = "<table><tr><th>parameter</th><th>variance of the objective explained alone (&eta;&sup2;)</th></tr>";
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return eta2[a] > eta2[b]; });
  for (size_t i : order)
    s += fmt::format("<tr><td>{}</td><td><span style='display:inline-block;width:{:.0f}px;height:10px;background:{}'></span> "
                     "{:.2f}</td></tr>",
                     esc(names[i]), 300 * eta2[i], kPalette[0], eta2[i]);
  return s + "</table>";
}

std::string runs_section(const std::vector<RunRecord>& runs) {
  std::set<std::string> metrics, keys;
  for (const auto& r : runs) {
    for (const auto& [k, _] : r.summary) metrics.insert(k);
    for (const auto& [k, _] : r.params) keys.insert(k);
  }
  std::vector<std::string> header{"run", "method", "status", "seconds"};
  header.insert(header.end(), metrics.begin(), metrics.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs) {
    std::vector<std::string> row{r.id, r.method, r.status_text(), num(r.seconds)};
    for (const auto& m : metrics) row.push_back(r.summary.count(m) ? num(r.summary.at(m)) : "");
    rows.push_back(row);
  }
  std::string body = "<h2>Summary</h2>" + table(header, rows);
  for (const auto& r : runs)
    if (!r.error.empty()) body += fmt::format("<p class='status-failed'>{}: {}</p>", esc(r.id), esc(r.error));
  if (runs.size() > 1) {
    std::vector<std::vector<std::string>> diff;
    for (const auto& k : keys) {
      std::vector<std::string> row{k};
      std::set<std::string> distinct;
      for (const auto& r : runs) {
        row.push_back(r.params.count(k) ? r.params.at(k) : "-");
        distinct.insert(row.back());
      }
      if (distinct.size() > 1) diff.push_back(row);
    }
    std::vector<std::string> h{"parameter"};
    for (const auto& r : runs) h.push_back(r.id);
    if (!diff.empty()) body += "<h2>Parameters that differ</h2>" + table(h, diff);
  }
  body += "<h2>Metrics over steps</h2>" + metric_plots(runs, 10);
  for (const auto& r : runs)
    body += fmt::format("<h2>Config of {}</h2><pre>{}</pre>", esc(r.id), esc(read_file(r.folder / "config.yaml")));
  return body;
}

std::string sweep_section(const fs::path& folder) {
  SweepPlan plan = load_sweep(folder);
  std::vector<std::string> header{"trial", "status"};
  std::vector<std::string> names;
  for (const auto& a : plan.axes) names.push_back(a.key), header.push_back(a.key);
  const std::string metric = plan.objective ? plan.objective->metric : "";
  if (!metric.empty()) header.push_back(metric);
  std::vector<std::vector<std::string>> rows, values;
  std::vector<double> objective;
  std::vector<std::pair<int, double>> by_trial;
  std::vector<RunRecord> runs;
  std::set<std::string> pruned, methods;
  for (const auto& t : plan.trials) {
    if (const YAML::Node m = YAML::Load(t.config)["method"]; m && m.IsScalar()) methods.insert(m.Scalar());
    TrialStatus s = trial_status(t);
    std::vector<std::string> v;
    for (const auto& a : plan.axes) v.push_back(t.value(a.key));
    double o = !metric.empty() && s.summary.count(metric) ? s.summary.at(metric) : std::nan("");
    std::vector<std::string> row{std::to_string(t.index), trial_state_name(s.state)};
    row.insert(row.end(), v.begin(), v.end());
    if (!metric.empty()) row.push_back(num(o));
    rows.push_back(row);
    if (s.state == TrialState::Completed) {
      values.push_back(v);
      objective.push_back(o);
      by_trial.emplace_back(t.index, o);
    }
    if (s.state != TrialState::Completed && s.state != TrialState::Pruned) continue;
    try {
      runs.push_back(read_run_folder(t.folder));
    } catch (const std::exception&) {
      continue;
    }
    if (s.state == TrialState::Pruned) pruned.insert(runs.back().id);
  }
  const std::string of = methods.size() > 1 ? fmt::format("{} methods ({})", methods.size(), esc(fmt::format("{}", fmt::join(methods, ", "))))
                                            : "<b>" + esc(plan.method) + "</b>";
  std::string body = fmt::format("<p>{} trials of {}{}; objective: {}</p>", plan.trials.size(), of,
                                 plan.adaptive() ? fmt::format(", proposed by the {} sampler (budget {})", plan.sampler, plan.budget) : "",
                                 metric.empty() ? "none (add `objective:` to the config)"
                                                : esc(metric) + (plan.objective->mode == Direction::Minimize ? " (min)" : " (max)"));
  body += "<h2>Trials</h2>" + table(header, rows);
  const bool maximize = plan.objective && plan.objective->mode == Direction::Maximize;
  if (!metric.empty() && by_trial.size() > 1)
    body += "<h2>Best so far</h2><div class='plots'>" + best_so_far_chart(metric, by_trial, maximize) + "</div>";
  if (!metric.empty() && values.size() > 2 && !names.empty())
    body += "<h2>Parameter importance</h2><p>Correlation ratio &eta;&sup2; of each parameter on its own (numeric "
            "parameters grouped into quintiles): a screening measure that ignores interactions.</p>" +
            importance_table(names, variance_explained(values, objective, names.size()));
  if (plan.objectives.size() == 2) {
    std::vector<std::vector<double>> both;
    for (const auto& t : plan.trials) {
      const TrialStatus s = trial_status(t);
      if (s.state != TrialState::Completed) continue;
      std::vector<double> v;
      for (const auto& o : plan.objectives) v.push_back(s.summary.count(o.metric) ? s.summary.at(o.metric) : NAN);
      both.push_back(v);
    }
    body += "<h2>Pareto front</h2><div class='plots'>" + pareto_chart(plan.objectives, both) + "</div>";
  }
  if (!metric.empty() && !values.empty()) {
    body += "<h2>Objective against each swept parameter</h2><div class='plots'>";
    for (size_t a = 0; a < names.size(); ++a) {
      std::vector<std::string> xs;
      for (const auto& v : values) xs.push_back(v[a]);
      body += scatter_chart(names[a], metric, xs, objective);
    }
    body += "</div><h2>Parallel coordinates</h2>" +
            parallel_coordinates(names, values, objective, plan.objective->mode == Direction::Maximize);
  }
  body += fmt::format("<h2>Metrics over steps (first {} completed or pruned trials{})</h2>", std::min<size_t>(runs.size(), 20),
                      pruned.empty() ? "" : "; pruned ones grey and dashed") +
          metric_plots(runs, 20, pruned);
  body += "<h2>Base config</h2><pre>" + esc(plan.base_config) + "</pre>";
  return body;
}

}  // namespace

std::string render_report(const std::vector<fs::path>& targets) {
  if (targets.empty()) throw ConfigError("nexp report needs a run or a sweep folder");
  if (targets.size() == 1 && fs::exists(targets[0] / "sweep.yaml"))
    return page("Sweep " + load_sweep(targets[0]).experiment, sweep_section(targets[0]));
  std::vector<RunRecord> runs;
  for (const auto& t : targets) {
    if (fs::exists(t / "sweep.yaml"))
      throw ConfigError(fmt::format("'{}' is a sweep; report one sweep on its own, or several runs", t.string()));
    runs.push_back(read_run_folder(t));
  }
  const std::string title = runs.size() == 1 ? fmt::format("Run {} ({})", runs[0].id, runs[0].method)
                                             : fmt::format("{} runs compared", runs.size());
  return page(title, runs_section(runs));
}

// ---------------------------------------------------------------- reproduction page

namespace {

std::string json_text(const nlohmann::json& j) {
  if (j.is_null()) return "-";
  if (j.is_number()) return fmt::format("{:.6g}", j.get<double>());
  return j.is_string() ? j.get<std::string>() : j.dump();
}

// One row of results.yaml: claim, checks (paper, README, now), verdict, the run it read.
std::string reproduction_row(const nlohmann::json& r, const fs::path& base) {
  std::string checks;
  for (const auto& c : r["checks"]) {
    const bool measured = c.contains("ok");
    const std::string cls = !measured ? "" : c.value("ok", false) ? "check-ok" : "check-out";
    checks += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td class='{}'>{}</td><td>{}</td></tr>",
                          esc(c.value("id", "")), esc(c.value("source", "")), esc(json_text(c["paper"])),
                          esc(c.value("shown", "")), esc(json_text(c["recorded"])), cls,
                          measured ? esc(json_text(c["now"])) : "-", esc(c.value("compare", "")));
  }
  std::string run = "-";
  if (const std::string folder = r.value("folder", ""); !folder.empty()) {
    std::error_code ec;
    const fs::path rel = fs::relative(fs::absolute(folder), base, ec);
    run = fmt::format("<a href='{}/'>{}</a>", esc((ec ? fs::absolute(folder) : rel).string()),
                      esc(r.value("run_id", "").empty() ? fs::path(folder).filename().string() : r.value("run_id", "")));
  }
  const std::string verdict = r.value("verdict", "");
  std::string when = r.value("reused", false) ? "reused" : "";
  if (r.contains("cpu_seconds") && r["cpu_seconds"].is_number())
    when = fmt::format("{:.1f} CPU-s", r["cpu_seconds"].get<double>());
  return fmt::format("<tr><td>{}</td><td class='claim'>{}<br><code>{}</code></td><td class='verdict-{}'>{}</td>"
                     "<td>{}<br>{}<br>{}</td><td><table><tr><th>check</th><th>read</th><th>paper</th><th>README</th>"
                     "<th>now</th><th>compare</th></tr>{}</table>{}</td></tr>",
                     esc(r.value("id", "")), esc(r.value("claim", "")), esc(r.value("command", "")), esc(verdict),
                     esc(verdict), run, esc(when), esc(r.value("time", "")), checks,
                     r.value("reason", "").empty() ? "" : "<p>" + esc(r.value("reason", "")) + "</p>");
}

}  // namespace

std::string render_reproduction_report(const fs::path& record, const fs::path& output) {
  if (!fs::exists(record))
    throw ConfigError(fmt::format("no reproduction record '{}': run `nexp reproduce <plugin>` first (it writes "
                                  "<runs>/reproduce/<plugin>.json)",
                                  record.string()));
  const auto j = nlohmann::json::parse(read_file(record), nullptr, false);
  if (!j.is_object() || !j.contains("rows")) throw DataError(fmt::format("'{}' is not a reproduction record", record.string()));
  const fs::path base = fs::absolute(output).parent_path();
  std::map<std::string, int> counts;
  std::string rows;
  for (const auto& r : j["rows"]) {
    ++counts[r.value("verdict", "")];
    rows += reproduction_row(r, base);
  }
  std::string body = fmt::format("<p>Rows of <code>{}</code>, each with its latest verdict (updated {}): {} passed, {} "
                                 "failed, {} errors, {} skipped. <code>nexp reproduce {}</code> re-runs them.</p>",
                                 esc(j.value("results", "")), esc(j.value("updated", "")), counts["passed"],
                                 counts["failed"], counts["error"], counts["skipped"], esc(j.value("plugin", "")));
  body += "<table><tr><th>row</th><th>claim and command</th><th>verdict</th><th>run</th><th>checks</th></tr>" + rows +
          "</table>";
  return page("Reproduction of " + j.value("plugin", std::string("?")), body);
}

}  // namespace nexp
