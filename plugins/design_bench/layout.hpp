#pragma once
// Layered designs in LICA's layout format, the one data model of every task.
//
// A layout is a canvas (width, height, background) and a flat list of components in paint order: the
// array order is the z-order, index 0 at the back. Each component is TEXT, IMAGE or GROUP and carries
// CSS-like strings in the JSON ("left": "120px", "fontFamily": "Arimo--700", "color": "#1a2b3c"). LICA's
// metadata (layout_id, category, template_id, template_layout_index) names the template a layout is a
// variant of. nexp reads a superset: optional `id`, `children` (the ids a GROUP holds), `role`,
// `backgroundColor` (a shape's fill), `templateId`, `variantIndex`; a real LICA file loads unchanged.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace design_bench {

enum class Kind { Text, Image, Group };
const char* kind_name(Kind k);  // "TEXT", "IMAGE", "GROUP"

// An axis-aligned box in canvas pixels.
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  double area() const { return w * h; }
  double right() const { return x + w; }
  double bottom() const { return y + h; }
};

struct Component {
  std::string id;
  Kind type = Kind::Image;
  Box box;
  std::string role;         // title, body, image, decoration, button, ... (may be empty)
  std::string font_family;  // TEXT: as written, weight suffix included ("Arimo--700")
  double font_size = 0;     // TEXT, px
  std::string color;        // TEXT colour or a shape's fill, "#rrggbb" (empty: none)
  std::string text;
  std::vector<std::string> children;  // GROUP: ids of the components it holds
  int parent = -1;          // index of the GROUP holding this component, -1 at top level
};

struct Layout {
  std::string id;
  std::string template_id;  // the template this layout is a variant of
  std::string category;
  int variant_index = 0;
  double width = 0, height = 0;
  std::string background;  // "#rrggbb"
  std::vector<Component> components;  // paint order: index 0 is at the back
  std::filesystem::path image;        // the rendered PNG when one exists
};

// The family name of a font with its weight suffix stripped: "Arimo--700" -> "Arimo". Without the strip
// two variants of one template that set their title in different weights share no font at all.
std::string font_family_name(const std::string& font);
// The distinct stripped font families of a layout's TEXT components, sorted.
std::vector<std::string> font_families(const Layout& l);
// The distinct colours of a layout (background, text colours, fills), lower-case "#rrggbb", sorted.
std::vector<std::string> palette(const Layout& l);
// Indices of the components that are not GROUPs (what is drawn).
std::vector<int> leaves(const Layout& l);

// ---- LICA JSON. `where` names the file (or item) for errors.
// A length: a number, or a string of a number followed by "px" ("1920px", "12.5px").
double parse_px(const nlohmann::json& v, const std::string& where, const std::string& key);
Layout layout_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json layout_to_json(const Layout& l);
// Resolves `children` into parent indices; unknown child ids are a DataError naming `where`.
void link_groups(Layout& l, const std::string& where);

}  // namespace design_bench
