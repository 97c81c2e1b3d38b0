#include "datasets.hpp"

#include <fmt/format.h>
#include <nexp/table.hpp>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>

#include "generators.hpp"

namespace htc {

namespace fs = std::filesystem;

// ============================================================================ SEMID's results.csv

namespace {

std::optional<bool> r_bool(const std::string& s) {
  if (s == "TRUE") return true;
  if (s == "FALSE") return false;
  return std::nullopt;
}

}  // namespace

Reference read_reference(const fs::path& csv) {
  const nexp::CsvTable table = nexp::CsvTable::read(csv);
  for (const char* name : {"graph", "method", "seconds", "solvedNodes", "solvedEdges", "allIdentified", "nonID"})
    table.column(name);  // a DataError naming the file and listing its columns when one is missing
  Reference ref;
  for (std::size_t r = 0; r < table.size(); ++r) {
    ReferenceAnswer a;
    a.seconds = table.text(r, "seconds") == "NA" ? std::nan("") : table.real(r, "seconds");
    if (const std::string& nodes = table.text(r, "solvedNodes"); nodes != "NA") {
      std::istringstream in(nodes);
      for (int v; in >> v;) a.solved_nodes.push_back(v);
    }
    if (const std::string& edges = table.text(r, "solvedEdges"); edges != "NA") a.solved_edges = edges;
    a.all_identified = r_bool(table.text(r, "allIdentified"));
    a.nonidentifiable = r_bool(table.text(r, "nonID"));
    ref[table.text(r, "graph")][table.text(r, "method")] = std::move(a);
  }
  return ref;
}

std::string GraphSet::describe() const {
  int max_n = 0;
  long long d = 0, b = 0;
  for (const auto& g : graphs) {
    max_n = std::max(max_n, g.graph.num_nodes());
    d += g.graph.num_directed();
    b += g.graph.num_bidirected();
  }
  return fmt::format("{}: {} graphs, up to {} nodes, {} directed and {} bidirected edges in all{}", origin,
                     graphs.size(), max_n, d, b, reference ? ", with SEMID's answers" : "");
}

std::string edge_string(const std::vector<std::vector<int>>& solved_parents) {
  std::vector<std::string> edges;
  for (std::size_t v = 0; v < solved_parents.size(); ++v)
    for (int p : solved_parents[v]) edges.push_back(fmt::format("{}->{}", p + 1, v + 1));
  std::sort(edges.begin(), edges.end());
  std::string out;
  for (const auto& e : edges) out += (out.empty() ? "" : " ") + e;
  return out;
}

std::string node_string(const std::vector<int>& nodes) {
  std::string out;
  for (int v : nodes) out += (out.empty() ? "" : " ") + std::to_string(v + 1);
  return out;
}

// ============================================================================ factories

std::shared_ptr<nexp::Dataset> make_semid_dir(const SemidDirOptions& o, nexp::RunContext& ctx) {
  auto set = std::make_shared<GraphSet>();
  const fs::path dir = o.dir;
  set->origin = "htc.semid_dir " + dir.string();
  const std::string& match = o.match;
  std::regex pattern;
  try {
    pattern = std::regex(match);
  } catch (const std::regex_error& e) {
    throw nexp::ConfigError(fmt::format("dataset.match = '{}' is not a regular expression: {}", match, e.what()));
  }
  for (auto& g : read_semid_dir(dir))
    if (std::regex_search(g.name, pattern)) set->graphs.push_back(std::move(g));
  if (set->graphs.empty())
    throw nexp::DataError(fmt::format("no graph in '{}' has a name matching '{}' (dataset.match)", dir.string(), match));
  const std::string& reference = o.reference;
  if (reference == "auto") {
    for (const fs::path& candidate : {dir / "results.csv", dir.parent_path() / "results.csv"})
      if (fs::exists(candidate)) {
        set->reference = read_reference(candidate);
        ctx.log().info("htc: comparing with SEMID's answers in {}", candidate.string());
        break;
      }
  } else if (reference != "none") {
    set->reference = read_reference(reference);
  }
  return set;
}

std::shared_ptr<nexp::Dataset> make_edge_list(const EdgeListOptions& o, nexp::RunContext&) {
  auto set = std::make_shared<GraphSet>();
  const fs::path path = o.path;
  set->origin = "htc.edge_list " + path.string();
  if (fs::is_directory(path)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.path().extension() == ".edges") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) set->graphs.push_back({f.stem().string(), read_edge_list(f)});
    if (set->graphs.empty())
      throw nexp::DataError(fmt::format("the folder '{}' holds no *.edges file (edge lists: `nodes N`, then "
                                        "`i -> j` / `i <-> j` lines)",
                                        path.string()));
  } else {
    set->graphs.push_back({path.stem().string(), read_edge_list(path)});
  }
  return set;
}

std::shared_ptr<nexp::Dataset> make_random(const RandomGraphsOptions& o, nexp::RunContext& ctx) {
  auto set = std::make_shared<GraphSet>();
  const std::string& family = o.family;
  const int n = o.n;
  const auto count = o.graphs;
  GraphSpec spec{o.acyclic, o.p_directed, o.p_bidirected};
  if (family != "custom") spec = family_spec(family, n);
  // The graphs depend only on the seed and these parameters, not on what the method draws later.
  std::seed_seq seq{static_cast<std::uint32_t>(ctx.seed()), static_cast<std::uint32_t>(ctx.seed() >> 32), 0x68746375u};
  std::mt19937_64 rng(seq);
  set->origin = fmt::format("htc.random {} n={} ({}, P(->)={:.4g}, P(<->)={:.4g})", family, n,
                            spec.acyclic ? "acyclic" : "cyclic", spec.p_directed, spec.p_bidirected);
  for (std::int64_t i = 0; i < count; ++i)
    set->graphs.push_back({fmt::format("{}_n{:04d}_g{:04d}", family, n, i + 1), random_mixed_graph(n, spec, rng)});
  return set;
}

}  // namespace htc
