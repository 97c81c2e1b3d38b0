#pragma once
// Procedural rooms: the stand-in for 3DSSG (whose scans need a signed licence). Plain C++, no torch.
//
// A scene is a set of axis-aligned objects (a floor, one or two walls, furniture, small objects on top
// of furniture, items hanging on walls) with 128 surface points each, and a directed graph over nearby
// pairs whose edges carry multi-label predicates with 3DSSG's names, computed from the boxes alone
// (predicates()). Taxonomy:
//   20 classes in 7 groups (a two-level hierarchy: chair, stool and sofa under seating, ...), each with
//   a size prior, a placement rule (floor, against a wall, on a wall, on a support) and allowed supports.
//   14 predicates: standing on, lying on, hanging on, attached to, left, right, front, behind, close by,
//   bigger than, smaller than, higher than, lower than, same as. An edge with none of them is "none".
// Rare predicates are rare by construction: lying on (pillows on beds and sofas), hanging on, same as.
#include <nexp/dataset.hpp>
#include <nexp/options.hpp>
#include <nexp/random.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hellinger_sg {

inline constexpr int kPoints = 128;  // points per object

// An axis-aligned box: centre and full extents (x: width, y: depth, z: height), metres.
struct Box {
  std::array<double, 3> center{}, size{};
  double lo(int a) const { return center[a] - size[a] / 2; }
  double hi(int a) const { return center[a] + size[a] / 2; }
  double volume() const { return size[0] * size[1] * size[2]; }
};
// Gap between two boxes (0 when they touch or overlap), and their 3D IoU.
double box_gap(const Box& a, const Box& b);
double box_iou(const Box& a, const Box& b);

enum class Placement { Floor, Wall, AgainstWall, OnWall, OnSupport };

struct ClassInfo {
  std::string name;
  int group = 0;
  std::array<double, 3> size{};  // prior mean extents
  Placement placement = Placement::Floor;
  std::vector<int> supports;     // OnSupport: classes it may stand or lie on (-1: the floor)
};

// The label sets: classes with their hierarchy, predicates.
struct Taxonomy {
  std::vector<ClassInfo> classes;
  std::vector<std::string> groups;
  std::vector<std::string> predicates;
  int num_classes() const { return static_cast<int>(classes.size()); }
  int num_predicates() const { return static_cast<int>(predicates.size()); }
  int num_groups() const { return static_cast<int>(groups.size()); }
  int find_class(const std::string& name) const;  // -1 when absent
};
const Taxonomy& rooms_taxonomy();

enum Predicate : int {
  kStandingOn, kLyingOn, kHangingOn, kAttachedTo, kLeft, kRight, kFront, kBehind,
  kCloseBy, kBigger, kSmaller, kHigher, kLower, kSameAs, kNumPredicates
};

// Contact tolerances of predicates(): the labels use the tight one; a generated layout (regressed boxes)
// is scored with a looser one (README: "what is scaled down").
struct Tolerance {
  double contact = 0.02;  // metres between a bottom and a top face, or a back face and a wall
  double close = 0.5;     // "close by": box gap below this
};

// The predicates that hold from subject (class cs, box a) to object (class co, box b), as a bit set
// (bit r = predicate r). Depends only on the boxes and on whether a class is floor, wall, bed or sofa.
std::uint32_t predicates(int cs, const Box& a, int co, const Box& b, const Tolerance& tol = {});

struct Scene {
  std::vector<int> classes;             // [N]
  std::vector<Box> boxes;               // [N]
  std::vector<float> points;            // [N * kPoints * 3], world coordinates
  std::vector<std::array<int, 2>> edges;  // (subject, object), both directions of each nearby pair
  std::vector<std::uint32_t> labels;    // [E] predicate bit sets used for training (noisy on train; R <= 32)
  std::vector<std::uint32_t> clean;     // [E] predicate bit sets from the geometry
  int room_type = 0;
  int nodes() const { return static_cast<int>(classes.size()); }
  int num_edges() const { return static_cast<int>(edges.size()); }
};

struct RoomsOptions {
  int scenes = 400;
  double test_share = 0.25;
  double label_noise = 0.0;
  int min_objects = 5;
  int max_objects = 10;
  double edge_radius = 1.0;
  double point_noise = 0.01;
  double occlusion = 0.5;
  static void declare(nexp::Options<RoomsOptions>& o) {
    o.add("scenes", &RoomsOptions::scenes, "scenes generated (train + test)").range(4, 100000);
    o.add("test_share", &RoomsOptions::test_share, "share of the scenes held out for testing").range(0.05, 0.9);
    o.add("label_noise", &RoomsOptions::label_noise,
          "training scenes only: probability that each true predicate label is replaced by a random other one, and "
          "that a 'none' edge gets a random one")
        .range(0, 0.9);
    o.add("min_objects", &RoomsOptions::min_objects, "furniture and small objects per scene, at least").range(2, 30);
    o.add("max_objects", &RoomsOptions::max_objects, "furniture and small objects per scene, at most").range(2, 30);
    o.add("edge_radius", &RoomsOptions::edge_radius, "an edge joins objects whose boxes are closer than this (m)")
        .range(0.1, 10);
    o.add("point_noise", &RoomsOptions::point_noise, "standard deviation of the point noise (m)").range(0, 0.2);
    o.add("occlusion", &RoomsOptions::occlusion, "probability that an object loses the points beyond a random plane")
        .range(0, 1);
  }
};

// k indices into n points: k distinct ones drawn uniformly when n >= k, else 0..n-1 in order followed by
// k - n uniform draws among them. Both data sets take an object's 128 points this way.
std::vector<std::size_t> sample_indices(std::size_t n, std::size_t k, nexp::Random& rng);

// Scene `index` of a data set: a function of (seed, index) alone.
Scene generate_scene(const RoomsOptions& o, nexp::Random& rng);
// Replaces labels with noisy ones (train scenes): each true predicate moves to a random other predicate
// with probability p; a "none" edge gets one random predicate with probability p.
void add_label_noise(Scene& scene, double p, nexp::Random& rng);

// What the methods read from any of the plugin's data sets: train and test scenes over one taxonomy.
// `geometric`: the predicates are predicates() of the boxes over the rooms taxonomy, which the downstream
// layout score needs (it checks relations in generated boxes).
class SceneGraphDataset : public nexp::Dataset {
 public:
  std::string name;
  Taxonomy taxonomy;
  std::vector<Scene> train, test;
  bool geometric = false;
};

class RoomsDataset : public SceneGraphDataset {
 public:
  RoomsOptions options;
  std::string describe() const override;
};

// The data set of one seed: scene k is a function of (seed, k) alone.
RoomsDataset build_rooms(const RoomsOptions& o, std::uint64_t seed);

std::shared_ptr<nexp::Dataset> make_rooms(const RoomsOptions& o, nexp::RunContext& ctx);

}  // namespace hellinger_sg
