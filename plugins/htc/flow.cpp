#include "flow.hpp"

namespace htc {

void FlowNetwork::reset(int nodes) {
  nodes_ = nodes;
  head_.assign(nodes, -1);
  next_.clear();
  to_.clear();
  cap_.clear();
}

std::size_t FlowNetwork::bytes() const {
  return (head_.capacity() + next_.capacity() + to_.capacity() + cap_.capacity() + level_.capacity() +
          cursor_.capacity() + queue_.capacity()) *
         sizeof(int);
}

int FlowNetwork::add_node() {
  head_.push_back(-1);
  return nodes_++;
}

int FlowNetwork::add_arc(int from, int to) {
  // Arcs come in pairs (forward, residual): arc ^ 1 is the partner.
  const int a = static_cast<int>(to_.size());
  to_.push_back(to);
  cap_.push_back(1);
  next_.push_back(head_[from]);
  head_[from] = a;
  to_.push_back(from);
  cap_.push_back(0);
  next_.push_back(head_[to]);
  head_[to] = a + 1;
  return a;
}

bool FlowNetwork::levels(int source, int sink) {
  level_.assign(nodes_, -1);
  queue_.clear();
  level_[source] = 0;
  queue_.push_back(source);
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const int v = queue_[i];
    for (int a = head_[v]; a != -1; a = next_[a])
      if (cap_[a] > 0 && level_[to_[a]] < 0) {
        level_[to_[a]] = level_[v] + 1;
        queue_.push_back(to_[a]);
      }
  }
  return level_[sink] >= 0;
}

// One unit along a shortest augmenting path; the cursor skips arcs that are already known dead in
// this phase (the standard Dinic blocking-flow search, with unit capacities).
int FlowNetwork::push(int v, int sink) {
  if (v == sink) return 1;
  for (int& a = cursor_[v]; a != -1; a = next_[a]) {
    const int w = to_[a];
    if (cap_[a] > 0 && level_[w] == level_[v] + 1 && push(w, sink)) {
      --cap_[a];
      ++cap_[a ^ 1];
      return 1;
    }
  }
  return 0;
}

int FlowNetwork::max_flow(int source, int sink, int limit) {
  int flow = 0;
  while (flow < limit && levels(source, sink)) {
    cursor_ = head_;
    while (flow < limit && push(source, sink)) ++flow;
  }
  return flow;
}

HalfTrekSystem max_half_trek_system(const MixedGraph& g, const std::vector<char>& allowed,
                                    const std::vector<int>& targets, FlowNetwork& net) {
  const int n = g.num_nodes();
  // Node ids: L(a) = a, R_in(x) = n + x, R_out(x) = 2n + x, source 3n, sink 3n + 1.
  const int source = 3 * n, sink = 3 * n + 1;
  net.reset(3 * n + 2);
  std::vector<int> source_arc(n, -1);
  for (int a = 0; a < n; ++a) {
    if (!allowed[a]) continue;
    source_arc[a] = net.add_arc(source, a);
    net.add_arc(a, n + a);
    for (int s : g.siblings(a)) net.add_arc(a, n + s);
  }
  for (int x = 0; x < n; ++x) {
    net.add_arc(n + x, 2 * n + x);
    for (int c : g.children(x)) net.add_arc(2 * n + x, n + c);
  }
  for (int t : targets) net.add_arc(2 * n + t, sink);
  HalfTrekSystem out;
  out.size = net.max_flow(source, sink, static_cast<int>(targets.size()));
  for (int a = 0; a < n; ++a)
    if (source_arc[a] >= 0 && net.saturated(source_arc[a])) out.sources.push_back(a);
  return out;
}

}  // namespace htc
