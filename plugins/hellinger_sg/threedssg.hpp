#pragma once
// hellinger_sg.3dssg: the 3DSSG release (Wald et al. 2020) and 3RScan's instance meshes, read from the
// user's folder into the plugin's Scene. 3DSSG needs a signed licence, so nexp ships no copy; the tests
// read a hand-written fixture in the same layout (tests/data/3dssg_tiny). Plain C++, no torch.
//
// The folder `root` (default <data dir>/3dssg):
//   3DSSG_subset/relationships.json   {"scans": [{"scan": id, "split": k, "objects": {"<object id>": "<label>"},
//                                      "relationships": [[subject id, object id, predicate id, "name"], ...]}]}
//                                      one entry per sub-graph k of a scan; predicate id = line of
//                                      relationships.txt
//   3DSSG_subset/classes.txt          the 160 class names, one a line
//   3DSSG_subset/relationships.txt    "none", then the 26 predicate names, one a line
//   3DSSG_subset/train_scans.txt, validation_scans.txt (test_scans.txt)   scan ids of each split
//   3RScan/<scan id>/labels.instances.annotated.v2.ply   vertices with x, y, z, objectId and NYU40
//                                      (ASCII as 3RScan v2 ships it, or binary little-endian)
//
// Label sets (`label_set`):
//   160  classes.txt and relationships.txt as released: 160 classes, 26 predicates (+ none).
//   20   SGFN's (Wu et al. 2021): the 20 ScanNet classes, from each instance's NYU40 label in the mesh
//        (the label its vertices carry most), and 8 predicates: the seven support types and "same part",
//        which never holds between ground-truth instances.
// Objects outside the label set, or without a vertex in the mesh, are dropped with their edges.
//
// A scene is one sub-graph: its objects (ascending object id), 128 points per object drawn from the
// instance's vertices with sample_indices() (as the rooms draw theirs), the axis-aligned box of all its
// vertices, and an edge for every ordered pair of objects (3DSSG's protocol), labelled with the listed
// predicates as a bit set (no predicate: "none"). Train scenes come from train_scans.txt, test scenes
// from <split>_scans.txt.
#include <nexp/options.hpp>
#include <nexp/random.hpp>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rooms.hpp"

namespace nexp {
class RunContext;
}

namespace hellinger_sg {

struct ThreeDssgOptions {
  std::string root;
  int label_set = 160;
  std::string split = "validation";
  int max_scenes = 0;
  static void declare(nexp::Options<ThreeDssgOptions>& o) {
    o.add("root", &ThreeDssgOptions::root,
          "folder holding 3DSSG_subset/ and 3RScan/ (empty: <data dir>/3dssg; README: layout)");
    o.add("label_set", &ThreeDssgOptions::label_set,
          "160: the release's 160 classes and 26 predicates; 20: SGFN's 20 classes and 8 predicates");
    o.add("split", &ThreeDssgOptions::split, "held-out scans (<split>_scans.txt) used as test scenes")
        .choices({"validation", "test"});
    o.add("max_scenes", &ThreeDssgOptions::max_scenes, "sub-graphs read per split, at most (0: all)")
        .range(0, 10000000);
  }
};

// The points of each instance of a 3RScan mesh, and the NYU40 label most of its vertices carry (0 when
// the file has no NYU40 property). Instance 0 (unannotated vertices) is left out.
struct MeshInstance {
  std::vector<std::array<float, 3>> points;
  int nyu40 = 0;
};
std::map<int, MeshInstance> read_instance_ply(const std::filesystem::path& file);

class ThreeDssgDataset : public SceneGraphDataset {
 public:
  ThreeDssgOptions options;
  std::size_t dropped_objects = 0;  // outside the label set or without vertices
  std::size_t dropped_scenes = 0;   // fewer than two objects left
  std::string describe() const override;
};

// The taxonomies of the two label sets (160: read from the folder).
Taxonomy sgfn_taxonomy();
// The data set; the point samples of sub-graph k (file order) come from stream (seed, "3dssg_points", k).
ThreeDssgDataset read_3dssg(const ThreeDssgOptions& o, std::uint64_t seed);

std::shared_ptr<nexp::Dataset> make_3dssg(const ThreeDssgOptions& o, nexp::RunContext& ctx);

}  // namespace hellinger_sg
