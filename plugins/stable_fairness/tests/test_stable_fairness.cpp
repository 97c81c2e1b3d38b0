// Tests of the stable_fairness plugin: the interior-point solver against stored cvxopt and ECOS
// solutions, its KKT residuals and a brute-force grid; the Lipschitz constants in closed form and against searches;
// the randomised mixture's rates; reweighing; Hardt et al.; exponentiated gradient against the LP.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include <nexp/stats.hpp>

#include "../data.hpp"
#include "../fairness.hpp"
#include "../models.hpp"
#include "../socp.hpp"

using namespace stable_fairness;

namespace {

// The tests run in the repository root (CTest sets the working directory).
const std::filesystem::path kData = "plugins/stable_fairness/tests/data";

Eigen::VectorXd read_vec(std::istream& in, Eigen::Index n) {
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) in >> v(i);
  return v;
}

struct Reference {
  ConeProgram program;
  Eigen::VectorXd alpha;
  double objective = 0;
};

std::vector<Reference> read_reference() {
  std::ifstream in(kData / "socp_reference.txt");
  std::vector<Reference> out;
  std::string word;
  while (in >> word) {
    if (word == "#") {
      std::getline(in, word);
      continue;
    }
    int K, G, J;
    std::string kind;
    in >> K >> G >> J >> kind;
    Reference r;
    r.program.c = read_vec(in, K);
    std::vector<Eigen::MatrixXd> rates;
    for (int j = 0; j < J; ++j) {
      Eigen::MatrixXd m(G, K);
      for (int g = 0; g < G; ++g) m.row(g) = read_vec(in, K).transpose();
      rates.push_back(m);
    }
    double tau;
    in >> tau;
    r.program.a.resize(0, K);
    std::vector<Eigen::RowVectorXd> rows;
    for (const auto& m : rates) {
      if (kind == "l2") {
        r.program.cones.push_back(centering(G) * m);
        r.program.tau.push_back(tau);
      } else {
        for (int g = 0; g < G; ++g)
          for (int h = 0; h < G; ++h)
            if (g != h) rows.push_back(m.row(g) - m.row(h));
      }
    }
    if (!rows.empty()) {
      r.program.a.resize(static_cast<Eigen::Index>(rows.size()), K);
      for (std::size_t i = 0; i < rows.size(); ++i) r.program.a.row(static_cast<Eigen::Index>(i)) = rows[i];
      r.program.b = Eigen::VectorXd::Constant(r.program.a.rows(), tau);
    }
    r.alpha = read_vec(in, K);
    in >> r.objective;
    out.push_back(r);
  }
  return out;
}

// socp_reference_ecos.txt: per instance of socp_reference.txt, ECOS's alpha and objective.
std::vector<std::pair<Eigen::VectorXd, double>> read_ecos_reference() {
  std::ifstream in(kData / "socp_reference_ecos.txt");
  std::vector<std::pair<Eigen::VectorXd, double>> out;
  std::string word;
  while (in >> word) {
    if (word == "#") {
      std::getline(in, word);
      continue;
    }
    int K;
    in >> K;
    Eigen::VectorXd alpha = read_vec(in, K);
    double objective;
    in >> objective;
    out.push_back({alpha, objective});
  }
  return out;
}

// The synthetic model with the intercept column, and the group indicator as a feature when asked.
Sample synthetic_sample(std::int64_t n, std::uint64_t seed, TableOptions o = {}, bool group_feature = false) {
  o.n = n;
  const auto raw = make_synthetic(o, seed);
  Sample s;
  s.groups = 2;
  Eigen::VectorXd g(raw.x.rows());
  for (Eigen::Index i = 0; i < g.size(); ++i) g(i) = raw.g[static_cast<std::size_t>(i)];
  s.x.resize(raw.x.rows(), raw.x.cols() + (group_feature ? 2 : 1));
  if (group_feature) s.x << raw.x, g, Eigen::VectorXd::Ones(raw.x.rows());
  else s.x << raw.x, Eigen::VectorXd::Ones(raw.x.rows());
  s.y = raw.y, s.g = raw.g;
  return s;
}

}  // namespace

TEST(StableFairnessSocp, MatchesStoredCvxoptSolutions) {
  const auto refs = read_reference();
  ASSERT_EQ(refs.size(), 8u);
  for (const auto& r : refs) {
    const auto sol = solve_cone_program(r.program);
    ASSERT_TRUE(sol.feasible);
    EXPECT_NEAR(sol.objective, r.objective, 1e-7);
    EXPECT_LT((sol.alpha - r.alpha).lpNorm<Eigen::Infinity>(), 1e-6);
  }
}

TEST(StableFairnessSocp, MatchesStoredEcosSolutions) {
  const auto refs = read_reference();
  const auto ecos = read_ecos_reference();
  ASSERT_EQ(ecos.size(), refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    ASSERT_EQ(ecos[i].first.size(), refs[i].alpha.size());
    // The two stored references agree with each other, and the solver with ECOS.
    EXPECT_LT((ecos[i].first - refs[i].alpha).lpNorm<Eigen::Infinity>(), 1e-6) << "instance " << i;
    const auto sol = solve_cone_program(refs[i].program);
    ASSERT_TRUE(sol.feasible);
    EXPECT_NEAR(sol.objective, ecos[i].second, 1e-7);
    EXPECT_LT((sol.alpha - ecos[i].first).lpNorm<Eigen::Infinity>(), 1e-6) << "instance " << i;
  }
}

TEST(StableFairnessSocp, KktResidualsAreTiny) {
  for (const auto& r : read_reference()) {
    const auto sol = solve_cone_program(r.program);
    EXPECT_LT(sol.stationarity, 1e-8);
    EXPECT_LT(sol.complementarity, 1e-8);
    EXPECT_EQ(sol.primal, 0.0);  // strictly feasible
    EXPECT_NEAR(sol.alpha.sum(), 1.0, 1e-12);
    EXPECT_GE(sol.lambda_nonneg.minCoeff(), 0.0);
  }
}

TEST(StableFairnessSocp, BruteForceSimplexGridForThreePredictors) {
  nexp::Random rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    ConeProgram p;
    p.c = Eigen::Vector3d(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3));
    Eigen::MatrixXd r(2, 3);
    for (int i = 0; i < 6; ++i) r(i / 3, i % 3) = rng.uniform();
    p.cones.push_back(centering(2) * r);
    p.tau.push_back(0.05);
    p.a.resize(0, 3);
    const int steps = 1000;
    double best = INFINITY;
    for (int i = 0; i <= steps; ++i)
      for (int j = 0; i + j <= steps; ++j) {
        const Eigen::Vector3d a(double(i) / steps, double(j) / steps, double(steps - i - j) / steps);
        if ((p.cones[0] * a).norm() <= 0.05) best = std::min(best, p.c.dot(a));
      }
    const auto sol = solve_cone_program(p);
    if (!std::isfinite(best)) {
      EXPECT_FALSE(sol.feasible);
      continue;
    }
    ASSERT_TRUE(sol.feasible);
    EXPECT_LE(sol.objective, best + 1e-9);  // the grid is a subset of the feasible set
    EXPECT_GT(sol.objective, best - 2e-3);  // and a fine one
  }
}

TEST(StableFairnessSocp, ReportsInfeasibleTau) {
  ConeProgram p;
  p.c = Eigen::Vector2d(0.2, 0.3);
  Eigen::MatrixXd r(2, 2);
  r << 0.2, 0.3, 0.6, 0.5;  // every mixture has r1 - r0 >= 0.2
  p.cones.push_back(centering(2) * r);
  p.tau.push_back(0.1);  // < 0.2 / sqrt 2
  p.a.resize(0, 2);
  const auto sol = solve_cone_program(p);
  EXPECT_FALSE(sol.feasible);
  EXPECT_NEAR(sol.phase1, 0.2 * 0.2 / 2 - 0.01, 1e-6);  // least violation of ||D a||^2 - tau^2
}

TEST(StableFairnessConstants, TwoGroupsClosedForms) {
  Eigen::MatrixXd r(2, 1);
  r << 0.31, 0.74;
  EXPECT_NEAR(lipschitz_constant(r, Norm::L2), 0.43 / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(lipschitz_constant(r, Norm::TV), 0.43, 1e-15);
}

TEST(StableFairnessConstants, ManyGroupsAgainstSearchOverDirections) {
  nexp::Random rng(3);
  Eigen::MatrixXd r(4, 1);
  for (int g = 0; g < 4; ++g) r(g, 0) = rng.uniform();
  // l2: sup over directions v in the simplex's tangent space (sum v = 0) of |v . r| / ||v||.
  double best = 0;
  for (int t = 0; t < 200000; ++t) {
    Eigen::Vector4d v(rng.normal(), rng.normal(), rng.normal(), rng.normal());
    v.array() -= v.mean();
    best = std::max(best, std::abs(v.dot(r.col(0))) / v.norm());
  }
  const double l2 = lipschitz_constant(r, Norm::L2);
  EXPECT_LE(best, l2 + 1e-12);
  EXPECT_GT(best, 0.995 * l2);
  // TV: sup over pairs of compositions of |R(pi) - R(pi')| / TV(pi, pi'), here over random pairs.
  double tv_best = 0;
  for (int t = 0; t < 200000; ++t) {
    Eigen::Vector4d a, b;
    for (int g = 0; g < 4; ++g) a(g) = rng.exponential(1), b(g) = rng.exponential(1);
    a /= a.sum(), b /= b.sum();
    tv_best = std::max(tv_best, std::abs((a - b).dot(r.col(0))) / (0.5 * (a - b).lpNorm<1>()));
  }
  const double tv = lipschitz_constant(r, Norm::TV);
  EXPECT_LE(tv_best, tv + 1e-12);
  EXPECT_GT(tv_best, 0.9 * tv);
}

TEST(StableFairnessMixture, RandomisedRatesWithinBinomialBounds) {
  const Sample s = synthetic_sample(40000, 11);
  nexp::Random rng(5);
  Eigen::MatrixXd pred(static_cast<Eigen::Index>(s.size()), 4);
  for (Eigen::Index i = 0; i < pred.rows(); ++i)
    for (int k = 0; k < 4; ++k) pred(i, k) = rng.bernoulli(0.2 + 0.15 * k + 0.1 * s.g[static_cast<std::size_t>(i)]);
  const Eigen::Vector4d alpha(0.1, 0.4, 0.3, 0.2);
  const Eigen::MatrixXd expected = group_rates(s, pred * alpha, Notion::EO);  // linear in alpha
  const Eigen::MatrixXd drawn = group_rates(s, sample_mixture(pred, alpha, rng), Notion::EO);
  for (int g = 0; g < 2; ++g)
    for (int y = 0; y < 2; ++y) {
      std::int64_t n = 0;
      for (std::size_t i = 0; i < s.size(); ++i) n += s.g[i] == g && s.y[i] == y;
      const auto ci = nexp::stats::clopper_pearson_interval(std::llround(drawn(g, y) * n), n, 0.999);
      EXPECT_TRUE(ci.contains(expected(g, y))) << g << " " << y;
    }
}

TEST(StableFairnessData, SyntheticRatesMatchClosedForm) {
  TableOptions o;
  const Sample s = synthetic_sample(200000, 2, o);
  for (int g = 0; g < 2; ++g) {
    std::int64_t n = 0, k = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s.g[i] == g) ++n, k += s.x(static_cast<Eigen::Index>(i), 0) > 0.3;
    const auto ci = nexp::stats::clopper_pearson_interval(k, n, 0.999);
    EXPECT_TRUE(ci.contains(synthetic_rule_rate(o, g, 0.3)));
  }
}

TEST(StableFairnessReweighting, ReweighingMakesGroupAndLabelIndependent) {
  const Sample s = synthetic_sample(5000, 4);
  const Eigen::VectorXd w = reweighing_weights(s);
  double cell[2][2] = {{0, 0}, {0, 0}}, pg[2] = {0, 0}, py[2] = {0, 0};
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double wi = w(static_cast<Eigen::Index>(i)) / w.sum();
    cell[s.g[i]][s.y[i]] += wi, pg[s.g[i]] += wi, py[s.y[i]] += wi;
  }
  for (int g = 0; g < 2; ++g)
    for (int y = 0; y < 2; ++y) EXPECT_NEAR(cell[g][y], pg[g] * py[y], 1e-12);
  // composition_weights: the group share within the positives is the target.
  const Eigen::VectorXd v = composition_weights(s, 1, {0.25, 0.75});
  double pos = 0, pos1 = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.y[i]) pos += v(static_cast<Eigen::Index>(i)), pos1 += s.g[i] ? v(static_cast<Eigen::Index>(i)) : 0;
  EXPECT_NEAR(pos1 / pos, 0.75, 1e-12);
}

TEST(StableFairnessHardt, EqualisesTprAndFpr) {
  TableOptions o;
  o.base_rates = {0.2, 0.5};
  const Sample fit = synthetic_sample(20000, 8, o, true), test = synthetic_sample(40000, 9, o, true);
  Eigen::VectorXd y(static_cast<Eigen::Index>(fit.size()));
  for (std::size_t i = 0; i < fit.size(); ++i) y(static_cast<Eigen::Index>(i)) = fit.y[i];
  const auto lr = fit_logistic(fit.x, y, Eigen::VectorXd::Ones(y.size()), 1e-3);
  EXPECT_GT(eo_gap(fit, lr.predict(fit.x)), 0.05);  // unfair before
  const auto post = fit_hardt(lr.score(fit.x), fit.y, fit.g, 2);
  EXPECT_LT(eo_gap(fit, post.predict(lr.score(fit.x), fit.g)), 1e-9);  // exact on the fitting sample
  EXPECT_LT(eo_gap(test, post.predict(lr.score(test.x), test.g)), 0.03);  // sampling error on fresh data
}

TEST(StableFairnessEg, ReachesTheLpOptimumOnATinyCase) {
  // Ten points, two groups, a finite class of six labelings; the best response enumerates the class.
  Sample s;
  s.groups = 2;
  s.y = {1, 0, 1, 1, 0, 0, 1, 0, 1, 0};
  s.g = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  s.x = Eigen::MatrixXd::Ones(10, 1);
  nexp::Random rng(1);
  Eigen::MatrixXd H(10, 6);
  for (int i = 0; i < 10; ++i)
    for (int k = 0; k < 6; ++k) H(i, k) = rng.bernoulli(k == 0 ? (s.y[i] ? 0.9 : 0.1) : 0.5);
  const double n = 10, eps = 0.05;
  Eigen::VectorXd cost(10);
  double err0 = 0;
  for (int i = 0; i < 10; ++i) cost(i) = (1 - 2 * s.y[i]) / n, err0 += s.y[i] / n;
  const Eigen::MatrixXd a = dp_moments(s);
  // The LP over mixtures q of the class: min err0 + cost^T H q  s.t.  a H q <= eps.
  ConeProgram lp;
  lp.c = H.transpose() * cost;
  lp.a = a * H;
  lp.b = Eigen::VectorXd::Constant(lp.a.rows(), eps);
  const auto exact = solve_cone_program(lp);
  ASSERT_TRUE(exact.feasible);
  std::vector<int> chosen;
  auto oracle = [&](const Eigen::VectorXd& c) {
    Eigen::Index k;
    (H.transpose() * c).minCoeff(&k);
    chosen.push_back(static_cast<int>(k));
    return Eigen::VectorXd(H.col(k));
  };
  EgOptions o;
  o.iterations = 20000;
  o.nu = 1e-4;
  const auto res = exponentiated_gradient(err0, cost, a, eps, o, oracle);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(6);
  for (std::size_t t = 0; t < chosen.size(); ++t) q(chosen[t]) += res.weights[t];
  const double err = err0 + lp.c.dot(q), lp_err = err0 + exact.objective;
  // Agarwal et al., Theorem 1 with the duality gap nu reached: err(Q) <= OPT + 2 nu and
  // gamma(Q) <= eps + (1 + 2 nu) / B; and here EG lands within 0.005 of the LP's optimum.
  const double nu = res.gap, B = 1 / eps;
  EXPECT_LT(nu, 0.05);
  EXPECT_LE(err, lp_err + 2 * nu + 1e-9);
  EXPECT_LE((lp.a * q).maxCoeff(), eps + (1 + 2 * nu) / B + 1e-9);
  EXPECT_NEAR(err, lp_err, 5e-3);
}

TEST(StableFairnessEg, FinalLpMatchesAGridOverMixturesOfThreeClassifiers) {
  // Twelve points, two groups, three fixed classifiers; the final LP against a fine simplex grid.
  Sample s;
  s.groups = 2;
  s.y = {1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0};
  s.g = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  s.x = Eigen::MatrixXd::Ones(12, 1);
  Eigen::MatrixXd H(12, 3);
  H.col(0) << 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0;  // accurate in group 0, silent in group 1: DP gap 0.5
  H.col(1) << 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1;  // all positive: no gap
  H.col(2) << 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 1;  // DP gap 4/6 - 1/6 = 0.5 the other way
  Eigen::VectorXd cost(12);
  for (int i = 0; i < 12; ++i) cost(i) = (1 - 2 * s.y[i]) / 12.0;
  const Eigen::MatrixXd a = dp_moments(s);
  for (double eps : {0.01, 0.05, 0.1}) {  // eps > 0: the barrier method needs an interior point
    const Eigen::VectorXd q = eg_final_lp(H, cost, a, eps);
    ASSERT_EQ(q.size(), 3);
    EXPECT_NEAR(q.sum(), 1.0, 1e-12);
    EXPECT_LE((a * H * q).maxCoeff(), eps + 1e-8);
    const int steps = 600;
    double best = INFINITY;
    for (int i = 0; i <= steps; ++i)
      for (int j = 0; i + j <= steps; ++j) {
        const Eigen::Vector3d v(double(i) / steps, double(j) / steps, double(steps - i - j) / steps);
        if ((a * H * v).maxCoeff() <= eps + 1e-12) best = std::min(best, cost.dot(H * v));
      }
    EXPECT_LE(cost.dot(H * q), best + 1e-8) << eps;  // the grid is a subset of the feasible set
    EXPECT_GT(cost.dot(H * q), best - 5e-3) << eps;  // and a fine one
  }
  // Only the first classifier, whose moments exceed eps: no feasible mixture.
  EXPECT_EQ(eg_final_lp(H.leftCols(1), cost, a, 0.05).size(), 0);
}

TEST(StableFairnessCertificate, TwoGroupConfidenceTermClosedForm) {
  const Sample val = synthetic_sample(3000, 21), test = synthetic_sample(2000, 22);
  double nv[2] = {0, 0}, nt[2] = {0, 0};
  for (int g : val.g) nv[g] += 1;
  for (int g : test.g) nt[g] += 1;
  const double L = std::log(2.0 * 5 * 2 / 0.1);
  const double e0 = std::sqrt((1 / nv[0] + 1 / nt[0]) * L / 2), e1 = std::sqrt((1 / nv[1] + 1 / nt[1]) * L / 2);
  EXPECT_NEAR(confidence_term(val, test, Notion::DP, Norm::TV, 5, 0.1), e0 + e1, 1e-12);
  EXPECT_NEAR(confidence_term(val, test, Notion::DP, Norm::L2, 5, 0.1), (e0 + e1) / std::sqrt(2.0), 1e-12);
  EXPECT_EQ(confidence_term(val, test, Notion::DP, Norm::L2, 5, 0.0), 0.0);
}

TEST(StableFairnessData, CsvMissingColumnIsAClearError) {
  const auto file = std::filesystem::temp_directory_path() / "stable_fairness_test.csv";
  std::ofstream(file) << "a,b,label\n1,x,0\n2,y,1\n";
  try {
    read_csv_table(file, "label", "sex");
    FAIL() << "expected a DataError";
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no column 'sex'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("a, b, label"), std::string::npos);
  }
  std::filesystem::remove(file);
}

TEST(StableFairnessData, AdultFromTheCache) {
  const auto file = nexp::data_dir() / "stable_fairness" / "adult" / "a9a.txt";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent: run scripts/setup";
  const auto t = read_adult(file, "sex");
  EXPECT_EQ(t.y.size(), 48842u);
  EXPECT_EQ(std::count(t.y.begin(), t.y.end(), 1), 7841 + 3846);
  EXPECT_EQ(std::count(t.g.begin(), t.g.end(), 0), 10771 + 5421);  // female
}

TEST(StableFairnessData, CompasFromTheCache) {
  const auto file = nexp::data_dir() / "stable_fairness" / "compas" / "compas-two-years-deidentified.csv";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent: run scripts/setup";
  EXPECT_EQ(read_compas(file, "sex").y.size(), 6172u);  // ProPublica's filter
}

namespace {

// One R-packaged table from the cache, or nullopt when data.R has not written it.
std::optional<RawTable> cached_r_table(const std::string& source, const std::string& group) {
  const auto file = nexp::data_dir() / "stable_fairness" / source / (source + ".csv");
  if (!std::filesystem::exists(file)) return std::nullopt;
  return read_r_table(file, source, group);
}

// Rows, positives and members of each group (in the sorted order of the group names).
void expect_counts(const RawTable& t, std::size_t rows, long positives, const std::vector<std::string>& names,
                   const std::vector<long>& members) {
  EXPECT_EQ(t.y.size(), rows);
  EXPECT_EQ(t.g.size(), rows);
  EXPECT_EQ(static_cast<std::size_t>(t.x.rows()), rows);
  EXPECT_EQ(std::count(t.y.begin(), t.y.end(), 1), positives);
  EXPECT_EQ(t.group_names, names);
  for (std::size_t g = 0; g < members.size(); ++g)
    EXPECT_EQ(std::count(t.g.begin(), t.g.end(), static_cast<int>(g)), members[g]) << names[g];
}

std::string absent(const std::string& source, const std::string& package) {
  return source + ".csv is absent from the data cache: install " + package + " and run scripts/setup";
}

}  // namespace

// Row counts are the sizes the R packages document (income 8,993, HMDA 2,380, GermanCredit 1,000,
// Arrests 5,226); label and group counts are those of the data as shipped. Published anchors among them:
// HMDA's denial rates, 28% of African-American and 9% of other applicants (Stock and Watson's Boston
// HMDA example), and German credit's 700 good / 300 bad, 310 women and 149 applicants under 25.
TEST(StableFairnessData, IncomeFromTheCache) {
  const auto t = cached_r_table("income", "sex");
  if (!t) GTEST_SKIP() << absent("income", "r-cran-kernlab");
  expect_counts(*t, 8993, 4271, {"female", "male"}, {4918, 4075});
  EXPECT_EQ(t->x.cols(), 62);
  // ETHNIC in four groups; 68 rows without an answer are dropped.
  expect_counts(*cached_r_table("income", "ethnic"), 8925, 4240, {"black", "hispanic", "other", "white"},
                {910, 1231, 973, 5811});
}

TEST(StableFairnessData, HmdaFromTheCache) {
  const auto t = cached_r_table("hmda", "");
  if (!t) GTEST_SKIP() << absent("hmda", "r-cran-aer");
  expect_counts(*t, 2380, 285, {"african_american", "other"}, {339, 2041});
  double denied[2] = {0, 0}, members[2] = {0, 0};
  for (std::size_t i = 0; i < t->y.size(); ++i) denied[t->g[i]] += t->y[i], members[t->g[i]] += 1;
  EXPECT_NEAR(denied[0] / members[0], 0.28, 0.005);
  EXPECT_NEAR(denied[1] / members[1], 0.09, 0.005);
}

TEST(StableFairnessData, GermanFromTheCache) {
  const auto t = cached_r_table("german", "sex");
  if (!t) GTEST_SKIP() << absent("german", "r-cran-caret");
  expect_counts(*t, 1000, 700, {"female", "male"}, {310, 690});
  expect_counts(*cached_r_table("german", "age"), 1000, 700, {"25plus", "under25"}, {851, 149});
}

TEST(StableFairnessData, ArrestsFromTheCache) {
  const auto t = cached_r_table("arrests", "colour");
  if (!t) GTEST_SKIP() << absent("arrests", "r-cran-cardata");
  expect_counts(*t, 5226, 4334, {"black", "white"}, {1288, 3938});
  const auto four = cached_r_table("arrests", "colour_sex");
  expect_counts(*four, 5226, 4334, {"black_female", "black_male", "white_female", "white_male"}, {72, 1216, 371, 3567});
  // Four groups: the split keeps every group in every part and gives the classifiers three indicators.
  const Split s = split_table(*four, 0, true);
  EXPECT_EQ(s.train.groups, 4);
  EXPECT_EQ(s.train.x.cols(), four->x.cols() + 3 + 1);
}

TEST(StableFairnessData, RTableRejectsAnUnknownGroup) {
  try {
    read_r_table("does-not-matter.csv", "hmda", "sex");
    FAIL() << "expected a DataError";
  } catch (const nexp::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("takes group=afam, found 'sex'"), std::string::npos) << e.what();
  }
}
