#pragma once
// Non-dominated sets, front coverage and hypervolume.
#include <algorithm>
#include <vector>

#include "problem.hpp"

namespace moead {

// Mutually non-dominated points, one per objective vector, sorted by u ascending (so v descending).
// Membership tests are a binary search; insertion moves at most the set's tail. GSEMO's population
// and the external archive are both this set.
class NonDominatedSet {
 public:
  struct Entry {
    Point p;
    BitString x;
  };

  void reserve(int n) { e_.reserve(n); }
  void clear() { e_.clear(); }
  int size() const { return static_cast<int>(e_.size()); }
  const Entry& operator[](int i) const { return e_[i]; }
  const std::vector<Entry>& entries() const { return e_; }

  // GSEMO's acceptance rule: y enters unless a member strictly dominates it; members that y weakly
  // dominates (an equal objective vector included) leave. on_remove(point) is called for each member
  // that leaves; on_add(point) for y when it enters. Returns whether y entered.
  template <class OnRemove, class OnAdd>
  bool insert(const Point& p, const BitString& x, OnRemove&& on_remove, OnAdd&& on_add) {
    auto at = std::lower_bound(e_.begin(), e_.end(), p.u, [](const Entry& e, int u) { return e.p.u < u; });
    // The member with the smallest u >= p.u has the largest v among those: it decides dominance.
    if (at != e_.end() && at->p.v >= p.v && at->p.u > p.u) return false;  // strictly dominated
    if (at != e_.end() && at->p.u == p.u && at->p.v > p.v) return false;  // strictly dominated
    auto end = at;
    if (end != e_.end() && end->p.u == p.u) ++end;  // v <= p.v here: equal or dominated by y
    auto begin = at;
    while (begin != e_.begin() && std::prev(begin)->p.v <= p.v) --begin;
    for (auto it = begin; it != end; ++it) on_remove(it->p);
    if (begin != end) {
      *begin = Entry{p, x};
      e_.erase(begin + 1, end);
    } else {
      e_.insert(begin, Entry{p, x});
    }
    on_add(p);
    return true;
  }
  bool insert(const Point& p, const BitString& x) {
    return insert(p, x, [](const Point&) {}, [](const Point&) {});
  }

 private:
  std::vector<Entry> e_;
};

// How many distinct front points a multiset of search points holds. add/remove are O(1).
class Coverage {
 public:
  explicit Coverage(const Problem& problem) : problem_(&problem), count_(problem.front_size(), 0) {}
  void add(const Point& p) {
    if (problem_->is_pareto(p) && count_[problem_->front_index(p)]++ == 0) ++covered_;
  }
  void remove(const Point& p) {
    if (problem_->is_pareto(p) && --count_[problem_->front_index(p)] == 0) --covered_;
  }
  int covered() const { return covered_; }
  bool full() const { return covered_ == problem_->front_size(); }
  double fraction() const { return static_cast<double>(covered_) / problem_->front_size(); }

 private:
  const Problem* problem_;
  std::vector<int> count_;
  int covered_ = 0;
};

// Hypervolume of the non-dominated points among `points` (distorted objectives, reference point
// Problem::reference_point()), divided by the hypervolume of the whole front: 1 exactly when the
// points cover the front.
double normalized_hypervolume(const Problem& problem, const std::vector<Point>& points);

}  // namespace moead
