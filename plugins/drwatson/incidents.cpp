#include "incidents.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace drwatson {

IncidentGenerator::IncidentGenerator(const FleetSpec& fleet, int platform) : fleet_(&fleet), platform_(platform) {
  double total = 0;
  for (const auto& c : fleet.causes) total += c.count[static_cast<std::size_t>(platform)];
  for (const auto& c : fleet.causes) mix_.push_back(total > 0 ? c.count[static_cast<std::size_t>(platform)] / total : 0.0);
}

void IncidentGenerator::background(Rng& rng, NodeView& view, int devices) const {
  const double window_days = fleet_->noise.window_hours / 24.0;
  for (const auto& b : fleet_->background) {
    const std::uint64_t n = rng.poisson(b.per_day * window_days * fleet_->noise.background);
    for (std::uint64_t i = 0; i < n; ++i) {
      Event e;
      e.kind = b.kind;
      e.slot = b.slot == kNoIndex ? rng.integer(0, devices - 1) : b.slot;
      e.minutes = -rng.uniform() * fleet_->noise.window_hours * 60.0;
      e.value = b.value_hi > 0 ? rng.uniform(b.value_lo, b.value_hi) : 0.0;
      view.events.push_back(e);
    }
  }
}

Observation IncidentGenerator::observe(std::uint64_t seed, std::uint64_t fault_id, int occurrence, int cause, int fix,
                                       int device, int culprit, const std::vector<History>& history) const {
  Rng rng(seed, Purpose::Symptom, fault_id, static_cast<std::uint64_t>(occurrence), static_cast<std::uint64_t>(platform_));
  const PlatformSpec& platform = fleet_->platforms[static_cast<std::size_t>(platform_)];
  const CauseSpec& c = fleet_->causes[static_cast<std::size_t>(cause)];
  const double window = fleet_->noise.window_hours * 60.0;
  Observation obs;
  obs.platform = platform_;
  obs.candidates.resize(history.size());
  for (std::size_t i = 0; i < history.size(); ++i) {
    obs.candidates[i].recent_incidents = history[i].recent_incidents;
    obs.candidates[i].days_since_repair = history[i].days_since_repair;
    background(rng, obs.candidates[i], platform.devices);
  }
  auto when = [&](Phase phase) {
    switch (phase) {
      case Phase::Precursor: return -rng.uniform(5.0, window);
      case Phase::Trigger: return -rng.uniform(0.0, 2.0);
      case Phase::After: return rng.uniform(0.0, 5.0);
    }
    return 0.0;
  };
  auto emit = [&](NodeView& view, const SymptomSpec& s, int slot) {
    Event e;
    e.kind = s.kind;
    e.slot = slot;
    e.minutes = when(s.phase);
    e.value = s.value_hi > 0 ? rng.uniform(s.value_lo, s.value_hi) * rng.lognormal(fleet_->noise.value_sigma) : 0.0;
    view.events.push_back(e);
  };
  for (const auto& s : c.symptoms) {
    if (s.only_fix != kNoIndex && s.only_fix != fix) continue;
    // Ambiguity a: symptoms shared between causes appear with probability p a; below a = 1 a cause's
    // own symptoms become surer, p + (1 - p)(1 - a), so that a = 0 is a world of clean signatures.
    const double a = fleet_->noise.ambiguity;
    const double p = std::min(1.0, s.confusable ? s.p * a : (a < 1.0 ? s.p + (1.0 - s.p) * (1.0 - a) : s.p));
    if (s.role == Role::Peers) {
      for (std::size_t i = 0; i < obs.candidates.size(); ++i)
        if (static_cast<int>(i) != culprit && rng.bernoulli(p))
          emit(obs.candidates[i], s, s.slot != kNoIndex ? s.slot : rng.integer(0, platform.devices - 1));
      continue;
    }
    if (!rng.bernoulli(p)) continue;
    NodeView& view = obs.candidates[static_cast<std::size_t>(culprit)];
    if (s.slot != kNoIndex) {
      emit(view, s, s.slot);
    } else if (s.all_devices) {
      for (int d = 0; d < platform.devices; ++d) emit(view, s, d);
    } else if (s.role == Role::Node) {
      const int other = platform.devices > 1 ? (device + rng.integer(1, platform.devices - 1)) % platform.devices : device;
      emit(view, s, other);
    } else {
      emit(view, s, device);
    }
  }
  // Lost telemetry, and what this platform cannot see at all.
  for (auto& view : obs.candidates) {
    std::vector<Event> kept;
    for (const auto& e : view.events)
      if (!platform.codes[static_cast<std::size_t>(e.kind)].raw.empty() && !rng.bernoulli(fleet_->noise.drop)) kept.push_back(e);
    std::sort(kept.begin(), kept.end(), [](const Event& a, const Event& b) { return a.minutes < b.minutes; });
    view.events = std::move(kept);
  }
  return obs;
}

std::pair<Observation, Truth> IncidentGenerator::sample(std::uint64_t seed, std::uint64_t index) const {
  Rng rng(seed, Purpose::Corpus, index, static_cast<std::uint64_t>(platform_));
  Truth t;
  t.cause = static_cast<int>(rng.categorical(mix_));
  const CauseSpec& c = fleet_->causes[static_cast<std::size_t>(t.cause)];
  std::vector<double> shares;
  for (const auto& f : c.fixes) shares.push_back(f.share);
  t.fix = static_cast<int>(rng.categorical(shares));
  const int n = fleet_->noise.candidates;
  t.culprit = rng.integer(0, n - 1);
  const int devices = fleet_->platforms[static_cast<std::size_t>(platform_)].devices;
  // Histories as a fleet produces them: lemons fail several times as often, and an unfixed fault
  // comes back to a node that was repaired days ago.
  const double lemon_p = fleet_->lemons.fraction;
  const double base_month = 30.0 * fleet_->platforms[static_cast<std::size_t>(platform_)].rate_per_node_day /
                            (1.0 - lemon_p + lemon_p * fleet_->lemons.multiplier);
  std::vector<History> history(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const bool culprit = i == t.culprit;
    // P(lemon | this node failed) is larger than the lemon fraction by the multiplier.
    const double pl = culprit && c.node_fault ? lemon_p * fleet_->lemons.multiplier /
                                                    (1.0 - lemon_p + lemon_p * fleet_->lemons.multiplier)
                                              : lemon_p;
    const bool lemon = rng.bernoulli(pl);
    History& h = history[static_cast<std::size_t>(i)];
    h.recent_incidents = static_cast<int>(rng.poisson(base_month * (lemon ? fleet_->lemons.multiplier : 1.0)));
    if (h.recent_incidents > 0) h.days_since_repair = rng.uniform(0.0, 30.0);
    if (culprit && c.node_fault && rng.bernoulli(0.25)) {  // a recurrence of an unfixed fault
      h.recent_incidents += 1;
      h.days_since_repair = rng.exponential(1.0 / 3.0);
    }
  }
  const int device = rng.integer(0, devices - 1);
  return {observe(seed ^ 0xC0FFEEull, index, 0, t.cause, t.fix, device, t.culprit, history), t};
}

int suspect(const FleetSpec& fleet, const Observation& obs) {
  const PlatformSpec& platform = fleet.platforms[static_cast<std::size_t>(obs.platform)];
  int best = kNoIndex, most = 0;
  for (std::size_t c = 0; c < obs.candidates.size(); ++c) {
    int n = 0;
    for (const auto& e : obs.candidates[c].events)
      n += e.minutes > -10.0 && platform.codes[static_cast<std::size_t>(e.kind)].family != "collective";
    if (n > most) most = n, best = static_cast<int>(c);
  }
  return best;
}

// ---------------------------------------------------------------- tokens

Vocabulary::Vocabulary(const FleetSpec& fleet) {
  raw_names_ = {"<pad>", "<cls>", "<mask>"};
  for (int i = 0; i < 6; ++i) raw_names_.push_back("<history" + std::to_string(i) + ">");
  family_names_ = {"<special>"};
  family_of_raw_.assign(raw_names_.size(), 0);
  std::map<std::string, std::int64_t> raw_id, family_id;
  raw_.resize(fleet.platforms.size());
  for (std::size_t p = 0; p < fleet.platforms.size(); ++p)
    for (const auto& code : fleet.platforms[p].codes) {
      if (code.raw.empty()) {
        raw_[p].push_back(-1);
        continue;
      }
      auto f = family_id.find(code.family);
      if (f == family_id.end()) {
        f = family_id.emplace(code.family, static_cast<std::int64_t>(family_names_.size())).first;
        family_names_.push_back(code.family);
      }
      auto r = raw_id.find(code.raw);
      if (r == raw_id.end()) {
        r = raw_id.emplace(code.raw, static_cast<std::int64_t>(raw_names_.size())).first;
        raw_names_.push_back(code.raw);
        family_of_raw_.push_back(f->second);
      }
      raw_[p].push_back(r->second);
    }
}

std::int64_t Vocabulary::find_raw(const std::string& name) const {
  auto it = std::find(raw_names_.begin(), raw_names_.end(), name);
  return it == raw_names_.end() ? -1 : static_cast<std::int64_t>(it - raw_names_.begin());
}

std::int64_t Vocabulary::time_bucket(double minutes) {
  if (minutes <= 0) return std::min<std::int64_t>(11, static_cast<std::int64_t>(std::log2(1.0 - minutes)));
  return 12 + std::min<std::int64_t>(3, static_cast<std::int64_t>(std::log2(1.0 + minutes)));
}

std::int64_t Vocabulary::value_bucket(double value) {
  if (!(value > 0)) return 0;
  return 1 + std::min<std::int64_t>(kValueBuckets - 2, static_cast<std::int64_t>(std::log2(1.0 + value) / 1.5));
}

std::vector<Token> Vocabulary::tokens(int platform, const NodeView& view, int max_len) const {
  std::vector<Token> out;
  const std::int64_t p = platform;
  out.push_back({kCls, 0, p, kSlotJob, 0, 0});
  const std::int64_t history = std::min(view.recent_incidents, 2) + (view.days_since_repair < 7 ? 3 : 0);
  out.push_back({kHistory + history, 0, p, kSlotJob, 0, 0});
  const int room = max_len - static_cast<int>(out.size());
  std::vector<Token> events;
  for (const auto& e : view.events) {
    const std::int64_t raw = raw_of(platform, e.kind);
    if (raw < 0) continue;
    events.push_back({raw, family_of_raw(raw), p, e.slot, time_bucket(e.minutes), value_bucket(e.value)});
  }
  const std::size_t skip = events.size() > static_cast<std::size_t>(room) ? events.size() - static_cast<std::size_t>(room) : 0;
  out.insert(out.end(), events.begin() + static_cast<std::ptrdiff_t>(skip), events.end());
  return out;
}

}  // namespace drwatson
