// Items, baseline answers and scoring of every task (tasks.hpp).
#include "tasks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <nexp/error.hpp>
#include <nexp/stats.hpp>

#include "families.hpp"
#include "metrics.hpp"

namespace design_bench {

using nlohmann::json;

void Corpus::index() {
  by_template.clear();
  for (int i = 0; i < static_cast<int>(layouts.size()); ++i)
    by_template[layouts[i].template_id.empty() ? layouts[i].id : layouts[i].template_id].push_back(i);
}

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> t = {"aspect_ratio",     "count",       "type",      "detection",
                                             "layer_order",      "alignment",   "overlap",   "grouping",
                                             "intent_to_layout", "partial_completion", "aspect_adapt", "insertion",
                                             "sibling_matching", "retrieval",   "clustering",
                                             "style_completion", "colour_transfer"};
  return t;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> m = {"oracle",   "chance",          "noisy", "font_jaccard", "palette_jaccard",
                                             "geometry_knn", "logistic",   "grid",  "nearest_sibling", "empty_rect",
                                             "luminance_rank", "rescale", "reflow"};
  return m;
}

namespace {
bool is_template_task(const std::string& t) {
  return t == "sibling_matching" || t == "retrieval" || t == "clustering";
}
}  // namespace

bool model_answers(const std::string& model, const std::string& task) {
  if (model == "oracle" || model == "chance" || model == "noisy" || model == "predictions" || model == "vlm") return true;
  if (model == "font_jaccard" || model == "palette_jaccard" || model == "geometry_knn" || model == "logistic")
    return is_template_task(task);
  if (model == "grid") return task == "intent_to_layout";
  if (model == "nearest_sibling")
    return task == "intent_to_layout" || task == "partial_completion" || task == "insertion" || task == "style_completion";
  if (model == "luminance_rank") return task == "colour_transfer";
  if (model == "empty_rect") return task == "partial_completion" || task == "insertion";
  if (model == "rescale" || model == "reflow") return task == "aspect_adapt";
  return false;
}

std::string primary_metric(const std::string& task) {
  static const std::map<std::string, std::string> p = {
      {"aspect_ratio", "accuracy"}, {"count", "accuracy"},         {"type", "accuracy"},
      {"detection", "map50"},       {"layer_order", "kendall_tau"}, {"alignment", "accuracy"},
      {"overlap", "accuracy"},      {"grouping", "ari"},            {"intent_to_layout", "miou"},
      {"partial_completion", "miou"}, {"aspect_adapt", "miou"}, {"insertion", "iou"},         {"sibling_matching", "f1"},
      {"retrieval", "mrr"},         {"clustering", "ari"},
      {"style_completion", "font_accuracy"}, {"colour_transfer", "adherence"}};
  return p.at(task);
}

std::vector<std::string> task_metrics(const std::string& task) {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"count", {"accuracy", "mae"}},
      {"detection", {"map50", "map"}},
      {"layer_order", {"kendall_tau", "pair_accuracy"}},
      {"grouping", {"ari", "nmi"}},
      {"intent_to_layout", {"miou", "alignment", "overlap"}},
      {"partial_completion", {"miou", "recall", "hallucination"}},
      {"aspect_adapt", {"miou", "distortion", "violations", "alignment_kept"}},
      {"insertion", {"iou", "center_error"}},
      {"sibling_matching", {"f1", "accuracy", "roc_auc"}},
      {"retrieval", {"mrr", "ndcg5", "recall1", "recall5"}},
      {"clustering", {"ari", "nmi", "ami", "v_measure"}},
      {"style_completion", {"font_accuracy", "color_accuracy", "size_error", "palette_adherence"}},
      {"colour_transfer", {"adherence", "coverage", "contrast"}}};
  auto it = m.find(task);
  return it == m.end() ? std::vector<std::string>{primary_metric(task)} : it->second;
}

// ================================================================ shared pieces

namespace {

json box_json(const Box& b) { return json::array({b.x, b.y, b.w, b.h}); }

// A box from an answer, or false when it is not four finite numbers with w, h >= 0.
bool read_box(const json& j, Box& out) {
  if (!j.is_array() || j.size() != 4) return false;
  for (const auto& v : j)
    if (!v.is_number() || !std::isfinite(v.get<double>())) return false;
  out = {j[0].get<double>(), j[1].get<double>(), j[2].get<double>(), j[3].get<double>()};
  return out.w >= 0 && out.h >= 0;
}

bool read_kind(const json& j, Kind& out) {
  if (!j.is_string()) return false;
  const auto s = j.get<std::string>();
  if (s == "TEXT") out = Kind::Text;
  else if (s == "IMAGE") out = Kind::Image;
  else if (s == "GROUP") out = Kind::Group;
  else return false;
  return true;
}

int find_id(const Layout& l, const std::string& id) {
  for (int i = 0; i < static_cast<int>(l.components.size()); ++i)
    if (l.components[i].id == id) return i;
  return -1;
}

Box normalised(const Box& b, const Layout& l) { return {b.x / l.width, b.y / l.height, b.w / l.width, b.h / l.height}; }

std::vector<std::size_t> sample_indices(std::size_t n, std::size_t k, nexp::Random& rng) {
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  for (std::size_t i = 0; i < std::min(k, n); ++i) std::swap(idx[i], idx[i + rng.below(n - i)]);
  idx.resize(std::min(k, n));
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::string aspect_class(double w, double h) {
  const auto& f = canvas_formats();
  std::size_t best = 0;
  for (std::size_t i = 1; i < f.size(); ++i)
    if (std::abs(std::log(w / h) - std::log(f[i].width / f[i].height)) <
        std::abs(std::log(w / h) - std::log(f[best].width / f[best].height)))
      best = i;
  return f[best].name;
}

const char* const kAlignments[] = {"left", "center", "right", "top", "middle", "bottom", "none"};
const char* const kOverlaps[] = {"disjoint", "overlap", "contains", "inside"};

std::string alignment_relation(const Box& a, const Box& b, double width, double height) {
  const double tx = 0.005 * width, ty = 0.005 * height;
  if (std::abs(a.x - b.x) <= tx) return "left";
  if (std::abs(a.x + a.w / 2 - b.x - b.w / 2) <= tx) return "center";
  if (std::abs(a.right() - b.right()) <= tx) return "right";
  if (std::abs(a.y - b.y) <= ty) return "top";
  if (std::abs(a.y + a.h / 2 - b.y - b.h / 2) <= ty) return "middle";
  if (std::abs(a.bottom() - b.bottom()) <= ty) return "bottom";
  return "none";
}

std::string alignment_relation(const Box& a, const Box& b, const Layout& l) {
  return alignment_relation(a, b, l.width, l.height);
}

std::string overlap_relation(const Box& a, const Box& b) {
  const double i = intersection(a, b);
  if (i <= 0) return "disjoint";
  if (i >= b.area() * 0.999) return "contains";
  if (i >= a.area() * 0.999) return "inside";
  return "overlap";
}

// Group label of each leaf: the id of its outermost GROUP, or its own id at the top level.
std::map<std::string, std::string> group_labels(const Layout& l) {
  std::map<std::string, std::string> out;
  for (int i : leaves(l)) {
    int g = i;
    while (l.components[g].parent >= 0) g = l.components[g].parent;
    out[l.components[i].id] = l.components[g].id;
  }
  return out;
}

std::vector<std::pair<int, int>> overlapping_pairs(const Layout& l) {
  std::vector<std::pair<int, int>> out;
  const auto lv = leaves(l);
  for (std::size_t a = 0; a < lv.size(); ++a)
    for (std::size_t b = a + 1; b < lv.size(); ++b)
      if (intersection(l.components[lv[a]].box, l.components[lv[b]].box) > 0) out.push_back({lv[a], lv[b]});
  return out;
}

}  // namespace

double font_jaccard(const Layout& a, const Layout& b) {
  const auto fa = font_families(a), fb = font_families(b);
  if (fa.empty() && fb.empty()) return 0.0;
  std::vector<std::string> common;
  std::set_intersection(fa.begin(), fa.end(), fb.begin(), fb.end(), std::back_inserter(common));
  return static_cast<double>(common.size()) / (fa.size() + fb.size() - common.size());
}

double palette_jaccard(const Layout& a, const Layout& b) {
  const auto pa = palette(a), pb = palette(b);
  if (pa.empty() && pb.empty()) return 0.0;
  std::vector<char> used(pb.size(), 0);
  int matched = 0;
  for (const auto& x : pa) {
    const Lab lx = srgb_to_lab(hex_to_rgb(x));
    for (std::size_t j = 0; j < pb.size(); ++j)
      if (!used[j] && ciede2000(lx, srgb_to_lab(hex_to_rgb(pb[j]))) < 10) {
        used[j] = 1, ++matched;
        break;
      }
  }
  return static_cast<double>(matched) / (pa.size() + pb.size() - matched);
}

double geometry_similarity(const Layout& a, const Layout& b) {
  std::vector<Box> ba, bb;
  for (int i : leaves(a)) ba.push_back(normalised(a.components[i].box, a));
  for (int i : leaves(b)) bb.push_back(normalised(b.components[i].box, b));
  if (ba.empty() || bb.empty()) return 0.0;
  const auto m = matched_iou(ba, bb);
  return std::accumulate(m.ious.begin(), m.ious.end(), 0.0) / std::max(ba.size(), bb.size());
}

Layout noisy_view(const Layout& l, double noise, nexp::Random& rng) {
  Layout v = l;
  v.width = l.width * std::exp(noise * 0.15 * rng.normal());
  const double canvas = l.width * l.height;
  std::vector<Component> kept;
  std::vector<double> key;
  const auto& pool = font_pool_names();
  for (std::size_t i = 0; i < l.components.size(); ++i) {
    Component c = l.components[i];
    const double share = std::max(c.box.area() / canvas, 1e-4);
    if (c.type != Kind::Group && rng.bernoulli(noise * std::max(0.0, 1 - share / 0.02))) continue;
    const double rel = std::min(1.0, noise * 0.04 / std::sqrt(share));
    c.box.x += rel * c.box.w * rng.normal(), c.box.y += rel * c.box.h * rng.normal();
    c.box.w *= std::exp(rel * rng.normal()), c.box.h *= std::exp(rel * rng.normal());
    c.box.x *= v.width / l.width, c.box.w *= v.width / l.width;
    if (rng.bernoulli(noise * 0.5)) c.type = rng.bernoulli(0.5) ? Kind::Text : Kind::Image;
    if (c.type == Kind::Text && rng.bernoulli(noise * 0.5)) c.font_family = pool[rng.below(pool.size())];
    key.push_back(i + noise * 3 * rng.normal());
    kept.push_back(std::move(c));
  }
  std::vector<std::size_t> order(kept.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  v.components.clear();
  for (auto i : order) v.components.push_back(kept[i]);
  for (auto& c : v.components) c.parent = -1;
  for (int g = 0; g < static_cast<int>(v.components.size()); ++g)
    for (const auto& child : v.components[g].children)
      if (int k = find_id(v, child); k >= 0) v.components[k].parent = g;
  return v;
}

Box largest_empty_rectangle(const std::vector<Box>& occupied, double width, double height) {
  constexpr int n = 48;
  std::vector<std::vector<char>> busy(n, std::vector<char>(n, 0));
  for (const auto& b : occupied)
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        const Box cell{c * width / n, r * height / n, width / n, height / n};
        if (intersection(cell, b) > 0.25 * cell.area()) busy[r][c] = 1;
      }
  // Maximal rectangle in a binary matrix: histogram of free cells per column, a stack per row.
  std::vector<int> heights(n, 0);
  int best_area = 0;
  Box best{0, 0, width, height};
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) heights[c] = busy[r][c] ? 0 : heights[c] + 1;
    std::vector<int> stack;
    for (int c = 0; c <= n; ++c) {
      const int h = c == n ? 0 : heights[c];
      while (!stack.empty() && heights[stack.back()] >= h) {
        const int top = heights[stack.back()];
        stack.pop_back();
        const int left = stack.empty() ? 0 : stack.back() + 1;
        if (top * (c - left) > best_area)
          best_area = top * (c - left),
          best = {left * width / n, (r - top + 1) * height / n, (c - left) * width / n, top * height / n};
      }
      stack.push_back(c);
    }
  }
  return best;
}

// ================================================================ items

namespace {

Item layout_item(const Corpus& c, int i) {
  Item it;
  it.id = c.layouts[i].id;
  it.layouts = {i};
  return it;
}

std::vector<Item> per_layout_items(const std::string& task, const Corpus& c, const TaskSettings& s, nexp::Random& rng) {
  std::vector<Item> out;
  for (int i = 0; i < static_cast<int>(c.layouts.size()); ++i) {
    const Layout& l = c.layouts[i];
    Item it = layout_item(c, i);
    const auto lv = leaves(l);
    if (task == "aspect_ratio") {
      it.target = aspect_class(l.width, l.height);
    } else if (task == "count") {
      it.target = lv.size();
    } else if (task == "detection") {
      json t = json::array();
      for (int k : lv) t.push_back({{"box", box_json(l.components[k].box)}, {"type", kind_name(l.components[k].type)}});
      it.target = t;
    } else if (task == "layer_order") {
      if (overlapping_pairs(l).empty()) continue;
      json t = json::array();
      for (int k : lv) t.push_back(l.components[k].id);
      it.target = t;
    } else if (task == "grouping") {
      const auto g = group_labels(l);
      std::set<std::string> distinct;
      for (const auto& [leaf, label] : g) distinct.insert(label);
      if (distinct.size() == g.size() || g.size() < 2) continue;  // no GROUP to recover
      it.target = g;
    } else if (task == "intent_to_layout") {
      json intent = json::array(), t = json::array();
      for (int k : lv) {
        const auto& comp = l.components[k];
        intent.push_back({{"id", comp.id}, {"type", kind_name(comp.type)}, {"role", comp.role}});
        t.push_back({{"id", comp.id}, {"box", box_json(comp.box)}});
      }
      it.input = {{"width", l.width}, {"height", l.height}, {"elements", intent}};
      it.target = t;
    } else if (task == "partial_completion" || task == "insertion") {
      const int m = task == "insertion" ? 1 : s.missing;
      if (static_cast<int>(lv.size()) < m + std::max(2, s.given)) continue;
      auto pick = sample_indices(lv.size(), lv.size(), rng);  // a random order of the leaves
      std::shuffle(pick.begin(), pick.end(), rng);
      json given = json::array(), t = json::array(), types = json::array();
      const int k = s.given > 0 ? s.given : static_cast<int>(lv.size()) - m;
      for (int g = 0; g < k; ++g) {
        const auto& comp = l.components[lv[pick[m + g]]];
        given.push_back({{"id", comp.id}, {"type", kind_name(comp.type)}, {"box", box_json(comp.box)}});
      }
      for (int g = 0; g < m; ++g) {
        const auto& comp = l.components[lv[pick[g]]];
        it.components.push_back(lv[pick[g]]);
        types.push_back(kind_name(comp.type));
        t.push_back({{"type", kind_name(comp.type)}, {"box", box_json(comp.box)}});
      }
      it.input = {{"width", l.width}, {"height", l.height}, {"given", given}, {"missing_types", types}};
      if (task == "insertion") {
        const auto& comp = l.components[it.components[0]];
        it.input["element"] = {{"type", kind_name(comp.type)}, {"role", comp.role}, {"width", comp.box.w},
                               {"height", comp.box.h}};
        it.target = {{"box", box_json(comp.box)}};
      } else {
        it.target = t;
      }
    }
    out.push_back(std::move(it));
  }
  return out;
}

// Items about one component (type) or a pair of leaves (alignment, overlap).
std::vector<Item> component_items(const std::string& task, const Corpus& c, nexp::Random& rng) {
  std::vector<Item> out;
  for (int i = 0; i < static_cast<int>(c.layouts.size()); ++i) {
    const Layout& l = c.layouts[i];
    if (task == "type") {
      const int k = static_cast<int>(rng.below(l.components.size()));
      Item it = layout_item(c, i);
      it.id = fmt::format("{}#{}", l.id, l.components[k].id);
      it.components = {k};
      it.input = {{"box", box_json(l.components[k].box)}};
      it.target = kind_name(l.components[k].type);
      out.push_back(std::move(it));
      continue;
    }
    const auto lv = leaves(l);
    if (lv.size() < 2) continue;
    // One pair per layout: half of the layouts ask about a related pair when one exists.
    std::vector<std::pair<int, int>> related, all;
    for (std::size_t a = 0; a < lv.size(); ++a)
      for (std::size_t b = a + 1; b < lv.size(); ++b) {
        const Box &ba = l.components[lv[a]].box, &bb = l.components[lv[b]].box;
        const bool rel = task == "alignment" ? alignment_relation(ba, bb, l) != "none" : intersection(ba, bb) > 0;
        (rel ? related : all).push_back({lv[a], lv[b]});
      }
    const auto& from = !related.empty() && (rng.bernoulli(0.5) || all.empty()) ? related : all;
    const auto [a, b] = from[rng.below(from.size())];
    Item it = layout_item(c, i);
    it.id = fmt::format("{}#{}#{}", l.id, l.components[a].id, l.components[b].id);
    it.components = {a, b};
    it.input = {{"a", l.components[a].id}, {"b", l.components[b].id}};
    it.target = task == "alignment" ? alignment_relation(l.components[a].box, l.components[b].box, l)
                                    : overlap_relation(l.components[a].box, l.components[b].box);
    out.push_back(std::move(it));
  }
  return out;
}

// aspect_adapt: a layout and a sibling of its template on a canvas of another aspect class whose drawn
// components correspond (the same ids: nexp's generated resizes, or LICA layouts with as many components,
// matched by array order as GDB pairs them). The source's boxes are given; the target's are asked for.
std::vector<Item> adapt_items(const Corpus& c) {
  auto leaf_ids = [&](const Layout& l) {
    std::map<std::string, int> out;
    for (int k : leaves(l)) out.emplace(l.components[k].id, k);
    return out;
  };
  std::vector<Item> out;
  for (const auto& [t, members] : c.by_template)
    for (int target : members) {
      const Layout& lt = c.layouts[target];
      const auto tid = leaf_ids(lt);
      if (tid.size() < 2) continue;
      int source = -1;
      for (int m : members) {  // the lowest variant of another aspect class with the same components
        const Layout& ls = c.layouts[m];
        if (aspect_class(ls.width, ls.height) == aspect_class(lt.width, lt.height)) continue;
        const auto sid = leaf_ids(ls);
        const bool same = sid.size() == tid.size() &&
                          std::all_of(sid.begin(), sid.end(), [&](const auto& e) { return tid.count(e.first) > 0; });
        if (same && (source < 0 || ls.variant_index < c.layouts[source].variant_index)) source = m;
      }
      if (source < 0) continue;
      const Layout& ls = c.layouts[source];
      Item it;
      it.id = fmt::format("{}>{}", ls.id, lt.id);
      it.layouts = {source, target};
      json elements = json::array(), truth = json::array();
      for (const auto& [id, k] : leaf_ids(ls)) {
        elements.push_back({{"id", id}, {"type", kind_name(ls.components[k].type)}, {"box", box_json(ls.components[k].box)}});
        truth.push_back({{"id", id}, {"box", box_json(lt.components[tid.at(id)].box)}});
      }
      it.input = {{"width", lt.width}, {"height", lt.height}, {"source_width", ls.width},
                  {"source_height", ls.height}, {"elements", elements}};
      it.target = truth;
      out.push_back(std::move(it));
    }
  return out;
}

std::vector<std::string> templates_with(const Corpus& c, std::size_t min_layouts) {
  std::vector<std::string> t;
  for (const auto& [id, members] : c.by_template)
    if (members.size() >= min_layouts) t.push_back(id);
  return t;
}

void require(bool ok, const std::string& task, const std::string& what) {
  if (!ok)
    throw nexp::DataError(fmt::format("task {}: the corpus has {}. Use a larger dataset (dataset.families, or more "
                                      "LICA templates).", task, what));
}

std::vector<Item> template_items(const std::string& task, const Corpus& c, const TaskSettings& s, nexp::Random& rng) {
  const auto multi = templates_with(c, 2), all = templates_with(c, 1);
  std::vector<Item> out;
  auto other_layout = [&](const std::string& not_template) {
    for (;;) {
      const int j = static_cast<int>(rng.below(c.layouts.size()));
      const auto& t = c.layouts[j].template_id.empty() ? c.layouts[j].id : c.layouts[j].template_id;
      if (t != not_template) return j;
    }
  };
  if (task == "sibling_matching" || task == "retrieval") {
    require(!multi.empty() && all.size() >= 2, task, "no template with two layouts, or a single template");
    for (int n = 0; n < s.items; ++n) {
      const auto& t = multi[rng.below(multi.size())];
      const auto& members = c.by_template.at(t);
      const auto pair = sample_indices(members.size(), 2, rng);
      const int q = members[pair[rng.below(2)]], sib = members[pair[0]] == q ? members[pair[1]] : members[pair[0]];
      Item it;
      if (task == "sibling_matching") {
        const bool positive = n % 2 == 0;
        it.layouts = {q, positive ? sib : other_layout(t)};
        it.id = fmt::format("pair{:05d}", n);
        it.target = positive;
      } else {
        std::vector<int> cands = {sib};
        require(static_cast<int>(all.size()) > s.candidates / 2, task, "too few templates for the candidate list");
        while (static_cast<int>(cands.size()) < s.candidates) cands.push_back(other_layout(t));
        std::shuffle(cands.begin(), cands.end(), rng);
        it.layouts = {q};
        it.layouts.insert(it.layouts.end(), cands.begin(), cands.end());
        it.id = fmt::format("query{:05d}", n);
        it.target = c.layouts[sib].id;
      }
      out.push_back(std::move(it));
    }
  } else {  // clustering: K templates' layouts, K given
    require(static_cast<int>(all.size()) >= s.cluster_templates, task,
            fmt::format("fewer than {} templates (params.cluster_templates)", s.cluster_templates));
    const int n_items = std::max(1, std::min(s.items, static_cast<int>(all.size()) / s.cluster_templates * 4));
    for (int n = 0; n < n_items; ++n) {
      Item it;
      it.id = fmt::format("set{:04d}", n);
      json labels = json::array();
      int label = 0;
      for (auto k : sample_indices(all.size(), s.cluster_templates, rng)) {
        for (int j : c.by_template.at(all[k])) it.layouts.push_back(j), labels.push_back(label);
        ++label;
      }
      it.input = {{"clusters", s.cluster_templates}};
      it.target = labels;
      out.push_back(std::move(it));
    }
  }
  return out;
}

// style_completion: one TEXT element's font, size and colour hidden. colour_transfer: the layout and the
// palette of another template to recolour it with.
std::vector<Item> style_items(const std::string& task, const Corpus& c, nexp::Random& rng) {
  std::vector<Item> out;
  for (int i = 0; i < static_cast<int>(c.layouts.size()); ++i) {
    const Layout& l = c.layouts[i];
    Item it = layout_item(c, i);
    if (task == "style_completion") {
      std::vector<int> texts;
      for (int k : leaves(l))
        if (l.components[k].type == Kind::Text && !l.components[k].font_family.empty()) texts.push_back(k);
      if (texts.size() < 2) continue;
      const int k = texts[rng.below(texts.size())];
      const auto& t = l.components[k];
      it.components = {k};
      it.input = {{"element", t.id}, {"role", t.role}, {"box", box_json(t.box)}};
      it.target = {{"font", t.font_family}, {"size", t.font_size}, {"color", t.color}};
    } else {
      const Layout& other = c.layouts[rng.below(c.layouts.size())];
      if (other.template_id == l.template_id || palette(l).empty()) continue;
      it.input = {{"palette", palette(other)}};
      it.target = it.input;
    }
    out.push_back(std::move(it));
  }
  return out;
}

}  // namespace

std::vector<Item> make_items(const std::string& task, const Corpus& c, const TaskSettings& s, nexp::Random& rng) {
  std::vector<Item> items;
  if (is_template_task(task)) items = template_items(task, c, s, rng);
  else if (task == "style_completion" || task == "colour_transfer") items = style_items(task, c, rng);
  else if (task == "type" || task == "alignment" || task == "overlap") items = component_items(task, c, rng);
  else if (task == "aspect_adapt") items = adapt_items(c);
  else items = per_layout_items(task, c, s, rng);
  require(!items.empty(), task,
          task == "aspect_adapt" ? "no pair of sibling layouts with the same components on canvases of different aspect "
                                   "classes (dataset.resize_share > 0, or LICA templates made in several sizes)"
                                 : "no layout this task can ask about");
  if (static_cast<int>(items.size()) > s.items) {
    std::vector<Item> kept;
    for (auto i : sample_indices(items.size(), s.items, rng)) kept.push_back(std::move(items[i]));
    items = std::move(kept);
  }
  return items;
}

// ================================================================ answers

namespace {

int max_leaves(const Corpus& c) {
  std::size_t m = 1;
  for (const auto& l : c.layouts) m = std::max(m, leaves(l).size());
  return static_cast<int>(m);
}

Box random_box(const Layout& l, nexp::Random& rng) {
  const double w = rng.uniform(0.05, 0.6) * l.width, h = rng.uniform(0.03, 0.4) * l.height;
  return {rng.uniform(0, l.width - w), rng.uniform(0, l.height - h), w, h};
}

std::string jitter_colour(const std::string& hex, double sd, nexp::Random& rng) {
  if (sd <= 0) return hex;
  const auto c = hex_to_rgb(hex);
  int v[3];
  for (int k = 0; k < 3; ++k) v[k] = std::clamp(static_cast<int>(std::lround(c[k] * 255 + sd * rng.normal())), 0, 255);
  return fmt::format("#{:02x}{:02x}{:02x}", v[0], v[1], v[2]);
}

std::string random_colour(nexp::Random& rng) {
  return fmt::format("#{:02x}{:02x}{:02x}", rng.below(256), rng.below(256), rng.below(256));
}

// The slots a recolouring fills: "background" and every component with a colour.
std::vector<std::pair<std::string, std::string>> colour_slots(const Layout& l) {
  std::vector<std::pair<std::string, std::string>> out = {{"background", l.background}};
  for (const auto& c : l.components)
    if (!c.color.empty()) out.push_back({c.id, c.color});
  return out;
}

// Source colours by luminance rank onto the palette by luminance rank. With `legible`, the background
// takes the palette's extreme colour that contrasts most with another, and text the colour that
// contrasts most with it (the oracle: every colour in the palette, text as legible as it allows).
json recolour(const Layout& l, std::vector<std::string> pal, bool legible) {
  auto lum = [](const std::string& h) { return relative_luminance(hex_to_rgb(h)); };
  std::sort(pal.begin(), pal.end(), [&](const auto& a, const auto& b) { return lum(a) < lum(b); });
  auto src = palette(l);
  std::sort(src.begin(), src.end(), [&](const auto& a, const auto& b) { return lum(a) < lum(b); });
  std::map<std::string, std::string> map;
  for (std::size_t r = 0; r < src.size(); ++r)
    map[src[r]] = pal[src.size() < 2 ? 0 : std::lround(r * (pal.size() - 1.0) / (src.size() - 1.0))];
  json colors = json::object();
  for (const auto& [slot, colour] : colour_slots(l)) colors[slot] = colour.empty() ? pal.back() : map[colour];
  if (legible) {
    const std::string bg = wcag_contrast(pal.front(), pal.back()) >= 1 && lum(l.background) < 0.5 ? pal.front() : pal.back();
    std::string text = pal.front();
    for (const auto& p : pal)
      if (wcag_contrast(p, bg) > wcag_contrast(text, bg)) text = p;
    colors["background"] = bg;
    for (const auto& c : l.components)
      if (c.type == Kind::Text && !c.color.empty()) colors[c.id] = text;
  }
  return {{"colors", colors}};
}

// What a perfect (view = the truth) or imperfect (a noisy view) perception answers.
json perceived(const std::string& task, const Item& item, const Layout& truth, const Layout& view, double noise,
               nexp::Random& rng) {
  auto comp = [&](const std::string& id) -> const Component* {
    const int k = find_id(view, id);
    return k < 0 ? nullptr : &view.components[k];
  };
  if (task == "aspect_ratio") return aspect_class(view.width, view.height);
  if (task == "count") return leaves(view).size();
  if (task == "type") {
    const auto* k = comp(truth.components[item.components[0]].id);
    return k ? kind_name(k->type) : "IMAGE";
  }
  if (task == "style_completion") {
    const auto* k = comp(truth.components[item.components[0]].id);
    const Component& t = k && k->type == Kind::Text ? *k : truth.components[item.components[0]];
    return {{"font", t.font_family}, {"size", t.font_size * std::exp(noise * 0.3 * rng.normal())},
            {"color", jitter_colour(t.color, noise * 40, rng)}};
  }
  if (task == "colour_transfer") {
    json a = recolour(truth, item.input["palette"].get<std::vector<std::string>>(), true);
    for (auto& [slot, colour] : a["colors"].items()) colour = jitter_colour(colour.get<std::string>(), noise * 40, rng);
    return a;
  }
  if (task == "alignment" || task == "overlap") {  // relations are also misread outright, with probability noise / 2
    if (rng.bernoulli(noise / 2))
      return task == "alignment" ? kAlignments[rng.below(std::size(kAlignments))] : kOverlaps[rng.below(std::size(kOverlaps))];
    const auto *a = comp(item.input["a"]), *b = comp(item.input["b"]);
    if (!a || !b) return task == "alignment" ? "none" : "disjoint";
    return task == "alignment" ? alignment_relation(a->box, b->box, view) : overlap_relation(a->box, b->box);
  }
  json out = json::array();
  if (task == "detection") {
    for (int k : leaves(view))
      out.push_back({{"box", box_json(view.components[k].box)}, {"type", kind_name(view.components[k].type)}, {"score", 1.0}});
  } else if (task == "layer_order") {
    for (int k : leaves(view)) out.push_back(view.components[k].id);
  } else if (task == "grouping") {
    const auto labels = group_labels(view);
    std::vector<std::string> distinct;
    for (const auto& [leaf, g] : labels) distinct.push_back(g);
    std::map<std::string, std::vector<std::string>> groups;
    for (const auto& [leaf, g] : labels)
      groups[rng.bernoulli(noise) ? distinct[rng.below(distinct.size())] : g].push_back(leaf);
    for (const auto& [g, members] : groups) out.push_back(members);
  } else if (task == "intent_to_layout" || task == "aspect_adapt") {
    for (const auto& e : item.input["elements"])
      if (const auto* k = comp(e["id"])) out.push_back({{"id", k->id}, {"box", box_json(k->box)}});
  } else if (task == "partial_completion") {
    for (int t : item.components)
      if (const auto* k = comp(truth.components[t].id)) out.push_back({{"type", kind_name(k->type)}, {"box", box_json(k->box)}});
  } else if (task == "insertion") {
    const auto* k = comp(truth.components[item.components[0]].id);
    return {{"box", box_json(k ? k->box : Box{truth.width / 4, truth.height / 4, truth.width / 2, truth.height / 2})}};
  }
  return out;
}

json chance_answer(const std::string& task, const Item& item, const Corpus& c, nexp::Random& rng) {
  const Layout& l = c.layouts[item.layouts[task == "aspect_adapt" ? 1 : 0]];  // the canvas answered on
  if (task == "aspect_ratio") return canvas_formats()[rng.below(canvas_formats().size())].name;
  if (task == "count") return 1 + rng.below(max_leaves(c));
  if (task == "type") return kind_name(static_cast<Kind>(rng.below(3)));
  if (task == "alignment") return kAlignments[rng.below(std::size(kAlignments))];
  if (task == "overlap") return kOverlaps[rng.below(std::size(kOverlaps))];
  if (task == "style_completion")
    return {{"font", font_pool_names()[rng.below(font_pool_names().size())] + "--400"},
            {"size", rng.uniform(8, 200)}, {"color", random_colour(rng)}};
  if (task == "colour_transfer") {
    json colors = json::object();
    for (const auto& [slot, colour] : colour_slots(l)) colors[slot] = random_colour(rng);
    return {{"colors", colors}};
  }
  json out = json::array();
  if (task == "detection") {
    const int n = 1 + static_cast<int>(rng.below(max_leaves(c)));
    for (int k = 0; k < n; ++k)
      out.push_back({{"box", box_json(random_box(l, rng))}, {"type", rng.bernoulli(0.5) ? "TEXT" : "IMAGE"},
                     {"score", rng.uniform()}});
  } else if (task == "layer_order") {
    std::vector<std::string> ids = item.target.get<std::vector<std::string>>();
    std::shuffle(ids.begin(), ids.end(), rng);
    out = ids;
  } else if (task == "grouping") {
    std::set<std::string> distinct;
    for (const auto& [leaf, g] : item.target.items()) distinct.insert(g.get<std::string>());
    std::vector<std::vector<std::string>> groups(distinct.size());
    for (const auto& [leaf, g] : item.target.items()) groups[rng.below(groups.size())].push_back(leaf);
    for (const auto& g : groups)
      if (!g.empty()) out.push_back(g);
  } else if (task == "intent_to_layout" || task == "aspect_adapt") {
    for (const auto& e : item.input["elements"]) out.push_back({{"id", e["id"]}, {"box", box_json(random_box(l, rng))}});
  } else if (task == "partial_completion") {
    for (const auto& t : item.input["missing_types"]) out.push_back({{"type", t}, {"box", box_json(random_box(l, rng))}});
  } else if (task == "insertion") {
    const double w = item.input["element"]["width"], h = item.input["element"]["height"];
    return {{"box", box_json({rng.uniform(0, std::max(0.0, l.width - w)), rng.uniform(0, std::max(0.0, l.height - h)), w, h})}};
  }
  return out;
}

// ---- template tasks: one similarity per model

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

std::array<double, 4> pair_features(const Layout& a, const Layout& b) {
  return {1.0, font_jaccard(a, b), palette_jaccard(a, b), geometry_similarity(a, b)};
}

double similarity(const std::string& model, const Layout& a, const Layout& b, const TaskSettings& s,
                  nexp::Random& rng) {
  const bool same = !a.template_id.empty() && a.template_id == b.template_id;
  if (model == "oracle") return same ? 1.0 : 0.0;
  if (model == "chance") return rng.uniform();
  if (model == "noisy") return rng.bernoulli(s.noise) ? rng.uniform() : (same ? 1.0 : 0.0);  // a guess with probability noise
  // Ties (common when F is small) fall back to the other similarity, then to the item's own stream.
  const double tie = 1e-6 * rng.uniform();
  if (model == "font_jaccard") return font_jaccard(a, b) + 1e-3 * palette_jaccard(a, b) + tie;
  if (model == "palette_jaccard") return palette_jaccard(a, b) + 1e-3 * font_jaccard(a, b) + tie;
  if (model == "geometry_knn") return geometry_similarity(a, b) + tie;
  if (model == "logistic") {
    const auto f = pair_features(a, b);
    double z = 0;
    for (int k = 0; k < 4; ++k) z += s.logistic[k] * f[k];
    return sigmoid(z) + tie;
  }
  throw nexp::ConfigError(fmt::format("model {} gives no similarity of two layouts", model));
}

json template_answer(const std::string& model, const std::string& task, const Item& item, const Corpus& c,
                     const TaskSettings& s, nexp::Random& rng) {
  const auto& L = c.layouts;
  if (task == "sibling_matching") {
    const double v = similarity(model, L[item.layouts[0]], L[item.layouts[1]], s, rng);
    return {{"same", v >= s.threshold}, {"score", v}};
  }
  if (task == "retrieval") {
    std::vector<std::pair<double, std::string>> ranked;
    for (std::size_t k = 1; k < item.layouts.size(); ++k)
      ranked.push_back({-similarity(model, L[item.layouts[0]], L[item.layouts[k]], s, rng), L[item.layouts[k]].id});
    std::sort(ranked.begin(), ranked.end());
    json out = json::array();
    for (const auto& r : ranked) out.push_back(r.second);
    return out;
  }
  const std::size_t n = item.layouts.size();
  std::vector<std::vector<double>> d(n, std::vector<double>(n, 0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      d[i][j] = d[j][i] = 1 - similarity(model, L[item.layouts[i]], L[item.layouts[j]], s, rng);
  return average_linkage(d, item.input["clusters"].get<int>());
}

// ---- generation baselines

// The other layout whose leaves best cover `boxes` (canvas-normalised), by total matched IoU.
int nearest_layout(const Corpus& c, int self, const std::vector<Box>& boxes) {
  int best = -1;
  double best_v = -1;
  for (int j = 0; j < static_cast<int>(c.layouts.size()); ++j) {
    if (j == self) continue;
    std::vector<Box> other;
    for (int k : leaves(c.layouts[j])) other.push_back(normalised(c.layouts[j].components[k].box, c.layouts[j]));
    const auto m = matched_iou(other, boxes);
    const double v = std::accumulate(m.ious.begin(), m.ious.end(), 0.0) - 0.01 * std::abs(double(other.size()) - boxes.size());
    if (v > best_v) best_v = v, best = j;
  }
  return best;
}

std::vector<Box> given_boxes(const Item& item, bool normalise, const Layout& l) {
  std::vector<Box> out;
  for (const auto& g : item.input["given"]) {
    Box b;
    read_box(g["box"], b);
    out.push_back(normalise ? normalised(b, l) : b);
  }
  return out;
}

json grid_layout(const Item& item, const Layout& l) {
  const auto& el = item.input["elements"];
  const int n = static_cast<int>(el.size()), cols = n <= 4 ? 1 : 2, rows = (n + cols - 1) / cols;
  const double m = 0.06, gap = 0.02, cw = (1 - 2 * m - (cols - 1) * gap) / cols, rh = (1 - 2 * m - (rows - 1) * gap) / rows;
  json out = json::array();
  for (int k = 0; k < n; ++k) {
    const int r = k / cols, col = k % cols;
    out.push_back({{"id", el[k]["id"]},
                   {"box", box_json({(m + col * (cw + gap)) * l.width, (m + r * (rh + gap)) * l.height, cw * l.width, rh * l.height})}});
  }
  return out;
}

json nearest_sibling_intent(const Item& item, const Corpus& c, const Layout& l) {
  // The other layout of this canvas class whose roles overlap the intent's most.
  std::multiset<std::string> roles;
  for (const auto& e : item.input["elements"]) roles.insert(e["role"].get<std::string>());
  int best = -1;
  double best_v = -1;
  for (int j = 0; j < static_cast<int>(c.layouts.size()); ++j) {
    const Layout& o = c.layouts[j];
    if (j == item.layouts[0] || aspect_class(o.width, o.height) != aspect_class(l.width, l.height)) continue;
    std::multiset<std::string> other;
    for (int k : leaves(o)) other.insert(o.components[k].role);
    std::vector<std::string> common;
    std::set_intersection(roles.begin(), roles.end(), other.begin(), other.end(), std::back_inserter(common));
    const double v = static_cast<double>(common.size()) / (roles.size() + other.size() - common.size());
    if (v > best_v) best_v = v, best = j;
  }
  json grid = grid_layout(item, l), out = json::array();
  std::vector<char> used(best >= 0 ? c.layouts[best].components.size() : 0, 0);
  for (std::size_t e = 0; e < item.input["elements"].size(); ++e) {
    const auto& el = item.input["elements"][e];
    json box = grid[e]["box"];
    for (std::size_t k = 0; best >= 0 && k < used.size(); ++k) {
      const auto& oc = c.layouts[best].components[k];
      if (used[k] || oc.type == Kind::Group || oc.role != el["role"].get<std::string>()) continue;
      const Box nb = normalised(oc.box, c.layouts[best]);
      box = box_json({nb.x * l.width, nb.y * l.height, nb.w * l.width, nb.h * l.height});
      used[k] = 1;
      break;
    }
    out.push_back({{"id", el["id"]}, {"box", box}});
  }
  return out;
}

// Leaves of the nearest layout that no given box claims, of kind `kind`, as boxes of this canvas.
std::vector<Box> unclaimed_leaves(const Item& item, const Corpus& c, const Layout& l, Kind kind) {
  const auto given = given_boxes(item, true, l);
  const int j = nearest_layout(c, item.layouts[0], given);
  std::vector<Box> out;
  if (j < 0) return out;
  const Layout& o = c.layouts[j];
  std::vector<Box> other;
  const auto lv = leaves(o);
  for (int k : lv) other.push_back(normalised(o.components[k].box, o));
  const auto m = matched_iou(given, other);  // truth = the other layout's leaves
  for (std::size_t t = 0; t < lv.size(); ++t)
    if (m.truth_to_pred[t] < 0 && o.components[lv[t]].type == kind)
      out.push_back({other[t].x * l.width, other[t].y * l.height, other[t].w * l.width, other[t].h * l.height});
  std::sort(out.begin(), out.end(), [](const Box& a, const Box& b) { return a.area() > b.area(); });
  return out;
}

json completion_answer(const std::string& model, const std::string& task, const Item& item, const Corpus& c) {
  const Layout& l = c.layouts[item.layouts[0]];
  std::vector<Box> occupied = given_boxes(item, false, l);
  std::map<Kind, std::vector<Box>> copies;
  json out = json::array();
  const json types = task == "insertion" ? json::array({item.input["element"]["type"]}) : item.input["missing_types"];
  for (const auto& t : types) {
    Kind kind = Kind::Image;
    read_kind(t, kind);
    Box b;
    if (model == "nearest_sibling") {
      if (!copies.count(kind)) copies[kind] = unclaimed_leaves(item, c, l, kind);
      auto& pool = copies[kind];
      if (pool.empty()) continue;  // nothing left to copy: no answer for this element
      b = pool.front();
      pool.erase(pool.begin());
    } else {  // empty_rect: centred in the largest free rectangle, at a typical size of its kind
      const Box r = largest_empty_rectangle(occupied, l.width, l.height);
      double w = r.w * 0.8, h = r.h * 0.8;
      if (task == "insertion") w = std::min(r.w, item.input["element"]["width"].get<double>()),
                               h = std::min(r.h, item.input["element"]["height"].get<double>());
      b = {r.x + (r.w - w) / 2, r.y + (r.h - h) / 2, w, h};
    }
    if (task == "insertion") {
      const double w = item.input["element"]["width"], h = item.input["element"]["height"];
      b = {b.x + b.w / 2 - w / 2, b.y + b.h / 2 - h / 2, w, h};
      return {{"box", box_json(b)}};
    }
    occupied.push_back(b);
    out.push_back({{"type", t}, {"box", box_json(b)}});
  }
  if (task == "insertion") return {{"box", box_json({l.width / 4, l.height / 4, item.input["element"]["width"], item.input["element"]["height"]})}};
  return out;
}

// aspect_adapt baselines. Proportional rescale: x and widths by W'/W, y and heights by H'/H (exact when the
// aspect ratio does not change; elements stretch when it does). Anchor-preserving re-flow: each element
// keeps its own aspect ratio (scaled by min(W'/W, H'/H)) and the anchor it sits by in each axis (the
// nearer canvas edge, or its centre when its margins are within 2% of each other) at the same share of
// the canvas, so that elements aligned on a shared edge stay aligned; an element spanning >= 95% of an
// axis spans the new one; an element inside the canvas stays inside.
Box reflow_box(const Box& b, double w0, double h0, double w1, double h1) {
  const double s = std::min(w1 / w0, h1 / h0);
  auto axis = [&](double lo, double len, double side0, double side1, double& lo1, double& len1) {
    if (len >= 0.95 * side0) {
      lo1 = lo * side1 / side0, len1 = len * side1 / side0;
      return;
    }
    len1 = len * s;
    const double before = lo, after = side0 - lo - len;
    if (std::abs(before - after) <= 0.02 * side0) lo1 = (lo + len / 2) * side1 / side0 - len1 / 2;
    else if (before < after) lo1 = lo * side1 / side0;
    else lo1 = (lo + len) * side1 / side0 - len1;
    if (lo >= 0 && lo + len <= side0) lo1 = std::clamp(lo1, 0.0, std::max(0.0, side1 - len1)), len1 = std::min(len1, side1);
  };
  Box out;
  axis(b.x, b.w, w0, w1, out.x, out.w);
  axis(b.y, b.h, h0, h1, out.y, out.h);
  return out;
}

json adapt_answer(bool reflow, const Item& item) {
  const double w0 = item.input["source_width"], h0 = item.input["source_height"];
  const double w1 = item.input["width"], h1 = item.input["height"];
  json out = json::array();
  for (const auto& e : item.input["elements"]) {
    Box b;
    read_box(e["box"], b);
    const Box a = reflow ? reflow_box(b, w0, h0, w1, h1) : Box{b.x * w1 / w0, b.y * h1 / h0, b.w * w1 / w0, b.h * h1 / h0};
    out.push_back({{"id", e["id"]}, {"box", box_json(a)}});
  }
  return out;
}

// The style of the component with the same role in the most similar other layout (fonts and palette of
// the layout as shown, the hidden element's style left out); else another text of this layout.
json nearest_sibling_style(const Item& item, const Corpus& c) {
  const int self = item.layouts[0];
  Layout shown = c.layouts[self];
  Component& hidden = shown.components[item.components[0]];
  hidden.font_family.clear(), hidden.color.clear();
  int best = -1;
  double best_v = -1;
  for (int j = 0; j < static_cast<int>(c.layouts.size()); ++j) {
    if (j == self) continue;
    const double v = font_jaccard(shown, c.layouts[j]) + palette_jaccard(shown, c.layouts[j]);
    if (v > best_v) best_v = v, best = j;
  }
  const Component* from = nullptr;
  if (best >= 0)
    for (const auto& o : c.layouts[best].components)
      if (o.type == Kind::Text && o.role == hidden.role) from = &o;
  for (const auto& o : shown.components)
    if (!from && o.type == Kind::Text && !o.font_family.empty()) from = &o;
  if (!from) return {{"font", ""}, {"size", 0}, {"color", "#000000"}};
  return {{"font", from->font_family}, {"size", from->font_size}, {"color", from->color}};
}

}  // namespace

json answer(const std::string& model, const std::string& task, const Item& item, const Corpus& c,
            const TaskSettings& s, nexp::Random& rng) {
  if (!model_answers(model, task))
    throw nexp::ConfigError(fmt::format("model {} does not answer task {}", model, task));
  if (is_template_task(task)) return template_answer(model, task, item, c, s, rng);
  if (model == "rescale" || model == "reflow") return adapt_answer(model == "reflow", item);
  const Layout& truth = c.layouts[item.layouts[task == "aspect_adapt" ? 1 : 0]];  // aspect_adapt: the target
  if (model == "oracle") return perceived(task, item, truth, truth, 0.0, rng);
  if (model == "noisy") return perceived(task, item, truth, noisy_view(truth, s.noise, rng), s.noise, rng);
  if (model == "chance") return chance_answer(task, item, c, rng);
  if (model == "grid") return grid_layout(item, truth);
  if (model == "luminance_rank") return recolour(truth, item.input["palette"].get<std::vector<std::string>>(), false);
  if (model == "nearest_sibling" && task == "style_completion") return nearest_sibling_style(item, c);
  if (model == "nearest_sibling" && task == "intent_to_layout") return nearest_sibling_intent(item, c, truth);
  return completion_answer(model, task, item, c);
}

// ================================================================ the logistic baseline

std::array<double, 4> fit_logistic(const Corpus& c, int pairs, nexp::Random& rng) {
  TaskSettings s;
  s.items = pairs;
  const auto items = template_items("sibling_matching", c, s, rng);
  std::vector<std::array<double, 4>> x;
  std::vector<double> y;
  for (const auto& it : items) {
    x.push_back(pair_features(c.layouts[it.layouts[0]], c.layouts[it.layouts[1]]));
    y.push_back(it.target.get<bool>() ? 1.0 : 0.0);
  }
  std::array<double, 4> w{};
  for (int iter = 0; iter < 25; ++iter) {
    double h[4][5] = {};  // the Hessian with the gradient as a fifth column
    for (std::size_t n = 0; n < x.size(); ++n) {
      double z = 0;
      for (int k = 0; k < 4; ++k) z += w[k] * x[n][k];
      const double p = sigmoid(z), v = std::max(p * (1 - p), 1e-9);
      for (int a = 0; a < 4; ++a) {
        h[a][4] += (y[n] - p) * x[n][a];
        for (int b = 0; b < 4; ++b) h[a][b] += v * x[n][a] * x[n][b];
      }
    }
    for (int a = 0; a < 4; ++a) h[a][a] += 1e-3, h[a][4] -= 1e-3 * w[a];
    for (int col = 0; col < 4; ++col)  // Gaussian elimination; the Hessian is positive definite
      for (int r = 0; r < 4; ++r)
        if (r != col) {
          const double f = h[r][col] / h[col][col];
          for (int k = col; k < 5; ++k) h[r][k] -= f * h[col][k];
        }
    for (int a = 0; a < 4; ++a) w[a] += h[a][4] / h[a][a];
  }
  return w;
}

// ================================================================ scoring

namespace {

double mean_of(const std::vector<double>& v) { return v.empty() ? std::nan("") : nexp::stats::mean(v); }

// Layer order: the share of overlapping pairs whose order the answer gets right, and Kendall's tau on
// those pairs (2 x share - 1). An id the answer leaves out makes each of its pairs wrong.
std::pair<double, bool> layer_order_item(const Item& it, const json& a, const Layout& l) {
  std::map<std::string, int> pos;
  bool ok = a.is_array();
  if (ok)
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (!a[k].is_string()) ok = false;
      else pos.emplace(a[k].get<std::string>(), static_cast<int>(k));
    }
  const auto pairs = overlapping_pairs(l);
  int right = 0;
  for (const auto& [back, front] : pairs) {
    auto b = pos.find(l.components[back].id), f = pos.find(l.components[front].id);
    right += ok && b != pos.end() && f != pos.end() && b->second < f->second;
  }
  (void)it;
  return {pairs.empty() ? 0.0 : static_cast<double>(right) / pairs.size(), ok};
}

std::pair<std::vector<int>, std::vector<int>> grouping_labels(const Item& it, const json& a, bool& ok) {
  std::map<std::string, int> pred;
  ok = a.is_array();
  int g = 0;
  if (ok)
    for (const auto& group : a) {
      if (!group.is_array()) { ok = false; break; }
      for (const auto& id : group)
        if (id.is_string()) pred.emplace(id.get<std::string>(), g);
      ++g;
    }
  std::map<std::string, int> truth_ids;
  std::vector<int> t, p;
  for (const auto& [leaf, label] : it.target.items()) {
    t.push_back(truth_ids.emplace(label.get<std::string>(), static_cast<int>(truth_ids.size())).first->second);
    auto f = ok ? pred.find(leaf) : pred.end();
    p.push_back(f != pred.end() ? f->second : g++);  // unmentioned: a group of its own
  }
  return {t, p};
}

struct Boxes {
  std::vector<Box> boxes;
  std::vector<Kind> kinds;
  std::vector<std::string> ids;
  bool ok = true;
};

// A list of {"box": [..], "type": .., "id": ..} objects; entries that do not parse spoil the answer.
Boxes read_boxes(const json& a, bool need_type) {
  Boxes out;
  if (!a.is_array()) return out.ok = false, out;
  for (const auto& e : a) {
    Box b;
    Kind k = Kind::Image;
    if (!e.is_object() || !e.contains("box") || !read_box(e["box"], b) ||
        (need_type && (!e.contains("type") || !read_kind(e["type"], k)))) {
      out.ok = false;
      continue;
    }
    out.boxes.push_back(b), out.kinds.push_back(k);
    out.ids.push_back(e.contains("id") && e["id"].is_string() ? e["id"].get<std::string>() : "");
  }
  return out;
}

bool is_label(const std::string& task, const std::string& v) {
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), v) != std::end(list); };
  if (task == "alignment") return in(kAlignments);
  if (task == "overlap") return in(kOverlaps);
  if (task == "type") return v == "TEXT" || v == "IMAGE" || v == "GROUP";
  for (const auto& f : canvas_formats())
    if (v == f.name) return true;
  return false;
}

void score_understanding(const std::string& task, const std::vector<Item>& items, const std::vector<json>& answers,
                         const Corpus& c, const std::vector<std::size_t>& subset, Scored& out) {
  std::vector<double> extra;
  std::vector<DetectionImage> images;
  for (auto i : subset) {
    const Item& it = items[i];
    const json& a = answers[i];
    const Layout& l = c.layouts[it.layouts[0]];
    double v = 0;
    if (task == "count") {
      const bool ok = a.is_number();
      out.parse_failures += !ok;
      const double guess = ok ? a.get<double>() : 0.0;
      v = ok && guess == it.target.get<double>();
      extra.push_back(std::abs(guess - it.target.get<double>()));
    } else if (task == "detection") {
      DetectionImage img;
      for (const auto& t : it.target) {
        Box b;
        Kind k;
        read_box(t["box"], b), read_kind(t["type"], k);
        img.truth.push_back({b, k, 1});
      }
      const Boxes p = read_boxes(a, true);
      out.parse_failures += !p.ok;
      for (std::size_t k = 0; p.ok && k < p.boxes.size(); ++k) {
        const auto& e = a[k];
        img.pred.push_back({p.boxes[k], p.kinds[k], e.contains("score") && e["score"].is_number() ? e["score"].get<double>() : 1.0});
      }
      std::vector<Box> tb, pb;
      for (const auto& d : img.truth) tb.push_back(d.box);
      for (const auto& d : img.pred) pb.push_back(d.box);
      const auto m = matched_iou(pb, tb);
      v = tb.empty() ? 0 : std::accumulate(m.ious.begin(), m.ious.end(), 0.0) / tb.size();
      images.push_back(std::move(img));
    } else if (task == "layer_order") {
      const auto [share, ok] = layer_order_item(it, a, l);
      out.parse_failures += !ok;
      v = share;
    } else if (task == "grouping") {
      bool ok = true;
      const auto [t, p] = grouping_labels(it, a, ok);
      out.parse_failures += !ok;
      v = adjusted_rand_index(t, p);
      extra.push_back(normalized_mutual_information(t, p));
    } else {  // a class label
      const bool ok = a.is_string() && is_label(task, a.get<std::string>());
      out.parse_failures += !ok;
      v = ok && a == it.target;
    }
    out.item_scores.push_back(v);
  }
  const double m = mean_of(out.item_scores);
  if (task == "count") out.metrics = {{"accuracy", m}, {"mae", mean_of(extra)}};
  else if (task == "detection")
    out.metrics = {{"map50", coco_map(images, {0.5})}, {"map", coco_map(images, coco_thresholds())}};
  else if (task == "layer_order") out.metrics = {{"pair_accuracy", m}, {"kendall_tau", 2 * m - 1}};
  else if (task == "grouping") out.metrics = {{"ari", m}, {"nmi", mean_of(extra)}};
  else out.metrics = {{"accuracy", m}};
}

void score_generation(const std::string& task, const std::vector<Item>& items, const std::vector<json>& answers,
                      const Corpus& c, const std::vector<std::size_t>& subset, Scored& out) {
  std::vector<double> e1, e2;
  for (auto i : subset) {
    const Item& it = items[i];
    const Layout& l = c.layouts[it.layouts[0]];
    double v = 0;
    if (task == "insertion") {
      Box b, t;
      read_box(it.target["box"], t);
      const bool ok = answers[i].is_object() && answers[i].contains("box") && read_box(answers[i]["box"], b);
      out.parse_failures += !ok;
      v = ok ? iou(b, t) : 0.0;
      e1.push_back(ok ? std::hypot(b.x + b.w / 2 - t.x - t.w / 2, b.y + b.h / 2 - t.y - t.h / 2) / std::hypot(l.width, l.height) : 1.0);
      out.item_scores.push_back(v);
      continue;
    }
    const Boxes p = read_boxes(answers[i], task == "partial_completion");
    out.parse_failures += !p.ok;
    Boxes t = read_boxes(it.target, task == "partial_completion");
    if (task == "intent_to_layout") {
      std::map<std::string, Kind> kind;
      for (const auto& e : it.input["elements"]) read_kind(e["type"], kind[e["id"].get<std::string>()]);
      for (std::size_t k = 0; k < t.ids.size(); ++k) t.kinds[k] = kind[t.ids[k]];
      Boxes q = p;
      for (std::size_t k = 0; k < q.ids.size(); ++k) q.kinds[k] = kind.count(q.ids[k]) ? kind[q.ids[k]] : Kind::Group;
      v = max_iou(q.boxes, q.kinds, t.boxes, t.kinds);
      e1.push_back(alignment_score(p.boxes, l.width, l.height));
      e2.push_back(overlap_score(p.boxes));
    } else {  // partial_completion: Hungarian IoU over the m missing elements
      const auto m = matched_iou(p.boxes, t.boxes);
      v = std::accumulate(m.ious.begin(), m.ious.end(), 0.0) / t.boxes.size();
      const double hits = std::count_if(m.ious.begin(), m.ious.end(), [](double x) { return x >= 0.5; });
      e1.push_back(hits / t.boxes.size());
      e2.push_back(p.boxes.empty() ? 0.0 : 1 - hits / p.boxes.size());
    }
    out.item_scores.push_back(v);
  }
  const double m = mean_of(out.item_scores);
  if (task == "insertion") out.metrics = {{"iou", m}, {"center_error", mean_of(e1)}};
  else if (task == "intent_to_layout") out.metrics = {{"miou", m}, {"alignment", mean_of(e1)}, {"overlap", mean_of(e2)}};
  else out.metrics = {{"miou", m}, {"recall", mean_of(e1)}, {"hallucination", mean_of(e2)}};
}

// aspect_adapt, per item: mean IoU of each element with its target box (missing: 0); distortion, the mean
// |log| of the ratio of an element's aspect ratio to its source's; violations, the share of answered
// elements that leave the canvas (when the source had them inside) or overlap an element they were clear
// of in the source; alignment_kept, the share of the source's aligned pairs (left, centre, right, top,
// middle, bottom, as in the alignment task) still aligned the same way.
struct AdaptScore {
  double miou = 0, distortion = 0, violations = 0, kept = 0;
  bool has_answers = false, has_aligned = false;
};

AdaptScore adapt_item_score(const Item& it, const Boxes& p) {
  const double w0 = it.input["source_width"], h0 = it.input["source_height"];
  const double w1 = it.input["width"], h1 = it.input["height"];
  std::map<std::string, Box> answered;
  for (std::size_t k = 0; k < p.ids.size(); ++k) answered.emplace(p.ids[k], p.boxes[k]);
  std::vector<Box> src, pred;  // the answered elements
  AdaptScore r;
  for (std::size_t e = 0; e < it.target.size(); ++e) {
    Box truth, source;
    read_box(it.target[e]["box"], truth), read_box(it.input["elements"][e]["box"], source);
    auto a = answered.find(it.target[e]["id"].get<std::string>());
    if (a == answered.end()) continue;
    r.miou += iou(a->second, truth);
    src.push_back(source), pred.push_back(a->second);
  }
  r.miou /= static_cast<double>(it.target.size());
  r.has_answers = !pred.empty();
  int bad = 0, aligned = 0, kept = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    const Box &s = src[i], &q = pred[i];
    if (s.w > 0 && s.h > 0 && q.w > 0 && q.h > 0) r.distortion += std::abs(std::log((q.w / q.h) / (s.w / s.h)));
    const bool inside = s.x >= -0.01 * w0 && s.y >= -0.01 * h0 && s.right() <= 1.01 * w0 && s.bottom() <= 1.01 * h0;
    bool violated = inside && (q.x < -0.01 * w1 || q.y < -0.01 * h1 || q.right() > 1.01 * w1 || q.bottom() > 1.01 * h1);
    for (std::size_t j = 0; j < pred.size(); ++j) {
      if (j == i) continue;
      violated = violated || (intersection(s, src[j]) <= 0 &&
                              intersection(q, pred[j]) > 0.01 * std::min(q.area(), pred[j].area()));
      if (j < i) continue;
      const std::string rel = alignment_relation(s, src[j], w0, h0);
      if (rel == "none") continue;
      ++aligned;
      kept += alignment_relation(q, pred[j], w1, h1) == rel;
    }
    bad += violated;
  }
  if (r.has_answers) r.distortion /= pred.size(), r.violations = static_cast<double>(bad) / pred.size();
  r.has_aligned = aligned > 0;
  r.kept = aligned ? static_cast<double>(kept) / aligned : 0.0;
  return r;
}

void score_adapt(const std::vector<Item>& items, const std::vector<json>& answers,
                 const std::vector<std::size_t>& subset, Scored& out) {
  std::vector<double> distortion, violations, kept;
  for (auto i : subset) {
    const Boxes p = read_boxes(answers[i], false);
    out.parse_failures += !p.ok;
    const AdaptScore r = adapt_item_score(items[i], p);
    out.item_scores.push_back(r.miou);
    if (r.has_answers) distortion.push_back(r.distortion), violations.push_back(r.violations);
    if (r.has_answers && r.has_aligned) kept.push_back(r.kept);
  }
  out.metrics = {{"miou", mean_of(out.item_scores)}, {"distortion", distortion.empty() ? 0.0 : mean_of(distortion)},
                 {"violations", violations.empty() ? 1.0 : mean_of(violations)},
                 {"alignment_kept", kept.empty() ? 0.0 : mean_of(kept)}};
}

void score_template(const std::string& task, const std::vector<Item>& items, const std::vector<json>& answers,
                    const std::vector<std::size_t>& subset, Scored& out) {
  std::vector<double> scores, e1, e2, e3;
  std::vector<int> labels;
  double tp = 0, fp = 0, fn = 0;
  for (auto i : subset) {
    const Item& it = items[i];
    const json& a = answers[i];
    double v = 0;
    if (task == "sibling_matching") {
      const bool ok = a.is_object() && a.contains("same") && a["same"].is_boolean();
      out.parse_failures += !ok;
      const bool truth = it.target.get<bool>(), said = ok ? a["same"].get<bool>() : !truth;
      const double sc = ok && a.contains("score") && a["score"].is_number() ? a["score"].get<double>() : (said ? 1.0 : 0.0);
      tp += said && truth, fp += said && !truth, fn += !said && truth;
      v = said == truth;
      scores.push_back(sc), labels.push_back(truth);
    } else if (task == "retrieval") {
      const bool ok = a.is_array();
      out.parse_failures += !ok;
      int rank = 0;
      for (std::size_t k = 0; ok && k < a.size(); ++k)
        if (a[k] == it.target) { rank = static_cast<int>(k) + 1; break; }
      v = rank ? reciprocal_rank(rank) : 0.0;
      e1.push_back(ndcg_at(rank, 5)), e2.push_back(rank == 1), e3.push_back(rank >= 1 && rank <= 5);
    } else {  // clustering
      const std::vector<int> truth = it.target.get<std::vector<int>>();
      bool ok = a.is_array() && a.size() == truth.size();
      for (std::size_t k = 0; ok && k < a.size(); ++k) ok = a[k].is_number_integer();
      out.parse_failures += !ok;
      const std::vector<int> pred = ok ? a.get<std::vector<int>>() : std::vector<int>(truth.size(), 0);
      v = adjusted_rand_index(truth, pred);
      e1.push_back(normalized_mutual_information(truth, pred)), e2.push_back(adjusted_mutual_information(truth, pred));
    }
    out.item_scores.push_back(v);
  }
  const double m = mean_of(out.item_scores);
  if (task == "sibling_matching")
    out.metrics = {{"f1", tp > 0 ? 2 * tp / (2 * tp + fp + fn) : 0.0}, {"accuracy", m},
                   {"roc_auc", nexp::stats::roc_auc(scores, labels)}};
  else if (task == "retrieval")
    out.metrics = {{"mrr", m}, {"ndcg5", mean_of(e1)}, {"recall1", mean_of(e2)}, {"recall5", mean_of(e3)}};
  else  // V-measure with beta = 1 is NMI with the arithmetic mean
    out.metrics = {{"ari", m}, {"nmi", mean_of(e1)}, {"ami", mean_of(e2)}, {"v_measure", mean_of(e1)}};
}

}  // namespace

namespace {

bool is_hex_colour(const json& v) {
  if (!v.is_string()) return false;
  const auto s = v.get<std::string>();
  return s.size() == 7 && s[0] == '#' &&
         std::all_of(s.begin() + 1, s.end(), [](unsigned char ch) { return std::isxdigit(ch); });
}

bool near_any(const std::string& colour, const std::vector<std::string>& pal) {
  const Lab x = srgb_to_lab(hex_to_rgb(colour));
  for (const auto& p : pal)
    if (ciede2000(x, srgb_to_lab(hex_to_rgb(p))) < 10) return true;
  return false;
}

void score_style(const std::string& task, const std::vector<Item>& items, const std::vector<json>& answers,
                 const Corpus& c, const std::vector<std::size_t>& subset, Scored& out) {
  std::vector<double> e1, e2, e3;
  for (auto i : subset) {
    const Item& it = items[i];
    const json& a = answers[i];
    const Layout& l = c.layouts[it.layouts[0]];
    if (task == "style_completion") {
      const bool ok = a.is_object() && a.contains("font") && a["font"].is_string() && a.contains("size") &&
                      a["size"].is_number() && a.contains("color") && is_hex_colour(a["color"]);
      out.parse_failures += !ok;
      const auto& t = it.target;
      const bool font = ok && font_family_name(a["font"]) == font_family_name(t["font"]);
      const bool colour = ok && ciede2000(srgb_to_lab(hex_to_rgb(a["color"])), srgb_to_lab(hex_to_rgb(t["color"]))) < 10;
      out.item_scores.push_back(font);
      e1.push_back(colour);
      e2.push_back(ok ? std::abs(a["size"].get<double>() - t["size"].get<double>()) / std::max(1.0, t["size"].get<double>()) : 1.0);
      e3.push_back(ok && near_any(a["color"], palette(l)));
      continue;
    }
    const auto pal = it.input["palette"].get<std::vector<std::string>>();
    const bool ok = a.is_object() && a.contains("colors") && a["colors"].is_object();
    out.parse_failures += !ok;
    const json colors = ok ? a["colors"] : json::object();
    auto got = [&](const std::string& slot) { return colors.contains(slot) && is_hex_colour(colors[slot]) ? colors[slot].get<std::string>() : std::string(); };
    double adherent = 0, legible = 0, texts = 0;
    std::vector<std::string> used;
    const auto slots = colour_slots(l);
    for (const auto& [slot, colour] : slots) {
      const std::string v = got(slot);
      if (!v.empty() && near_any(v, pal)) ++adherent, used.push_back(v);
    }
    for (const auto& comp : l.components)
      if (comp.type == Kind::Text && !comp.color.empty()) {
        ++texts;
        const std::string v = got(comp.id), bg = got("background");
        legible += !v.empty() && !bg.empty() && wcag_contrast(v, bg) >= 4.5;
      }
    double covered = 0;
    for (const auto& p : pal) covered += near_any(p, used);
    out.item_scores.push_back(adherent / slots.size());
    e1.push_back(covered / pal.size());
    e2.push_back(texts ? legible / texts : 1.0);
  }
  const double m = mean_of(out.item_scores);
  if (task == "style_completion")
    out.metrics = {{"font_accuracy", m}, {"color_accuracy", mean_of(e1)}, {"size_error", mean_of(e2)},
                   {"palette_adherence", mean_of(e3)}};
  else
    out.metrics = {{"adherence", m}, {"coverage", mean_of(e1)}, {"contrast", mean_of(e2)}};
}

}  // namespace

Scored score(const std::string& task, const std::vector<Item>& items, const std::vector<json>& answers,
             const Corpus& c, const std::vector<std::size_t>& subset) {
  std::vector<std::size_t> all = subset;
  if (all.empty()) {
    all.resize(items.size());
    std::iota(all.begin(), all.end(), 0);
  }
  Scored out;
  if (is_template_task(task)) score_template(task, items, answers, all, out);
  else if (task == "style_completion" || task == "colour_transfer") score_style(task, items, answers, c, all, out);
  else if (task == "aspect_adapt") score_adapt(items, answers, all, out);
  else if (task == "intent_to_layout" || task == "partial_completion" || task == "insertion")
    score_generation(task, items, answers, c, all, out);
  else score_understanding(task, items, answers, c, all, out);
  return out;
}

}  // namespace design_bench
