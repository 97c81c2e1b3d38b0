#pragma once
// Generated template families: the stand-in for LICA's 1,148 real templates when they are not at hand.
//
// A family is a template: a category, a canvas format, a 3-5 colour palette, 1-3 font families drawn
// without replacement from a pool of F families whose popularity is Zipf-like (rank r has weight
// r^-zipf), an arrangement (margin, pattern: stack, split or full-bleed image, a text alignment, sizes) and
// its elements (title, subtitle, body, image, logo, a button GROUP, decorations under and over the text).
// Sizes are in units of the canvas's short side, so the same template on another format is re-laid, not
// stretched. Each family begets 1-12 sibling variants that keep its style and elements and change their
// own text, title weight ("Arimo--700" vs "--800"), palette (roles swapped), a slot left out, a mirrored
// grid, their whole arrangement (`rearrange`), or their canvas format (`resize_share`). Hard negatives: a
// share of families copies the fonts or the palette of an earlier family.
// Layouts are written in LICA's format (layout.hpp), one code path for generated and real data.
#include <string>
#include <vector>

#include <nexp/options.hpp>
#include <nexp/random.hpp>

#include "layout.hpp"

namespace design_bench {

struct FamiliesOptions {
  int families = 200;
  int font_pool = 40;
  double zipf = 1.0;
  int max_siblings = 12;
  double hard_negatives = 0.3;
  double variation = 1.0;
  double rearrange = 0.5;
  double resize_share = 0.15;
  static void declare(nexp::Options<FamiliesOptions>& o) {
    o.add("families", &FamiliesOptions::families, "template families (LICA: 1,148 layouts in ~200 templates)")
        .range(1, 100000);
    o.add("font_pool", &FamiliesOptions::font_pool, "F: font families the templates draw from").range(1, 60);
    o.add("zipf", &FamiliesOptions::zipf, "popularity exponent of the font pool: rank r is drawn ~ r^-zipf")
        .range(0, 4);
    o.add("max_siblings", &FamiliesOptions::max_siblings, "variants per family: 1 .. this, mean ~ 0.44 x it")
        .range(1, 64);
    o.add("hard_negatives", &FamiliesOptions::hard_negatives,
          "share of families that copy the fonts or the palette of an earlier family")
        .range(0, 1);
    o.add("variation", &FamiliesOptions::variation,
          "scales the probability of each per-variant change (0: siblings differ only in text)")
        .range(0, 2);
    o.add("rearrange", &FamiliesOptions::rearrange,
          "share of siblings with their own arrangement: sizes, margins, pattern (stack, split, full-bleed) and "
          "alignment redrawn, fonts, palette and elements kept")
        .range(0, 1);
    o.add("resize_share", &FamiliesOptions::resize_share,
          "share of siblings that re-lay the template on another canvas format (the aspect_adapt pairs)")
        .range(0, 1);
  }
};

// The font names of the pool (real families of the kind LICA's templates use); F <= 60.
const std::vector<std::string>& font_pool_names();
// Canvas formats and the aspect-ratio classes of the aspect_ratio task, in the same order.
struct CanvasFormat {
  const char* name;
  double width, height;
};
const std::vector<CanvasFormat>& canvas_formats();

std::vector<Layout> generate_families(const FamiliesOptions& o, nexp::Random& rng);

}  // namespace design_bench
