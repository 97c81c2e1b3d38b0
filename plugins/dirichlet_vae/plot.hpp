#pragma once
// A small SVG line plot for the plugin's artifacts (KL against beta / beta_c and the like).
#include <filesystem>
#include <string>
#include <vector>

namespace dirichlet_vae {

struct Series {
  std::string label;
  std::vector<double> x, y;
  bool dashed = false;
  int colour = -1;  // index into the palette; -1: the series' position
};

struct PlotSpec {
  std::string title, x_label, y_label;
  bool log_y = false;
  double y_floor = 1e-8;               // log axis: values below are drawn at the floor
  std::vector<double> vertical_lines;  // dashed markers, e.g. beta / beta_c = 1
  std::string vertical_label;
};

void write_svg_plot(const std::filesystem::path& file, const PlotSpec& spec, const std::vector<Series>& series);

}  // namespace dirichlet_vae
