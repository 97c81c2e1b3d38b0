// LICA layout JSON: reading, writing, and the derived sets the baselines compare.
#include "layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include <nexp/error.hpp>

namespace design_bench {

using nlohmann::json;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Text: return "TEXT";
    case Kind::Image: return "IMAGE";
    case Kind::Group: return "GROUP";
  }
  return "?";
}

std::string font_family_name(const std::string& font) {
  const auto cut = font.find("--");
  std::string name = cut == std::string::npos ? font : font.substr(0, cut);
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  return name;
}

std::vector<std::string> font_families(const Layout& l) {
  std::set<std::string> s;
  for (const auto& c : l.components)
    if (c.type == Kind::Text && !c.font_family.empty()) s.insert(font_family_name(c.font_family));
  return {s.begin(), s.end()};
}

std::vector<std::string> palette(const Layout& l) {
  std::set<std::string> s;
  if (!l.background.empty()) s.insert(l.background);
  for (const auto& c : l.components)
    if (!c.color.empty()) s.insert(c.color);
  return {s.begin(), s.end()};
}

std::vector<int> leaves(const Layout& l) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(l.components.size()); ++i)
    if (l.components[i].type != Kind::Group) out.push_back(i);
  return out;
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& key, const std::string& expected,
                      const std::string& found) {
  throw nexp::DataError(fmt::format("{}: field `{}`: expected {}, found {}. Fix the file or leave it out of the folder.",
                                    where, key, expected, found));
}

std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// "#abc", "#aabbcc", "rgb(1, 2, 3)", "rgba(1, 2, 3, 0.5)" -> "#rrggbb"; "" and "transparent" -> "".
std::string parse_color(const json& v, const std::string& where, const std::string& key) {
  if (!v.is_string()) bad(where, key, "a colour string (#rrggbb or rgb(r, g, b))", shown(v));
  std::string s = v.get<std::string>();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s.empty() || s == "transparent" || s == "none") return "";
  auto is_hex = [](const std::string& t) {
    return std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isxdigit(c); });
  };
  if (s[0] == '#' && s.size() == 4 && is_hex(s.substr(1)))
    return fmt::format("#{0}{0}{1}{1}{2}{2}", s[1], s[2], s[3]);
  if (s[0] == '#' && (s.size() == 7 || s.size() == 9) && is_hex(s.substr(1))) return s.substr(0, 7);
  int r = 0, g = 0, b = 0;
  double alpha = 1;
  const int n = s.find('(') == std::string::npos ? 0 : std::sscanf(s.c_str() + s.find('(') + 1, "%d , %d , %d , %lf", &r, &g, &b, &alpha);
  if ((s.rfind("rgb(", 0) == 0 || s.rfind("rgba(", 0) == 0) && n >= 3 && r >= 0 && r < 256 && g >= 0 && g < 256 &&
      b >= 0 && b < 256)
    return n == 4 && alpha <= 0 ? "" : fmt::format("#{:02x}{:02x}{:02x}", r, g, b);  // rgba(.., 0): transparent
  bad(where, key, "a colour (#rrggbb, #rgb, rgb(r, g, b) or rgba(r, g, b, a))", shown(v));
}

const json* find_any(const json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (auto it = j.find(k); it != j.end() && !it->is_null()) return &*it;
  return nullptr;
}

std::string text_of(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  const json* v = find_any(j, keys);
  if (!v) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number_integer()) return std::to_string(v->get<long long>());
  bad(where, *keys.begin(), "a string", shown(*v));
}

// The offset of a CSS transform's translate(), translateX() or translateY() terms, in px.
std::pair<double, double> parse_translate(const json& v, const std::string& where) {
  if (!v.is_string()) bad(where, "transform", "a CSS transform string such as \"translate(10px, 0px)\"", shown(v));
  const std::string s = v.get<std::string>();
  double dx = 0, dy = 0;
  for (const char* fn : {"translate(", "translateX(", "translateY("}) {
    const auto at = s.find(fn);
    if (at == std::string::npos) continue;
    const char* args = s.c_str() + at + std::strlen(fn);
    char* end = nullptr;
    const double a = std::strtod(args, &end);
    if (end == args) bad(where, "transform", "translate() with lengths in px", shown(v));
    const char* rest = std::strncmp(end, "px", 2) == 0 ? end + 2 : end;
    while (*rest == ' ') ++rest;
    double b = 0;
    const int n = *rest == ',' ? 2 : 1;
    if (n == 2) b = std::strtod(rest + 1, nullptr);
    if (fn[9] == 'Y') dy += a;
    else dx += a, dy += fn[9] == '(' && n == 2 ? b : 0.0;
  }
  return {dx, dy};
}

Kind parse_kind(const json& v, const std::string& where) {
  if (!v.is_string()) bad(where, "type", "TEXT, IMAGE or GROUP", shown(v));
  std::string s = v.get<std::string>();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  if (s == "TEXT") return Kind::Text;
  if (s == "IMAGE" || s == "SVG" || s == "SHAPE") return Kind::Image;
  if (s == "GROUP") return Kind::Group;
  bad(where, "type", "TEXT, IMAGE or GROUP", shown(v));
}

Component component_from_json(const json& j, const std::string& where, const std::string& path, int index) {
  const std::string at = fmt::format("{}: {}", where, path);
  if (!j.is_object()) bad(where, path, "an object", shown(j));
  Component c;
  const json* type = find_any(j, {"type"});
  if (!type) bad(at, "type", "TEXT, IMAGE or GROUP", "nothing");
  c.type = parse_kind(*type, at);
  c.id = text_of(j, {"id"}, at);
  if (c.id.empty()) c.id = fmt::format("c{}", index);
  for (const char* k : {"width", "height"})
    if (!find_any(j, {k})) bad(at, k, "a length such as \"120px\"", "nothing");
  // LICA leaves out left and top of components at the canvas origin (CSS's default, 0).
  const json* left = find_any(j, {"left"});
  const json* top = find_any(j, {"top"});
  c.box = {left ? parse_px(*left, at, "left") : 0.0, top ? parse_px(*top, at, "top") : 0.0,
           parse_px(j["width"], at, "width"), parse_px(j["height"], at, "height")};
  if (const json* t = find_any(j, {"transform"})) {  // translate(x, y) moves the box; rotations are left out
    const auto [dx, dy] = parse_translate(*t, at);
    c.box.x += dx, c.box.y += dy;
  }
  if (c.box.w < 0 || c.box.h < 0) bad(at, "width/height", "lengths >= 0", fmt::format("{} x {}", c.box.w, c.box.h));
  c.role = text_of(j, {"role"}, at);
  c.text = text_of(j, {"text"}, at);
  if (const json* f = find_any(j, {"fontFamily"})) {
    if (!f->is_string()) bad(at, "fontFamily", "a font name such as \"Arimo--700\"", shown(*f));
    c.font_family = f->get<std::string>();
  }
  if (const json* s = find_any(j, {"fontSize"})) c.font_size = parse_px(*s, at, "fontSize");
  if (const json* col = find_any(j, {"color"}); col && c.type == Kind::Text) c.color = parse_color(*col, at, "color");
  if (const json* fill = find_any(j, {"backgroundColor", "fill"}); fill && c.color.empty())
    c.color = parse_color(*fill, at, "backgroundColor");
  if (const json* ch = find_any(j, {"children"})) {
    if (!ch->is_array()) bad(at, "children", "a list of component ids", shown(*ch));
    for (const auto& id : *ch) {
      if (!id.is_string()) bad(at, "children", "a list of component ids (strings)", shown(id));
      c.children.push_back(id.get<std::string>());
    }
  }
  return c;
}

// Appends `list` to the layout in paint order; a GROUP's nested `components` (LICA's hierarchy) follow
// it, as its children. Child boxes are read as they are written, in canvas pixels.
void append_components(const json& list, const std::string& where, const std::string& path, int parent, Layout& l) {
  if (!list.is_array()) bad(where, path, "a list of components", shown(list));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", path, i);
    const int index = static_cast<int>(l.components.size());
    l.components.push_back(component_from_json(list[i], where, at, index));
    if (parent >= 0) l.components[parent].children.push_back(l.components[index].id);
    if (auto nested = list[i].find("components"); nested != list[i].end() && !nested->is_null())
      append_components(*nested, where, at + ".components", index, l);
  }
}

}  // namespace

double parse_px(const json& v, const std::string& where, const std::string& key) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    std::size_t used = 0;
    try {
      const double x = std::stod(s, &used);
      std::string rest = s.substr(used);
      if (rest.empty() || rest == "px") return x;
    } catch (const std::exception&) {
    }
  }
  bad(where, key, "a length in px such as \"1920px\" or a number", shown(v));
}

void link_groups(Layout& l, const std::string& where) {
  std::map<std::string, int> index;
  for (int i = 0; i < static_cast<int>(l.components.size()); ++i) index[l.components[i].id] = i;
  for (int g = 0; g < static_cast<int>(l.components.size()); ++g)
    for (const auto& child : l.components[g].children) {
      auto it = index.find(child);
      if (it == index.end())
        throw nexp::DataError(fmt::format("{}: GROUP `{}` lists child `{}`, which is not the id of any component of "
                                          "the layout. Fix the id or drop it from `children`.",
                                          where, l.components[g].id, child));
      l.components[it->second].parent = g;
    }
}

Layout layout_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "(top level)", "a layout object", shown(j));
  Layout l;
  l.id = text_of(j, {"layout_id", "id"}, where);
  l.template_id = text_of(j, {"template_id", "templateId"}, where);
  l.category = text_of(j, {"category"}, where);
  if (const json* v = find_any(j, {"template_layout_index", "variantIndex"})) {
    if (!v->is_number_integer()) bad(where, "template_layout_index", "an integer", shown(*v));
    l.variant_index = v->get<int>();
  }
  for (const char* k : {"width", "height"})
    if (!find_any(j, {k})) bad(where, k, "the canvas size in px", "nothing");
  l.width = parse_px(j["width"], where, "width");
  l.height = parse_px(j["height"], where, "height");
  if (l.width <= 0 || l.height <= 0) bad(where, "width/height", "a canvas > 0", fmt::format("{} x {}", l.width, l.height));
  if (const json* bg = find_any(j, {"background", "backgroundColor"})) l.background = parse_color(*bg, where, "background");
  const json* comps = find_any(j, {"components"});
  if (!comps || !comps->is_array()) bad(where, "components", "a list of components", comps ? shown(*comps) : "nothing");
  append_components(*comps, where, "components", -1, l);
  link_groups(l, where);
  return l;
}

json layout_to_json(const Layout& l) {
  json comps = json::array();
  for (const auto& c : l.components) {
    json o = {{"id", c.id},
              {"type", kind_name(c.type)},
              {"left", fmt::format("{}px", c.box.x)},
              {"top", fmt::format("{}px", c.box.y)},
              {"width", fmt::format("{}px", c.box.w)},
              {"height", fmt::format("{}px", c.box.h)}};
    if (!c.role.empty()) o["role"] = c.role;
    if (c.type == Kind::Text) {
      o["fontFamily"] = c.font_family;
      o["fontSize"] = fmt::format("{}px", c.font_size);
      o["color"] = c.color;
      o["text"] = c.text;
    } else if (!c.color.empty()) {
      o["backgroundColor"] = c.color;
    }
    if (!c.children.empty()) o["children"] = c.children;
    comps.push_back(std::move(o));
  }
  return {{"layout_id", l.id},     {"template_id", l.template_id}, {"category", l.category},
          {"template_layout_index", l.variant_index}, {"width", fmt::format("{}px", l.width)},
          {"height", fmt::format("{}px", l.height)}, {"background", l.background}, {"components", comps}};
}

}  // namespace design_bench
