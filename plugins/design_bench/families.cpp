// The template-family generator (families.hpp).
#include "families.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace design_bench {

const std::vector<std::string>& font_pool_names() {
  static const std::vector<std::string> names = {
      "Montserrat", "Roboto", "Open Sans", "Lato", "Poppins", "Arimo", "Raleway", "Playfair Display",
      "Oswald", "Merriweather", "Nunito", "Source Sans Pro", "Bebas Neue", "Lora", "Rubik", "Work Sans",
      "PT Serif", "Quicksand", "Josefin Sans", "Libre Baskerville", "Dancing Script", "Pacifico", "Anton",
      "Cormorant Garamond", "Archivo", "Barlow", "DM Sans", "Inter", "Karla", "Mulish", "Cabin", "Fira Sans",
      "Abril Fatface", "Alegreya", "Amatic SC", "Arvo", "Bitter", "Caveat", "Crimson Text", "EB Garamond",
      "Exo 2", "Great Vibes", "Heebo", "Hind", "Kanit", "Lobster", "Manrope", "Noto Serif", "Overpass",
      "Oxygen", "Prompt", "Righteous", "Sacramento", "Satisfy", "Space Grotesk", "Teko", "Titillium Web",
      "Ubuntu", "Varela Round", "Zilla Slab"};
  return names;
}

const std::vector<CanvasFormat>& canvas_formats() {
  static const std::vector<CanvasFormat> formats = {{"1:1", 1080, 1080},   {"4:5", 1080, 1350},
                                                    {"9:16", 1080, 1920},  {"16:9", 1920, 1080},
                                                    {"1:1.41", 2480, 3508}, {"3:1", 1500, 500}};
  return formats;
}

namespace {

const char* const kCategories[] = {"social_post", "poster", "flyer", "banner", "presentation", "card", "invitation", "menu"};
const char* const kWords[] = {"summer", "sale",  "grand",  "opening", "fresh", "coffee", "design", "studio",
                              "event",  "music", "festival", "workshop", "join", "us",    "today", "new",
                              "collection", "offer", "limited", "free", "book", "now", "learn", "more"};

std::string hsl_hex(double h, double s, double l) {
  auto f = [&](double n) {
    const double k = std::fmod(n + h / 30, 12), a = s * std::min(l, 1 - l);
    return l - a * std::max(-1.0, std::min({k - 3, 9 - k, 1.0}));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(255 * f(0))),
                     static_cast<int>(std::lround(255 * f(8))), static_cast<int>(std::lround(255 * f(4))));
}

// One slot of a template: what it is and where it sits, in canvas fractions.
struct Slot {
  std::string role;
  Kind kind = Kind::Text;
  double x = 0, y = 0, w = 0, h = 0;
  int font = 0, weight = 400, colour = 1;
  bool optional = false;
  int group = -1;  // index of the slot of the GROUP holding it
};

// The random decisions of a family's arrangement, drawn once. place() lays them out on a canvas of a
// given aspect ratio as a designer re-lays a template for another format: margins and text heights are
// lengths in units of the canvas's short side (a title keeps its size in px relative to the short side),
// column widths are shares of the canvas, an image keeps its own aspect ratio, and a split (image beside
// text) becomes a stack on a tall canvas, a stack a split on a wide one.
struct Plan {
  double margin = 0.06;
  int pattern = 0;     // 0 stack, 1 split, 2 full-bleed image under text
  double align = 0;    // text alignment in its column: 0 left, 0.5 centre, 1 right
  bool under = false, image = false, badge = false, button = false, logo = false;
  double title_h = 0.12, title_w = 0.8, sub_h = 0.06, sub_w = 0.7, body_h = 0.1, body_w = 0.8;
  double image_ratio = 1.6, button_w = 0.4, button_h = 0.07;
  int title_weight = 700;
  std::array<double, 4> gaps{};
};

struct Family {
  std::string id, category;
  int format = 0;
  std::vector<std::string> palette;  // [0] background, [1] text, [2] accent, ...
  std::vector<std::string> fonts;
  Plan plan;
  std::vector<Slot> slots;  // the plan on the family's own canvas
};

std::vector<std::string> draw_fonts(int count, const FamiliesOptions& o, nexp::Random& rng) {
  std::vector<double> w(o.font_pool);
  for (int r = 0; r < o.font_pool; ++r) w[r] = std::pow(r + 1.0, -o.zipf);
  std::vector<std::string> out;
  for (int k = 0; k < std::min(count, o.font_pool); ++k) {
    double u = rng.uniform() * std::accumulate(w.begin(), w.end(), 0.0);
    int r = 0;
    while (r + 1 < o.font_pool && (u -= w[r]) > 0) ++r;
    while (w[r] == 0) r = (r + 1) % o.font_pool;
    out.push_back(font_pool_names()[r]);
    w[r] = 0;
  }
  return out;
}

std::vector<std::string> draw_palette(nexp::Random& rng) {
  const int n = 3 + static_cast<int>(rng.below(3));
  const double hue = rng.uniform(0, 360), spread = rng.uniform(20, 180);
  const bool dark = rng.bernoulli(0.4);
  std::vector<std::string> p = {hsl_hex(hue, rng.uniform(0.2, 0.6), dark ? rng.uniform(0.08, 0.2) : rng.uniform(0.85, 0.97)),
                                hsl_hex(hue + 10, rng.uniform(0.1, 0.4), dark ? rng.uniform(0.88, 0.98) : rng.uniform(0.08, 0.22))};
  for (int i = 2; i < n; ++i) p.push_back(hsl_hex(hue + spread * (i - 1), rng.uniform(0.5, 0.9), rng.uniform(0.4, 0.6)));
  return p;
}

// The sizes and the placement a sibling may redraw (its own arrangement); the rest is the template's.
void draw_arrangement(Plan& p, nexp::Random& rng) {
  p.margin = rng.uniform(0.04, 0.1);
  p.pattern = static_cast<int>(rng.below(3));
  p.align = rng.below(3) / 2.0;
  p.title_h = rng.uniform(0.1, 0.16), p.title_w = rng.uniform(0.7, 1.0);
  p.sub_h = rng.uniform(0.05, 0.08), p.sub_w = rng.uniform(0.5, 0.9);
  p.body_h = rng.uniform(0.08, 0.14), p.body_w = rng.uniform(0.6, 1.0);
  p.image_ratio = rng.uniform(1.4, 2.2);
  p.button_w = rng.uniform(0.3, 0.5), p.button_h = rng.uniform(0.06, 0.09);
  for (auto& g : p.gaps) g = rng.uniform(0.01, 0.04);
}

Plan draw_plan(nexp::Random& rng) {
  Plan p;
  draw_arrangement(p, rng);
  p.under = rng.bernoulli(0.5);
  p.image = rng.bernoulli(0.8);
  p.badge = rng.bernoulli(0.5);
  p.button = rng.bernoulli(0.6);
  p.logo = rng.bernoulli(0.5);
  p.title_weight = rng.bernoulli(0.5) ? 700 : 800;
  return p;
}

// The slots of a family on a canvas of aspect ratio `aspect` (width / height), in canvas fractions.
std::vector<Slot> place(const Plan& p, const Family& f, double aspect) {
  const double fx = std::min(1.0, 1 / aspect), fy = std::min(1.0, aspect);  // short-side units -> fractions
  int pattern = p.pattern;
  if (pattern == 1 && aspect < 0.7) pattern = 0;
  if (pattern == 0 && p.image && aspect > 1.6) pattern = 1;
  const double mx = p.margin * fx, my = p.margin * fy;
  const int nf = static_cast<int>(f.fonts.size());
  const int accent = static_cast<int>(f.palette.size()) - 1;
  std::vector<Slot> s;
  const double text_x = pattern == 1 ? 0.5 + mx / 2 : mx, text_w = pattern == 1 ? 0.5 - 1.5 * mx : 1 - 2 * mx;
  if (pattern == 2) s.push_back({"background_image", Kind::Image, 0, 0, 1, 1, 0, 400, 0, false});
  if (pattern == 1) s.push_back({"image", Kind::Image, mx, my, 0.5 - 1.5 * mx, 1 - 2 * my, 0, 400, 0, false});
  double y = my;
  std::size_t gap = 0;
  auto text = [&](const std::string& role, double h_units, double wfrac, int font, int weight, bool optional) {
    const double w = text_w * wfrac;
    s.push_back({role, Kind::Text, text_x + p.align * (text_w - w), y, w, h_units * fy, font, weight, 1, optional});
    y += h_units * fy + p.gaps[gap++ % p.gaps.size()] * fy;
  };
  if (p.under)  // a decoration under the title: drawn first, so behind it
    s.push_back({"decoration_under", Kind::Image, text_x - mx / 2, y - my / 3, text_w + mx, (0.16 + p.margin / 1.5) * fy, 0,
                 400, 2, false});
  text("title", p.title_h, p.title_w, 0, p.title_weight, false);
  text("subtitle", p.sub_h, p.sub_w, std::min(1, nf - 1), 500, true);
  if (pattern == 0 && (p.image || p.pattern == 1)) {
    const double h = std::min(0.36, text_w * aspect / p.image_ratio);
    s.push_back({"image", Kind::Image, text_x, y, text_w, h, 0, 400, 0, false});
    if (p.badge)  // a badge over the image's corner
      s.push_back({"decoration_over", Kind::Image, text_x + text_w * 0.78, y - 0.03 * fy, text_w * 0.18, 0.08 * fy, 0, 400, 2,
                   true});
    y += h + 0.02 * fy;
  }
  text("body", p.body_h, p.body_w, nf - 1, 400, true);
  if (p.button) {  // a button: a GROUP of a shape and its label
    const double bw = text_w * p.button_w, bh = p.button_h * fy, bx = text_x + p.align * (text_w - bw);
    const int g = static_cast<int>(s.size());
    s.push_back({"button", Kind::Group, bx, y, bw, bh, 0, 400, 0, false});
    s.push_back({"button_shape", Kind::Image, bx, y, bw, bh, 0, 400, accent, false, g});
    s.push_back({"button_label", Kind::Text, bx + bw * 0.1, y + bh * 0.2, bw * 0.8, bh * 0.6, nf - 1, 600, 0, false, g});
    y += bh + 0.03 * fy;
  }
  if (p.logo) s.push_back({"logo", Kind::Image, 1 - mx - 0.1 * fx, 1 - my - 0.06 * fy, 0.1 * fx, 0.06 * fy, 0, 400, 0, true});
  // The column must fit the canvas: squeeze the text column's slots when it overflows.
  const double bottom = 1 - my;
  if (y > bottom)
    for (auto& slot : s)
      if (slot.role != "background_image" && slot.role != "logo" && !(pattern == 1 && slot.role == "image"))
        slot.y = my + (slot.y - my) * (bottom - my) / (y - my), slot.h *= (bottom - my) / (y - my);
  return s;
}

double aspect_of(int format) { return canvas_formats()[format].width / canvas_formats()[format].height; }

Family draw_family(int index, const FamiliesOptions& o, const std::vector<Family>& earlier, nexp::Random& rng) {
  Family f;
  f.id = fmt::format("t{:04d}", index);
  f.category = kCategories[rng.below(std::size(kCategories))];
  f.format = static_cast<int>(rng.below(canvas_formats().size()));
  f.palette = draw_palette(rng);
  f.fonts = draw_fonts(1 + static_cast<int>(rng.below(3)), o, rng);
  if (!earlier.empty() && rng.bernoulli(o.hard_negatives)) {  // a hard negative
    const Family& other = earlier[rng.below(earlier.size())];
    if (rng.bernoulli(0.5)) f.fonts = other.fonts;
    else f.palette = other.palette;
  }
  f.plan = draw_plan(rng);
  f.slots = place(f.plan, f, aspect_of(f.format));
  return f;
}

std::string words(nexp::Random& rng, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " " : "") + std::string(kWords[rng.below(std::size(kWords))]);
  return s;
}

// A sibling's canvas and slots: the template's own, its own arrangement (sizes, pattern and alignment
// redrawn, with probability `rearrange`), or the template re-laid for another canvas format (`resize_share`).
struct VariantSlots {
  int format = 0;
  std::vector<Slot> slots;
  bool resized = false;
};

VariantSlots variant_slots(const Family& f, int v, const FamiliesOptions& o, nexp::Random& rng) {
  if (v > 0 && rng.bernoulli(o.resize_share)) {
    int other = static_cast<int>(rng.below(canvas_formats().size() - 1));
    if (other >= f.format) ++other;
    return {other, place(f.plan, f, aspect_of(other)), true};
  }
  if (v > 0 && rng.bernoulli(o.rearrange)) {
    Plan p = f.plan;
    draw_arrangement(p, rng);
    return {f.format, place(p, f, aspect_of(f.format)), false};
  }
  return {f.format, f.slots, false};
}

Layout make_variant(const Family& f, int v, const FamiliesOptions& o, nexp::Random& rng) {
  const VariantSlots vs = variant_slots(f, v, o, rng);
  const auto& slots = vs.slots;
  const auto& fmt_ = canvas_formats()[vs.format];
  Layout l;
  l.id = fmt::format("{}_v{:02d}", f.id, v);
  l.template_id = f.id;
  l.category = f.category;
  l.variant_index = v;
  l.width = fmt_.width, l.height = fmt_.height;
  const bool changes = v > 0 && !vs.resized;  // a resize keeps the design, and changes only its text
  const double p = std::min(1.0, 0.3 * o.variation);
  std::vector<std::string> pal = f.palette;
  if (changes && rng.bernoulli(p)) std::swap(pal[0], pal[1]);                 // palette swap: inverted scheme
  if (changes && pal.size() > 3 && rng.bernoulli(p)) std::swap(pal[2], pal[3]);
  const bool mirror = changes && rng.bernoulli(p);
  const int title_weight_flip = changes && rng.bernoulli(p);
  int dropped = -1;
  if (changes && rng.bernoulli(p)) {
    std::vector<int> optional;
    for (int i = 0; i < static_cast<int>(slots.size()); ++i)
      if (slots[i].optional) optional.push_back(i);
    if (!optional.empty()) dropped = optional[rng.below(optional.size())];
  }
  l.background = pal[0];
  std::vector<int> slot_to_component(slots.size(), -1);
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    if (i == dropped) continue;
    const Slot& s = slots[i];
    Component c;
    c.id = s.role;  // roles are unique within a layout: a resized sibling's components keep their ids
    c.type = s.kind;
    c.role = s.role;
    const double jitter = v > 0 ? o.variation * 0.03 : 0.0;
    double w = s.w, h = s.h * (1 + rng.uniform(-jitter, jitter));
    if (s.kind == Kind::Text && s.role != "button_label") w = std::min(s.w * (1 + rng.uniform(-2 * jitter, 0)), s.w);
    double x = s.x + (s.w - w) * 0.5 * (s.role == "title" ? 0 : 1);
    if (mirror && s.role != "background_image") x = 1 - x - w;
    c.box = {x * l.width, s.y * l.height, w * l.width, h * l.height};
    if (s.kind == Kind::Text) {
      const int weight = s.role == "title" && title_weight_flip ? (s.weight == 700 ? 800 : 700) : s.weight;
      c.font_family = fmt::format("{}--{}", f.fonts[std::min<std::size_t>(s.font, f.fonts.size() - 1)], weight);
      c.font_size = std::round(c.box.h * (s.role == "body" ? 0.22 : 0.7));
      c.color = pal[std::min<std::size_t>(s.colour, pal.size() - 1)];
      c.text = words(rng, s.role == "body" ? 8 : 2 + static_cast<int>(rng.below(2)));
    } else if (s.role.rfind("decoration", 0) == 0 || s.role == "button_shape") {
      c.color = pal[std::min<std::size_t>(s.colour, pal.size() - 1)];
    }
    slot_to_component[i] = static_cast<int>(l.components.size());
    l.components.push_back(std::move(c));
  }
  for (int i = 0; i < static_cast<int>(slots.size()); ++i)
    if (slots[i].group >= 0 && slot_to_component[i] >= 0) {
      const int g = slot_to_component[slots[i].group];
      l.components[g].children.push_back(l.components[slot_to_component[i]].id);
      l.components[slot_to_component[i]].parent = g;
    }
  return l;
}

}  // namespace

std::vector<Layout> generate_families(const FamiliesOptions& o, nexp::Random& rng) {
  std::vector<Family> families;
  std::vector<Layout> layouts;
  for (int i = 0; i < o.families; ++i) {
    families.push_back(draw_family(i, o, families, rng));
    const int n = 1 + static_cast<int>(std::floor((o.max_siblings - 1) * std::pow(rng.uniform(), 1.3) + 0.5));
    for (int v = 0; v < n; ++v) layouts.push_back(make_variant(families.back(), v, o, rng));
  }
  return layouts;
}

}  // namespace design_bench
