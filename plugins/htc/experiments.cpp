// The headline experiments, each one method run that loops internally and writes its table.
#include <fmt/format.h>
#include <nexp/stats.hpp>
#include <nexp/table.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "generators.hpp"
#include "identify.hpp"
#include "methods.hpp"

namespace htc {

namespace fs = std::filesystem;

namespace {

// The exponent b of y ~ x^b by least squares on log-log axes (nexp::stats::fit_loglog); NaN with fewer
// than two points or a value <= 0 (a zero error or memory has no logarithm, and is not an error here).
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double a) { return a > 0; });
  };
  if (x.size() < 2 || !positive(x) || !positive(y)) return std::nan("");
  return nexp::stats::fit_loglog(x, y).slope;
}

using nexp::stats::median;
using C = nexp::CsvColumn;

// The generator of random graph `label`; the randomized algorithm run on it draws from "decision".
std::mt19937_64 graph_rng(const nexp::RunContext& ctx, std::uint64_t label) {
  return std::mt19937_64(ctx.stream("graph", label)());
}

// Nodes solved by `a` but not by `b`.
int only_in(const MixedGraph& g, const Identification& a, const Identification& b) {
  int count = 0;
  for (int v = 0; v < g.num_nodes(); ++v) count += a.node_solved(g, v) && !b.node_solved(g, v);
  return count;
}

// Identified edges in `a` but not in `b`.
int edges_only_in(const Identification& a, const Identification& b) {
  int count = 0;
  for (std::size_t v = 0; v < a.solved_parents.size(); ++v)
    for (int p : a.solved_parents[v])
      count += !std::binary_search(b.solved_parents[v].begin(), b.solved_parents[v].end(), p);
  return count;
}

}  // namespace

// ============================================================================ htc.scaling

void run_scaling(nexp::RunContext& ctx) {
  const auto o = ctx.options<ScalingOptions>();
  o.check();
  const auto& ns = o.ns;
  const auto& families = o.families;
  const auto& algorithms = o.algorithms;

  nexp::CsvWriter csv(ctx.artifacts_dir() / "scaling.csv",
                      {C::text("family"), C::integer("n"), C::integer("rep"), C::integer("directed"),
                       C::integer("bidirected"), C::text("algorithm"), C::real("seconds"), C::integer("memory_bytes"),
                       C::integer("solved_nodes"), C::integer("solved_edges"), C::text("identifiable"),
                       C::text("agree")});
  nexp::CsvWriter slopes(ctx.artifacts_dir() / "slopes.csv",
                         {C::text("family"), C::text("algorithm"), C::real("slope"), C::integer("n_min"),
                          C::integer("n_max"), C::integer("points"), C::real("seconds_at_n_max"),
                          C::real("memory_slope_vs_size")});
  int disagreements = 0;
  double total = 0;
  auto bar = ctx.progress(static_cast<std::int64_t>(families.size() * ns.size()), "scaling");
  for (std::size_t fi = 0; fi < families.size(); ++fi) {
    const std::string& family = families[fi];
    std::map<std::string, bool> over_budget;
    std::map<std::string, std::map<std::int64_t, std::vector<double>>> times;  // algorithm -> n -> seconds
    std::map<std::string, std::vector<double>> sizes, memory;  // algorithm -> n + |D| + |B|, bytes
    for (std::size_t ni = 0; ni < ns.size(); ++ni) {
      const int n = static_cast<int>(ns[ni]);
      for (int rep = 0; rep < o.reps && !ctx.stop_requested(); ++rep) {
        std::mt19937_64 rng = graph_rng(ctx, (fi * 1000 + ni) * 1000 + rep);
        const MixedGraph g = random_mixed_graph(n, family_spec(family, n), rng);
        std::vector<Identification> results;
        std::vector<std::string> ran;
        for (const auto& algorithm : algorithms) {
          if (over_budget[algorithm]) continue;
          DecisionOptions timed = o;
          timed.algorithm = algorithm_named(algorithm);
          Identification id;
          const double t =
              time_decision(g, timed, ctx.stream("decision", (fi * 1000 + ni) * 1000 + rep)(), o.min_seconds, &id);
          total += t;
          times[algorithm][n].push_back(t);
          if (t > o.budget_seconds) over_budget[algorithm] = true;
          if (n >= o.fit_min_n && id.memory_bytes > 0) {  // 0: nothing was allocated (nothing solvable)
            sizes[algorithm].push_back(g.num_nodes() + g.num_directed() + g.num_bidirected());
            memory[algorithm].push_back(static_cast<double>(id.memory_bytes));
          }
          results.push_back(id);
          ran.push_back(algorithm);
        }
        bool agree = true;
        for (std::size_t k = 1; k < results.size(); ++k) agree = agree && results[k].solved_parents == results[0].solved_parents;
        disagreements += !agree;
        for (std::size_t k = 0; k < results.size(); ++k)
          csv.row(family, n, rep, g.num_directed(), g.num_bidirected(), ran[k], times[ran[k]][n].back(),
                  results[k].memory_bytes, results[k].solved_nodes(g), results[k].solved_edges(),
                  results[k].identifiable(g) ? "TRUE" : "FALSE", agree ? "TRUE" : "FALSE");
      }
      bar.advance();
    }
    for (const auto& algorithm : algorithms) {
      std::vector<double> x, y;
      for (const auto& [n, ts] : times[algorithm])
        if (n >= o.fit_min_n) {
          x.push_back(static_cast<double>(n));
          y.push_back(nexp::stats::mean(ts));
        }
      const double slope = loglog_slope(x, y);
      // Memory against the graph's size n + |D| + |B|: slope 1 is "linear in the edges".
      const double memory_slope = loglog_slope(sizes[algorithm], memory[algorithm]);
      if (!x.empty())
        slopes.row(family, algorithm, slope, static_cast<std::int64_t>(x.front()), static_cast<std::int64_t>(x.back()),
                   x.size(), y.back(), memory_slope);
      if (std::isfinite(slope)) ctx.summary(fmt::format("slope_{}_{}", algorithm, family), slope);
      ctx.log().info("htc: {} {}: time ~ n^{:.2f} over n = {}..{}", family, algorithm, slope,
                     x.empty() ? 0 : x.front(), x.empty() ? 0 : x.back());
    }
  }
  ctx.summary("disagreements", disagreements);
  ctx.summary("cpu_seconds", total);
}

// ============================================================================ htc.density

void run_density(nexp::RunContext& ctx) {
  const auto o = ctx.options<DensityOptions>();
  const int n = o.n;
  const auto count = o.graphs;
  const auto& densities = o.densities;
  RandomizedOptions ro;

  nexp::CsvWriter csv(ctx.artifacts_dir() / "density.csv",
                      {C::real("density"), C::integer("graphs"), C::real("mean_directed"), C::real("mean_bidirected"),
                       C::real("htc_identifiable"), C::real("edgewise_identifiable"), C::real("nonidentifiable"),
                       C::real("inconclusive"), C::real("htc_edge_fraction"), C::real("edgewise_edge_fraction"),
                       C::integer("edgewise_gain_graphs"), C::integer("equivalence_checked"),
                       C::integer("equivalence_agree")});
  const double pairs = n * (n - 1) / 2.0;
  int gain_total = 0, checked_total = 0, agree_total = 0, dimension_violations = 0, containment_violations = 0;
  double boundary = std::nan(""), previous_density = 0, previous_fraction = 1;
  auto bar = ctx.progress(static_cast<std::int64_t>(densities.size()) * count, "density");
  for (std::size_t di = 0; di < densities.size(); ++di) {
    const double t = densities[di];
    // t = expected (|D| + |B|) / (n (n - 1) / 2); a cyclic graph spreads its directed share over ordered pairs.
    GraphSpec spec{o.acyclic, std::min(1.0, t * o.directed_share / (o.acyclic ? 1.0 : 2.0)),
                   std::min(1.0, t * (1 - o.directed_share))};
    int htc_ok = 0, ew_ok = 0, nonid = 0, gain = 0, checked = 0, agree = 0;
    double d_sum = 0, b_sum = 0, htc_edges = 0, ew_edges = 0;
    for (std::int64_t i = 0; i < count && !ctx.stop_requested(); ++i) {
      std::mt19937_64 rng = graph_rng(ctx, di * 100000 + i);
      const MixedGraph g = random_mixed_graph(n, spec, rng);
      ro.seed = ctx.stream("decision", di * 100000 + i)();
      const Identification h = htc_randomized(g, ro);
      const Identification e = edgewise_closure(g, ro);
      const bool h_ok = h.identifiable(g), e_ok = e.identifiable(g);
      const bool non = !e_ok && htc_nonidentifiable(g);
      htc_ok += h_ok;
      ew_ok += e_ok;
      nonid += non;
      gain += e.solved_edges() > h.solved_edges();
      containment_violations += edges_only_in(h, e);
      // Identifiable needs n + |D| + |B| <= n (n + 1) / 2 free parameters at most (dimension count).
      dimension_violations += h_ok && g.num_directed() + g.num_bidirected() > pairs;
      d_sum += g.num_directed();
      b_sum += g.num_bidirected();
      htc_edges += g.num_directed() ? static_cast<double>(h.solved_edges()) / g.num_directed() : 1.0;
      ew_edges += g.num_directed() ? static_cast<double>(e.solved_edges()) / g.num_directed() : 1.0;
      if (i < o.equivalence_graphs && g.max_in_degree() <= o.equivalence_max_parents) {
        const Identification full = edgewise_classic(g, 0);
        ++checked;
        agree += full.solved_parents == e.solved_parents;
      }
      bar.advance();
    }
    const double m = static_cast<double>(count);
    csv.row(t, count, d_sum / m, b_sum / m, htc_ok / m, ew_ok / m, nonid / m, (m - ew_ok - nonid) / m, htc_edges / m,
            ew_edges / m, gain, checked, agree);
    ctx.log_metrics(static_cast<std::int64_t>(di), {{"density", t}, {"identifiable", htc_ok / m}});
    const double fraction = htc_ok / m;
    if (std::isnan(boundary) && fraction < 0.5)
      boundary = di == 0 ? t
                         : previous_density + (previous_fraction - 0.5) / (previous_fraction - fraction) * (t - previous_density);
    previous_density = t;
    previous_fraction = fraction;
    gain_total += gain;
    checked_total += checked;
    agree_total += agree;
  }
  if (std::isfinite(boundary)) ctx.summary("boundary_density", boundary);
  ctx.summary("edgewise_gain_graphs", gain_total);
  ctx.summary("equivalence_checked", checked_total);
  ctx.summary("equivalence_agree", agree_total);
  ctx.summary("dimension_violations", dimension_violations + containment_violations);
  ctx.log().info("htc: half of the graphs are HTC-identifiable up to density {:.3f}; edgewise identified more edges "
                 "than HTC on {} graphs; closure = full subset search on {} of {} checked graphs",
                 boundary, gain_total, agree_total, checked_total);
}

// ============================================================================ htc.agreement

void run_agreement(nexp::RunContext& ctx) {
  const auto o = ctx.options<AgreementOptions>();
  const auto& ns = o.ns;
  const auto& families = o.families;
  const auto count = o.graphs;
  const u64 small = static_cast<u64>(o.small_prime);
  if (!is_prime(small))
    throw nexp::ConfigError(fmt::format("params.small_prime = {} is not a prime", small));

  nexp::CsvWriter csv(ctx.artifacts_dir() / "agreement.csv",
                      {C::text("family"), C::integer("n"), C::integer("graph"), C::integer("directed"),
                       C::integer("bidirected"), C::integer("classic_nodes"), C::integer("randomized_nodes"),
                       C::integer("small_prime_nodes"), C::real("small_prime_bound"),
                       C::integer("edgewise_classic_edges"), C::integer("edgewise_closure_edges")});
  csv.flush_every_row(false);
  long long graphs = 0, agree = 0, fp = 0, fn = 0, fp_small = 0, fn_small = 0, ew_checked = 0, ew_agree = 0,
            ew_fp = 0, singular = 0, graphs_missed_small = 0;
  double bound_small = 0, bound_big = 0;
  auto bar = ctx.progress(static_cast<std::int64_t>(families.size() * ns.size()) * count, "agreement");
  for (std::size_t fi = 0; fi < families.size(); ++fi)
    for (std::size_t ni = 0; ni < ns.size(); ++ni) {
      const int n = static_cast<int>(ns[ni]);
      for (std::int64_t i = 0; i < count && !ctx.stop_requested(); ++i) {
        const std::uint64_t label = (fi * 100 + ni) * 1000000 + i;
        std::mt19937_64 rng = graph_rng(ctx, label);
        const MixedGraph g = random_mixed_graph(n, family_spec(families[fi], n), rng);
        const Identification classic = htc_classic(g);
        RandomizedOptions ro;
        ro.seed = ctx.stream("decision", label)();
        const Identification big = htc_randomized(g, ro);
        ro.prime = small;
        Identification tiny;
        try {
          tiny = htc_randomized(g, ro);
        } catch (const std::runtime_error&) {  // I - Lambda singular at 16 points of a tiny field
          tiny.solved_parents.assign(n, {});
          tiny.error_bound = 1;
          ++singular;
        }
        ++graphs;
        agree += big.solved_parents == classic.solved_parents;
        fp += only_in(g, big, classic);
        fn += only_in(g, classic, big);
        fp_small += only_in(g, tiny, classic);
        const int missed = only_in(g, classic, tiny);
        fn_small += missed;
        graphs_missed_small += missed > 0;
        bound_small += tiny.error_bound;
        bound_big += big.error_bound;
        int ew_classic = -1, ew_closure = -1;
        if (g.max_in_degree() <= o.equivalence_max_parents) {
          ro.prime = PrimeField::kMersenne61;
          const Identification full = edgewise_classic(g, 0), closure = edgewise_closure(g, ro);
          ++ew_checked;
          ew_agree += full.solved_parents == closure.solved_parents;
          ew_fp += edges_only_in(closure, full);
          ew_classic = full.solved_edges();
          ew_closure = closure.solved_edges();
        }
        csv.row(families[fi], n, i + 1, g.num_directed(), g.num_bidirected(), classic.solved_nodes(g),
                big.solved_nodes(g), tiny.solved_nodes(g), tiny.error_bound, ew_classic, ew_closure);
        bar.advance();
      }
    }
  ctx.summary("graphs", static_cast<double>(graphs));
  ctx.summary("agree_graphs", static_cast<double>(agree));
  ctx.summary("false_positives", static_cast<double>(fp + fp_small + ew_fp));
  ctx.summary("false_negatives", static_cast<double>(fn));
  ctx.summary("false_negatives_small_prime", static_cast<double>(fn_small));
  ctx.summary("expected_misses_bound", bound_big);
  ctx.summary("expected_misses_bound_small_prime", bound_small);
  ctx.summary("graphs_missed_small_prime", static_cast<double>(graphs_missed_small));
  ctx.summary("equivalence_checked", static_cast<double>(ew_checked));
  ctx.summary("equivalence_agree", static_cast<double>(ew_agree));
  ctx.log().info("htc: randomized (p = 2^61 - 1) = classic on {} of {} graphs; false positives {} (any prime, and "
                 "edgewise closure); misses {} (bound {:.2g}); with p = {}: {} missed nodes on {} graphs (bound on the "
                 "expected number of such graphs {:.3g}); edgewise closure = full subset search on {} of {}",
                 agree, graphs, fp + fp_small + ew_fp, fn, bound_big, small, fn_small, graphs_missed_small, bound_small,
                 ew_agree, ew_checked);
  if (singular > 0)
    ctx.log().info("htc: with p = {}, I - Lambda was singular at every drawn point on {} graphs (counted as nothing "
                   "solved)",
                   small, singular);
}

// ============================================================================ htc.numeric

void run_numeric(nexp::RunContext& ctx) {
  const auto o = ctx.options<NumericOptions>();
  o.check();
  const int n = o.n;
  const auto count = o.graphs;
  const auto& samples = o.samples;
  if (o.tian)
    throw nexp::ConfigError("htc.numeric needs the identification steps, which the Tian decomposition does not "
                            "keep; set params.tian=false");

  // Two estimators from the same sample: the square system of the certified sources (FDD's formula)
  // and least squares over every allowed equation.
  nexp::CsvWriter csv(ctx.artifacts_dir() / "numeric.csv",
                      {C::integer("graph"), C::integer("n"), C::integer("directed"), C::integer("identified_edges"),
                       C::integer("identified_nodes"), C::text("samples"), C::real("max_error"),
                       C::real("median_error"), C::real("max_error_all"), C::real("median_error_all")});
  double population = 0;
  std::map<std::int64_t, std::vector<double>> max_sq, med_sq, max_all, med_all;
  auto bar = ctx.progress(count * static_cast<std::int64_t>(samples.size() + 1), "numeric");
  for (std::int64_t i = 0; i < count && !ctx.stop_requested(); ++i) {
    std::mt19937_64 rng = graph_rng(ctx, i);
    // Draw graphs until one has an identified edge (sparse families nearly always do).
    MixedGraph g;
    Identification id;
    for (int attempt = 0; attempt < 100; ++attempt) {
      g = random_mixed_graph(n, family_spec(o.family, n), rng);
      id = decide(g, o, ctx.stream("decision", i * 100 + attempt)());
      if (id.solved_edges() > 0) break;
    }
    const Sem sem = random_sem(g, rng);
    const Eigen::MatrixXd sigma = covariance(sem);
    const Errors e0 = errors(g, identify(g, id, sigma), sem), e1 = errors(g, identify(g, id, sigma, true), sem);
    population = std::max({population, e0.max, e1.max});
    auto row = [&](const std::string& size, const Errors& a, const Errors& b) {
      csv.row(i + 1, n, g.num_directed(), id.solved_edges(), id.solved_nodes(g), size, a.max, a.median, b.max,
              b.median);
    };
    row("population", e0, e1);
    bar.advance();
    for (auto size : samples) {
      const Eigen::MatrixXd s = sample_covariance(sem, size, rng);
      const Errors a = errors(g, identify(g, id, s), sem), b = errors(g, identify(g, id, s, true), sem);
      max_sq[size].push_back(a.max);
      med_sq[size].push_back(a.median);
      max_all[size].push_back(b.max);
      med_all[size].push_back(b.median);
      row(std::to_string(size), a, b);
      bar.advance();
    }
  }
  std::vector<double> x, y_max, y_med, y_sq;
  for (const auto& [size, es] : max_all) {
    x.push_back(static_cast<double>(size));
    y_max.push_back(median(es));
    y_med.push_back(median(med_all[size]));
    y_sq.push_back(median(max_sq[size]));
    ctx.log_metrics(size, {{"median_max_error", y_max.back()}, {"median_error", y_med.back()},
                           {"median_max_error_square", y_sq.back()}});
    ctx.log().info("htc: N = {:>8}: max-abs error {:.3e} (square systems {:.3e}), typical entry {:.3e} (medians over "
                   "graphs)",
                   size, y_max.back(), y_sq.back(), y_med.back());
  }
  ctx.summary("error_population", population);
  if (!x.empty()) {
    ctx.summary("error_smallest_sample", y_max.front());
    ctx.summary("error_largest_sample", y_max.back());
    ctx.summary("error_largest_sample_square", y_sq.back());
    ctx.summary("typical_error_largest_sample", y_med.back());
    ctx.summary("error_slope", loglog_slope(x, y_max));
    ctx.summary("typical_error_slope", loglog_slope(x, y_med));
  }
}

}  // namespace htc
