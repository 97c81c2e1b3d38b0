#pragma once
// `nexp new-plugin`: a new plugin from the template in core/templates/plugin, which builds, loads and
// passes the conformance suite as generated.
#include <filesystem>
#include <string>
#include <vector>

#include "nexp/export.hpp"

namespace nexp {

struct NEXP_API ScaffoldResult {
  std::vector<std::filesystem::path> files;
  std::vector<std::string> next_steps;
};

// In the nexp tree (root holds plugins/ and configs/): plugins/<slug>/ and configs/<slug>/smoke.yaml.
// Out of the tree: a CMake project in `root` that builds against an installed nexp.
// Throws ConfigError for a bad slug or when a file would be overwritten.
NEXP_API ScaffoldResult scaffold_plugin(const std::string& slug, const std::filesystem::path& root, bool out_of_tree);

}  // namespace nexp
