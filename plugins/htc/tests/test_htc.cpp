// htc's own tests: SEMID's answers, brute force on tiny graphs, the Jacobian of the parametrization,
// randomized against classic, and numeric identification against known parameters.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "criteria.hpp"
#include "datasets.hpp"
#include "field.hpp"
#include "flow.hpp"
#include "generators.hpp"
#include "half_trek_matrix.hpp"
#include "identify.hpp"
#include "methods.hpp"

namespace fs = std::filesystem;
using namespace htc;

namespace {

const fs::path kSemid = "plugins/htc/data/semid-0.4.2";

MixedGraph graph(int n, std::vector<Edge> d, std::vector<Edge> b) { return MixedGraph(n, std::move(d), std::move(b)); }

std::vector<int> solved_nodes_one_based(const MixedGraph& g, const Identification& id) {
  std::vector<int> out;
  for (int v = 0; v < g.num_nodes(); ++v)
    if (id.node_solved(g, v)) out.push_back(v + 1);
  return out;
}

// ---- Brute force: half-treks as explicit simple paths, systems by backtracking.
struct HalfTrek {
  int target;
  unsigned right;  // bitmask of the right side
};

std::vector<HalfTrek> half_treks_from(const MixedGraph& g, int y) {
  std::vector<HalfTrek> out;
  std::function<void(int, unsigned)> walk = [&](int v, unsigned right) {
    out.push_back({v, right});
    for (int c : g.children(v))
      if (!(right >> c & 1)) walk(c, right | 1u << c);
  };
  walk(y, 1u << y);  // y -> ... (y on both sides)
  for (int s : g.siblings(y)) walk(s, 1u << s);  // y <-> s -> ...
  return out;
}

bool system_exists(const MixedGraph& g, const std::vector<int>& sources, const std::vector<int>& targets) {
  std::vector<std::vector<HalfTrek>> treks;
  for (int y : sources) treks.push_back(half_treks_from(g, y));
  std::vector<char> used(targets.size(), 0);
  std::function<bool(std::size_t, unsigned)> place = [&](std::size_t i, unsigned right) {
    if (i == sources.size()) return true;
    for (const auto& t : treks[i]) {
      auto it = std::find(targets.begin(), targets.end(), t.target);
      if (it == targets.end() || used[it - targets.begin()] || (t.right & right)) continue;
      used[it - targets.begin()] = 1;
      if (place(i + 1, right | t.right)) return true;
      used[it - targets.begin()] = 0;
    }
    return false;
  };
  return place(0, 0);
}

// The HTC fixed point with every subset Y of the allowed nodes tried by brute force.
std::vector<char> brute_force_htc(const MixedGraph& g) {
  const int n = g.num_nodes();
  std::vector<char> solved(n), htr;
  Reach reach(g);
  for (int v = 0; v < n; ++v) solved[v] = g.parents(v).empty();
  for (bool changed = true; changed;) {
    changed = false;
    for (int v = 0; v < n; ++v) {
      if (solved[v]) continue;
      reach.htr_from(v, htr);
      std::vector<int> allowed;
      for (int y = 0; y < n; ++y)
        if (y != v && !g.is_sibling(v, y) && (!htr[y] || solved[y])) allowed.push_back(y);
      const int k = static_cast<int>(g.parents(v).size());
      for (unsigned mask = 0; mask < (1u << allowed.size()) && !solved[v]; ++mask) {
        if (__builtin_popcount(mask) != k) continue;
        std::vector<int> y;
        for (std::size_t i = 0; i < allowed.size(); ++i)
          if (mask >> i & 1) y.push_back(allowed[i]);
        if (system_exists(g, y, g.parents(v))) solved[v] = changed = true;
      }
    }
  }
  return solved;
}

// ---- The Jacobian of (Lambda, Omega) -> Sigma at a random point of F_p, an oracle independent of every
// criterion. Columns: lambda_e (e in D), omega_vv, omega_e (e in B). Returns, per parameter, whether it
// is locally identifiable at that point (e_k in the row space of J), and the rank.
struct JacobianResult {
  std::vector<char> identifiable;
  int rank = 0, params = 0;
};

JacobianResult jacobian(const MixedGraph& g, std::uint64_t seed) {
  const PrimeField f;
  std::mt19937_64 rng(seed);
  const int n = g.num_nodes();
  using Mat = std::vector<std::vector<u64>>;
  Mat lam(n, std::vector<u64>(n, 0)), om(n, std::vector<u64>(n, 0));
  for (const auto& e : g.directed()) lam[e.from][e.to] = f.random(rng);
  for (const auto& e : g.bidirected()) om[e.from][e.to] = om[e.to][e.from] = f.random(rng);
  for (int v = 0; v < n; ++v) om[v][v] = f.random(rng);
  auto mul = [&](const Mat& a, const Mat& b) {
    Mat c(n, std::vector<u64>(n, 0));
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k)
        if (a[i][k])
          for (int j = 0; j < n; ++j) c[i][j] = f.add(c[i][j], f.mul(a[i][k], b[k][j]));
    return c;
  };
  // B^{-1} = (I - Lambda)^{-1} by Gauss-Jordan.
  Mat a(n, std::vector<u64>(n, 0)), inv(n, std::vector<u64>(n, 0));
  for (int i = 0; i < n; ++i) {
    inv[i][i] = 1;
    for (int j = 0; j < n; ++j) a[i][j] = f.sub(i == j ? 1 : 0, lam[i][j]);
  }
  for (int c = 0; c < n; ++c) {
    int p = c;
    while (a[p][c] == 0) ++p;
    std::swap(a[p], a[c]);
    std::swap(inv[p], inv[c]);
    const u64 s = f.inv(a[c][c]);
    for (int j = 0; j < n; ++j) a[c][j] = f.mul(a[c][j], s), inv[c][j] = f.mul(inv[c][j], s);
    for (int i = 0; i < n; ++i)
      if (i != c && a[i][c]) {
        const u64 m = a[i][c];
        for (int j = 0; j < n; ++j) a[i][j] = f.sub(a[i][j], f.mul(m, a[c][j])), inv[i][j] = f.sub(inv[i][j], f.mul(m, inv[c][j]));
      }
  }
  Mat inv_t(n, std::vector<u64>(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) inv_t[i][j] = inv[j][i];
  const Mat sigma = mul(mul(inv_t, om), inv);
  // dSigma for each parameter, as the vector of its upper triangle.
  std::vector<std::vector<u64>> columns;
  auto sym = [&](const std::vector<u64>& x, const std::vector<u64>& y) {  // x y^T + y x^T
    std::vector<u64> col;
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) col.push_back(f.add(f.mul(x[i], y[j]), f.mul(y[i], x[j])));
    return col;
  };
  auto inv_t_col = [&](int j) {  // B^{-T} e_j
    std::vector<u64> x(n);
    for (int i = 0; i < n; ++i) x[i] = inv_t[i][j];
    return x;
  };
  for (const auto& e : g.directed()) {  // B^{-T} e_j (Sigma e_i)^T + transpose, for i -> j
    std::vector<u64> s(n);
    for (int k = 0; k < n; ++k) s[k] = sigma[e.from][k];
    columns.push_back(sym(inv_t_col(e.to), s));
  }
  for (int v = 0; v < n; ++v) {  // B^{-T} E_vv B^{-1}: half of sym(x, x)
    auto col = sym(inv_t_col(v), inv_t_col(v));
    const u64 half = f.inv(2);
    for (auto& c : col) c = f.mul(c, half);
    columns.push_back(col);
  }
  for (const auto& e : g.bidirected()) columns.push_back(sym(inv_t_col(e.from), inv_t_col(e.to)));
  const int params = static_cast<int>(columns.size()), rows = n * (n + 1) / 2;
  EchelonBasis basis;
  basis.reset(params);
  std::vector<u64> row(params);
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < params; ++k) row[k] = columns[k][r];
    basis.insert(row.data(), r, f);
  }
  JacobianResult out;
  out.rank = basis.rank();
  out.params = params;
  out.identifiable.assign(params, 0);
  for (int k : basis.covered_columns(f)) out.identifiable[k] = 1;
  return out;
}

// Index of edge from -> to among g.directed() (the Jacobian's lambda columns).
int edge_index(const MixedGraph& g, int from, int to) {
  const auto& d = g.directed();
  return static_cast<int>(std::lower_bound(d.begin(), d.end(), Edge{from, to}) - d.begin());
}

MixedGraph random_graph(std::mt19937_64& rng, int n) {
  const auto& families = family_names();
  return random_mixed_graph(n, family_spec(families[rng() % families.size()], n), rng);
}

struct SemidCase {
  NamedGraph graph;
  std::map<std::string, ReferenceAnswer> answers;
};

const std::vector<SemidCase>& semid_cases() {
  static const std::vector<SemidCase> cases = [] {
    const Reference ref = read_reference(kSemid / "results.csv");
    std::vector<SemidCase> out;
    for (auto& g : read_semid_dir(kSemid / "graphs")) out.push_back({g, ref.at(g.name)});
    return out;
  }();
  return cases;
}

}  // namespace

// ============================================================================ files

TEST(Files, SemidMatricesAndEdgeListsRoundTrip) {
  const MixedGraph g = graph(4, {{0, 1}, {1, 2}, {3, 2}, {2, 0}}, {{0, 3}, {2, 1}});
  const auto [l, o] = to_semid_matrices(g);
  EXPECT_EQ(l, "0 1 0 0\n0 0 1 0\n1 0 0 0\n0 0 1 0\n");
  const MixedGraph back = parse_semid_matrices(l, o, "test");
  EXPECT_EQ(back.directed(), g.directed());
  EXPECT_EQ(back.bidirected(), g.bidirected());
  const MixedGraph listed = parse_edge_list(to_edge_list(g), "test");
  EXPECT_EQ(listed.directed(), g.directed());
  EXPECT_EQ(listed.bidirected(), g.bidirected());
  EXPECT_EQ(parse_edge_list("# a comment\nnodes 3\n1 -> 2  # edge\n3 <-> 1\n", "t").num_bidirected(), 1);
  EXPECT_FALSE(g.is_acyclic());
  EXPECT_EQ(g.strong_components().size(), 2u);  // {1, 2, 3} and {4}
}

TEST(Files, MalformedInputIsRefusedWithTheLine) {
  EXPECT_THROW(parse_semid_matrices("0 1\n0 0\n", "0 1\n0 0\n", "t"), nexp::DataError);  // O not symmetric
  EXPECT_THROW(parse_semid_matrices("1 0\n0 0\n", "0 0\n0 0\n", "t"), nexp::DataError);  // self-loop
  EXPECT_THROW(parse_semid_matrices("0 2\n0 0\n", "0 0\n0 0\n", "t"), nexp::DataError);
  try {
    parse_edge_list("nodes 3\n1 -> 2\n1 => 3\n", "g.edges");
    FAIL();
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_edge_list("1 -> 2\n", "t"), nexp::DataError);
  EXPECT_THROW(read_semid_dir("no/such/folder"), nexp::DataError);
}

TEST(Files, TheSemidFolderHasSixtyGraphsAndTheirAnswers) {
  ASSERT_EQ(semid_cases().size(), 60u);
  for (const auto& c : semid_cases()) {
    EXPECT_EQ(c.answers.size(), c.graph.graph.num_nodes() <= 20 ? 5u : 4u) << c.graph.name;
    EXPECT_EQ(c.graph.graph.num_nodes(), std::stoi(c.graph.name.substr(1, 3))) << c.graph.name;  // n010_...
  }
}

// ============================================================================ SEMID's answers

TEST(Semid, ClassicAndRandomizedHtcEqualHtcIDOnAllSixtyGraphs) {
  for (const auto& c : semid_cases()) {
    const MixedGraph& g = c.graph.graph;
    const ReferenceAnswer& ref = c.answers.at("htcID_noTian");
    RandomizedOptions ro;
    ro.seed = 7;
    for (const Identification& id : {htc_classic(g), htc_randomized(g, ro)}) {
      EXPECT_EQ(solved_nodes_one_based(g, id), ref.solved_nodes) << c.graph.name << " " << id.algorithm;
      ASSERT_TRUE(ref.solved_edges.has_value());
      EXPECT_EQ(edge_string(id.solved_parents), *ref.solved_edges) << c.graph.name << " " << id.algorithm;
      EXPECT_EQ(id.identifiable(g), *ref.all_identified) << c.graph.name;
    }
    // SEMID's older matrix implementation lists the same nodes (in solving order).
    std::vector<int> old = c.answers.at("graphID.htcID").solved_nodes;
    std::sort(old.begin(), old.end());
    EXPECT_EQ(solved_nodes_one_based(g, htc_classic(g)), old) << c.graph.name;
  }
}

TEST(Semid, TianDecompositionEqualsHtcIDWithTian) {
  for (const auto& c : semid_cases()) {
    const MixedGraph& g = c.graph.graph;
    const ReferenceAnswer& ref = c.answers.at("htcID_tian");
    RandomizedOptions ro;
    const Identification classic = tian_decompose(g, [](const MixedGraph& x) { return htc_classic(x); });
    const Identification randomized = tian_decompose(g, [&](const MixedGraph& x) { return htc_randomized(x, ro); });
    EXPECT_EQ(solved_nodes_one_based(g, classic), ref.solved_nodes) << c.graph.name;
    EXPECT_EQ(edge_string(classic.solved_parents), *ref.solved_edges) << c.graph.name;
    EXPECT_EQ(randomized.solved_parents, classic.solved_parents) << c.graph.name;
  }
}

TEST(Semid, EdgewiseSubsetSearchAndClosureEqualEdgewiseIDOnTheSmallGraphs) {
  int compared = 0, more_than_htc = 0;
  for (const auto& c : semid_cases()) {
    auto it = c.answers.find("edgewiseID_inf_noTian");
    if (it == c.answers.end()) continue;
    const MixedGraph& g = c.graph.graph;
    RandomizedOptions ro;
    ro.seed = 3;
    const Identification full = edgewise_classic(g, 0), closure = edgewise_closure(g, ro);
    EXPECT_EQ(edge_string(full.solved_parents), *it->second.solved_edges) << c.graph.name;
    EXPECT_EQ(solved_nodes_one_based(g, full), it->second.solved_nodes) << c.graph.name;
    EXPECT_EQ(closure.solved_parents, full.solved_parents) << c.graph.name;
    more_than_htc += full.solved_edges() > htc_classic(g).solved_edges();
    ++compared;
  }
  EXPECT_EQ(compared, 30);
  EXPECT_EQ(more_than_htc, 6);  // the graphs where edgewise and HTC differ
}

TEST(Semid, NonIdentifiabilityEqualsGraphIDNonHtcID) {
  int compared = 0, nonid = 0;
  for (const auto& c : semid_cases()) {
    const ReferenceAnswer& ref = c.answers.at("graphID.nonHtcID");
    if (!ref.nonidentifiable) continue;  // SEMID did not run it at n = 80
    EXPECT_EQ(htc_nonidentifiable(c.graph.graph), *ref.nonidentifiable) << c.graph.name;
    ++compared;
    nonid += *ref.nonidentifiable;
  }
  EXPECT_EQ(compared, 45);
  EXPECT_GT(nonid, 5);
}

// ============================================================================ brute force and oracles

TEST(BruteForce, AllFourNodeDagsInOneOrderMatchPathEnumeration) {
  // Every mixed graph on 4 nodes whose directed part respects 1 < 2 < 3 < 4: 2^6 x 2^6 graphs.
  std::vector<Edge> pairs;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) pairs.push_back({a, b});
  RandomizedOptions ro;
  int identifiable = 0;
  for (unsigned dm = 0; dm < 64; ++dm)
    for (unsigned bm = 0; bm < 64; ++bm) {
      std::vector<Edge> d, b;
      for (int k = 0; k < 6; ++k) {
        if (dm >> k & 1) d.push_back(pairs[k]);
        if (bm >> k & 1) b.push_back(pairs[k]);
      }
      const MixedGraph g(4, d, b);
      const std::vector<char> expected = brute_force_htc(g);
      const Identification classic = htc_classic(g);
      ro.seed = dm * 64 + bm;
      const Identification randomized = htc_randomized(g, ro);
      for (int v = 0; v < 4; ++v) {
        ASSERT_EQ(classic.node_solved(g, v), static_cast<bool>(expected[v])) << to_edge_list(g);
        ASSERT_EQ(randomized.node_solved(g, v), static_cast<bool>(expected[v])) << to_edge_list(g);
      }
      identifiable += classic.identifiable(g);
    }
  // Bow-free acyclic graphs are identifiable (Brito and Pearl 2002): at least the 3^6 ways to put at
  // most one edge on each pair are.
  EXPECT_GE(identifiable, 729);
}

TEST(BruteForce, RandomCyclicGraphsMatchPathEnumeration) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 400; ++t) {
    const int n = 4 + static_cast<int>(rng() % 3);
    const MixedGraph g = random_mixed_graph(n, GraphSpec{false, 0.3, 0.3}, rng);
    const std::vector<char> expected = brute_force_htc(g);
    const Identification classic = htc_classic(g);
    for (int v = 0; v < n; ++v) ASSERT_EQ(classic.node_solved(g, v), static_cast<bool>(expected[v])) << to_edge_list(g);
  }
}

TEST(BruteForce, IdentifiedEdgesAreLocallyIdentifiableAndNonHtcIsRankDeficient) {
  // The Jacobian of the parametrization is independent of every criterion: whatever a criterion
  // identifies must be locally identifiable (its coordinate vanishes on the tangent space of the fibre),
  // and a graph that FDD's Theorem 2 calls infinite-to-one must have a rank-deficient Jacobian.
  std::mt19937_64 rng(5);
  int nonid = 0, identified = 0, jacobian_only = 0;
  RandomizedOptions ro;
  for (int t = 0; t < 300; ++t) {
    const int n = 4 + static_cast<int>(rng() % 5);
    const MixedGraph g = random_graph(rng, n);
    const JacobianResult jac = jacobian(g, rng());
    ro.seed = rng();
    for (const Identification& id : {htc_classic(g), htc_randomized(g, ro), edgewise_classic(g, 0), edgewise_closure(g, ro)})
      for (int v = 0; v < n; ++v)
        for (int p : id.solved_parents[v]) {
          ASSERT_TRUE(jac.identifiable[edge_index(g, p, v)]) << id.criterion << " " << id.algorithm << " "
                                                             << p + 1 << "->" << v + 1 << "\n" << to_edge_list(g);
          ++identified;
        }
    if (htc_nonidentifiable(g)) {
      EXPECT_LT(jac.rank, jac.params) << to_edge_list(g);
      ++nonid;
    }
    const Identification e = edgewise_classic(g, 0);
    for (const auto& d : g.directed())
      jacobian_only += jac.identifiable[edge_index(g, d.from, d.to)] &&
                       !std::binary_search(e.solved_parents[d.to].begin(), e.solved_parents[d.to].end(), d.from);
  }
  EXPECT_GT(nonid, 10);
  EXPECT_GT(identified, 1000);
  // The criteria are sufficient, not necessary: some locally identifiable edges stay unidentified.
  EXPECT_GT(jacobian_only, 0);
}

// ============================================================================ randomized against classic

TEST(Randomized, AgreesWithClassicOnThousandsOfRandomGraphs) {
  std::mt19937_64 rng(2024);
  int graphs = 0, identifiable = 0;
  RandomizedOptions ro;
  for (int t = 0; t < 3000; ++t) {
    const int n = 3 + static_cast<int>(rng() % 18);
    const MixedGraph g = random_graph(rng, n);
    ro.seed = rng();
    const Identification classic = htc_classic(g), randomized = htc_randomized(g, ro);
    ASSERT_EQ(randomized.solved_parents, classic.solved_parents) << to_edge_list(g);
    EXPECT_LE(randomized.error_bound, 1e-12);
    identifiable += classic.identifiable(g);
    ++graphs;
  }
  EXPECT_GT(identifiable, 300);
  EXPECT_LT(identifiable, graphs - 300);  // both outcomes are well represented
}

TEST(Randomized, ASmallPrimeOnlyEverMissesIdentifications) {
  // With p = 11 accidents are frequent; every one of them must be a missed identification, never an
  // extra one: a nonzero minor at any point proves a half-trek system.
  std::mt19937_64 rng(99);
  int missed = 0;
  RandomizedOptions ro;
  ro.prime = 11;
  for (int t = 0; t < 1500; ++t) {
    const int n = 4 + static_cast<int>(rng() % 12);
    const MixedGraph g = random_graph(rng, n);
    ro.seed = rng();
    const Identification classic = htc_classic(g), full = edgewise_classic(g, 0);
    Identification small, closure;
    try {
      small = htc_randomized(g, ro);
      closure = edgewise_closure(g, ro);
    } catch (const std::runtime_error&) {  // I - Lambda singular at 16 points of F_11: nothing to check
      continue;
    }
    for (int v = 0; v < n; ++v) {
      ASSERT_FALSE(small.node_solved(g, v) && !classic.node_solved(g, v)) << to_edge_list(g);
      missed += classic.node_solved(g, v) && !small.node_solved(g, v);
    }
    for (int v = 0; v < n; ++v)
      for (int p : closure.solved_parents[v])
        ASSERT_TRUE(std::binary_search(full.solved_parents[v].begin(), full.solved_parents[v].end(), p));
  }
  EXPECT_GT(missed, 0);  // the test would notice a "randomized" algorithm that is secretly exact
}

TEST(Randomized, MoreTrialsRecoverWhatOnePointMisses) {
  std::mt19937_64 rng(7);
  int single = 0, many = 0, truth = 0;
  for (int t = 0; t < 300; ++t) {
    const MixedGraph g = random_mixed_graph(10, family_spec("dag_dense", 10), rng);
    RandomizedOptions ro;
    ro.prime = 13;
    ro.seed = rng();
    single += htc_randomized(g, ro).solved_edges();
    ro.trials = 8;
    many += htc_randomized(g, ro).solved_edges();
    truth += htc_classic(g).solved_edges();
  }
  EXPECT_LT(single, truth);
  EXPECT_LE(many, truth);
  EXPECT_GT(many, single);
}

TEST(Randomized, HalfTrekMatrixSumsHalfTreks) {
  // 1 -> 2 -> 3, 1 <-> 3: M[1, 3] = omega_11 l12 l23 (the trek 1 -> 2 -> 3) and M[3, 2] = 0 (no half-trek
  // from 3 reaches 2: 3 <-> 1 -> 2 does). Check both against the formula.
  const MixedGraph g = graph(3, {{0, 1}, {1, 2}}, {{0, 2}});
  const PrimeField f;
  std::mt19937_64 rng(1);
  const HalfTrekMatrix m(g, f, rng);
  std::vector<u64> row;
  m.row(0, row);
  EXPECT_EQ(row[2], f.add(f.mul(m.omega(0, 0), f.mul(m.lambda(0, 1), m.lambda(1, 2))), m.omega(0, 2)));
  m.row(2, row);
  EXPECT_EQ(row[1], f.mul(m.omega(2, 0), m.lambda(0, 1)));
  EXPECT_EQ(row[0], m.omega(2, 0));
}

// ============================================================================ edgewise

TEST(Edgewise, ClosureEqualsTheFullSubsetSearchAndContainsHtc) {
  std::mt19937_64 rng(31);
  RandomizedOptions ro;
  int gain = 0;
  for (int t = 0; t < 600; ++t) {
    const int n = 4 + static_cast<int>(rng() % 10);
    const MixedGraph g = random_graph(rng, n);
    if (g.max_in_degree() > 8) continue;
    ro.seed = rng();
    const Identification full = edgewise_classic(g, 0), closure = edgewise_closure(g, ro), h = htc_classic(g);
    ASSERT_EQ(closure.solved_parents, full.solved_parents) << to_edge_list(g);
    for (int v = 0; v < n; ++v)
      for (int p : h.solved_parents[v])
        ASSERT_TRUE(std::binary_search(full.solved_parents[v].begin(), full.solved_parents[v].end(), p));
    // Bounded subsets find a subset of the edges.
    const Identification bounded = edgewise_classic(g, 1);
    EXPECT_LE(bounded.solved_edges(), full.solved_edges());
    gain += full.solved_edges() > h.solved_edges();
  }
  EXPECT_GT(gain, 0);
}

// ============================================================================ numeric identification

TEST(Numeric, ExactCovarianceGivesTheTrueParameters) {
  std::mt19937_64 rng(17);
  int graphs = 0;
  RandomizedOptions ro;
  for (int t = 0; t < 200; ++t) {
    const int n = 5 + static_cast<int>(rng() % 15);
    const MixedGraph g = random_graph(rng, n);
    const Sem sem = random_sem(g, rng);
    if (std::fabs((Eigen::MatrixXd::Identity(n, n) - sem.lambda).determinant()) < 1e-3) continue;
    const Eigen::MatrixXd sigma = covariance(sem);
    ro.seed = rng();
    for (const Identification& id : {htc_classic(g), htc_randomized(g, ro), edgewise_closure(g, ro)}) {
      EXPECT_LT(max_error(g, identify(g, id, sigma), sem), 1e-6) << id.criterion << " " << id.algorithm << "\n"
                                                                  << to_edge_list(g);
      // Every allowed equation holds for the model's Sigma: least squares over all of them is exact too.
      EXPECT_LT(max_error(g, identify(g, id, sigma, true), sem), 1e-6) << id.criterion << " " << id.algorithm;
      // Unidentified edges stay NaN, identified ones are numbers.
      const Estimate e = identify(g, id, sigma);
      for (const auto& d : g.directed())
        EXPECT_EQ(std::isnan(e.lambda(d.from, d.to)),
                  !std::binary_search(id.solved_parents[d.to].begin(), id.solved_parents[d.to].end(), d.from));
    }
    ++graphs;
  }
  EXPECT_GT(graphs, 150);
}

TEST(Numeric, ErrorShrinksLikeOneOverSquareRootOfTheSampleSize) {
  std::mt19937_64 rng(23);
  MixedGraph g;
  Identification id;
  do {
    g = random_mixed_graph(8, family_spec("dag_sparse", 8), rng);
    id = htc_classic(g);
  } while (!id.identifiable(g) || g.num_directed() < 6);
  const Sem sem = random_sem(g, rng);
  std::vector<double> small, large;
  for (int r = 0; r < 5; ++r) {
    small.push_back(max_error(g, identify(g, id, sample_covariance(sem, 4000, rng)), sem));
    large.push_back(max_error(g, identify(g, id, sample_covariance(sem, 400000, rng)), sem));
  }
  std::sort(small.begin(), small.end());
  std::sort(large.begin(), large.end());
  // 100 times the samples: about a tenth of the (median) error, once N is past the weak-instrument
  // regime of small samples.
  EXPECT_LT(large[2], small[2] / 4);
  EXPECT_GT(large[2], small[2] / 40);
  EXPECT_LT(large[2], 0.2);
}

// ============================================================================ building blocks

TEST(Field, MersenneArithmeticAndInverses) {
  const PrimeField f;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const u64 a = f.random(rng), b = f.random(rng);
    ASSERT_LT(a, f.p());
    EXPECT_EQ(f.mul(a, b), static_cast<u64>(static_cast<unsigned __int128>(a) * b % f.p()));
    if (a) {
      EXPECT_EQ(f.mul(a, f.inv(a)), 1u);
    }
  }
  EXPECT_TRUE(is_prime(PrimeField::kMersenne61));
  EXPECT_TRUE(is_prime(1000000007));
  EXPECT_FALSE(is_prime(u64{2147483647} * 2147483647));  // a prime's square fools weak tests
  EXPECT_THROW(PrimeField(1001), std::invalid_argument);
}

TEST(Flow, HalfTrekSystemsRespectBothSides) {
  // 1 -> 3, 2 -> 3, 3 -> 4, 2 -> 4 and 1 <-> 2. From {1, 2} to {2, 3}: 1 -> 3 (right side {1, 3}) and
  // the trivial half-trek at 2 (right side {2}) have disjoint sides.
  const MixedGraph g = graph(4, {{0, 2}, {1, 2}, {2, 3}, {1, 3}}, {{0, 1}});
  FlowNetwork net;
  std::vector<char> allowed = {1, 1, 0, 0};
  EXPECT_EQ(max_half_trek_system(g, allowed, {1, 2}, net).size, 2);
  // From {1} alone at most one target.
  allowed = {1, 0, 0, 0};
  EXPECT_EQ(max_half_trek_system(g, allowed, {1, 2}, net).size, 1);
  // Without 2 -> 4, every half-trek from {1, 2} to {3, 4} passes through 3: only one fits.
  const MixedGraph h = graph(4, {{0, 2}, {1, 2}, {2, 3}}, {});
  allowed = {1, 1, 0, 0};
  EXPECT_EQ(max_half_trek_system(h, allowed, {2, 3}, net).size, 1);
}

TEST(Generators, FamiliesHaveTheDensitiesOfSemidsGraphs) {
  std::mt19937_64 rng(3);
  for (const auto& family : family_names()) {
    double d = 0, b = 0;
    for (int r = 0; r < 20; ++r) {
      const MixedGraph g = random_mixed_graph(80, family_spec(family, 80), rng);
      if (family.rfind("dag", 0) == 0) {
        EXPECT_TRUE(g.is_acyclic());
      }
      d += g.num_directed() / 20.0;
      b += g.num_bidirected() / 20.0;
    }
    // SEMID's three graphs of each family at n = 80 (results.csv).
    const std::map<std::string, std::pair<double, double>> semid = {{"dag_sparse", {124, 108}},
                                                                    {"dag_dense", {1435, 1132}},
                                                                    {"dag_boundary", {1759, 1270}},
                                                                    {"cyclic_sparse", {159, 75}},
                                                                    {"cyclic_dense", {980, 606}}};
    EXPECT_NEAR(d / semid.at(family).first, 1.0, 0.12) << family;
    EXPECT_NEAR(b / semid.at(family).second, 1.0, 0.2) << family;
  }
}

TEST(Generators, SparseGraphsOfThousandsOfNodesAreCheapAndDecidedInSeconds) {
  std::mt19937_64 rng(8);
  const MixedGraph g = random_mixed_graph(1000, family_spec("dag_sparse", 1000), rng);
  EXPECT_NEAR(g.num_directed(), 1500, 200);
  RandomizedOptions ro;
  const Identification r = htc_randomized(g, ro);
  const Identification c = htc_classic(g);
  EXPECT_EQ(r.solved_parents, c.solved_parents);
}

TEST(Options, ConfigValuesBindToTheDecisionOptionsAndThePrimeIsChecked) {
  const nexp::Params given({{"algorithm", std::string("classic")},
                            {"criterion", std::string("edgewise")},
                            {"prime", std::int64_t{101}}});
  auto o = nexp::bind<DecideOptions>(given);
  EXPECT_EQ(o.algorithm, Algorithm::Classic);
  EXPECT_EQ(o.criterion, Criterion::Edgewise);
  EXPECT_EQ(o.max_subset_size, 3);  // not given: the declared default
  EXPECT_EQ(o.json_graphs, 1000);
  EXPECT_NO_THROW(o.check());
  EXPECT_EQ(o.randomized(7).prime, 101u);
  EXPECT_EQ(o.randomized(7).seed, 7u);
  o.prime = 100;
  EXPECT_THROW(o.check(), nexp::ConfigError);
  o.prime = (std::int64_t{1} << 62) + 135;  // not below 2^62: a prime too large for the field's arithmetic
  EXPECT_TRUE(is_prime(static_cast<u64>(o.prime)));
  EXPECT_THROW(o.check(), nexp::ConfigError);
  EXPECT_EQ(algorithm_named("randomized"), Algorithm::Randomized);
}
