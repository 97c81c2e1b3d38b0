#pragma once
// Rendering a layout to PNG with Cairo, for the models that look at pixels (a VLM). Paint order is the
// array order; TEXT is set with fontconfig's match for the family (DejaVu or Liberation when the family
// is not installed), IMAGE is its fill colour or, for a picture, a placeholder of shapes in a colour
// derived from its id; GROUP draws nothing itself.
#include <filesystem>
#include <string>

#include "layout.hpp"

namespace design_bench {

// Writes `png` with the long side `long_side` px; returns the scale (png px per canvas px).
double render_png(const Layout& l, const std::filesystem::path& png, int long_side = 512);
// The PNG bytes of a layout: its own image when the dataset has one, else rendered into `cache_dir`.
std::string layout_png(const Layout& l, const std::filesystem::path& cache_dir);

}  // namespace design_bench
