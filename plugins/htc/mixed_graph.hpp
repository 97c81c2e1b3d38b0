#pragma once
// Mixed graphs of linear structural equation models: G = (V, D, B) with directed edges D (the support
// of Lambda, i -> j meaning X_j = lambda_ij X_i + ...) and bidirected edges B (the off-diagonal support
// of Omega, the covariance of the errors). Nodes are 0-based inside nexp and 1-based in every file and
// artifact, as in SEMID.
//
// Files:
//   SEMID matrices: <name>_L.txt and <name>_O.txt, n x n whitespace-separated 0/1 matrices;
//                   L[i][j] = 1 is the edge i -> j, O is symmetric with a zero diagonal.
//   Edge list:      '#' starts a comment; the first statement is `nodes N`; then one edge per line,
//                   `i -> j` or `i <-> j` with 1-based nodes.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace htc {

struct Edge {
  int from = 0, to = 0;  // 0-based; for a bidirected edge from < to
  bool operator==(const Edge& o) const { return from == o.from && to == o.to; }
  bool operator<(const Edge& o) const { return from != o.from ? from < o.from : to < o.to; }
};

class MixedGraph {
 public:
  MixedGraph() = default;
  // Throws std::invalid_argument on a node out of range or a self-loop; repeated edges are merged and
  // a bidirected edge may be given in either orientation.
  MixedGraph(int n, std::vector<Edge> directed, std::vector<Edge> bidirected);

  int num_nodes() const { return n_; }
  int num_directed() const { return static_cast<int>(directed_.size()); }
  int num_bidirected() const { return static_cast<int>(bidirected_.size()); }
  // Sorted by (from, to); bidirected edges have from < to.
  const std::vector<Edge>& directed() const { return directed_; }
  const std::vector<Edge>& bidirected() const { return bidirected_; }

  // Sorted adjacency lists.
  const std::vector<int>& parents(int v) const { return parents_[v]; }
  const std::vector<int>& children(int v) const { return children_[v]; }
  const std::vector<int>& siblings(int v) const { return siblings_[v]; }
  bool is_sibling(int a, int b) const;
  bool has_directed(int from, int to) const;
  int max_in_degree() const;

  bool is_acyclic() const;
  // A topological order (parents first); empty when the directed part has a cycle.
  std::vector<int> topological_order() const;
  // Strongly connected components of the directed part, listed so that every edge between two
  // components goes from an earlier to a later one; each component's nodes are sorted.
  std::vector<std::vector<int>> strong_components() const;

  // The graph on `nodes` (in that order) with the edges among them.
  MixedGraph induced(const std::vector<int>& nodes) const;

 private:
  int n_ = 0;
  std::vector<Edge> directed_, bidirected_;
  std::vector<std::vector<int>> parents_, children_, siblings_;
};

// A graph with a name (the file stem or the generator's label).
struct NamedGraph {
  std::string name;
  MixedGraph graph;
};

// ---- Readers and writers. Errors throw nexp::DataError naming the file, the line and what was found.
MixedGraph read_semid_pair(const std::filesystem::path& l_file, const std::filesystem::path& o_file);
MixedGraph parse_semid_matrices(const std::string& l_text, const std::string& o_text, const std::string& where);
MixedGraph read_edge_list(const std::filesystem::path& file);
MixedGraph parse_edge_list(const std::string& text, const std::string& where);
std::string to_edge_list(const MixedGraph& g);
std::pair<std::string, std::string> to_semid_matrices(const MixedGraph& g);  // (L text, O text)
// Every <name>_L.txt with a matching <name>_O.txt in `dir`, sorted by name.
std::vector<NamedGraph> read_semid_dir(const std::filesystem::path& dir);

// ---- Reachability. Every set is a 0/1 mask of size n. SEMID's conventions: a node is its own
// ancestor and descendant, and htr_from(v) contains v.
class Reach {
 public:
  explicit Reach(const MixedGraph& g) : g_(g), mark_(g.num_nodes(), 0) {}
  // Nodes half-trek reachable from v: descendants of {v} and of v's siblings.
  void htr_from(int v, std::vector<char>& out);
  // The nodes v with y in htr_from(v): ancestors of y and their siblings.
  void htr_to(int y, std::vector<char>& out);
  // Nodes trek reachable from u: descendants of the ancestors of u and of their siblings.
  void tr_from(int u, std::vector<char>& out);
  void descendants(const std::vector<int>& roots, std::vector<char>& out) { search(roots, true, out); }
  void ancestors(const std::vector<int>& roots, std::vector<char>& out) { search(roots, false, out); }

 private:
  void search(const std::vector<int>& roots, bool down, std::vector<char>& out);  // along children or parents
  const MixedGraph& g_;
  std::vector<char> mark_;
  std::vector<int> stack_;
};

}  // namespace htc
