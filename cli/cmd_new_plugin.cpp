// nexp new-plugin.
#include <iostream>

#include "app.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/scaffold.hpp"

namespace nexp::cli {

void add_new_plugin_command(CLI::App& cli, App&) {
  auto slug = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* c = cli.add_subcommand("new-plugin", "Scaffold a plugin that builds, loads and passes the conformance suite");
  c->add_option("slug", *slug, "the plugin's name: lower-case letters, digits and '_'")->required();
  c->add_option("--out-of-tree", *out, "create a stand-alone CMake project in this folder instead of plugins/<slug>");
  c->callback([slug, out] {
    const bool outside = !out->empty();
    const std::filesystem::path root = outside ? std::filesystem::path(*out) : std::filesystem::current_path();
    if (!outside && !std::filesystem::exists(root / "plugins"))
      logger().warn("{} has no plugins/ folder; is this the nexp source tree? (use --out-of-tree DIR otherwise)",
                    root.string());
    ScaffoldResult r = scaffold_plugin(*slug, root, outside);
    for (const auto& f : r.files) std::cout << "created " << f.string() << "\n";
    std::cout << "\nnext steps:\n";
    for (size_t i = 0; i < r.next_steps.size(); ++i) std::cout << "  " << i + 1 << ". " << r.next_steps[i] << "\n";
  });
}

}  // namespace nexp::cli
