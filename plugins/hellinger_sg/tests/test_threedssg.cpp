// The 3DSSG reader on a hand-written fixture in the release's layout (tests/data/3dssg_tiny: two scans
// of the train and validation lists, one scan in neither, an ASCII instance mesh per scan): counts,
// classes, multi-label predicates, point shapes and boxes for both label sets, and its errors.
#include <gtest/gtest.h>

#include <nexp/error.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "../threedssg.hpp"

using namespace hellinger_sg;

namespace {

// The tests run in the repository root (CTest sets the working directory).
const std::filesystem::path kTiny = "plugins/hellinger_sg/tests/data/3dssg_tiny";

ThreeDssgDataset read(int label_set) {
  ThreeDssgOptions o;
  o.root = kTiny.string();
  o.label_set = label_set;
  return read_3dssg(o, 7);
}

std::string class_name(const ThreeDssgDataset& d, const Scene& s, int i) {
  return d.taxonomy.classes[s.classes[i]].name;
}

// The predicate bits of edge (i, j) of a scene with an edge for every ordered pair.
std::uint32_t bits(const Scene& s, int i, int j) {
  for (int k = 0; k < s.num_edges(); ++k)
    if (s.edges[k][0] == i && s.edges[k][1] == j) return s.clean[k];
  ADD_FAILURE() << "no edge " << i << " -> " << j;
  return 0;
}

std::uint32_t bit(const Taxonomy& t, const std::string& predicate) {
  for (int r = 0; r < t.num_predicates(); ++r)
    if (t.predicates[r] == predicate) return 1u << r;
  ADD_FAILURE() << "no predicate " << predicate;
  return 0;
}

// Every point of every object lies in its box; the box is that of the instance's vertices.
void expect_points_in_boxes(const Scene& s) {
  ASSERT_EQ(s.points.size(), static_cast<std::size_t>(s.nodes()) * kPoints * 3);
  for (int i = 0; i < s.nodes(); ++i)
    for (int k = 0; k < kPoints; ++k)
      for (int a = 0; a < 3; ++a) {
        const float x = s.points[(static_cast<std::size_t>(i) * kPoints + k) * 3 + a];
        EXPECT_GE(x, s.boxes[i].lo(a) - 1e-5);
        EXPECT_LE(x, s.boxes[i].hi(a) + 1e-5);
      }
}

}  // namespace

TEST(hellinger_sg_3dssg, ReadsTheReleaseLabelSet) {
  const ThreeDssgDataset d = read(160);
  EXPECT_EQ(d.taxonomy.num_classes(), 8);
  ASSERT_EQ(d.taxonomy.num_predicates(), 26);
  EXPECT_EQ(d.taxonomy.predicates[14], "standing on");  // id 15 in relationships.txt ("none" is 0)
  // Train: the two sub-graphs of scan a (the plant is outside the classes); scan c is in neither list.
  ASSERT_EQ(d.train.size(), 2u);
  ASSERT_EQ(d.test.size(), 1u);
  EXPECT_EQ(d.dropped_objects, 1u);
  EXPECT_EQ(d.dropped_scenes, 0u);
  const Scene& a = d.train[0];
  ASSERT_EQ(a.nodes(), 4);
  EXPECT_EQ(class_name(d, a, 0), "floor");
  EXPECT_EQ(class_name(d, a, 1), "wall");
  EXPECT_EQ(class_name(d, a, 2), "chair");
  EXPECT_EQ(class_name(d, a, 3), "table");
  EXPECT_EQ(a.num_edges(), 12);  // every ordered pair
  const Taxonomy& t = d.taxonomy;
  EXPECT_EQ(bits(a, 2, 0), bit(t, "standing on"));
  EXPECT_EQ(bits(a, 3, 0), bit(t, "standing on"));
  EXPECT_EQ(bits(a, 2, 3), bit(t, "left") | bit(t, "close by"));
  EXPECT_EQ(bits(a, 3, 2), bit(t, "right") | bit(t, "close by"));
  EXPECT_EQ(bits(a, 0, 1), 0u);
  EXPECT_EQ(a.labels, a.clean);
  const Scene& a1 = d.train[1];  // the second sub-graph of the same scan
  ASSERT_EQ(a1.nodes(), 2);
  EXPECT_EQ(bits(a1, 0, 1), bit(t, "smaller than"));
  EXPECT_EQ(bits(a1, 1, 0), bit(t, "bigger than"));
  const Scene& b = d.test[0];
  ASSERT_EQ(b.nodes(), 3);
  EXPECT_EQ(class_name(d, b, 2), "pillow");
  EXPECT_EQ(bits(b, 2, 1), bit(t, "lying on") | bit(t, "smaller than") | bit(t, "close by"));
  EXPECT_EQ(bits(b, 1, 2), bit(t, "bigger than"));
  // Boxes of the vertices: the table spans [1.5, 2.7] x [0.5, 1.3] x [0, 0.75].
  EXPECT_NEAR(a.boxes[3].lo(0), 1.5, 1e-6);
  EXPECT_NEAR(a.boxes[3].hi(0), 2.7, 1e-6);
  EXPECT_NEAR(a.boxes[3].hi(1), 1.3, 1e-6);
  EXPECT_NEAR(a.boxes[3].size[2], 0.75, 1e-6);
  for (const Scene* s : {&a, &a1, &b}) expect_points_in_boxes(*s);
}

TEST(hellinger_sg_3dssg, SamplesWithoutReplacementFromLargeInstances) {
  const ThreeDssgDataset d = read(160);
  const Scene& a = d.train[0];
  // The table has 150 distinct vertices: its 128 points are distinct ones.
  std::set<std::array<float, 3>> seen;
  for (int k = 0; k < kPoints; ++k) {
    const float* p = a.points.data() + (3 * static_cast<std::size_t>(kPoints) + k) * 3;
    seen.insert({p[0], p[1], p[2]});
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kPoints));
  // The chair has 6 vertices: all six come first, in file order, then repeats of them.
  EXPECT_FLOAT_EQ(a.points[(2 * kPoints + 0) * 3 + 0], 0.5f);
  EXPECT_FLOAT_EQ(a.points[(2 * kPoints + 5) * 3 + 2], 0.9f);
  // Another seed draws other points from the same vertices.
  ThreeDssgOptions o;
  o.root = kTiny.string();
  EXPECT_NE(read_3dssg(o, 8).train[0].points, a.points);
  EXPECT_EQ(read_3dssg(o, 7).train[0].points, a.points);
}

TEST(hellinger_sg_3dssg, ReadsSgfnsLabelSetFromTheMeshLabels) {
  const ThreeDssgDataset d = read(20);
  EXPECT_EQ(d.taxonomy.num_classes(), 20);
  ASSERT_EQ(d.taxonomy.num_predicates(), 8);
  ASSERT_EQ(d.train.size(), 2u);
  ASSERT_EQ(d.test.size(), 1u);
  EXPECT_EQ(d.dropped_objects, 2u);  // the plant (NYU40 otherprop) and the pillow (NYU40 pillow)
  const Scene& a = d.train[0];
  ASSERT_EQ(a.nodes(), 4);
  EXPECT_EQ(class_name(d, a, 0), "floor");
  EXPECT_EQ(class_name(d, a, 1), "wall");
  EXPECT_EQ(class_name(d, a, 3), "table");
  const Taxonomy& t = d.taxonomy;
  EXPECT_EQ(bits(a, 2, 0), bit(t, "standing on"));
  EXPECT_EQ(bits(a, 2, 3), 0u);  // left, close by: not among the 8
  const Scene& b = d.test[0];
  ASSERT_EQ(b.nodes(), 2);
  EXPECT_EQ(class_name(d, b, 1), "sofa");
  EXPECT_EQ(bits(b, 1, 0), bit(t, "standing on"));
}

TEST(hellinger_sg_3dssg, MeshLabelIsTheMajorityOfTheInstanceVertices) {
  const auto mesh = read_instance_ply(kTiny / "3RScan/3dssg-fixture-scan-b/labels.instances.annotated.v2.ply");
  ASSERT_EQ(mesh.size(), 3u);
  EXPECT_EQ(mesh.at(3).points.size(), 4u);
  EXPECT_EQ(mesh.at(3).nyu40, 18);  // three vertices say pillow, one says sofa
  EXPECT_EQ(mesh.at(2).points.size(), 8u);
  EXPECT_EQ(mesh.at(2).nyu40, 6);
}

TEST(hellinger_sg_3dssg, MissingOrMalformedInputIsAClearError) {
  ThreeDssgOptions o;
  o.root = (kTiny / "absent").string();
  try {
    read_3dssg(o, 0);
    FAIL() << "no error for a missing root";
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a folder"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dataset.root"), std::string::npos) << e.what();
  }
  o.root = kTiny.string();
  o.split = "test";  // the fixture has no test_scans.txt
  EXPECT_THROW(read_3dssg(o, 0), nexp::DataError);
  // A copy whose relationships.json names predicate 15 "left".
  const auto dir = std::filesystem::temp_directory_path() / "nexp_hellinger_sg_3dssg_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kTiny, dir, std::filesystem::copy_options::recursive);
  std::ofstream(dir / "3DSSG_subset/relationships.json")
      << R"({"scans": [{"scan": "3dssg-fixture-scan-a", "split": 0, "objects": {"1": "floor", "3": "chair"},
            "relationships": [[3, 1, 15, "left"]]}]})";
  o.root = dir.string();
  o.split = "validation";
  try {
    read_3dssg(o, 0);
    FAIL() << "no error for a predicate id that does not match its name";
  } catch (const nexp::DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("relationships.json"), std::string::npos) << m;
    EXPECT_NE(m.find("scans[0]"), std::string::npos) << m;
    EXPECT_NE(m.find("\"standing on\""), std::string::npos) << m;
    EXPECT_NE(m.find("\"left\""), std::string::npos) << m;
  }
  std::ofstream(dir / "3RScan/3dssg-fixture-scan-a/labels.instances.annotated.v2.ply")
      << "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
         "property ushort objectId\nend_header\n0 0 0 1\n0 0\n";
  try {
    read_instance_ply(dir / "3RScan/3dssg-fixture-scan-a/labels.instances.annotated.v2.ply");
    FAIL() << "no error for a cut vertex line";
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("line 10"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}
