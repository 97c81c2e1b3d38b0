#include "rooms.hpp"

#include <fmt/format.h>
#include <nexp/run_context.hpp>

#include <algorithm>
#include <cmath>

namespace hellinger_sg {

namespace {

constexpr double kWallThickness = 0.1, kWallHeight = 2.6;

// ---------------------------------------------------------------- the taxonomy

Taxonomy build_taxonomy() {
  Taxonomy t;
  t.groups = {"structure", "seating", "table", "storage", "bed", "wall item", "small object"};
  const int F = -1;
  t.classes = {
      {"floor", 0, {4, 4, 0.05}, Placement::Floor, {}},
      {"wall", 0, {4, kWallThickness, kWallHeight}, Placement::Wall, {}},
      {"chair", 1, {0.5, 0.5, 0.9}, Placement::Floor, {}},
      {"stool", 1, {0.4, 0.4, 0.5}, Placement::Floor, {}},
      {"sofa", 1, {2.0, 0.9, 0.85}, Placement::AgainstWall, {}},
      {"table", 2, {1.4, 0.8, 0.75}, Placement::Floor, {}},
      {"desk", 2, {1.2, 0.6, 0.75}, Placement::AgainstWall, {}},
      {"nightstand", 2, {0.45, 0.4, 0.55}, Placement::Floor, {}},
      {"cabinet", 3, {0.8, 0.45, 0.9}, Placement::AgainstWall, {}},
      {"shelf", 3, {0.9, 0.35, 1.8}, Placement::AgainstWall, {}},
      {"wardrobe", 3, {1.2, 0.6, 2.0}, Placement::AgainstWall, {}},
      {"bed", 4, {1.6, 2.0, 0.5}, Placement::AgainstWall, {}},
      {"tv", 5, {1.1, 0.08, 0.65}, Placement::OnWall, {}},
      {"picture", 5, {0.6, 0.04, 0.5}, Placement::OnWall, {}},
      {"mirror", 5, {0.5, 0.04, 0.9}, Placement::OnWall, {}},
      {"curtain", 5, {1.4, 0.1, 2.2}, Placement::OnWall, {}},
      {"lamp", 6, {0.3, 0.3, 0.5}, Placement::OnSupport, {5, 6, 7, 8}},
      {"box", 6, {0.35, 0.3, 0.25}, Placement::OnSupport, {F, 5, 6, 8, 9}},
      {"plant", 6, {0.35, 0.35, 0.6}, Placement::OnSupport, {F, 5, 8}},
      {"pillow", 6, {0.5, 0.35, 0.15}, Placement::OnSupport, {11, 4}},
  };
  t.predicates = {"standing on", "lying on",    "hanging on", "attached to", "left",        "right",       "front",
                  "behind",      "close by",    "bigger than", "smaller than", "higher than", "lower than", "same as"};
  return t;
}

enum Class : int { kFloor = 0, kWall = 1, kSofa = 4, kBed = 11, kCurtain = 15 };

bool structural(int c) { return c == kFloor || c == kWall; }

// Three room types give classes a co-occurrence structure (what the `cooccurrence` context reads).
const std::vector<std::vector<int>>& room_palettes() {
  static const std::vector<std::vector<int>> p = {
      {11, 7, 7, 10, 16, 19, 19, 13, 14, 15, 2, 17, 18},     // bedroom
      {4, 5, 2, 2, 3, 12, 18, 9, 13, 15, 19, 17, 16, 8},      // living room
      {6, 2, 9, 8, 16, 17, 17, 13, 18, 3, 5, 2, 10},          // office
  };
  return p;
}

double overlap_1d(double alo, double ahi, double blo, double bhi) {
  return std::max(0.0, std::min(ahi, bhi) - std::max(alo, blo));
}

// ---------------------------------------------------------------- shapes and points

// A shape is a union of parts, each a box in the unit cube of the object's extents.
struct Part {
  std::array<double, 3> lo, hi;
};

std::vector<Part> legs(double top) {
  return {{{0, 0, 0}, {0.08, 0.08, top}}, {{0.92, 0, 0}, {1, 0.08, top}},
          {{0, 0.92, 0}, {0.08, 1, top}}, {{0.92, 0.92, 0}, {1, 1, top}}};
}

std::vector<Part> shape_of(const std::string& name) {
  auto with_legs = [](std::vector<Part> parts, double top) {
    for (const auto& l : legs(top)) parts.push_back(l);
    return parts;
  };
  if (name == "table" || name == "desk") return with_legs({{{0, 0, 0.9}, {1, 1, 1}}}, 0.9);
  if (name == "chair") return with_legs({{{0, 0, 0.45}, {1, 1, 0.55}}, {{0, 0.88, 0.55}, {1, 1, 1}}}, 0.45);
  if (name == "stool") return {{{0, 0, 0.85}, {1, 1, 1}}, {{0.4, 0.4, 0}, {0.6, 0.6, 0.85}}};
  if (name == "sofa")
    return {{{0, 0, 0}, {1, 1, 0.5}}, {{0, 0.75, 0.5}, {1, 1, 1}}, {{0, 0, 0.5}, {0.1, 0.75, 0.7}},
            {{0.9, 0, 0.5}, {1, 0.75, 0.7}}};
  if (name == "shelf")
    return {{{0, 0, 0}, {0.05, 1, 1}}, {{0.95, 0, 0}, {1, 1, 1}}, {{0, 0.9, 0}, {1, 1, 1}},
            {{0, 0, 0.0}, {1, 1, 0.04}}, {{0, 0, 0.33}, {1, 1, 0.37}}, {{0, 0, 0.66}, {1, 1, 0.7}},
            {{0, 0, 0.96}, {1, 1, 1}}};
  if (name == "bed") return {{{0, 0, 0}, {1, 1, 0.6}}, {{0, 0.94, 0}, {1, 1, 1}}};
  if (name == "lamp") return {{{0.3, 0.3, 0}, {0.7, 0.7, 0.08}}, {{0.45, 0.45, 0.08}, {0.55, 0.55, 0.6}}, {{0, 0, 0.6}, {1, 1, 1}}};
  if (name == "plant") return {{{0.25, 0.25, 0}, {0.75, 0.75, 0.35}}, {{0, 0, 0.35}, {1, 1, 1}}};
  if (name == "nightstand") return with_legs({{{0, 0, 0.15}, {1, 1, 1}}}, 0.15);
  return {{{0, 0, 0}, {1, 1, 1}}};
}

// 128 points on the parts' surfaces (area-weighted), Gaussian noise, and with probability `occlusion`
// the points beyond a random axis-aligned plane removed (then refilled by resampling the survivors).
void sample_points(const Box& box, const std::vector<Part>& parts, const RoomsOptions& o, nexp::Random& rng,
                   float* out) {
  struct Face {
    std::array<double, 3> lo, hi;
    double area;
  };
  std::vector<Face> faces;
  double total = 0;
  for (const auto& p : parts) {
    std::array<double, 3> lo, hi;
    for (int a = 0; a < 3; ++a)
      lo[a] = box.lo(a) + p.lo[a] * box.size[a], hi[a] = box.lo(a) + p.hi[a] * box.size[a];
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        Face f{lo, hi, 1.0};
        f.lo[a] = f.hi[a] = side ? hi[a] : lo[a];
        for (int b = 0; b < 3; ++b)
          if (b != a) f.area *= hi[b] - lo[b];
        total += f.area;
        faces.push_back(f);
      }
  }
  std::vector<std::array<double, 3>> pts;
  for (int k = 0; k < kPoints; ++k) {
    double u = rng.uniform() * total;
    std::size_t f = 0;
    while (f + 1 < faces.size() && u > faces[f].area) u -= faces[f++].area;
    std::array<double, 3> q;
    for (int a = 0; a < 3; ++a) q[a] = rng.uniform(faces[f].lo[a], faces[f].hi[a]) + o.point_noise * rng.normal();
    pts.push_back(q);
  }
  if (rng.bernoulli(o.occlusion)) {
    const int axis = static_cast<int>(rng.below(3));
    const bool upper = rng.bernoulli(0.5);
    const double cut = upper ? box.hi(axis) - rng.uniform(0.2, 0.4) * box.size[axis]
                             : box.lo(axis) + rng.uniform(0.2, 0.4) * box.size[axis];
    std::vector<std::array<double, 3>> kept;
    for (const auto& q : pts)
      if (upper ? q[axis] <= cut : q[axis] >= cut) kept.push_back(q);
    if (kept.size() >= 16 && kept.size() < pts.size()) {  // (all kept: pts is already kept)
      const auto pick = sample_indices(kept.size(), kPoints, rng);
      for (int k = 0; k < kPoints; ++k) pts[k] = kept[pick[k]];
    }
  }
  for (int k = 0; k < kPoints; ++k)
    for (int a = 0; a < 3; ++a) out[k * 3 + a] = static_cast<float>(pts[k][a]);
}

// ---------------------------------------------------------------- layout

struct Room {
  double width, depth;
  std::vector<int> classes;
  std::vector<Box> boxes;
  bool free(const Box& b, std::size_t from) const {
    for (std::size_t i = from; i < boxes.size(); ++i)
      if (box_gap(b, boxes[i]) < 0.05 && !structural(classes[i])) return false;
    return b.lo(0) >= 0 && b.hi(0) <= width && b.lo(1) >= 0 && b.hi(1) <= depth;
  }
};

std::array<double, 3> draw_size(const ClassInfo& c, nexp::Random& rng) {
  std::array<double, 3> s;
  for (int a = 0; a < 3; ++a) s[a] = c.size[a] * std::exp(0.12 * rng.normal());
  return s;
}

// Walls: index 2 runs along the back (y = depth), index 3 (when present) along the left (x = 0).
bool place_floor_object(Room& room, int c, bool against_wall, nexp::Random& rng) {
  const auto& info = rooms_taxonomy().classes[c];
  const bool left_wall = room.classes.size() > 3 && room.classes[3] == kWall && rng.bernoulli(0.4);
  for (int attempt = 0; attempt < 40; ++attempt) {
    Box b;
    b.size = draw_size(info, rng);
    if (against_wall && left_wall) std::swap(b.size[0], b.size[1]);
    b.center = {rng.uniform(b.size[0] / 2, room.width - b.size[0] / 2),
                rng.uniform(b.size[1] / 2, room.depth - b.size[1] / 2), b.size[2] / 2};
    if (against_wall && left_wall) b.center[0] = b.size[0] / 2;
    else if (against_wall) b.center[1] = room.depth - b.size[1] / 2;
    if (room.free(b, 2)) {
      room.classes.push_back(c), room.boxes.push_back(b);
      return true;
    }
  }
  return false;
}

bool place_on_wall(Room& room, int c, nexp::Random& rng) {
  const auto& info = rooms_taxonomy().classes[c];
  for (int attempt = 0; attempt < 40; ++attempt) {
    Box b;
    b.size = draw_size(info, rng);
    const double bottom = c == kCurtain ? rng.uniform(0.1, 0.2) : rng.uniform(0.9, 1.5);
    b.size[2] = std::min(b.size[2], kWallHeight - bottom - 0.05);
    b.center = {rng.uniform(b.size[0] / 2, room.width - b.size[0] / 2), room.depth - b.size[1] / 2,
                bottom + b.size[2] / 2};
    bool clear = true;  // wall items do not overlap each other or tall furniture
    for (std::size_t i = 2; i < room.boxes.size(); ++i)
      if (box_gap(b, room.boxes[i]) < 0.05) clear = false;
    if (clear) {
      room.classes.push_back(c), room.boxes.push_back(b);
      return true;
    }
  }
  return false;
}

bool place_on_support(Room& room, int c, nexp::Random& rng) {
  const auto& info = rooms_taxonomy().classes[c];
  std::vector<int> candidates;
  for (std::size_t i = 0; i < room.classes.size(); ++i)
    for (int s : info.supports)
      if ((s == -1 && room.classes[i] == kFloor) || s == room.classes[i]) candidates.push_back(static_cast<int>(i));
  for (int attempt = 0; attempt < 40 && !candidates.empty(); ++attempt) {
    const int s = candidates[rng.below(candidates.size())];
    const Box& sup = room.boxes[s];
    Box b;
    b.size = draw_size(info, rng);
    if (b.size[0] > sup.size[0] || b.size[1] > sup.size[1]) continue;
    b.center = {rng.uniform(sup.lo(0) + b.size[0] / 2, sup.hi(0) - b.size[0] / 2),
                rng.uniform(sup.lo(1) + b.size[1] / 2, sup.hi(1) - b.size[1] / 2), sup.hi(2) + b.size[2] / 2};
    bool clear = room.classes[s] != kFloor || room.free(b, 2);
    for (std::size_t i = 2; clear && i < room.boxes.size(); ++i)
      if (static_cast<int>(i) != s && box_gap(b, room.boxes[i]) < 0.01) clear = false;
    if (clear) {
      room.classes.push_back(c), room.boxes.push_back(b);
      return true;
    }
  }
  return false;
}

Room lay_out(const RoomsOptions& o, int type, nexp::Random& rng) {
  Room room;
  room.width = rng.uniform(3.5, 6.0), room.depth = rng.uniform(3.0, 5.0);
  room.classes = {kFloor, kWall};
  room.boxes.push_back({{room.width / 2, room.depth / 2, -0.025}, {room.width, room.depth, 0.05}});
  room.boxes.push_back({{room.width / 2, room.depth + kWallThickness / 2, kWallHeight / 2},
                        {room.width, kWallThickness, kWallHeight}});
  if (rng.bernoulli(0.5)) {
    room.classes.push_back(kWall);
    room.boxes.push_back({{-kWallThickness / 2, room.depth / 2, kWallHeight / 2}, {kWallThickness, room.depth, kWallHeight}});
  }
  const auto& palette = room_palettes()[type];
  const int wanted = o.min_objects + static_cast<int>(rng.below(o.max_objects - o.min_objects + 1));
  // Furniture first (from the front of the palette: the room's anchor), then the rest in random order.
  std::vector<int> order(palette.begin(), palette.end());
  for (std::size_t i = order.size() - 1; i > 1; --i) std::swap(order[i], order[1 + rng.below(i)]);
  std::stable_partition(order.begin(), order.end(),
                        [](int c) { return rooms_taxonomy().classes[c].placement != Placement::OnSupport; });
  int placed = 0;
  for (std::size_t k = 0; k < order.size() * 2 && placed < wanted; ++k) {
    const int c = order[k % order.size()];
    const auto p = rooms_taxonomy().classes[c].placement;
    const bool ok = p == Placement::OnWall      ? place_on_wall(room, c, rng)
                    : p == Placement::OnSupport ? place_on_support(room, c, rng)
                                                : place_floor_object(room, c, p == Placement::AgainstWall, rng);
    placed += ok;
  }
  return room;
}

}  // namespace

// ---------------------------------------------------------------- public functions

const Taxonomy& rooms_taxonomy() {
  static const Taxonomy t = build_taxonomy();
  return t;
}

int Taxonomy::find_class(const std::string& n) const {
  for (int c = 0; c < num_classes(); ++c)
    if (classes[c].name == n) return c;
  return -1;
}

std::vector<std::size_t> sample_indices(std::size_t n, std::size_t k, nexp::Random& rng) {
  std::vector<std::size_t> out;
  if (n == 0) return out;
  if (n >= k) {  // partial Fisher-Yates over 0..n-1
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    for (std::size_t i = 0; i < k; ++i) std::swap(all[i], all[i + rng.below(n - i)]);
    all.resize(k);
    return all;
  }
  for (std::size_t i = 0; i < k; ++i) out.push_back(i < n ? i : rng.below(n));
  return out;
}

double box_gap(const Box& a, const Box& b) {
  double s = 0;
  for (int k = 0; k < 3; ++k) {
    const double g = std::max({0.0, a.lo(k) - b.hi(k), b.lo(k) - a.hi(k)});
    s += g * g;
  }
  return std::sqrt(s);
}

double box_iou(const Box& a, const Box& b) {
  double inter = 1;
  for (int k = 0; k < 3; ++k) inter *= overlap_1d(a.lo(k), a.hi(k), b.lo(k), b.hi(k));
  const double uni = a.volume() + b.volume() - inter;
  return uni > 0 ? inter / uni : 0.0;
}

std::uint32_t predicates(int cs, const Box& a, int co, const Box& b, const Tolerance& tol) {
  std::uint32_t r = 0;
  auto set = [&r](int p) { r |= 1u << p; };
  const double foot = overlap_1d(a.lo(0), a.hi(0), b.lo(0), b.hi(0)) * overlap_1d(a.lo(1), a.hi(1), b.lo(1), b.hi(1));
  const double a_foot = a.size[0] * a.size[1];
  // Support: a's bottom on b's top, most of a's footprint over b.
  if (co != kWall && cs != kFloor && cs != kWall && std::abs(a.lo(2) - b.hi(2)) <= tol.contact &&
      foot >= 0.5 * a_foot)
    set(co == kBed || co == kSofa ? kLyingOn : kStandingOn);
  if (co == kWall && !structural(cs)) {
    // Flush with the wall's room-side face along its thin axis, overlapping it along the other.
    const int thin = b.size[0] < b.size[1] ? 0 : 1, along = 1 - thin;
    const double face = b.center[thin] > a.center[thin] ? b.lo(thin) : b.hi(thin);
    const double back = b.center[thin] > a.center[thin] ? a.hi(thin) : a.lo(thin);
    if (std::abs(face - back) <= tol.contact && overlap_1d(a.lo(along), a.hi(along), b.lo(along), b.hi(along)) > 0)
      set(a.lo(2) > 0.05 ? kHangingOn : kAttachedTo);
  }
  if (structural(cs) || structural(co)) return r;
  const double gap = box_gap(a, b);
  if (gap > 1.0) return r;
  // View-dependent relations in the room frame (viewer at y < 0 looking along +y): the dominant axis.
  const double dx = b.center[0] - a.center[0], dy = b.center[1] - a.center[1];
  if (std::abs(dx) >= std::abs(dy) && std::abs(dx) > 0.2) set(dx > 0 ? kLeft : kRight);
  if (std::abs(dy) > std::abs(dx) && std::abs(dy) > 0.2) set(dy > 0 ? kFront : kBehind);
  if (gap < tol.close) set(kCloseBy);
  if (a.volume() > 2 * b.volume()) set(kBigger);
  if (b.volume() > 2 * a.volume()) set(kSmaller);
  if (a.lo(2) > b.hi(2) - tol.contact) set(kHigher);
  if (b.lo(2) > a.hi(2) - tol.contact) set(kLower);
  if (cs == co) set(kSameAs);
  return r;
}

Scene generate_scene(const RoomsOptions& o, nexp::Random& rng) {
  Scene s;
  s.room_type = static_cast<int>(rng.below(room_palettes().size()));
  Room room = lay_out(o, s.room_type, rng);
  s.classes = room.classes, s.boxes = room.boxes;
  const int n = s.nodes();
  s.points.resize(static_cast<std::size_t>(n) * kPoints * 3);
  for (int i = 0; i < n; ++i)
    sample_points(s.boxes[i], shape_of(rooms_taxonomy().classes[s.classes[i]].name), o, rng,
                  s.points.data() + static_cast<std::size_t>(i) * kPoints * 3);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j || (structural(s.classes[i]) && structural(s.classes[j]))) continue;
      if (box_gap(s.boxes[i], s.boxes[j]) > o.edge_radius) continue;
      s.edges.push_back({i, j});
      s.clean.push_back(predicates(s.classes[i], s.boxes[i], s.classes[j], s.boxes[j]));
    }
  s.labels = s.clean;
  return s;
}

void add_label_noise(Scene& scene, double p, nexp::Random& rng) {
  for (auto& bits : scene.labels) {
    std::uint32_t out = 0;
    if (bits == 0 && rng.bernoulli(p)) out = 1u << rng.below(kNumPredicates);
    for (int r = 0; r < kNumPredicates; ++r) {
      if (!(bits >> r & 1u)) continue;
      if (!rng.bernoulli(p)) {
        out |= 1u << r;
        continue;
      }
      const int other = static_cast<int>(rng.below(kNumPredicates - 1));
      out |= 1u << (other >= r ? other + 1 : other);
    }
    bits = out;
  }
}

std::string RoomsDataset::describe() const {
  std::size_t nodes = 0, edges = 0;
  for (const auto& s : train) nodes += s.nodes(), edges += s.num_edges();
  return fmt::format("{}: {} train / {} test scenes, {} train objects, {} train edges, label noise {}", name,
                     train.size(), test.size(), nodes, edges, options.label_noise);
}

RoomsDataset build_rooms(const RoomsOptions& o, std::uint64_t seed) {
  if (o.min_objects > o.max_objects)
    throw nexp::ConfigError(fmt::format("dataset.min_objects = {} exceeds dataset.max_objects = {}; set min_objects "
                                        "<= max_objects", o.min_objects, o.max_objects));
  RoomsDataset d;
  d.name = "hellinger_sg.rooms";
  d.taxonomy = rooms_taxonomy();
  d.geometric = true;
  d.options = o;
  const int n_test = std::max(1, static_cast<int>(std::lround(o.scenes * o.test_share)));
  for (int k = 0; k < o.scenes; ++k) {
    // Scene k depends on (seed, k) only, so every loss of a comparison sees the same scenes.
    nexp::Random rng = nexp::Random::stream(seed, "scene", static_cast<std::uint64_t>(k));
    Scene s = generate_scene(o, rng);
    if (k < o.scenes - n_test) {
      nexp::Random noise = nexp::Random::stream(seed, "label_noise", static_cast<std::uint64_t>(k));
      add_label_noise(s, o.label_noise, noise);
      d.train.push_back(std::move(s));
    } else {
      d.test.push_back(std::move(s));
    }
  }
  return d;
}

std::shared_ptr<nexp::Dataset> make_rooms(const RoomsOptions& o, nexp::RunContext& ctx) {
  return std::make_shared<RoomsDataset>(build_rooms(o, ctx.seed()));
}

}  // namespace hellinger_sg
