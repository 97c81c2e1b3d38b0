#include "shapes.hpp"

#include <algorithm>
#include <cmath>

namespace htaf {

const std::array<std::string, kConcepts>& concept_names() {
  static const std::array<std::string, kConcepts> names = {"hbar", "vbar",     "ring",          "dot",
                                                            "corner", "diagonal", "anti_diagonal", "box"};
  return names;
}

namespace {

double segment_distance(double y, double x, double y0, double x0, double y1, double x1) {
  const double dy = y1 - y0, dx = x1 - x0, len2 = dy * dy + dx * dx;
  const double t = std::clamp(((y - y0) * dy + (x - x0) * dx) / len2, 0.0, 1.0);
  return std::hypot(y - (y0 + t * dy), x - (x0 + t * dx));
}

// Distance from pixel centre (y, x) to the concept's stroke (0 inside a filled part).
double concept_distance(int c, double y, double x) {
  switch (c) {
    case 0: return segment_distance(y, x, 3, 5, 3, 22);    // hbar: row 3, columns 5..22
    case 1: return segment_distance(y, x, 5, 3, 22, 3);    // vbar: column 3, rows 5..22
    case 2: return std::fabs(std::hypot(y - 14, x - 14) - 5.0);  // ring: radius 5 around (14, 14)
    case 3: return std::max(0.0, std::hypot(y - 22, x - 22) - 2.0);  // dot: disc of radius 2 at (22, 22)
    case 4: return std::min(segment_distance(y, x, 6, 17, 6, 24), segment_distance(y, x, 6, 24, 12, 24));  // corner
    case 5: return segment_distance(y, x, 8, 8, 20, 20);   // diagonal
    case 6: return segment_distance(y, x, 8, 20, 20, 8);   // anti-diagonal
    default: {                                             // box: outline of [18, 25] x [6, 13]
      const double top = segment_distance(y, x, 18, 6, 18, 13), bottom = segment_distance(y, x, 25, 6, 25, 13);
      const double left = segment_distance(y, x, 18, 6, 25, 6), right = segment_distance(y, x, 18, 13, 25, 13);
      return std::min({top, bottom, left, right});
    }
  }
}

}  // namespace

void render_concept(std::vector<float>& img, int c, int dy, int dx, int width) {
  const double half = 0.5 * width;
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x)
      if (concept_distance(c, y - dy, x - dx) <= half) img[static_cast<std::size_t>(y * kSide + x)] = 1.0f;
}

std::vector<std::int64_t> class_table(std::int64_t classes, std::uint64_t seed) {
  nexp::Random rng = nexp::Random::stream(seed, "htaf.shapes.classes");
  std::vector<std::int64_t> codes(1 << kConcepts), table(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = codes.size() - 1; i > 0; --i) std::swap(codes[i], codes[rng.below(i + 1)]);
  for (std::size_t i = 0; i < codes.size(); ++i) table[static_cast<std::size_t>(codes[i])] = static_cast<std::int64_t>(i) % classes;
  return table;
}

namespace {

void draw_split(std::int64_t n, const ShapesOptions& o, const std::vector<std::int64_t>& table, nexp::Random rng,
                at::Tensor& x, at::Tensor& y, at::Tensor& concepts) {
  x = at::zeros({n, 1, kSide, kSide}, at::kFloat);
  y = at::zeros({n}, at::kLong);
  concepts = at::zeros({n, kConcepts}, at::kFloat);
  float* px = x.data_ptr<float>();
  float* pc = concepts.data_ptr<float>();
  std::int64_t* py = y.data_ptr<std::int64_t>();
  std::normal_distribution<double> gauss(0.0, 1.0);
  const int j = static_cast<int>(o.jitter);
  std::vector<float> img(kSide * kSide);
  for (std::int64_t i = 0; i < n; ++i) {
    std::fill(img.begin(), img.end(), 0.0f);
    std::int64_t code = 0;
    for (int c = 0; c < kConcepts; ++c) {
      if (!rng.bernoulli(0.5)) continue;
      code |= std::int64_t{1} << c;
      pc[i * kConcepts + c] = 1.0f;
      const int dy = static_cast<int>(rng.below(2 * j + 1)) - j, dx = static_cast<int>(rng.below(2 * j + 1)) - j;
      render_concept(img, c, dy, dx, 1 + static_cast<int>(rng.below(2)));
    }
    py[i] = table[static_cast<std::size_t>(code)];
    for (int p = 0; p < kSide * kSide; ++p)
      px[i * kSide * kSide + p] = static_cast<float>(std::clamp(img[p] + o.noise * gauss(rng), 0.0, 1.0));
  }
}

}  // namespace

std::shared_ptr<nexp::Dataset> make_shapes(const ShapesOptions& o, nexp::RunContext& ctx) {
  auto d = std::make_shared<ShapesDataset>();
  d->name = "htaf.shapes";
  d->num_classes = o.classes;
  const auto table = class_table(o.classes, static_cast<std::uint64_t>(o.class_seed));
  draw_split(o.train_size, o, table, ctx.stream("htaf.shapes.train"), d->train_x, d->train_y, d->train_concepts);
  draw_split(o.test_size, o, table, ctx.stream("htaf.shapes.test"), d->test_x, d->test_y, d->test_concepts);
  for (std::int64_t c = 0; c < o.classes; ++c) d->class_names.push_back("class " + std::to_string(c));
  return d;
}

}  // namespace htaf
