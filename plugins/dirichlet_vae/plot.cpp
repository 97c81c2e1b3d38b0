#include "plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace dirichlet_vae {

namespace {

constexpr double kWidth = 760, kHeight = 480, kLeft = 80, kRight = 190, kTop = 40, kBottom = 60;
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

// Round tick positions covering [lo, hi], about `count` of them.
std::vector<double> ticks(double lo, double hi, int count) {
  const double raw = (hi - lo) / count, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) { step = m * magnitude; break; }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step)
    out.push_back(std::abs(t) < 1e-9 * step ? 0.0 : t);  // no "-0" label
  return out;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

void write_svg_plot(const std::filesystem::path& file, const PlotSpec& spec, const std::vector<Series>& series) {
  auto y_value = [&](double y) { return spec.log_y ? std::log10(std::max(y, spec.y_floor)) : y; };
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, y_value(s.y[i])), y1 = std::max(y1, y_value(s.y[i]));
    }
  for (double v : spec.vertical_lines) x0 = std::min(x0, v), x1 = std::max(x1, v);
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (x1 - x0 < 1e-12) x0 -= 0.5, x1 += 0.5;
  if (y1 - y0 < 1e-12) y0 -= 0.5, y1 += 0.5;
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad, y1 += pad;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return kTop + (1 - (y - y0) / (y1 - y0)) * ph; };

  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write " + file.string());
  out << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)", kWidth, kHeight) << "\n";
  out << fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="white"/>)", kWidth, kHeight) << "\n";
  out << fmt::format(R"(<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>)", kLeft + pw / 2, escape(spec.title)) << "\n";
  out << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)", kLeft, kTop, pw, ph) << "\n";
  for (double t : ticks(x0, x1, 8)) {
    out << fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#ddd"/>)", px(t), kTop, kTop + ph) << "\n";
    out << fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{:g}</text>)", px(t), kTop + ph + 16, t) << "\n";
  }
  const auto y_ticks = spec.log_y ? ticks(std::floor(y0), std::ceil(y1), 6) : ticks(y0, y1, 6);
  for (double t : y_ticks) {
    if (t < y0 || t > y1) continue;
    if (spec.log_y && std::abs(t - std::round(t)) > 1e-9) continue;
    const std::string text = spec.log_y ? fmt::format("1e{:g}", t) : fmt::format("{:g}", t);
    out << fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#ddd"/>)", kLeft, py(t), kLeft + pw) << "\n";
    out << fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)", kLeft - 6, py(t) + 4, text) << "\n";
  }
  out << fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", kLeft + pw / 2, kHeight - 18, escape(spec.x_label)) << "\n";
  out << fmt::format(R"svg(<text x="18" y="{0}" text-anchor="middle" transform="rotate(-90 18 {0})">{1}</text>)svg", kTop + ph / 2, escape(spec.y_label)) << "\n";
  for (double v : spec.vertical_lines) {
    out << fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="black" stroke-dasharray="5,4"/>)", px(v), kTop, kTop + ph) << "\n";
    if (!spec.vertical_label.empty())
      out << fmt::format(R"(<text x="{:.1f}" y="{}">{}</text>)", px(v) + 4, kTop + 14, escape(spec.vertical_label)) << "\n";
  }
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const std::size_t palette = sizeof(kColours) / sizeof(*kColours);
    const char* colour = kColours[(s.colour >= 0 ? static_cast<std::size_t>(s.colour) : k) % palette];
    const char* dash = s.dashed ? R"( stroke-dasharray="6,3")" : "";
    std::string points;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
        points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(y_value(s.y[i])));
    out << fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"{}/>)", points, colour, dash) << "\n";
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
        out << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}"/>)", px(s.x[i]), py(y_value(s.y[i])), colour) << "\n";
    const double ly = kTop + 10 + 18 * static_cast<double>(k);
    out << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{3}" stroke-width="2"{4}/>)", kWidth - kRight + 12, ly,
                       kWidth - kRight + 32, colour, dash) << "\n";
    out << fmt::format(R"(<text x="{}" y="{}">{}</text>)", kWidth - kRight + 38, ly + 4, escape(s.label)) << "\n";
  }
  out << "</svg>\n";
}

}  // namespace dirichlet_vae
