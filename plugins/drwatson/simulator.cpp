#include "simulator.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <tuple>

#include "rng.hpp"

namespace drwatson {

std::map<std::string, double> ReplicaMetrics::as_map() const {
  return {{"downtime", downtime},         {"job_downtime", job_downtime},   {"node_downtime", node_downtime},
          {"qa_time", qa_time},           {"ettr", ettr},                   {"interruptions", interruptions},
          {"first_faults", first_faults}, {"recurrences", recurrences},     {"accuracy", accuracy()}, {"fix_rate", fix_rate()},
          {"repeat_rate", repeat_rate()}, {"pulls", pulls},                 {"healthy_pulls", healthy_pulls},
          {"manual_repairs", manual_repairs}, {"sweeps", sweeps},           {"spare_wait", spare_wait},
          {"mttr", mttr()}, {"escape_rate", escape_rate()}};
}

std::pair<double, double> node_rates(const FleetSpec& fleet, int platform) {
  const double f = fleet.lemons.fraction, m = fleet.lemons.multiplier;
  // The fleet average equals the platform's rate: (1 - f) r + f m r = rate.
  const double r = fleet.platforms[static_cast<std::size_t>(platform)].rate_per_node_day / (1.0 - f + f * m) / 1440.0;
  return {r, r * m};
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMinutesPerDay = 1440.0;

struct Fault {
  std::uint64_t id = 0;
  int cause = kNoIndex, fix = kNoIndex, device = 0;
  int occurrence = 0;
  double next_age = kInf;  // in-service age at which it strikes again
};

enum class Where { Job, Spare, Repair };

struct Node {
  bool lemon = false;
  double rate = 0;              // first faults per in-service minute
  double age = 0;               // in-service minutes, as of joined_clock
  double joined_clock = 0;      // the job clock when it (re)joined
  std::uint64_t arrivals = 0;   // first faults drawn so far
  double last_arrival_age = 0;
  double pending_unit = 0;      // unit exponential of the next first fault
  std::optional<Fault> fault;
  Where where = Where::Spare;
  int version = 0;
  std::vector<double> blamed;   // wall minutes of incidents it was pulled for
  double last_return = -kInf;
};

class Simulation {
 public:
  Simulation(const FleetSpec& fleet, const Policy& policy, const SimOptions& options)
      : fleet_(fleet), policy_(policy), opt_(options), gen_(fleet, options.platform),
        horizon_((options.horizon_days > 0 ? options.horizon_days : fleet.job.horizon_days) * kMinutesPerDay) {
    const auto [normal, lemon] = node_rates(fleet, options.platform);
    const int total = fleet.job.nodes + fleet.job.spares;
    nodes_.resize(static_cast<std::size_t>(total));
    for (int i = 0; i < total; ++i) {
      Node& n = nodes_[static_cast<std::size_t>(i)];
      n.lemon = Rng(opt_.seed, Purpose::Lemon, static_cast<std::uint64_t>(i)).bernoulli(fleet.lemons.fraction);
      n.rate = n.lemon ? lemon : normal;
      draw_arrival(i);
      if (i < fleet.job.nodes) {
        job_.push_back(i);
        join(i);
      } else {
        spares_.push_back(i);
      }
    }
  }

  ReplicaMetrics run() {
    while (true) {
      // The next node event on the job clock; stale heap entries are skipped.
      while (!heap_.empty()) {
        auto [at, i, version] = heap_.top();
        if (nodes_[static_cast<std::size_t>(i)].version == version && nodes_[static_cast<std::size_t>(i)].where == Where::Job) break;
        heap_.pop();
      }
      if (heap_.empty()) break;
      auto [at, i, version] = heap_.top();
      heap_.pop();
      const double wall = wall_resume_ + (at - clock_resume_);
      if (wall >= horizon_) break;
      incident(i, at, wall);
    }
    m_.ettr = 1.0 - std::min(1.0, m_.job_downtime * 60.0 / horizon_);
    // Every node of the job stands idle while it does; a pulled node is out of production until it
    // is back in the spare pool.
    m_.downtime = fleet_.job.nodes * m_.job_downtime + m_.node_downtime;
    return m_;
  }

 private:
  // ---- node clocks
  double age_now(const Node& n, double clock) const { return n.age + (clock - n.joined_clock); }

  void draw_arrival(int i) {
    Node& n = nodes_[static_cast<std::size_t>(i)];
    n.pending_unit = Rng(opt_.seed, Purpose::Arrival, static_cast<std::uint64_t>(i), n.arrivals).exponential(1.0);
  }
  double next_first_age(const Node& n) const { return n.last_arrival_age + n.pending_unit / n.rate; }

  void join(int i) {
    Node& n = nodes_[static_cast<std::size_t>(i)];
    n.where = Where::Job;
    n.joined_clock = clock_;
    ++n.version;
    schedule(i);
  }
  void schedule(int i) {
    const Node& n = nodes_[static_cast<std::size_t>(i)];
    const double next = std::min(next_first_age(n), n.fault ? n.fault->next_age : kInf);
    if (next < kInf) heap_.emplace(n.joined_clock + (next - n.age), i, n.version);
  }
  void leave(int i) {
    Node& n = nodes_[static_cast<std::size_t>(i)];
    n.age = age_now(n, clock_);
    n.joined_clock = clock_;
    ++n.version;
    job_.erase(std::find(job_.begin(), job_.end(), i));
  }
  // A fault that stays on a node (in service or not) strikes again after an exponential in-service time.
  void arm_recurrence(Node& n, double age) {
    Fault& f = *n.fault;
    const double rate = fleet_.causes[static_cast<std::size_t>(f.cause)].recur_per_day / kMinutesPerDay;
    f.next_age = age + Rng(opt_.seed, Purpose::Recur, f.id, static_cast<std::uint64_t>(f.occurrence)).exponential(rate);
  }

  // ---- spares
  void collect_returns(double wall) {
    while (!returns_.empty() && std::get<0>(returns_.top()) <= wall) {
      const int i = std::get<1>(returns_.top());
      returns_.pop();
      nodes_[static_cast<std::size_t>(i)].where = Where::Spare;
      spares_.push_back(i);
    }
  }
  // Brings a spare into the job; returns how long the job waited for one.
  double replace(double wall) {
    collect_returns(wall);
    double waited = 0;
    if (spares_.empty()) {
      if (returns_.empty()) return 0;  // nothing will ever come back: run short-handed
      const auto [t, i] = returns_.top();
      waited = std::max(0.0, t - wall);
      collect_returns(t);
    }
    const int i = spares_.front();
    spares_.pop_front();
    job_.push_back(i);
    join(i);
    return waited;
  }

  // ---- one interruption
  void incident(int i, double at, double wall) {
    clock_ = at;
    Node& node = nodes_[static_cast<std::size_t>(i)];
    const double age = age_now(node, clock_);
    const auto& platform_mix = gen_.mix();

    // What struck: a latent fault again, or a new fault.
    bool recurrence = node.fault && node.fault->next_age <= next_first_age(node);
    if (!recurrence) {
      const std::uint64_t k = node.arrivals++;
      node.last_arrival_age = age;
      draw_arrival(i);
      if (node.fault) {  // a new fault on a node that already carries one: the old one is what it shows
        node.fault->next_age = std::min(node.fault->next_age, age);
        recurrence = true;
      } else {
        Rng r(opt_.seed, Purpose::Cause, static_cast<std::uint64_t>(i), k);
        Fault f;
        f.id = (static_cast<std::uint64_t>(i) << 24) | k;
        f.cause = static_cast<int>(r.categorical(platform_mix));
        std::vector<double> shares;
        for (const auto& o : fleet_.causes[static_cast<std::size_t>(f.cause)].fixes) shares.push_back(o.share);
        f.fix = static_cast<int>(r.categorical(shares));
        f.device = r.integer(0, fleet_.platforms[static_cast<std::size_t>(opt_.platform)].devices - 1);
        node.fault = f;
      }
    }
    Fault fault = *node.fault;
    if (recurrence) fault.occurrence = ++node.fault->occurrence;
    const CauseSpec& cause = fleet_.causes[static_cast<std::size_t>(fault.cause)];
    if (!cause.node_fault) node.fault.reset();  // a software fault leaves nothing behind
    m_.interruptions += 1;
    (recurrence ? m_.recurrences : m_.first_faults) += 1;

    // Candidates: the node and peers that reported the interruption too, in random order.
    Rng pick(opt_.seed, Purpose::Peers, fault.id, static_cast<std::uint64_t>(fault.occurrence));
    const int k = std::min<int>(fleet_.noise.candidates, static_cast<int>(job_.size()));
    std::vector<int> members;
    members.push_back(i);
    while (static_cast<int>(members.size()) < k) {
      const int j = job_[pick.below(job_.size())];
      if (std::find(members.begin(), members.end(), j) == members.end()) members.push_back(j);
    }
    const int culprit = pick.integer(0, k - 1);
    std::swap(members[0], members[static_cast<std::size_t>(culprit)]);
    std::vector<History> history;
    for (int j : members) {
      const Node& n = nodes_[static_cast<std::size_t>(j)];
      History h;
      for (double t : n.blamed) h.recent_incidents += wall - t <= 30 * kMinutesPerDay;
      h.days_since_repair = (wall - n.last_return) / kMinutesPerDay;
      history.push_back(h);
    }
    Observation obs = gen_.observe(opt_.seed, fault.id, fault.occurrence, fault.cause, fault.fix, fault.device, culprit, history);
    for (std::size_t c = 0; c < members.size(); ++c) obs.candidates[c].node = members[c];
    const Truth truth{culprit, fault.cause, fault.fix};
    const Truth* shown = policy_.omniscient() ? &truth : nullptr;

    Decision d = policy_.decide(obs, SweepResult{}, shown);
    double stall = fleet_.job.restart_minutes + fleet_.job.host_select_minutes;
    SweepResult sweep;
    if (d.sweep) {
      sweep.done = true;
      if (cause.node_fault &&
          Rng(opt_.seed, Purpose::Sweep, fault.id, static_cast<std::uint64_t>(fault.occurrence)).bernoulli(cause.sweep_find))
        sweep.flagged = culprit;
      stall += fleet_.job.sweep_minutes;
      m_.sweeps += 1;
      if (opt_.history) opt_.history->sweeps.push_back({fault.cause, sweep.flagged == culprit});
      d = policy_.decide(obs, sweep, shown);
      if (d.sweep) d = Decision{};
    }
    // Diagnosis accuracy: the diagnosis blames the right node and names the right root cause; for
    // causes that live on no node (software, dependencies), it names any such cause.
    const bool correct = cause.node_fault
                             ? d.suspect == culprit && d.cause == fault.cause
                             : d.cause == kNoIndex || !fleet_.causes[static_cast<std::size_t>(d.cause)].node_fault;
    m_.correct += correct;
    m_.fixed_first += cause.node_fault ? d.node == culprit && d.action != kNoIndex && fleet_.covers(d.action, fault.cause, fault.fix)
                                       : d.node == kNoIndex;
    const double lost = std::fmod(clock_ - clock_resume_, fleet_.job.checkpoint_minutes);

    // The fault stays in service unless its node is pulled.
    const int pulled = d.node == kNoIndex ? kNoIndex : members[static_cast<std::size_t>(d.node)];
    if (node.fault && pulled != i) arm_recurrence(node, age);
    double waited = 0;
    if (pulled == kNoIndex) blame(obs, wall);
    if (pulled != kNoIndex) {
      leave(pulled);
      repair(pulled, d, obs, sweep, wall, pulled == i ? &truth : nullptr);
      waited = replace(wall);
    }
    if (pulled != i) {  // the node stays; its next event changed
      ++node.version;
      node.age = age;
      node.joined_clock = clock_;
      schedule(i);
    }
    m_.spare_wait += waited / 60.0;
    m_.job_downtime += (stall + waited + lost) / 60.0;
    clock_resume_ = clock_;
    wall_resume_ = wall + stall + waited;
    if (opt_.log)
      opt_.log->push_back({wall / kMinutesPerDay, i, fault.cause, fault.fix, fault.occurrence, node.lemon, pulled, d.action,
                           sweep.done, correct});
  }

  // With nobody pulled, operators still note the node that reported the most around the interruption:
  // that is the history a repeat-offender rule and a model see next time.
  void blame(const Observation& obs, double wall) {
    const int c = suspect(fleet_, obs);
    if (c != kNoIndex) nodes_[static_cast<std::size_t>(obs.candidates[static_cast<std::size_t>(c)].node)].blamed.push_back(wall);
  }

  // The pulled node's way back: action, QA, escalation while QA fails.
  void repair(int i, Decision d, const Observation& obs, const SweepResult& sweep, double wall, const Truth* truth) {
    Node& n = nodes_[static_cast<std::size_t>(i)];
    n.blamed.push_back(wall);
    m_.pulls += 1;
    if (!n.fault) m_.healthy_pulls += 1;
    RepairState state;
    state.obs = &obs;
    state.sweep = sweep;
    state.diagnosis = d.cause;
    for (std::size_t c = 0; c < obs.candidates.size(); ++c)
      if (obs.candidates[c].node == i) state.node = static_cast<int>(c);
    const std::uint64_t key = n.fault ? n.fault->id : ((1ull << 62) | (static_cast<std::uint64_t>(i) << 20) | n.blamed.size());
    const int occurrence = n.fault ? n.fault->occurrence : 0;
    double t = wall;
    int action = d.action;
    std::vector<int> plan = d.qa;
    if (opt_.history && opt_.history->battery) record_battery(n, key, occurrence);
    constexpr int kMaxRounds = 8;
    for (int round = 0; round < kMaxRounds; ++round) {
      const ActionSpec& a = fleet_.actions[static_cast<std::size_t>(action)];
      t += a.minutes;
      Rng draw(opt_.seed, Purpose::Repair, key, static_cast<std::uint64_t>(occurrence * 64 + round));
      const int cause_before = n.fault ? n.fault->cause : kNoIndex, fix_before = n.fault ? n.fault->fix : kNoIndex;
      if (n.fault && fleet_.covers(action, n.fault->cause, n.fault->fix) && draw.bernoulli(a.p_fix)) n.fault.reset();
      if (opt_.history) opt_.history->rounds.push_back({cause_before, fix_before, action, cause_before != kNoIndex && !n.fault});
      if (a.level == 5) {
        m_.manual_repairs += 1;
        if (n.lemon && draw.bernoulli(fleet_.lemons.manual_clears)) {
          n.lemon = false;
          n.rate = node_rates(fleet_, opt_.platform).first;
        }
      }
      int failed = kNoIndex;
      if (policy_.omniscient()) {
        if (n.fault) failed = 0;
      } else {
        Rng qa(opt_.seed, Purpose::Qa, key, static_cast<std::uint64_t>(occurrence * 64 + round));
        for (int test : plan) {
          const TestSpec& spec = fleet_.tests[static_cast<std::size_t>(test)];
          t += spec.minutes;
          m_.qa_time += spec.minutes / 60.0;
          const double p = n.fault ? spec.detect[static_cast<std::size_t>(n.fault->cause)] : spec.false_alarm;
          const bool fails = qa.bernoulli(p);
          if (opt_.history) opt_.history->tests.push_back({test, n.fault ? n.fault->cause : kNoIndex, fails});
          if (fails) {
            failed = test;
            break;
          }
        }
      }
      state.actions.push_back(action);
      state.plans.push_back(plan);
      state.failed_test.push_back(failed);
      if (failed == kNoIndex || round + 1 == kMaxRounds) break;
      Truth now;
      if (truth && n.fault) now = {truth->culprit, n.fault->cause, n.fault->fix};
      Step next = policy_.escalate(state, truth && n.fault ? &now : nullptr);
      action = next.action;
      plan = next.qa;
    }
    if (n.fault) arm_recurrence(n, n.age), m_.escapes += 1;  // back in service with its fault
    n.where = Where::Repair;
    n.last_return = t;
    m_.node_downtime += (t - wall) / 60.0;
    returns_.emplace(t, i);
  }

  // Every test once on the pulled node as it arrives, on its own stream (the simulation's draws are
  // untouched: a history-recording run simulates the same fleet).
  void record_battery(const Node& n, std::uint64_t key, int occurrence) {
    Rng draw(opt_.seed, Purpose::Battery, key, static_cast<std::uint64_t>(occurrence));
    for (std::size_t t = 0; t < fleet_.tests.size(); ++t) {
      const TestSpec& spec = fleet_.tests[t];
      const double p = n.fault ? spec.detect[static_cast<std::size_t>(n.fault->cause)] : spec.false_alarm;
      opt_.history->tests.push_back({static_cast<int>(t), n.fault ? n.fault->cause : kNoIndex, draw.bernoulli(p)});
    }
  }

  const FleetSpec& fleet_;
  const Policy& policy_;
  SimOptions opt_;
  IncidentGenerator gen_;
  double horizon_;
  std::vector<Node> nodes_;
  std::vector<int> job_;
  std::deque<int> spares_;
  using Entry = std::tuple<double, int, int>;  // (job clock, node, version)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  using Return = std::pair<double, int>;  // (wall minutes, node)
  std::priority_queue<Return, std::vector<Return>, std::greater<>> returns_;
  double clock_ = 0, clock_resume_ = 0, wall_resume_ = 0;
  ReplicaMetrics m_;
};

}  // namespace

ReplicaMetrics simulate(const FleetSpec& fleet, const Policy& policy, const SimOptions& options) {
  return Simulation(fleet, policy, options).run();
}

}  // namespace drwatson
