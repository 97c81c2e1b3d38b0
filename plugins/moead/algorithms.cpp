#include "algorithms.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

namespace moead {

namespace {

// What every algorithm does per evaluation: count it, keep the archive, note when the population and
// the archive first hold the whole front, feed the trace.
class Bookkeeper {
 public:
  Bookkeeper(const Problem& problem, const Settings& s, const Trace* trace)
      : problem_(problem), s_(s), trace_(trace && trace->every > 0 && trace->record ? trace : nullptr),
        population(problem), archive_cov_(problem), start_(std::chrono::steady_clock::now()) {
    if (s.archive) archive_.reserve(problem.n() + 2);  // at most n+1 distinct u values
  }

  void evaluated(const Point& p, const BitString& x) {
    ++evals_;
    if (s_.archive) {
      archive_.insert(
          p, x, [&](const Point& q) { archive_cov_.remove(q); }, [&](const Point& q) { archive_cov_.add(q); });
      if (archive_first_ < 0 && archive_cov_.full()) archive_first_ = evals_;
    }
    if (trace_ && evals_ % trace_->every == 0) trace_->record(evals_, population.covered(), archive_cov_.covered());
  }
  // After the population changed.
  void check() {
    if (first_ < 0 && population.full()) first_ = evals_;
  }
  bool done() const { return first_ >= 0 || evals_ >= s_.budget; }
  std::int64_t evaluations() const { return evals_; }

  RunResult finish(const std::vector<Point>& final_population, int subproblems) const {
    RunResult r;
    r.evaluations = evals_;
    r.evals_to_front = first_;
    r.evals_to_front_archive = s_.archive ? archive_first_ : -1;
    r.coverage = population.fraction();
    r.archive_coverage = s_.archive ? archive_cov_.fraction() : -1.0;
    r.hypervolume = normalized_hypervolume(problem_, final_population);
    std::vector<std::pair<int, int>> distinct;
    for (const Point& p : final_population) distinct.emplace_back(p.u, p.v);
    std::sort(distinct.begin(), distinct.end());
    r.population = static_cast<int>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
    r.subproblems = subproblems;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (trace_) trace_->record(evals_, population.covered(), archive_cov_.covered());
    return r;
  }

 private:
  const Problem& problem_;
  const Settings& s_;
  const Trace* trace_;

 public:
  Coverage population;  // the algorithm adds and removes its population's points here

 private:
  NonDominatedSet archive_;
  Coverage archive_cov_;
  std::int64_t evals_ = 0, first_ = -1, archive_first_ = -1;
  std::chrono::steady_clock::time_point start_;
};

int subproblem_count(const Problem& problem, const Settings& s) {
  return s.subproblems > 0 ? s.subproblems : problem.n() + 1;
}

}  // namespace

// ---------------------------------------------------------------- GSEMO

RunResult run_gsemo(const Problem& problem, const Settings& s, std::uint64_t seed, const Trace* trace,
                    const BitString* start) {
  Rng rng(seed);
  const Mutation mutation(s.mutation, problem.n(), s.power_law_beta);
  Bookkeeper book(problem, s, trace);
  NonDominatedSet pop;
  pop.reserve(problem.n() + 2);
  auto leave = [&](const Point& q) { book.population.remove(q); };
  auto enter = [&](const Point& q) { book.population.add(q); };

  const BitString x0 = start ? *start : random_bits(problem.n(), rng);
  const Point p0 = problem.evaluate(x0);
  book.evaluated(p0, x0);
  pop.insert(p0, x0, leave, enter);
  book.check();
  while (!book.done()) {
    BitString y = pop[static_cast<int>(rng.below(static_cast<std::uint32_t>(pop.size())))].x;
    mutation.apply(y, rng);
    const Point p = problem.evaluate(y);
    book.evaluated(p, y);
    if (pop.insert(p, y, leave, enter)) book.check();
  }
  std::vector<Point> final_points;
  for (const auto& e : pop.entries()) final_points.push_back(e.p);
  return book.finish(final_points, pop.size());
}

// ---------------------------------------------------------------- the MOEA/D loop

namespace {

// One solution per subproblem, and the best value seen per objective.
struct Subproblems {
  std::vector<BitString> x;
  std::vector<Point> p;
  RefPoint best{-std::numeric_limits<long double>::infinity(), -std::numeric_limits<long double>::infinity()};

  void replace(int k, const BitString& y, const Point& q, Coverage& coverage) {
    coverage.remove(p[k]);
    x[k] = y, p[k] = q;
    coverage.add(q);
  }
};

// The loop both MOEA/D variants share: `count` random initial solutions (evaluated even past a tiny
// budget); then generations in which every subproblem's solution is mutated once and the offspring is
// offered to the subproblems. rescore() runs whenever the best value of an objective improves;
// offer(j, y, q) returns whether some subproblem took offspring y (with objectives q) of subproblem
// j; after_generation() runs between generations.
template <class Rescore, class Offer, class AfterGeneration>
void moead_generations(const Problem& problem, const Settings& s, int count, Rng& rng, Bookkeeper& book,
                       Subproblems& sub, Rescore&& rescore, Offer&& offer, AfterGeneration&& after_generation) {
  const Mutation mutation(s.mutation, problem.n(), s.power_law_beta);
  auto see = [&](const Point& q) {
    const bool moved = q.f1 > sub.best.z1 || q.f2 > sub.best.z2;
    sub.best.z1 = std::max(sub.best.z1, q.f1), sub.best.z2 = std::max(sub.best.z2, q.f2);
    return moved;
  };
  sub.x.resize(count);
  sub.p.resize(count);
  for (int j = 0; j < count; ++j) {
    sub.x[j] = random_bits(problem.n(), rng);
    sub.p[j] = problem.evaluate(sub.x[j]);
    book.evaluated(sub.p[j], sub.x[j]);
    see(sub.p[j]);
    book.population.add(sub.p[j]);
  }
  rescore();
  book.check();
  while (!book.done()) {
    for (int j = 0; j < count && !book.done(); ++j) {
      BitString y = sub.x[j];
      mutation.apply(y, rng);
      const Point q = problem.evaluate(y);
      book.evaluated(q, y);
      if (see(q)) rescore();
      if (offer(j, y, q)) book.check();
    }
    if (!book.done()) after_generation();
  }
}

}  // namespace

// ---------------------------------------------------------------- classic MOEA/D

namespace {

// g for one scalariser, chosen at compile time so the inner loop over subproblems has no branch on it.
template <Scalarizer S>
long double classic_g(const Weight& l, const RefPoint& z, const Point& q, long double theta) {
  return scalarize(S, l, z, q.f1, q.f2, theta);
}

template <Scalarizer S>
RunResult classic_impl(const Problem& problem, const Settings& s, std::uint64_t seed, const Trace* trace) {
  Rng rng(seed);
  Bookkeeper book(problem, s, trace);
  const int count = subproblem_count(problem, s);
  const auto weights = uniform_weights(count);
  const long double theta = s.pbi_theta;

  // Neighbourhood B(j): the T weights closest to l_j; on the 2-D simplex that is an index window.
  const int t = s.neighborhood > 0 ? std::min(s.neighborhood, count) : count;
  std::vector<int> lo(count), hi(count);
  for (int j = 0; j < count; ++j) {
    lo[j] = std::clamp(j - (t - 1) / 2, 0, count - t);
    hi[j] = lo[j] + t;
  }

  Subproblems sub;
  std::vector<long double> g(count);  // g of each subproblem's solution, z = the best values seen
  auto rescore = [&] {
    for (int k = 0; k < count; ++k) g[k] = classic_g<S>(weights[k], sub.best, sub.p[k], theta);
  };
  auto offer = [&](int j, const BitString& y, const Point& q) {
    bool taken = false;
    for (int k = lo[j]; k < hi[j]; ++k) {
      const long double gy = classic_g<S>(weights[k], sub.best, q, theta);
      if (gy <= g[k]) {
        sub.replace(k, y, q, book.population);
        g[k] = gy;
        taken = true;
      }
    }
    return taken;
  };
  moead_generations(problem, s, count, rng, book, sub, rescore, offer, [] {});
  return book.finish(sub.p, count);
}

}  // namespace

RunResult run_moead_classic(const Problem& problem, const Settings& s, std::uint64_t seed, const Trace* trace) {
  switch (s.scalarizer) {
    case Scalarizer::WeightedSum: return classic_impl<Scalarizer::WeightedSum>(problem, s, seed, trace);
    case Scalarizer::Tchebycheff: return classic_impl<Scalarizer::Tchebycheff>(problem, s, seed, trace);
    case Scalarizer::Pbi: return classic_impl<Scalarizer::Pbi>(problem, s, seed, trace);
  }
  return {};
}

// ---------------------------------------------------------------- self-adjusting MOEA/D

namespace {

// What a subproblem remembers about its current solution: its class under a ray (see ray_class) and
// its g where a real comparison can be needed (weights; rays in class 0 or 2).
struct Cached {
  int cls = 1;
  long double g = 0;
};

Cached cache(const Aim& aim, const RefPoint& z, const Point& x) {
  Cached c;
  if (aim.kind == Aim::Kind::Weights) c.g = weights_value(aim, z, x);
  if (aim.kind == Aim::Kind::Ray) {
    c.cls = ray_class(aim, x);
    if (c.cls != 1) c.g = ray_value(aim, z, x);
  }
  return c;
}

// aim_prefers(aim, z, y, x) with x's part precomputed; on acceptance `out` is y's cache. Almost every
// call is decided on integers: a real g is computed only when y falls strictly inside a ray's box
// that already holds an inside point.
bool accepts(const Aim& aim, const Cached& cx, const Point& x, const RefPoint& z, const Point& y, Cached& out) {
  switch (aim.kind) {
    case Aim::Kind::Ray: {
      const int cy = ray_class(aim, y);
      if (cy != cx.cls) {
        if (cy > cx.cls) return false;
        out.cls = cy;
        out.g = cy == 1 ? 0 : ray_value(aim, z, y);
        return true;
      }
      out.cls = cy;
      if (cy == 1) return true;
      out.g = ray_value(aim, z, y);
      return out.g <= cx.g;
    }
    case Aim::Kind::Axis1:
      return y.u > x.u || (y.u == x.u && y.v >= x.v);
    case Aim::Kind::Axis2:
      return y.v > x.v || (y.v == x.v && y.u >= x.u);
    case Aim::Kind::Weights:
      out.g = weights_value(aim, z, y);
      return out.g <= cx.g;
  }
  return false;
}

// Working memory of adjust_decomposition(), allocated once per run.
struct AdjustScratch {
  std::vector<int> order, keepers, free, targets;
  std::vector<char> kept;
};

// The rule of algorithms.hpp: keep one subproblem per distinct non-dominated vector on the ray
// through it; send every other subproblem to a gap (a corner between neighbouring kept vectors, or an
// axis past either end), restarting from one of the gap's endpoints.
void adjust_decomposition(const Problem& problem, std::vector<Aim>& aims, std::vector<BitString>& x,
                          std::vector<Point>& p, std::vector<Cached>& cached, const RefPoint& z, Coverage& coverage,
                          Rng& rng, AdjustScratch& w) {
  const int count = static_cast<int>(aims.size());
  w.order.resize(count);
  std::iota(w.order.begin(), w.order.end(), 0);
  std::sort(w.order.begin(), w.order.end(), [&](int a, int b) {
    return p[a].u != p[b].u ? p[a].u > p[b].u : p[a].v > p[b].v;
  });
  // Sweep by u descending: a vector is non-dominated iff its v beats every v seen so far; the first
  // holder of each such vector is the keeper unless another holder is already aimed at it.
  w.keepers.clear();
  w.kept.assign(count, 0);
  int best_v = -1;
  for (int i = 0; i < count;) {
    int end = i;
    while (end < count && p[w.order[end]].u == p[w.order[i]].u && p[w.order[end]].v == p[w.order[i]].v) ++end;
    const Point& q = p[w.order[i]];
    if (q.v > best_v) {
      int keeper = w.order[i];
      for (int m = i; m < end; ++m)
        if (aims[w.order[m]].is_ray_at(q.u, q.v)) keeper = w.order[m];
      w.keepers.push_back(keeper);
      w.kept[keeper] = 1;
      best_v = q.v;
    }
    i = end;
  }
  std::reverse(w.keepers.begin(), w.keepers.end());  // u ascending: f1 ascending, f2 descending
  for (int k : w.keepers) {
    aims[k] = Aim::ray(p[k].u, p[k].v);
    aims[k].refresh(problem, z);
    cached[k] = cache(aims[k], z, p[k]);
  }

  // Targets: gap i in [0, K-2] lies between keepers i and i+1; K-1 is past the f2 end (Axis2), K past
  // the f1 end (Axis1).
  const int kept_count = static_cast<int>(w.keepers.size());
  const int target_count = kept_count + 1;
  w.targets.resize(target_count);
  std::iota(w.targets.begin(), w.targets.end(), 0);
  for (int i = target_count - 1; i > 0; --i) std::swap(w.targets[i], w.targets[rng.below(i + 1)]);
  w.free.clear();
  for (int k = 0; k < count; ++k)
    if (!w.kept[k]) w.free.push_back(k);
  for (std::size_t i = 0; i < w.free.size(); ++i) {
    const int f = w.free[i];
    const int t = w.targets[i % target_count];
    int from;
    if (t < kept_count - 1) {
      const int left = w.keepers[t], right = w.keepers[t + 1];
      aims[f] = Aim::ray(p[left].u, p[right].v);
      from = rng.coin() ? left : right;
    } else if (t == kept_count - 1) {
      aims[f] = Aim::axis2();
      from = w.keepers.front();
    } else {
      aims[f] = Aim::axis1();
      from = w.keepers.back();
    }
    aims[f].refresh(problem, z);
    coverage.remove(p[f]);
    x[f] = x[from], p[f] = p[from];
    coverage.add(p[f]);
    cached[f] = cache(aims[f], z, p[f]);
  }
}

}  // namespace

RunResult run_moead_self_adjusting(const Problem& problem, const Settings& s, std::uint64_t seed,
                                   const Trace* trace) {
  Rng rng(seed);
  Bookkeeper book(problem, s, trace);
  const int count = subproblem_count(problem, s);
  std::vector<Aim> aims(count);
  const auto weights = uniform_weights(count);
  for (int j = 0; j < count; ++j) aims[j] = Aim::weights(weights[j]);

  Subproblems sub;
  std::vector<Cached> cached(count);
  RefPoint z;  // one unit above the best values seen, so every ray has positive weights
  auto rescore = [&] {
    z = {sub.best.z1 + 1, sub.best.z2 + 1};
    for (int k = 0; k < count; ++k) {
      aims[k].refresh(problem, z);
      cached[k] = cache(aims[k], z, sub.p[k]);
    }
  };
  auto offer = [&](int, const BitString& y, const Point& q) {
    bool taken = false;
    for (int k = 0; k < count; ++k) {
      Cached cy;
      if (accepts(aims[k], cached[k], sub.p[k], z, q, cy)) {
        sub.replace(k, y, q, book.population);
        cached[k] = cy;
        taken = true;
      }
    }
    return taken;
  };
  AdjustScratch scratch;
  std::int64_t generation = 0;
  const int every = std::max(1, s.adjust_every);
  auto adjust = [&] {
    if (++generation % every == 0)
      adjust_decomposition(problem, aims, sub.x, sub.p, cached, z, book.population, rng, scratch);
  };
  moead_generations(problem, s, count, rng, book, sub, rescore, offer, adjust);
  return book.finish(sub.p, count);
}

RunResult run_algorithm(Algorithm a, const Problem& problem, const Settings& s, std::uint64_t seed,
                        const Trace* trace) {
  switch (a) {
    case Algorithm::Gsemo: return run_gsemo(problem, s, seed, trace);
    case Algorithm::Classic: return run_moead_classic(problem, s, seed, trace);
    case Algorithm::SelfAdjusting: return run_moead_self_adjusting(problem, s, seed, trace);
  }
  return {};
}

}  // namespace moead
