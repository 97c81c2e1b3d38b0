#pragma once
// htaf.shapes: 28x28 images made of 8 binary concepts, so that the units of a bottleneck can be scored
// against known concepts (ICBM's interpretability claim, without concept labels in training).
// Concept c is present with probability 1/2, independently; each renders with its position jittered by
// up to `jitter` pixels, a stroke width of 1 or 2 pixels, and the image gets Gaussian pixel noise
// (clipped to [0, 1]). The class is a fixed random function of the 8-bit concept code (table drawn from
// `class_seed`, the same for every run seed), so the classes are learnable only through the concepts.
#include <nexp/nexp.hpp>
#include <nexp/tensor_dataset.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace htaf {

constexpr int kSide = 28;
constexpr int kConcepts = 8;
const std::array<std::string, kConcepts>& concept_names();  // hbar, vbar, ring, dot, corner, diagonal, ...

// One concept drawn into img (kSide x kSide, row-major), max-blended, shifted by (dy, dx), stroke
// `width` pixels.
void render_concept(std::vector<float>& img, int concept_index, int dy, int dx, int width);

struct ShapesOptions {
  std::int64_t train_size = 10000, test_size = 2000, classes = 10;
  std::int64_t jitter = 2;
  double noise = 0.1;
  std::int64_t class_seed = 0;
  static void declare(nexp::Options<ShapesOptions>& o) {
    o.add("train_size", &ShapesOptions::train_size, "training images").min(1);
    o.add("test_size", &ShapesOptions::test_size, "test images").min(1);
    o.add("classes", &ShapesOptions::classes, "classes of the concept-code -> class table").range(2, 256);
    o.add("jitter", &ShapesOptions::jitter, "largest shift of a concept, pixels").range(0, 3);
    o.add("noise", &ShapesOptions::noise, "standard deviation of the pixel noise").range(0, 1);
    o.add("class_seed", &ShapesOptions::class_seed, "seed of the fixed code -> class table").min(0);
  }
};

// A TensorDataset whose images carry their concept labels (float32 [N, 8] in {0, 1}).
struct ShapesDataset : nexp::TensorDataset {
  at::Tensor train_concepts, test_concepts;
};

// The code -> class table: every class gets codes (round robin over a shuffled code list).
std::vector<std::int64_t> class_table(std::int64_t classes, std::uint64_t seed);
std::shared_ptr<nexp::Dataset> make_shapes(const ShapesOptions& o, nexp::RunContext& ctx);

}  // namespace htaf
