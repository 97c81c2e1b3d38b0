#pragma once
// The state the edgewise criterion works on (SEMID's edgewiseIdentifyStep), shared by the subset search,
// the closure, and numeric identification (which replays the steps to list every usable equation).
#include <algorithm>
#include <vector>

#include "criteria.hpp"

namespace htc {

// Reachability tables (n x n masks) and the solved / unsolved parents of every node.
class EdgewiseState {
 public:
  explicit EdgewiseState(const MixedGraph& g) : g_(g), n_(g.num_nodes()), htr_(n_), tr_(n_), unsolved_(n_), solved_(n_) {
    Reach reach(g);
    for (int v = 0; v < n_; ++v) {
      reach.htr_from(v, htr_[v]);
      reach.tr_from(v, tr_[v]);
      unsolved_[v] = g.parents(v);
    }
  }

  const std::vector<int>& unsolved(int i) const { return unsolved_[i]; }

  // Allowed sources of node i and, for each, its support as a 0/1 mask over positions in unsolved(i).
  void sources(int i, std::vector<int>& allowed, std::vector<std::vector<char>>& support) const {
    const auto& u = unsolved_[i];
    allowed.clear();
    support.clear();
    for (int j = 0; j < n_; ++j) {
      if (j == i || g_.is_sibling(i, j)) continue;
      bool reaches = false;
      for (int p : u) reaches = reaches || htr_[j][p];
      bool blocked = false;
      for (int p : unsolved_[j]) blocked = blocked || htr_[i][p];
      if (!reaches || blocked) continue;
      std::vector<char> s(u.size(), 0);
      for (std::size_t k = 0; k < u.size(); ++k) {
        s[k] = htr_[j][u[k]];
        for (int p : unsolved_[j]) s[k] = s[k] || tr_[p][u[k]];
      }
      allowed.push_back(j);
      support.push_back(std::move(s));
    }
  }

  // Records that `targets` (a subset of unsolved(i)) are identified from `sources`.
  IdStep solve(int i, std::vector<int> targets, std::vector<int> sources, int round) {
    std::sort(targets.begin(), targets.end());
    std::sort(sources.begin(), sources.end());
    IdStep step;
    step.node = i;
    step.round = round;
    step.known = solved_[i];
    for (int a : sources) step.removed.push_back(solved_[a]);
    for (int t : targets) {
      solved_[i].push_back(t);
      unsolved_[i].erase(std::find(unsolved_[i].begin(), unsolved_[i].end(), t));
    }
    std::sort(solved_[i].begin(), solved_[i].end());
    step.targets = std::move(targets);
    step.sources = std::move(sources);
    return step;
  }

  const std::vector<std::vector<int>>& solved_parents() const { return solved_; }

 private:
  const MixedGraph& g_;
  int n_;
  std::vector<std::vector<char>> htr_, tr_;
  std::vector<std::vector<int>> unsolved_, solved_;
};

// Whether a support lies inside W (both masks over the positions in the unsolved parents).
inline bool within(const std::vector<char>& support, const std::vector<char>& in) {
  for (std::size_t p = 0; p < support.size(); ++p)
    if (support[p] && !in[p]) return false;
  return true;
}

}  // namespace htc
