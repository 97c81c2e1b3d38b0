// hellinger_sg's own tests: the graph distance against brute force, closed forms and its metric axioms;
// the predicates of hand-set boxes; the generator's determinism and noise rate.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>

#include <cmath>

#include "hellinger.hpp"
#include "model.hpp"
#include "rooms.hpp"

using namespace hellinger_sg;

namespace {

// A random field over a random graph, in double: logits and edges.
struct Logits {
  at::Tensor node, pred, edges;
};

Logits random_logits(std::int64_t n, std::int64_t e, std::int64_t C, std::int64_t R, double scale = 2.0) {
  Logits l;
  l.node = scale * at::randn({n, C}, at::kDouble);
  l.pred = scale * at::randn({e, R}, at::kDouble);
  l.edges = at::randint(0, n, {e, 2}, at::kLong);
  return l;
}

RootField field(const Logits& l, PredicateModel m) { return root_from_logits(l.node, l.pred, l.edges, m); }

// The triplet term from its definition, with plain loops over probabilities: sum over the whole product
// space of sqrt(T_ij(a, x, b) T*_ij(a, x, b)); x runs over R predicates (categorical) or over the 2^R
// subsets of predicates (independent Bernoullis).
double brute_force_triplet(const Logits& p, const Logits& q, std::int64_t e, PredicateModel m) {
  const std::int64_t s = p.edges[e][0].item<std::int64_t>(), o = p.edges[e][1].item<std::int64_t>();
  const at::Tensor ps = at::softmax(p.node[s], 0), po = at::softmax(p.node[o], 0);
  const at::Tensor qs = at::softmax(q.node[s], 0), qo = at::softmax(q.node[o], 0);
  const std::int64_t C = ps.size(0), R = p.pred.size(1);
  std::vector<double> px, qx;  // the predicate slot's distribution
  if (m == PredicateModel::Categorical) {
    for (std::int64_t r = 0; r < R; ++r)
      px.push_back(at::softmax(p.pred[e], 0)[r].item<double>()), qx.push_back(at::softmax(q.pred[e], 0)[r].item<double>());
  } else {
    const at::Tensor pp = at::sigmoid(p.pred[e]), qq = at::sigmoid(q.pred[e]);
    for (std::int64_t subset = 0; subset < (1 << R); ++subset) {
      double a = 1, b = 1;
      for (std::int64_t r = 0; r < R; ++r) {
        const bool on = subset >> r & 1;
        a *= on ? pp[r].item<double>() : 1 - pp[r].item<double>();
        b *= on ? qq[r].item<double>() : 1 - qq[r].item<double>();
      }
      px.push_back(a), qx.push_back(b);
    }
  }
  double bc = 0;
  for (std::int64_t a = 0; a < C; ++a)
    for (std::size_t x = 0; x < px.size(); ++x)
      for (std::int64_t b = 0; b < C; ++b) {
        const double tp = ps[a].item<double>() * px[x] * po[b].item<double>();
        const double tq = qs[a].item<double>() * qx[x] * qo[b].item<double>();
        bc += std::sqrt(tp * tq);
      }
  return 1 - bc;
}

double distance(const Logits& a, const Logits& b, double w = 0.7) {
  return graph_distance(field(a, PredicateModel::Bernoulli), field(b, PredicateModel::Bernoulli), w).distance.item<double>();
}

Box box(double x, double y, double z, double w, double d, double h) { return {{x, y, z}, {w, d, h}}; }

}  // namespace

TEST(hellinger_sg, FactorisedTripletTermEqualsBruteForceOverTheProductSpace) {
  at::manual_seed(3);
  for (auto m : {PredicateModel::Categorical, PredicateModel::Bernoulli}) {
    const Logits p = random_logits(6, 9, 5, 4), q0 = random_logits(6, 9, 5, 4);
    const Logits q{q0.node, q0.pred, p.edges};
    const at::Tensor fast = triplet_terms(field(p, m), field(q, m));
    const at::Tensor materialised = triplet_terms_materialised(field(p, m), field(q, m), 4);
    for (std::int64_t e = 0; e < 9; ++e) {
      const double brute = brute_force_triplet(p, q, e, m);
      EXPECT_NEAR(fast[e].item<double>(), brute, 1e-6) << "edge " << e;
      EXPECT_NEAR(materialised[e].item<double>(), brute, 1e-6) << "edge " << e;
    }
  }
}

TEST(hellinger_sg, DistanceIsZeroExactlyWhenTheFieldsAgreeAndSymmetric) {
  at::manual_seed(5);
  const Logits a = random_logits(7, 12, 5, 4), b0 = random_logits(7, 12, 5, 4);
  const Logits b{b0.node, b0.pred, a.edges};
  EXPECT_NEAR(distance(a, a), 0.0, 1e-7);
  EXPECT_GT(distance(a, b), 1e-3);
  EXPECT_NEAR(distance(a, b), distance(b, a), 1e-12);
  // A change in one predicate of one edge alone, or one node alone, is seen.
  Logits c{a.node.clone(), a.pred.clone(), a.edges};
  c.pred[0][2] += 1.0;
  EXPECT_GT(distance(a, c), 1e-3);
  Logits d{a.node.clone(), a.pred, a.edges};
  d.node[6][1] += 1.0;
  EXPECT_GT(distance(a, d), 1e-3);
}

TEST(hellinger_sg, DistanceSatisfiesTheTriangleInequality) {
  at::manual_seed(7);
  int checked = 0;
  for (int t = 0; t < 200; ++t) {
    const Logits a = random_logits(5, 8, 5, 4, 3.0);
    const Logits b{random_logits(5, 8, 5, 4, 3.0).node, random_logits(5, 8, 5, 4, 3.0).pred, a.edges};
    const Logits c{random_logits(5, 8, 5, 4, 3.0).node, random_logits(5, 8, 5, 4, 3.0).pred, a.edges};
    EXPECT_LE(distance(a, c), distance(a, b) + distance(b, c) + 1e-12);
    ++checked;
  }
  EXPECT_EQ(checked, 200);
}

TEST(hellinger_sg, GradientsMatchFiniteDifferences) {
  at::manual_seed(11);
  Logits p = random_logits(4, 6, 5, 4), q0 = random_logits(4, 6, 5, 4);
  const RootField q = root_from_logits(q0.node, q0.pred, p.edges);
  p.node.requires_grad_(true), p.pred.requires_grad_(true);
  auto value = [&](const at::Tensor& node, const at::Tensor& pred) {
    return graph_distance(root_from_logits(node, pred, p.edges), q, 0.5).distance;
  };
  const auto grads = torch::autograd::grad({value(p.node, p.pred)}, {p.node, p.pred});
  const double h = 1e-6;
  for (int which = 0; which < 2; ++which) {
    const at::Tensor base = (which ? p.pred : p.node).detach();
    for (std::int64_t k = 0; k < base.numel(); k += 3) {
      at::Tensor up = base.clone(), down = base.clone();
      up.view(-1)[k] += h, down.view(-1)[k] -= h;
      const double fd = which ? (value(p.node.detach(), up) - value(p.node.detach(), down)).item<double>() / (2 * h)
                              : (value(up, p.pred.detach()) - value(down, p.pred.detach())).item<double>() / (2 * h);
      EXPECT_NEAR(grads[which].view(-1)[k].item<double>(), fd, 1e-7) << (which ? "predicate" : "node") << " " << k;
    }
  }
}

TEST(hellinger_sg, OneHotTargetsGiveTheClosedForm) {
  at::manual_seed(13);
  const Logits p = random_logits(5, 7, 6, 4);
  const at::Tensor y = at::randint(0, 6, {5}, at::kLong), r = at::randint(0, 4, {7}, at::kLong);
  const RootField q = root_from_probs(at::one_hot(y, 6).to(at::kDouble), at::one_hot(r, 4).to(at::kDouble), p.edges,
                                      PredicateModel::Categorical);
  const at::Tensor t = triplet_terms(field(p, PredicateModel::Categorical), q);
  const at::Tensor pn = at::softmax(p.node, 1), pr = at::softmax(p.pred, 1);
  for (std::int64_t e = 0; e < 7; ++e) {
    const auto s = p.edges[e][0].item<std::int64_t>(), o = p.edges[e][1].item<std::int64_t>();
    const double closed = 1 - std::sqrt(pn[s][y[s]].item<double>() * pr[e][r[e]].item<double>() * pn[o][y[o]].item<double>());
    EXPECT_NEAR(t[e].item<double>(), closed, 1e-12);
  }
}

// A star (hub 0 with d = 4 leaves) plus a chain end: the same wrong class costs the summed triplet term d
// times as much on the hub as on a leaf; summed cross-entropy charges both the same.
TEST(hellinger_sg, AWrongClassCostsTheTripletTermInProportionToDegree) {
  const std::int64_t C = 5, R = 3, d = 4;
  const at::Tensor edges = at::tensor({0, 1, 0, 2, 0, 3, 0, 4}, at::kLong).view({d, 2});
  const at::Tensor y = at::tensor({0, 1, 2, 3, 4}, at::kLong);
  const at::Tensor labels = at::one_hot(at::tensor({0, 1, 2, 0}, at::kLong), R).to(at::kDouble);
  const RootField truth = root_from_probs(at::one_hot(y, C).to(at::kDouble), labels, edges);
  auto wrong_at = [&](std::int64_t node) {
    at::Tensor probs = at::one_hot(y, C).to(at::kDouble);
    probs[node] = 0.1;
    probs[node][y[node].item<std::int64_t>()] = 0.6;  // 0.6 on the truth, 0.1 on each other class
    const RootField p = root_from_probs(probs, labels, edges);
    return std::make_pair(triplet_terms(p, truth).sum().item<double>(),
                          -at::log(probs.gather(1, y.unsqueeze(1))).sum().item<double>());
  };
  const auto [hub_triplet, hub_ce] = wrong_at(0);
  const auto [leaf_triplet, leaf_ce] = wrong_at(3);
  EXPECT_NEAR(hub_triplet / leaf_triplet, static_cast<double>(d), 1e-9);
  EXPECT_NEAR(leaf_triplet, 1 - std::sqrt(0.6), 1e-12);
  EXPECT_NEAR(hub_ce, leaf_ce, 1e-12);
}

TEST(hellinger_sg, HierarchyContextMakesASiblingSwapCheaperThanAFarOne) {
  const auto& t = rooms_taxonomy();
  std::vector<int> groups;
  for (const auto& c : t.classes) groups.push_back(c.group);
  const at::Tensor kernel = hierarchy_kernel(groups, 0.1, true).to(at::kDouble);
  const std::int64_t chair = t.find_class("chair"), stool = t.find_class("stool"), wall = t.find_class("wall");
  const at::Tensor no_edges = at::zeros({0, 2}, at::kLong), no_pred = at::zeros({0, kNumPredicates}, at::kDouble);
  const RootField target = root_from_probs(kernel.index_select(0, at::tensor({chair})), no_pred, no_edges);
  auto cost = [&](std::int64_t predicted) {
    at::Tensor p = at::full({1, t.num_classes()}, 0.2 / (t.num_classes() - 1), at::kDouble);
    p[0][predicted] = 0.8;
    return node_terms(root_from_probs(p, no_pred, no_edges), target).item<double>();
  };
  EXPECT_LT(cost(stool), cost(wall) - 0.05);
  EXPECT_LT(cost(chair), cost(stool));
  // Without context the two wrong answers cost the same.
  const at::Tensor onehot = hierarchy_kernel(groups, 0.1, false).to(at::kDouble);
  const RootField hard = root_from_probs(onehot.index_select(0, at::tensor({chair})), no_pred, no_edges);
  auto hard_cost = [&](std::int64_t predicted) {
    at::Tensor p = at::full({1, t.num_classes()}, 0.2 / (t.num_classes() - 1), at::kDouble);
    p[0][predicted] = 0.8;
    return node_terms(root_from_probs(p, no_pred, no_edges), hard).item<double>();
  };
  EXPECT_NEAR(hard_cost(stool), hard_cost(wall), 1e-12);
}

TEST(hellinger_sg, PredicatesOfHandSetBoxes) {
  const auto& t = rooms_taxonomy();
  const int table = t.find_class("table"), lamp = t.find_class("lamp"), chair = t.find_class("chair");
  const int wall = t.find_class("wall"), picture = t.find_class("picture"), cabinet = t.find_class("cabinet");
  const int bed = t.find_class("bed"), pillow = t.find_class("pillow");
  const Box tbl = box(2, 2, 0.375, 1.4, 0.8, 0.75), lmp = box(2.2, 2.1, 1.0, 0.3, 0.3, 0.5);
  const Box chr = box(3.2, 2.0, 0.45, 0.5, 0.5, 0.9);
  const Box back_wall = box(2.5, 4.05, 1.3, 5, 0.1, 2.6), pic = box(1, 3.98, 1.5, 0.6, 0.04, 0.5);
  const Box cab = box(4, 3.775, 0.45, 0.8, 0.45, 0.9);
  const Box bd = box(1, 1, 0.25, 1.6, 2, 0.5), pil = box(1, 1.6, 0.575, 0.5, 0.35, 0.15);
  auto has = [](std::uint32_t bits, int p) { return (bits >> p & 1u) != 0; };
  const auto lamp_table = predicates(lamp, lmp, table, tbl);
  EXPECT_TRUE(has(lamp_table, kStandingOn));
  EXPECT_TRUE(has(lamp_table, kSmaller) && has(lamp_table, kHigher) && has(lamp_table, kCloseBy));
  EXPECT_FALSE(has(lamp_table, kLyingOn) || has(lamp_table, kBigger));
  const auto table_chair = predicates(table, tbl, chair, chr);
  EXPECT_TRUE(has(table_chair, kLeft) && has(table_chair, kBigger) && has(table_chair, kCloseBy));
  EXPECT_FALSE(has(table_chair, kStandingOn) || has(table_chair, kRight));
  EXPECT_TRUE(has(predicates(chair, chr, table, tbl), kRight));
  EXPECT_EQ(predicates(picture, pic, wall, back_wall), 1u << kHangingOn);
  EXPECT_EQ(predicates(cabinet, cab, wall, back_wall), 1u << kAttachedTo);
  EXPECT_TRUE(has(predicates(pillow, pil, bed, bd), kLyingOn));
  EXPECT_FALSE(has(predicates(pillow, pil, bed, bd), kStandingOn));
  EXPECT_TRUE(has(predicates(chair, chr, chair, box(3.2, 2.8, 0.45, 0.5, 0.5, 0.9)), kSameAs));
  EXPECT_TRUE(has(predicates(chair, chr, chair, box(3.2, 2.8, 0.45, 0.5, 0.5, 0.9)), kFront));
  EXPECT_EQ(predicates(wall, back_wall, picture, pic), 0u);  // "none"
}

TEST(hellinger_sg, RoomsAreReproducibleAndTheirLabelsFollowTheGeometry) {
  RoomsOptions o;
  o.scenes = 40;
  const RoomsDataset a = build_rooms(o, 9), b = build_rooms(o, 9);
  ASSERT_EQ(a.train.size(), 30u);
  std::size_t edges = 0;
  int hanging = 0, standing = 0;
  for (std::size_t k = 0; k < a.train.size(); ++k) {
    const Scene& s = a.train[k];
    EXPECT_EQ(s.points, b.train[k].points);
    EXPECT_EQ(s.labels, s.clean);  // no noise asked
    for (int e = 0; e < s.num_edges(); ++e) {
      const auto [i, j] = s.edges[e];
      EXPECT_EQ(s.clean[e], predicates(s.classes[i], s.boxes[i], s.classes[j], s.boxes[j]));
      hanging += s.clean[e] >> kHangingOn & 1u, standing += s.clean[e] >> kStandingOn & 1u;
    }
    edges += s.edges.size();
  }
  EXPECT_GT(edges, 30u * 20u);
  EXPECT_GT(standing, hanging);  // supports are common, wall items rarer
  EXPECT_GT(hanging, 0);
}

TEST(hellinger_sg, LabelNoiseReplacesTheAskedShareOfPredicates) {
  RoomsOptions o;
  o.scenes = 60;
  o.label_noise = 0.3;
  const RoomsDataset d = build_rooms(o, 4);
  double kept = 0, positives = 0;
  for (const auto& s : d.train)
    for (int e = 0; e < s.num_edges(); ++e)
      for (int r = 0; r < kNumPredicates; ++r)
        if (s.clean[e] >> r & 1u) positives += 1, kept += s.labels[e] >> r & 1u;
  // Each true label survives with probability 0.7 (plus the rare case that another one moves onto it).
  EXPECT_NEAR(kept / positives, 0.7, 0.04);
}

TEST(hellinger_sg, EdgeDescriptorIsSgfnsElevenNumbers) {
  at::Tensor pts = at::zeros({2, 4, 3});
  // Object 0: a unit cube's corners on z = 0 / 1 ... spread over x, y, z in [0, 1]; object 1: twice as big.
  pts[0] = at::tensor({0.f, 0.f, 0.f, 1.f, 1.f, 1.f, 1.f, 0.f, 1.f, 0.f, 1.f, 0.f}).view({4, 3});
  pts[1] = 2 * pts[0];
  const at::Tensor d = edge_descriptor(pts, at::tensor({0, 1}, at::kLong).view({1, 2}));
  ASSERT_EQ(d.size(1), 11);
  EXPECT_NEAR(d[0][0].item<double>(), -0.5, 1e-6);             // centroid difference
  EXPECT_NEAR(d[0][6].item<double>(), -1.0, 1e-6);             // extent difference
  EXPECT_NEAR(d[0][9].item<double>(), std::log(0.5), 1e-6);    // ln(l_i / l_j)
  EXPECT_NEAR(d[0][10].item<double>(), std::log(0.125), 1e-5);  // ln(v_i / v_j)
}
