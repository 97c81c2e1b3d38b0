#include "mixed_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nexp/error.hpp>
#include <nexp/text.hpp>

namespace htc {

// ============================================================================ the graph

MixedGraph::MixedGraph(int n, std::vector<Edge> directed, std::vector<Edge> bidirected)
    : n_(n), parents_(n), children_(n), siblings_(n) {
  if (n < 0) throw std::invalid_argument(fmt::format("a mixed graph needs n >= 0 nodes, got {}", n));
  auto check = [n](const Edge& e, const char* kind) {
    if (e.from < 0 || e.from >= n || e.to < 0 || e.to >= n)
      throw std::invalid_argument(fmt::format("{} edge {} - {} has a node outside 1..{}", kind, e.from + 1, e.to + 1, n));
    if (e.from == e.to) throw std::invalid_argument(fmt::format("{} self-loop at node {}", kind, e.from + 1));
  };
  for (auto& e : directed) check(e, "directed");
  for (auto& e : bidirected) {
    check(e, "bidirected");
    if (e.from > e.to) std::swap(e.from, e.to);
  }
  std::sort(directed.begin(), directed.end());
  directed.erase(std::unique(directed.begin(), directed.end()), directed.end());
  std::sort(bidirected.begin(), bidirected.end());
  bidirected.erase(std::unique(bidirected.begin(), bidirected.end()), bidirected.end());
  directed_ = std::move(directed);
  bidirected_ = std::move(bidirected);
  for (const auto& e : directed_) {
    children_[e.from].push_back(e.to);
    parents_[e.to].push_back(e.from);
  }
  for (const auto& e : bidirected_) {
    siblings_[e.from].push_back(e.to);
    siblings_[e.to].push_back(e.from);
  }
  for (int v = 0; v < n; ++v) {
    std::sort(parents_[v].begin(), parents_[v].end());
    std::sort(siblings_[v].begin(), siblings_[v].end());
  }
}

bool MixedGraph::is_sibling(int a, int b) const {
  return std::binary_search(siblings_[a].begin(), siblings_[a].end(), b);
}

bool MixedGraph::has_directed(int from, int to) const {
  return std::binary_search(parents_[to].begin(), parents_[to].end(), from);
}

int MixedGraph::max_in_degree() const {
  int d = 0;
  for (const auto& p : parents_) d = std::max(d, static_cast<int>(p.size()));
  return d;
}

std::vector<int> MixedGraph::topological_order() const {
  std::vector<int> indegree(n_), order;
  order.reserve(n_);
  for (int v = 0; v < n_; ++v) {
    indegree[v] = static_cast<int>(parents_[v].size());
    if (indegree[v] == 0) order.push_back(v);
  }
  for (std::size_t head = 0; head < order.size(); ++head)
    for (int c : children_[order[head]])
      if (--indegree[c] == 0) order.push_back(c);
  if (static_cast<int>(order.size()) != n_) order.clear();
  return order;
}

bool MixedGraph::is_acyclic() const { return n_ == 0 || !topological_order().empty(); }

// Tarjan's algorithm, iterative (graphs of thousands of nodes would overflow a recursive one). Tarjan
// emits components in reverse topological order of the condensation; we reverse at the end.
std::vector<std::vector<int>> MixedGraph::strong_components() const {
  std::vector<int> index(n_, -1), low(n_, 0), stack, edge_pos(n_, 0);
  std::vector<char> on_stack(n_, 0);
  std::vector<std::vector<int>> components;
  std::vector<int> call;
  int counter = 0;
  for (int root = 0; root < n_; ++root) {
    if (index[root] >= 0) continue;
    call.push_back(root);
    while (!call.empty()) {
      const int v = call.back();
      if (edge_pos[v] == 0 && index[v] < 0) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        on_stack[v] = 1;
      }
      bool descended = false;
      while (edge_pos[v] < static_cast<int>(children_[v].size())) {
        const int w = children_[v][edge_pos[v]++];
        if (index[w] < 0) {
          call.push_back(w);
          descended = true;
          break;
        }
        if (on_stack[w]) low[v] = std::min(low[v], index[w]);
      }
      if (descended) continue;
      call.pop_back();
      if (!call.empty()) low[call.back()] = std::min(low[call.back()], low[v]);
      if (low[v] == index[v]) {
        std::vector<int> component;
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          component.push_back(w);
        } while (w != v);
        std::sort(component.begin(), component.end());
        components.push_back(std::move(component));
      }
    }
  }
  std::reverse(components.begin(), components.end());
  return components;
}

MixedGraph MixedGraph::induced(const std::vector<int>& nodes) const {
  std::vector<int> position(n_, -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = static_cast<int>(i);
  std::vector<Edge> d, b;
  for (const auto& e : directed_)
    if (position[e.from] >= 0 && position[e.to] >= 0) d.push_back({position[e.from], position[e.to]});
  for (const auto& e : bidirected_)
    if (position[e.from] >= 0 && position[e.to] >= 0) b.push_back({position[e.from], position[e.to]});
  return MixedGraph(static_cast<int>(nodes.size()), std::move(d), std::move(b));
}

// ============================================================================ files

namespace {

std::string read_text(const std::filesystem::path& file) { return nexp::read_text_file(file, "the graph file"); }

// Rows of whitespace-separated integers; blank lines are skipped.
std::vector<std::vector<int>> parse_matrix(const std::string& text, const std::string& where) {
  std::vector<std::vector<int>> rows;
  std::istringstream lines(text);
  std::string line;
  int line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    std::istringstream fields(line);
    std::vector<int> row;
    std::string field;
    while (fields >> field) {
      if (field != "0" && field != "1")
        throw nexp::DataError(fmt::format("{}, line {}: expected a 0/1 adjacency matrix entry, found '{}'", where,
                                          line_no, field));
      row.push_back(field == "1");
    }
    if (!row.empty()) rows.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].size() != rows.size())
      throw nexp::DataError(fmt::format("{}: expected a square matrix, but row {} has {} entries and there are {} rows",
                                        where, i + 1, rows[i].size(), rows.size()));
  return rows;
}

}  // namespace

MixedGraph parse_semid_matrices(const std::string& l_text, const std::string& o_text, const std::string& where) {
  const auto l = parse_matrix(l_text, where + " (L)"), o = parse_matrix(o_text, where + " (O)");
  if (l.size() != o.size())
    throw nexp::DataError(fmt::format("{}: L is {} x {} but O is {} x {}; both must describe the same nodes", where,
                                      l.size(), l.size(), o.size(), o.size()));
  const int n = static_cast<int>(l.size());
  std::vector<Edge> d, b;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (l[i][j] && i == j)
        throw nexp::DataError(fmt::format("{} (L): the diagonal entry ({}, {}) is 1; self-loops are not allowed", where,
                                          i + 1, i + 1));
      if (l[i][j]) d.push_back({i, j});
      if (o[i][j] && i == j)
        throw nexp::DataError(fmt::format("{} (O): the diagonal entry ({}, {}) is 1; O must have a zero diagonal",
                                          where, i + 1, i + 1));
      if (o[i][j] != o[j][i])
        throw nexp::DataError(fmt::format("{} (O): O must be symmetric, but O[{}][{}] = {} and O[{}][{}] = {}", where,
                                          i + 1, j + 1, o[i][j], j + 1, i + 1, o[j][i]));
      if (o[i][j] && i < j) b.push_back({i, j});
    }
  return MixedGraph(n, std::move(d), std::move(b));
}

MixedGraph read_semid_pair(const std::filesystem::path& l_file, const std::filesystem::path& o_file) {
  return parse_semid_matrices(read_text(l_file), read_text(o_file), l_file.string());
}

MixedGraph parse_edge_list(const std::string& text, const std::string& where) {
  std::istringstream lines(text);
  std::string line;
  int line_no = 0, n = -1;
  std::vector<Edge> d, b;
  while (std::getline(lines, line)) {
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    std::string first, arrow, second, extra;
    if (!(fields >> first)) continue;
    if (first == "nodes") {
      if (n >= 0)  // the edges read so far were checked against the first N
        throw nexp::DataError(fmt::format("{}, line {}: a second `nodes` statement; an edge list has one, first", where,
                                          line_no));
      constexpr int kMaxNodes = 1000000;  // the graph's adjacency lists are allocated up front
      if (!(fields >> n) || n < 0 || n > kMaxNodes || (fields >> extra))
        throw nexp::DataError(fmt::format("{}, line {}: expected `nodes N` with 0 <= N <= {}", where, line_no, kMaxNodes));
      continue;
    }
    if (n < 0)
      throw nexp::DataError(fmt::format("{}, line {}: the first statement must be `nodes N`, found '{}'", where,
                                        line_no, first));
    int a = 0, c = 0;
    const bool ok = (fields >> arrow >> second) && !(fields >> extra);
    try {
      a = std::stoi(first);
      c = ok ? std::stoi(second) : 0;
    } catch (const std::exception&) {
      a = 0;
    }
    if (!ok || (arrow != "->" && arrow != "<->") || a < 1 || a > n || c < 1 || c > n || a == c)
      throw nexp::DataError(fmt::format("{}, line {}: expected `i -> j` or `i <-> j` with distinct nodes in 1..{}, "
                                        "found '{}'",
                                        where, line_no, n, line));
    (arrow == "->" ? d : b).push_back({a - 1, c - 1});
  }
  if (n < 0) throw nexp::DataError(fmt::format("{}: no `nodes N` statement; an edge list starts with it", where));
  return MixedGraph(n, std::move(d), std::move(b));
}

MixedGraph read_edge_list(const std::filesystem::path& file) { return parse_edge_list(read_text(file), file.string()); }

std::string to_edge_list(const MixedGraph& g) {
  std::string out = fmt::format("nodes {}\n", g.num_nodes());
  for (const auto& e : g.directed()) out += fmt::format("{} -> {}\n", e.from + 1, e.to + 1);
  for (const auto& e : g.bidirected()) out += fmt::format("{} <-> {}\n", e.from + 1, e.to + 1);
  return out;
}

std::pair<std::string, std::string> to_semid_matrices(const MixedGraph& g) {
  const int n = g.num_nodes();
  std::vector<std::string> l(n, std::string(2 * n, ' ')), o(n, std::string(2 * n, ' '));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      l[i][2 * j] = '0';
      o[i][2 * j] = '0';
    }
  for (const auto& e : g.directed()) l[e.from][2 * e.to] = '1';
  for (const auto& e : g.bidirected()) o[e.from][2 * e.to] = o[e.to][2 * e.from] = '1';
  std::string lt, ot;
  for (int i = 0; i < n; ++i) {
    lt += l[i].substr(0, 2 * n - 1) + "\n";
    ot += o[i].substr(0, 2 * n - 1) + "\n";
  }
  return {lt, ot};
}

std::vector<NamedGraph> read_semid_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw nexp::DataError(fmt::format(
        "the graph directory '{}' does not exist; pass dataset.dir=DIR with a folder of SEMID <name>_L.txt / "
        "<name>_O.txt pairs (relative paths are resolved from the working directory, normally the repository root)",
        dir.string()));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 6 && file.compare(file.size() - 6, 6, "_L.txt") == 0) names.push_back(file.substr(0, file.size() - 6));
  }
  std::sort(names.begin(), names.end());
  std::vector<NamedGraph> out;
  for (const auto& name : names) {
    const fs::path o = dir / (name + "_O.txt");
    if (!fs::exists(o))
      throw nexp::DataError(fmt::format("'{}' has no partner '{}'; every <name>_L.txt needs a <name>_O.txt",
                                        (dir / (name + "_L.txt")).string(), o.string()));
    out.push_back({name, read_semid_pair(dir / (name + "_L.txt"), o)});
  }
  if (out.empty())
    throw nexp::DataError(fmt::format("the directory '{}' holds no <name>_L.txt / <name>_O.txt pairs", dir.string()));
  return out;
}

// ============================================================================ reachability

void Reach::search(const std::vector<int>& roots, bool down, std::vector<char>& out) {
  out.assign(g_.num_nodes(), 0);
  stack_.clear();
  for (int r : roots)
    if (!out[r]) {
      out[r] = 1;
      stack_.push_back(r);
    }
  while (!stack_.empty()) {
    const int v = stack_.back();
    stack_.pop_back();
    for (int w : down ? g_.children(v) : g_.parents(v))
      if (!out[w]) {
        out[w] = 1;
        stack_.push_back(w);
      }
  }
}

void Reach::htr_from(int v, std::vector<char>& out) {
  std::vector<int> roots = g_.siblings(v);
  roots.push_back(v);
  descendants(roots, out);
}

void Reach::htr_to(int y, std::vector<char>& out) {
  ancestors({y}, mark_);
  out = mark_;
  for (int a = 0; a < g_.num_nodes(); ++a)
    if (mark_[a])
      for (int s : g_.siblings(a)) out[s] = 1;
}

void Reach::tr_from(int u, std::vector<char>& out) {
  ancestors({u}, mark_);
  std::vector<int> tops;
  for (int a = 0; a < g_.num_nodes(); ++a)
    if (mark_[a]) {
      tops.push_back(a);
      for (int s : g_.siblings(a)) tops.push_back(s);
    }
  descendants(tops, out);
}

}  // namespace htc
