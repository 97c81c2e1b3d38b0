// Cairo rendering (render.hpp).
#include "render.hpp"

#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nexp/error.hpp>
#include <nexp/random.hpp>

#include "metrics.hpp"

namespace design_bench {

namespace {

void set_colour(cairo_t* cr, const std::string& hex) {
  const auto c = hex_to_rgb(hex);
  cairo_set_source_rgb(cr, c[0], c[1], c[2]);
}

void draw_text(cairo_t* cr, const Component& c, double s) {
  const auto family = font_family_name(c.font_family);
  const auto weight = c.font_family.find("--") != std::string::npos &&
                              std::atoi(c.font_family.c_str() + c.font_family.find("--") + 2) >= 600
                          ? CAIRO_FONT_WEIGHT_BOLD
                          : CAIRO_FONT_WEIGHT_NORMAL;
  cairo_select_font_face(cr, family.empty() ? "sans-serif" : family.c_str(), CAIRO_FONT_SLANT_NORMAL, weight);
  cairo_set_font_size(cr, std::max(4.0, (c.font_size > 0 ? c.font_size : c.box.h * 0.7) * s));
  set_colour(cr, c.color.empty() ? "#000000" : c.color);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  // Greedy word wrap inside the box; lines that do not fit the box's height are dropped.
  std::istringstream words(c.text.empty() ? std::string("text") : c.text);
  std::string line, word;
  double y = c.box.y * s + fe.ascent;
  auto flush = [&] {
    if (line.empty() || y > (c.box.bottom()) * s + fe.descent) return;
    cairo_move_to(cr, c.box.x * s, y);
    cairo_show_text(cr, line.c_str());
    y += fe.height, line.clear();
  };
  while (words >> word) {
    const std::string next = line.empty() ? word : line + " " + word;
    cairo_text_extents_t te;
    cairo_text_extents(cr, next.c_str(), &te);
    if (te.x_advance > c.box.w * s && !line.empty()) flush(), line = word;
    else line = next;
  }
  flush();
}

void draw_picture(cairo_t* cr, const Component& c, double s) {
  nexp::Random rng(nexp::fnv1a64(c.id));
  const double x = c.box.x * s, y = c.box.y * s, w = c.box.w * s, h = c.box.h * s;
  cairo_rectangle(cr, x, y, w, h);
  cairo_set_source_rgb(cr, rng.uniform(0.3, 0.8), rng.uniform(0.3, 0.8), rng.uniform(0.3, 0.8));
  cairo_fill(cr);
  cairo_save(cr);
  cairo_rectangle(cr, x, y, w, h);
  cairo_clip(cr);
  for (int k = 0; k < 4; ++k) {
    cairo_arc(cr, x + rng.uniform() * w, y + rng.uniform() * h, rng.uniform(0.1, 0.4) * std::min(w, h), 0, 6.2832);
    cairo_set_source_rgba(cr, rng.uniform(), rng.uniform(), rng.uniform(), 0.6);
    cairo_fill(cr);
  }
  cairo_restore(cr);
}

}  // namespace

double render_png(const Layout& l, const std::filesystem::path& png, int long_side) {
  const double s = long_side / std::max(l.width, l.height);
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, std::max(1, static_cast<int>(l.width * s)),
                                                        std::max(1, static_cast<int>(l.height * s)));
  cairo_t* cr = cairo_create(surface);
  set_colour(cr, l.background.empty() ? "#ffffff" : l.background);
  cairo_paint(cr);
  for (const auto& c : l.components) {
    if (c.type == Kind::Text) draw_text(cr, c, s);
    else if (c.type == Kind::Image && !c.color.empty()) {
      cairo_rectangle(cr, c.box.x * s, c.box.y * s, c.box.w * s, c.box.h * s);
      set_colour(cr, c.color);
      cairo_fill(cr);
    } else if (c.type == Kind::Image) {
      draw_picture(cr, c, s);
    }
  }
  cairo_destroy(cr);
  const auto status = cairo_surface_write_to_png(surface, png.c_str());
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    throw nexp::Error(fmt::format("design_bench: cannot write {} ({})", png.string(), cairo_status_to_string(status)));
  return s;
}

std::string layout_png(const Layout& l, const std::filesystem::path& cache_dir) {
  std::filesystem::path file = l.image;
  if (file.empty() || !std::filesystem::exists(file)) {
    std::filesystem::create_directories(cache_dir);
    file = cache_dir / (l.id + ".png");
    if (!std::filesystem::exists(file)) render_png(l, file);
  }
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace design_bench
