// drwatson's own tests: the simulator against the figures it is seeded with, the policies against
// the catalog and the oracle bound, the parsers against their writers, the model against the
// majority class, and the whole chain against a simulated accelerator's injected faults.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "estimate.hpp"
#include "experiments.hpp"
#include "fleet.hpp"
#include "incidents.hpp"
#include "model.hpp"
#include "nexp/runtime/hal.hpp"
#include "nexp/runtime/loader.hpp"
#include "nexp/runtime/registry.hpp"
#include "parsers.hpp"
#include "policies.hpp"
#include "rng.hpp"
#include "simulator.hpp"

using namespace drwatson;

namespace {

const FleetSpec& fleet() {
  static const FleetSpec f = load_fleet("configs/drwatson/fleet.yaml");
  return f;
}

// A posterior that knows nothing: the class prior at every candidate.
class PriorClassifier final : public Classifier {
 public:
  explicit PriorClassifier(const FleetSpec& f, int platform) {
    ClassTable classes(f);
    IncidentGenerator gen(f, platform);
    p_.assign(static_cast<std::size_t>(classes.size()), 0.0);
    const double n = f.noise.candidates;
    p_[0] = (n - 1) / n;
    for (int k = 1; k < classes.size(); ++k) {
      const auto& e = classes.entries[static_cast<std::size_t>(k)];
      p_[static_cast<std::size_t>(k)] = gen.mix()[static_cast<std::size_t>(e.cause)] *
                                        f.causes[static_cast<std::size_t>(e.cause)].fixes[static_cast<std::size_t>(e.fix)].share / n;
    }
  }
  std::vector<std::vector<double>> posteriors(const Observation& obs) const override {
    return std::vector<std::vector<double>>(obs.candidates.size(), p_);
  }

 private:
  std::vector<double> p_;
};

SimOptions options(int platform, std::uint64_t seed, double days, std::vector<IncidentRecord>* log = nullptr) {
  SimOptions o;
  o.platform = platform;
  o.seed = seed;
  o.horizon_days = days;
  o.log = log;
  return o;
}

}  // namespace

// ---------------------------------------------------------------- fleet file

TEST(Fleet, DefaultFileLoadsWithThePublishedCounts) {
  const FleetSpec& f = fleet();
  EXPECT_EQ(f.platforms.size(), 3u);
  double total = 0;
  for (const auto& c : f.causes) total += c.count[0];
  EXPECT_EQ(total, 419);  // Llama 3: 419 unexpected interruptions
  EXPECT_EQ(f.causes[static_cast<std::size_t>(f.cause_index("gpu"))].count[0], 148);
  EXPECT_EQ(f.causes[static_cast<std::size_t>(f.cause_index("hbm"))].count[0], 72);
}

TEST(Fleet, BadFilesAreRefusedWithTheKey) {
  try {
    parse_fleet("job: {nodes: 1}\n", "inline");
    FAIL();
  } catch (const nexp::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("job.nodes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_fleet("does/not/exist.yaml"), nexp::ConfigError);
}

namespace {

// The default file with `edits` applied (each `from` must occur in it).
std::string edited_fleet(const std::vector<std::pair<std::string, std::string>>& edits) {
  std::ifstream in("configs/drwatson/fleet.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

std::string fleet_error(const std::string& text) {
  try {
    parse_fleet(text, "edited.yaml");
  } catch (const nexp::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Fleet, EverySchemaProblemIsReportedWithItsKeyAndLine) {
  const std::string e = fleet_error(edited_fleet({{"  spares: 16", "  sparse: 16"},
                                                  {"  candidates: 4", "  candidates: 40"},
                                                  {"{kind: device_hang, p: 0.35}", "{kind: device_hang, p: 0.35, phase: triger}"},
                                                  {"    devices: 16\n", "    devices: sixteen\n"}}));
  for (const char* part : {"4 problems", "unknown key 'job.sparse'", "Did you mean 'spares'?", "'noise.candidates' is out of range",
                           "'causes.gpu.symptoms.1.phase'", "'triger' is not one of {precursor, trigger, after}",
                           "'platforms.acc_n.devices' expected int", "config 'edited.yaml', line "})
    EXPECT_NE(e.find(part), std::string::npos) << part << " in: " << e;
  // Names that refer to other entries are resolved after the schema checks.
  EXPECT_NE(fleet_error(edited_fleet({{"{raw: XID_79,  action: reboot_node", "{raw: XID_79,  action: reboot_nod"}}))
                .find("'platforms.gpu.rules.1.action': unknown action 'reboot_nod'"),
            std::string::npos);
  EXPECT_NE(fleet_error(edited_fleet({{"acc_n: MEM_ECC_CE}", "acc_x: MEM_ECC_CE}"}})).find("kinds.ecc_sbe.acc_x"),
            std::string::npos);
}

TEST(Fleet, SymptomsKeepTheirRolePhaseAndSlot) {
  const FleetSpec& f = fleet();
  const CauseSpec& gpu = f.causes[static_cast<std::size_t>(f.cause_index("gpu"))];
  // - {kind: pcie_corr, p: 0.2, slot: host, confusable: true} and - {kind: cleanup, p: 0.4, role: node, phase: after}
  EXPECT_EQ(gpu.symptoms[7].slot, kSlotHost);
  EXPECT_TRUE(gpu.symptoms[7].confusable);
  EXPECT_EQ(gpu.symptoms[8].role, Role::Node);
  EXPECT_EQ(gpu.symptoms[8].phase, Phase::After);
  EXPECT_EQ(gpu.symptoms[0].slot, kNoIndex) << "no slot: the faulty device";
  EXPECT_EQ(gpu.symptoms[0].phase, Phase::Trigger) << "the default phase";
  EXPECT_EQ(gpu.symptoms[5].value_lo, 50);
  EXPECT_EQ(gpu.symptoms[5].value_hi, 500);
  EXPECT_EQ(f.actions[static_cast<std::size_t>(gpu.fixes[static_cast<std::size_t>(gpu.symptoms[5].only_fix)].action)].name,
            "replace_accel");
}

TEST(Fleet, CoverageFollowsTheLadder) {
  const FleetSpec& f = fleet();
  const int gpu = f.cause_index("gpu");
  const int reset = f.action_index("reset_device"), reboot = f.action_index("reboot_node"),
            accel = f.action_index("replace_accel"), psu = f.action_index("replace_psu"), manual = f.manual_action();
  // gpu: fixes[0] = reset (transient), fixes[1] = replace_accel (hard)
  EXPECT_TRUE(f.covers(reset, gpu, 0));
  EXPECT_TRUE(f.covers(reboot, gpu, 0));
  EXPECT_TRUE(f.covers(psu, gpu, 0));  // a part swap power-cycles the node
  EXPECT_FALSE(f.covers(reset, gpu, 1));
  EXPECT_FALSE(f.covers(psu, gpu, 1));
  EXPECT_TRUE(f.covers(accel, gpu, 1));
  EXPECT_TRUE(f.covers(manual, gpu, 1));
  EXPECT_FALSE(f.covers(f.restart_action(), gpu, 0));
}

// ---------------------------------------------------------------- simulator

TEST(Simulator, IsDeterministicPerSeed) {
  const FleetSpec& f = fleet();
  IncumbentPolicy incumbent(f);
  std::vector<IncidentRecord> a, b, c;
  const auto ma = simulate(f, incumbent, options(0, 11, 20, &a));
  const auto mb = simulate(f, incumbent, options(0, 11, 20, &b));
  const auto mc = simulate(f, incumbent, options(0, 12, 20, &c));
  EXPECT_EQ(ma.as_map(), mb.as_map());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].day, b[i].day);
  EXPECT_NE(ma.as_map(), mc.as_map());
  EXPECT_GT(ma.interruptions, 20);
}

TEST(Simulator, RateAndMixMatchTheSeededFigures) {
  // First manifestations of faults under the oracle (which never leaves one unfixed): their number
  // is Poisson with mean rate x nodes x running days; their causes follow the seeded mix.
  const FleetSpec& f = fleet();
  OraclePolicy oracle(f);
  IncidentGenerator gen(f, 0);
  std::vector<double> observed(f.causes.size(), 0.0);
  double expected_total = 0, total = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    std::vector<IncidentRecord> log;
    const auto m = simulate(f, oracle, options(0, seed, 54, &log));
    const double running_days = 54.0 - m.job_downtime / 24.0;
    expected_total += f.platforms[0].rate_per_node_day * f.job.nodes * running_days;
    for (const auto& r : log)
      if (r.occurrence == 0) observed[static_cast<std::size_t>(r.cause)] += 1, total += 1;
  }
  EXPECT_LT(std::abs(total - expected_total), 4 * std::sqrt(expected_total)) << total << " vs " << expected_total;
  double chi2 = 0;
  int dof = -1;
  for (std::size_t c = 0; c < f.causes.size(); ++c) {
    const double e = gen.mix()[c] * total;
    if (e < 5) continue;  // pooled below
    chi2 += (observed[c] - e) * (observed[c] - e) / e;
    ++dof;
  }
  // 99.9% quantile of chi-square with up to 12 degrees of freedom is below 33.
  EXPECT_LT(chi2, 33.0) << "dof " << dof;
}

TEST(Simulator, LemonsFailMoreOften) {
  const FleetSpec& f = fleet();
  OraclePolicy oracle(f);
  double lemon = 0, normal = 0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    std::vector<IncidentRecord> log;
    simulate(f, oracle, options(0, seed, 54, &log));
    for (const auto& r : log) (r.lemon ? lemon : normal) += 1;
  }
  // Share of faults on lemons: f m / (1 - f + f m) = 0.75 / 1.6.
  const double share = lemon / (lemon + normal), expected = 0.15 * 5 / (0.85 + 0.75);
  EXPECT_NEAR(share, expected, 4 * std::sqrt(expected * (1 - expected) / (lemon + normal)));
}

TEST(Simulator, OracleIsNeverWorseThanAnyPolicy) {
  const FleetSpec& f = fleet();
  IncumbentPolicy incumbent(f);
  OraclePolicy oracle(f);
  auto prior = std::make_shared<PriorClassifier>(f, 0);
  PosteriorPolicy argmax("prior-argmax", f, prior, oracle_parameters(f), DecisionOptions{false, 0.02, 3});
  PosteriorPolicy costed("prior-cost", f, prior, oracle_parameters(f), DecisionOptions{true, 0.02, 3});
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const auto o = simulate(f, oracle, options(0, seed, 30));
    for (const Policy* p : std::vector<const Policy*>{&incumbent, &argmax, &costed}) {
      const auto m = simulate(f, *p, options(0, seed, 30));
      EXPECT_LE(o.downtime, m.downtime) << p->name() << " seed " << seed;
      EXPECT_LE(o.qa_time, m.qa_time) << p->name() << " seed " << seed;
      EXPECT_LE(o.job_downtime, m.job_downtime) << p->name() << " seed " << seed;
      EXPECT_GE(o.accuracy(), m.accuracy()) << p->name() << " seed " << seed;
    }
  }
}

// ---------------------------------------------------------------- policies

TEST(Incumbent, MapsEachXidToItsCatalogAction) {
  // NVIDIA's Xid catalog, immediate action per code (restart the application, reset the GPU, reboot
  // the node, or RMA), as an independent table.
  const std::map<int, std::string> catalog = {
      {13, "restart_job"},  {31, "restart_job"},  {43, "restart_job"},  {45, "restart_job"},
      {48, "reset_device"}, {63, "reset_device"}, {64, "replace_accel"}, {74, "reset_device"},
      {79, "reboot_node"},  {92, "reset_device"}, {94, "restart_job"},  {95, "reset_device"},
      {119, "reset_device"}, {120, "reset_device"}};
  const FleetSpec& f = fleet();
  IncumbentPolicy incumbent(f);
  RawCodes codes(f, 0);
  for (const auto& [xid, action] : catalog) {
    Observation obs;
    obs.platform = 0;
    obs.candidates.resize(2);
    const int kind = codes.kind("XID_" + std::to_string(xid));
    ASSERT_NE(kind, kNoIndex) << xid;
    obs.candidates[1].events.push_back({kind, 3, -1.0, 0.0});
    const Decision d = incumbent.decide(obs, SweepResult{}, nullptr);
    EXPECT_FALSE(d.sweep) << xid;
    if (action == "restart_job") {
      EXPECT_EQ(d.node, kNoIndex) << "Xid " << xid << " should restart the job";
    } else {
      EXPECT_EQ(d.node, 1) << "Xid " << xid;
      EXPECT_EQ(f.actions[static_cast<std::size_t>(d.action)].name, action) << "Xid " << xid;
      EXPECT_FALSE(d.qa.empty()) << "Xid " << xid;
    }
  }
}

TEST(Incumbent, CollectiveSymptomsAloneCallForASweepAndRepeatOffendersForAPerson) {
  const FleetSpec& f = fleet();
  IncumbentPolicy incumbent(f);
  RawCodes codes(f, 0);
  Observation obs;
  obs.platform = 0;
  obs.candidates.resize(3);
  for (auto& c : obs.candidates) c.events.push_back({codes.kind("NCCL_WATCHDOG"), 0, 1.0, 0.0});
  EXPECT_TRUE(incumbent.decide(obs, SweepResult{}, nullptr).sweep);
  const Decision after = incumbent.decide(obs, SweepResult{true, 2}, nullptr);
  EXPECT_EQ(after.node, 2);
  EXPECT_EQ(after.action, f.incumbent.after_sweep);
  obs.candidates[1].events.push_back({codes.kind("XID_48"), 0, -1.0, 0.0});
  obs.candidates[1].recent_incidents = 2;
  const Decision repeat = incumbent.decide(obs, SweepResult{}, nullptr);
  EXPECT_EQ(repeat.node, 1);
  EXPECT_EQ(repeat.action, f.manual_action());
}

TEST(DecisionLayer, QaPlanMeetsTheResidualRiskTarget) {
  const FleetSpec& f = fleet();
  CostModel cost(f, oracle_parameters(f));
  const ClassTable& classes = cost.classes();
  Rng rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> p(static_cast<std::size_t>(classes.size()));
    double z = 0;
    for (auto& x : p) z += (x = rng.exponential(1.0));
    for (auto& x : p) x /= z;
    const int action = static_cast<int>(rng.below(f.actions.size()));
    const auto plan = cost.plan_qa(action, p, 0.05);
    double risk = 0, reachable = 0;  // what no test at all could ever see does not count
    for (int k = 1; k < classes.size(); ++k) {
      const auto& e = classes.entries[static_cast<std::size_t>(k)];
      if (!f.causes[static_cast<std::size_t>(e.cause)].node_fault) continue;
      double miss = 1, miss_all = 1;
      for (int t : plan) miss *= 1 - f.tests[static_cast<std::size_t>(t)].detect[static_cast<std::size_t>(e.cause)];
      for (const auto& t : f.tests) miss_all *= 1 - t.detect[static_cast<std::size_t>(e.cause)];
      const double alive = p[static_cast<std::size_t>(k)] * (1 - cost.fix(action, k));
      risk += alive * miss;
      reachable += alive * miss_all;
    }
    EXPECT_LE(risk, std::max(0.05, reachable) + 1e-12) << "trial " << trial;
    for (int t : f.qa_minimum) EXPECT_NE(std::find(plan.begin(), plan.end(), t), plan.end());
  }
}

TEST(DecisionLayer, ConfidentPosteriorPullsTheRightNodeWithTheMinimalFix) {
  const FleetSpec& f = fleet();
  const ClassTable classes(f);
  const int k = classes.of(f.cause_index("hbm"), 1);  // HBM needing a new accelerator
  class Sure final : public Classifier {
   public:
    Sure(int k, std::size_t n) : k_(k), n_(n) {}
    std::vector<std::vector<double>> posteriors(const Observation& obs) const override {
      std::vector<std::vector<double>> q(obs.candidates.size(), std::vector<double>(n_, 0.0));
      for (std::size_t i = 0; i < q.size(); ++i) q[i][0] = 1.0;
      q[2][0] = 0.01, q[2][static_cast<std::size_t>(k_)] = 0.99;
      return q;
    }
    int k_;
    std::size_t n_;
  };
  PosteriorPolicy policy("sure", f, std::make_shared<Sure>(k, static_cast<std::size_t>(classes.size())), oracle_parameters(f),
                         DecisionOptions{});
  Observation obs;
  obs.candidates.resize(4);
  const Decision d = policy.decide(obs, SweepResult{}, nullptr);
  EXPECT_FALSE(d.sweep);
  EXPECT_EQ(d.node, 2);
  EXPECT_EQ(f.actions[static_cast<std::size_t>(d.action)].name, "replace_accel");
  EXPECT_EQ(d.cause, f.cause_index("hbm"));
}

// ---------------------------------------------------------------- the cost model's estimate

namespace {

// Mean absolute error of an estimate against the simulator's values over every detection, false
// alarm, sweep yield and repair success seen at least 20 times in `reference`; `covered` gets the
// share of those entries whose 95% posterior interval holds the true value.
double estimate_error(const CostParameters& e, const CostParameters& truth, const CostParameters& reference,
                      double* covered) {
  double error = 0, n = 0, inside = 0;
  auto add = [&](const Count& c, double estimate, double value) {
    const auto [lo, hi] = c.interval();
    error += std::abs(estimate - value), n += 1, inside += lo <= value && value <= hi;
  };
  for (std::size_t t = 0; t < e.detect.size(); ++t) {
    add(e.false_alarm_counts[t], e.false_alarm[t], truth.false_alarm[t]);
    for (std::size_t c = 0; c < e.detect[t].size(); ++c)
      if (reference.detect_counts[t][c].trials >= 20) add(e.detect_counts[t][c], e.detect[t][c], truth.detect[t][c]);
  }
  for (std::size_t c = 0; c < e.sweep_find.size(); ++c)
    if (reference.sweep_counts[c].trials >= 20) add(e.sweep_counts[c], e.sweep_find[c], truth.sweep_find[c]);
  for (std::size_t a = 0; a < e.fix.size(); ++a)
    for (std::size_t k = 1; k < e.fix[a].size(); ++k)
      if (reference.fix_counts[a][k].trials >= 20) add(e.fix_counts[a][k], e.fix[a][k], truth.fix[a][k]);
  *covered = inside / n;
  return error / n;
}

// Posteriors that vary with the observation (the number of events a candidate shows), so that two
// copies of a policy are compared on many different decisions.
class EventCountClassifier final : public Classifier {
 public:
  explicit EventCountClassifier(int classes) : classes_(classes) {}
  std::vector<std::vector<double>> posteriors(const Observation& obs) const override {
    std::vector<std::vector<double>> q;
    for (const auto& c : obs.candidates) {
      std::vector<double> p(static_cast<std::size_t>(classes_));
      double z = 0;
      for (int k = 0; k < classes_; ++k)
        z += (p[static_cast<std::size_t>(k)] = k == 0 ? 8.0 : 1.0 + static_cast<double>((c.events.size() * (k + 3)) % 7));
      for (auto& x : p) x /= z;
      q.push_back(p);
    }
    return q;
  }

 private:
  int classes_;
};

}  // namespace

TEST(CostEstimate, ConvergesToTheSimulatorsValuesAsTheTrainingPeriodGrows) {
  const FleetSpec& f = fleet();
  const FleetSpec known = public_view(f);
  const CostParameters truth = oracle_parameters(f);
  std::int64_t incidents_short = 0, incidents_long = 0;
  const RepairHistory short_history = training_period(f, 0, 11, 20, &incidents_short);
  const RepairHistory long_history = training_period(f, 0, 11, 1000, &incidents_long);
  EXPECT_GT(incidents_long, 30 * incidents_short);
  const CostParameters short_estimate = estimate_parameters(known, short_history);
  const CostParameters long_estimate = estimate_parameters(known, long_history);
  double cover_short = 0, cover_long = 0;
  const double error_short = estimate_error(short_estimate, truth, long_estimate, &cover_short);
  const double error_long = estimate_error(long_estimate, truth, long_estimate, &cover_long);
  EXPECT_LT(error_long, 0.04);                 // 1,000 days: every number within a few points on average
  EXPECT_LT(error_long, 0.5 * error_short);    // 20 days: mostly the prior
  EXPECT_GE(cover_long, 0.85);                 // the Beta posterior's 95% intervals hold the truth
  // A recording run simulates the same fleet as a plain one.
  RepairHistory h;
  SimOptions with = options(0, 3, 20);
  with.history = &h;
  const IncumbentPolicy incumbent(f);
  EXPECT_EQ(simulate(f, incumbent, with).downtime, simulate(f, incumbent, options(0, 3, 20)).downtime);
  EXPECT_FALSE(h.rounds.empty());
}

TEST(CostEstimate, NoPolicyButTheOracleReadsTheSimulatorsParameters) {
  const FleetSpec& f = fleet();
  const FleetSpec known = public_view(f);
  for (const auto& a : known.actions) EXPECT_TRUE(std::isnan(a.p_fix)) << a.name;
  for (const auto& t : known.tests) {
    EXPECT_TRUE(std::isnan(t.false_alarm)) << t.name;
    for (double d : t.detect) EXPECT_TRUE(std::isnan(d)) << t.name;
  }
  for (const auto& c : known.causes) EXPECT_TRUE(std::isnan(c.sweep_find) && std::isnan(c.recur_per_day)) << c.name;
  // A planning policy given the public view decides exactly as one given the whole fleet file: every
  // probability it uses comes from the estimated parameters (a NaN read would change its choices).
  const CostParameters estimate = estimate_parameters(known, training_period(f, 0, 5, 200));
  auto classifier = std::make_shared<EventCountClassifier>(ClassTable(f).size());
  const PosteriorPolicy blind("public", known, classifier, estimate, DecisionOptions{});
  const PosteriorPolicy sighted("whole-file", f, classifier, estimate, DecisionOptions{});
  const auto a = simulate(f, blind, options(0, 9, 30)), b = simulate(f, sighted, options(0, 9, 30));
  EXPECT_GT(a.pulls, 5);
  EXPECT_GT(a.sweeps + a.pulls - a.healthy_pulls, 0);
  EXPECT_EQ(a.downtime, b.downtime);
  EXPECT_EQ(a.qa_time, b.qa_time);
  EXPECT_EQ(a.correct, b.correct);
  // And the estimate is not the truth: the oracle's parameters change the same policy's decisions.
  const PosteriorPolicy truthful("oracle-costs", known, classifier, oracle_parameters(f), DecisionOptions{});
  EXPECT_NE(simulate(f, truthful, options(0, 9, 30)).qa_time, a.qa_time);
}

TEST(Statistics, PairedReductionOfIdenticalPoliciesIsZeroWithATightInterval) {
  std::vector<double> a = {10, 12, 9, 11, 13}, b = {5, 6, 4.5, 5.5, 6.5};
  nexp::Random rng(1);
  const auto same = paired_reduction(a, a, rng);
  EXPECT_DOUBLE_EQ(same.estimate, 0);
  EXPECT_DOUBLE_EQ(same.low, 0);
  EXPECT_DOUBLE_EQ(same.high, 0);
  const auto half = paired_reduction(a, b, rng);
  EXPECT_DOUBLE_EQ(half.estimate, 0.5);
  EXPECT_NEAR(half.low, 0.5, 1e-12);  // b = a / 2 exactly: every resample gives 0.5
}

// ---------------------------------------------------------------- parsers

TEST(Parsers, KernelLinesRoundTrip) {
  const std::string text =
      "[ 1000.100000] NVRM: Xid (PCI:0000:b3:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected\n"
      "[ 1001.500000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
      "[ 1002.000000] mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 5: be00000000800400\n"
      "[ 1003.000000] EDAC MC0: 7 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0\n"
      "[ 1004.000000] pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: 0000:3b:00.0\n"
      "[ 1005.000000] mlx5_core 0000:5e:00.0 ibp94s0: Link down\n"
      "[ 1006.000000] some unrelated line\n"
      "2024-05-01T10:11:12.5+00:00 host kernel: NVRM: Xid (PCI:0000:3B:00): 74, pid=77, name=python, NVLink: fatal error\n";
  const auto events = parse_kernel_log(text);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0].raw, "XID_48");
  EXPECT_EQ(events[0].slot, 1);  // bus b3 sorts after 3b
  EXPECT_EQ(events[1].raw, "XID_79");
  EXPECT_EQ(events[1].slot, 0);
  EXPECT_EQ(events[3].raw, "EDAC_CE");
  EXPECT_EQ(events[3].value, 7);
  EXPECT_EQ(events[6].raw, "XID_74");
  EXPECT_EQ(events[6].bus, "0000:3b:00");
  EXPECT_EQ(events[6].slot, 0);
  std::string written;
  for (auto e : events) {
    e.seconds = std::round(e.seconds * 1e6) / 1e6;
    written += format_kernel_line(e) + "\n";
  }
  const auto again = parse_kernel_log(written);
  ASSERT_EQ(again.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(again[i].raw, events[i].raw);
    EXPECT_EQ(again[i].slot, events[i].slot);
    EXPECT_EQ(again[i].value, events[i].value);
    EXPECT_NEAR(again[i].seconds, events[i].seconds, 1e-6);
  }
  const NodeView v = events_from_log(events, RawCodes(fleet(), 0));
  EXPECT_EQ(v.events.size(), 7u);
  EXPECT_DOUBLE_EQ(v.events.back().minutes, 0.0);  // the last line is the interruption
}

TEST(Parsers, DcgmExporterTextRoundTrips) {
  const std::string text =
      "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n"
      "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 91\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\",UUID=\"GPU-2\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 45\n"
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"1\",UUID=\"GPU-2\",device=\"nvidia1\"} 2\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",UUID=\"GPU-2\",device=\"nvidia1\",err_code=\"48\"} 48\n"
      "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"1\",UUID=\"GPU-2\",device=\"nvidia1\"} 1\n"
      "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{gpu=\"0\",UUID=\"GPU-1\",device=\"nvidia0\"} 0\n";
  const auto samples = parse_dcgm(text);
  ASSERT_EQ(samples.size(), 6u);
  EXPECT_EQ(samples[0].field, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(samples[0].value, 91);
  EXPECT_EQ(samples[2].gpu, 1);
  EXPECT_EQ(parse_dcgm(format_dcgm(samples)), samples);
  const NodeView v = events_from_dcgm(samples, RawCodes(fleet(), 0));
  // GPU 0 is hot (91 C: 21 above 70); GPU 1 has a DBE, Xid 48 and a row-remap failure; no CRC errors.
  ASSERT_EQ(v.events.size(), 4u);
  EXPECT_EQ(v.events[0].kind, fleet().kind_index("temp_high"));
  EXPECT_EQ(v.events[0].value, 21);
  EXPECT_EQ(v.events[3].kind, fleet().kind_index("row_remap_fail"));
  EXPECT_EQ(v.events[3].slot, 1);
}

TEST(Parsers, NvidiaSmiQueryRoundTrips) {
  const std::string text =
      "==============NVSMI LOG==============\n"
      "Attached GPUs                             : 2\n"
      "GPU 00000000:10:1C.0\n"
      "    Product Name                          : NVIDIA A100-SXM4-80GB\n"
      "    ECC Errors\n"
      "        Volatile\n"
      "            SRAM Correctable              : 0\n"
      "            SRAM Uncorrectable            : 0\n"
      "            DRAM Correctable              : 177\n"
      "            DRAM Uncorrectable            : 0\n"
      "        Aggregate\n"
      "            DRAM Correctable              : 9000\n"
      "            DRAM Uncorrectable            : 3\n"
      "    Remapped Rows\n"
      "        Correctable Error                 : 1\n"
      "        Uncorrectable Error               : 0\n"
      "        Pending                           : Yes\n"
      "        Remapping Failure Occurred        : No\n"
      "    Temperature\n"
      "        GPU Current Temp                  : 45 C\n"
      "        Memory Current Temp               : 50 C\n"
      "GPU 00000000:20:1C.0\n"
      "    Clocks Event Reasons\n"
      "        HW Slowdown                       : Active\n"
      "    Remapped Rows\n"
      "        Uncorrectable Error               : 12\n"
      "        Pending                           : No\n"
      "        Remapping Failure Occurred        : Yes\n"
      "    Temperature\n"
      "        GPU Current Temp                  : 88 C\n";
  const auto gpus = parse_nvidia_smi(text);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].bus, "00000000:10:1C.0");
  EXPECT_EQ(gpus[0].dram_correctable, 177);   // the volatile count, not the aggregate
  EXPECT_EQ(gpus[0].dram_uncorrectable, 0);
  EXPECT_TRUE(gpus[0].remap_pending);
  EXPECT_EQ(gpus[0].gpu_temp, 45);
  EXPECT_TRUE(gpus[1].hw_slowdown);
  EXPECT_TRUE(gpus[1].remap_failure);
  EXPECT_EQ(gpus[1].remapped_uncorrectable, 12);
  EXPECT_EQ(gpus[1].memory_temp, -1);
  const auto again = parse_nvidia_smi(format_nvidia_smi(gpus));
  ASSERT_EQ(again.size(), gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) EXPECT_TRUE(again[i] == gpus[i]) << i;
  const NodeView v = events_from_smi(gpus, RawCodes(fleet(), 0));
  std::vector<std::string> raws;
  for (const auto& e : v.events) raws.push_back(fleet().platforms[0].codes[static_cast<std::size_t>(e.kind)].raw);
  EXPECT_EQ(raws, (std::vector<std::string>{"DCGM_310", "XID_63", "DCGM_150", "DCGM_393", "XID_64", "SMI_HW_SLOWDOWN"}));
}

// ---------------------------------------------------------------- model

TEST(Model, BeatsTheMajorityClassOnAnEasySettingAfterShortTraining) {
  FleetSpec f = fleet();
  f.noise.ambiguity = 0;  // clean signatures
  f.noise.drop = 0;
  at::manual_seed(0);
  const Vocabulary vocab(f);
  const ClassTable classes(f);
  ModelConfig c;
  c.dim = 32, c.heads = 2, c.layers = 1, c.ff = 64, c.max_len = 24, c.dropout = 0.0;
  c.raw_size = vocab.raw_size(), c.family_size = vocab.family_size();
  c.platforms = static_cast<std::int64_t>(f.platforms.size()), c.classes = classes.size();
  const auto train = build_corpus(f, vocab, classes, {{0}, {250}, 1}, c.max_len);
  const auto test = build_corpus(f, vocab, classes, {{0}, {100}, 2}, c.max_len);
  EventEncoder model(c);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(3e-3));
  for (int step = 0; step < 150; ++step) finetune_step(model, opt, train, batch_indices(3, step, train.size(), 64));
  const at::Tensor y = labels_of(test);
  const double acc = (predict_logits(model, test).argmax(1) == y).to(at::kDouble).mean().item<double>();
  const double majority = (y == ClassTable::kHealthy).to(at::kDouble).mean().item<double>();
  EXPECT_GT(acc, majority + 0.08) << "accuracy " << acc << " vs majority " << majority;
}

TEST(Model, SavesAndLoadsWithItsTemperature) {
  const FleetSpec& f = fleet();
  ModelConfig c;
  c.dim = 16, c.heads = 2, c.layers = 1, c.ff = 32, c.max_len = 8;
  c.raw_size = Vocabulary(f).raw_size(), c.family_size = Vocabulary(f).family_size(), c.platforms = 3, c.classes = ClassTable(f).size();
  EventEncoder model(c);
  const auto file = std::filesystem::temp_directory_path() / "drwatson_test_model.pt";
  save_encoder(model, 1.7, file);
  auto [back, temperature] = load_encoder(file);
  EXPECT_DOUBLE_EQ(temperature, 1.7);
  const auto data = build_corpus(f, Vocabulary(f), ClassTable(f), {{0}, {3}, 9}, c.max_len);
  EXPECT_TRUE(at::allclose(predict_logits(model, data), predict_logits(back, data)));
  std::filesystem::remove(file);
}

// ---------------------------------------------------------------- a simulated accelerator's faults

namespace {

// Loads the simaccel plugin through nexp's own loader and runs a device with `fault` for a few
// steps; returns the events DrWatson reads from its telemetry (as the TPU-like platform).
NodeView simaccel_events(const std::string& fault, std::int64_t steps = 8) {
  static nexp::Registry& registry = [] () -> nexp::Registry& {
    auto* r = new nexp::Registry();  // never destroyed, like the plugin it loads
    nexp::load_plugin(*r, DRWATSON_SIMACCEL_PLUGIN);
    return *r;
  }();
  nexp::Params options(std::map<std::string, nexp::Value>{
      {"devices", std::int64_t{2}}, {"memory_mb", std::int64_t{1024}}, {"fault", fault}, {"fault_device", std::int64_t{0}},
      {"onset_step", std::int64_t{2}}, {"stuck_seconds", 0.0}, {"slowdown_factor", 4.0}});
  auto device = nexp::resolve_device(registry, "simaccel:0", options);
  const auto before = device->telemetry();
  for (std::int64_t s = 1; s <= steps; ++s) device->on_step(s);
  ProbeResult probe;
  probe.steps = static_cast<int>(steps);
  return events_from_telemetry(before, device->telemetry(), probe, fleet(), fleet().platform_index("acc_t"), 0);
}

Decision incumbent_on(const NodeView& node) {
  static const IncumbentPolicy incumbent(fleet());
  Observation obs;
  obs.platform = fleet().platform_index("acc_t");
  obs.candidates = {node};
  return incumbent.decide(obs, SweepResult{}, nullptr);
}

}  // namespace

TEST(Simaccel, InjectedFaultsAreDetectedAndDiagnosed) {
  const FleetSpec& f = fleet();
  EXPECT_TRUE(simaccel_events("none").events.empty()) << "a healthy device reports nothing";
  EXPECT_EQ(incumbent_on(simaccel_events("none")).node, kNoIndex);

  const Decision ecc = incumbent_on(simaccel_events("ecc_storm"));
  EXPECT_EQ(ecc.node, 0);
  EXPECT_EQ(ecc.cause, f.cause_index("hbm"));
  EXPECT_EQ(f.actions[static_cast<std::size_t>(ecc.action)].name, "reset_device");

  const Decision link = incumbent_on(simaccel_events("link_flap"));
  EXPECT_EQ(link.node, 0);
  EXPECT_EQ(link.cause, f.cause_index("gpu"));  // the chip and its links

  const Decision hot = incumbent_on(simaccel_events("slowdown"));
  EXPECT_EQ(hot.node, 0);
  EXPECT_EQ(hot.cause, f.cause_index("thermal"));
  EXPECT_EQ(f.actions[static_cast<std::size_t>(hot.action)].name, "service_thermal");

  // The same events through a classifier trained on labelled incidents: it names the same causes.
  FleetSpec clean = f;
  clean.noise.ambiguity = 0.25;
  BagOfEvents bag(clean);
  const ClassTable classes(clean);
  std::vector<std::vector<float>> x;
  std::vector<std::int64_t> y;
  for (int p = 0; p < 3; ++p) {
    IncidentGenerator gen(clean, p);
    for (std::uint64_t i = 0; i < 400; ++i) {
      auto [obs, truth] = gen.sample(4, i);
      for (std::size_t c = 0; c < obs.candidates.size(); ++c) {
        x.push_back(bag.features(p, obs.candidates[c]));
        y.push_back(static_cast<int>(c) == truth.culprit ? classes.of(truth.cause, truth.fix) : ClassTable::kHealthy);
      }
    }
  }
  bag.fit(x, y, {}, {}, 1.0, 100);
  auto top_cause = [&](const NodeView& node) {
    const auto q = bag.predict(bag.features(clean.platform_index("acc_t"), node));
    std::map<int, double> by_cause;
    for (int k = 1; k < classes.size(); ++k) by_cause[classes.entries[static_cast<std::size_t>(k)].cause] += q[static_cast<std::size_t>(k)];
    return std::max_element(by_cause.begin(), by_cause.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  };
  EXPECT_EQ(top_cause(simaccel_events("ecc_storm")), f.cause_index("hbm"));
  EXPECT_EQ(top_cause(simaccel_events("slowdown")), f.cause_index("thermal"));
}
