// Household: an ALFWorld-like room. Receptacles (some closed), objects placed by type-specific
// priors, ALFWorld's six task types, its action grammar and observation text, "Nothing happens." for
// anything else, step limit 50.
#include <algorithm>
#include <map>

#include "worlds.hpp"

namespace agent_sft {
namespace {

struct ReceptacleType {
  const char* name;
  bool openable;
  int min_count, max_count;  // seen layouts
};
// Unseen layouts draw up to two more of each multi-instance type (another room of the same kind).
const ReceptacleType kReceptacles[] = {
    {"cabinet", true, 3, 9},      {"drawer", true, 2, 6},     {"countertop", false, 1, 3},
    {"fridge", true, 1, 1},       {"microwave", true, 1, 1},  {"sinkbasin", false, 1, 1},
    {"stoveburner", false, 2, 4}, {"diningtable", false, 0, 1}, {"shelf", false, 1, 3},
    {"garbagecan", false, 1, 1},  {"desk", false, 0, 1},      {"sidetable", false, 1, 1},
    {"coffeemachine", false, 1, 1}};

struct ObjectType {
  const char* name;
  std::vector<std::pair<const char*, double>> prior;  // where it is found, P(receptacle type)
  bool food, dish;                                    // heat/cool/clean applicability
};
const ObjectType kObjects[] = {
    {"apple", {{"fridge", .4}, {"countertop", .3}, {"diningtable", .2}, {"garbagecan", .1}}, true, false},
    {"tomato", {{"fridge", .5}, {"countertop", .3}, {"diningtable", .2}}, true, false},
    {"egg", {{"fridge", .6}, {"countertop", .2}, {"garbagecan", .2}}, true, false},
    {"mug", {{"cabinet", .4}, {"coffeemachine", .3}, {"countertop", .2}, {"shelf", .1}}, false, true},
    {"cup", {{"cabinet", .5}, {"countertop", .3}, {"shelf", .2}}, false, true},
    {"plate", {{"cabinet", .6}, {"diningtable", .2}, {"countertop", .2}}, false, true},
    {"knife", {{"drawer", .5}, {"countertop", .4}, {"diningtable", .1}}, false, true},
    {"spoon", {{"drawer", .6}, {"countertop", .3}, {"sinkbasin", .1}}, false, true},
    {"book", {{"shelf", .5}, {"desk", .3}, {"sidetable", .2}}, false, false},
    {"cd", {{"drawer", .4}, {"shelf", .3}, {"desk", .3}}, false, false},
    {"pen", {{"desk", .4}, {"drawer", .4}, {"sidetable", .2}}, false, false},
    {"soapbar", {{"sinkbasin", .4}, {"cabinet", .3}, {"countertop", .3}}, false, false}};
constexpr int kNoObject = -1;
const char* kTargets[] = {"countertop", "diningtable", "shelf", "cabinet", "drawer", "fridge", "sidetable", "garbagecan"};

enum Type { PickPlace, LookLight, Clean, Heat, Cool, PickTwo };
const char* kStateWord[] = {"", "", "clean", "hot", "cool", ""};

double prior(int object_type, const std::string& receptacle_type) {
  for (const auto& [r, p] : kObjects[object_type].prior)
    if (receptacle_type == r) return p;
  return 0;
}

struct Receptacle {
  std::string type, name;  // "cabinet", "cabinet 3"
  bool openable = false, open = false;
};
struct Object {
  int type = 0;
  std::string name;  // "apple 2"
  int where = 0;     // receptacle index, or kNoObject while held
  bool clean = false, hot = false, cool = false;
};

class Household final : public Env {
 public:
  explicit Household(const TaskSpec& t) : type_(t.type) { build(t); }

  std::string reset() override {
    const auto initial = initial_;
    *this = *initial;
    initial_ = initial;
    std::vector<std::string> names;
    for (const auto& r : rec_) names.push_back("a " + r.name);
    return "You are in the middle of a room. Looking quickly around you, you see " + join(names, ", ") +
           ".\n\nYour task is to: " + goal_text() + ".";
  }

  std::vector<std::string> admissible() const override {
    std::vector<std::string> a;
    for (std::size_t i = 0; i < rec_.size(); ++i)
      if (static_cast<int>(i) != at_) a.push_back("go to " + rec_[i].name);
    if (at_ >= 0) {
      const Receptacle& r = rec_[at_];
      if (r.openable) a.push_back((r.open ? "close " : "open ") + r.name);
      if (visible(at_)) {
        if (held_ == kNoObject)
          for (const auto& o : obj_)
            if (o.where == at_) a.push_back("take " + o.name + " from " + r.name);
        if (held_ != kNoObject) a.push_back("put " + obj_[held_].name + " in/on " + r.name);
      }
      if (held_ != kNoObject) {
        if (r.type == "sinkbasin") a.push_back("clean " + obj_[held_].name + " with " + r.name);
        if (r.type == "microwave") a.push_back("heat " + obj_[held_].name + " with " + r.name);
        if (r.type == "fridge") a.push_back("cool " + obj_[held_].name + " with " + r.name);
      }
      if (lamp_ == at_) a.push_back("use desklamp 1");
      a.push_back("examine " + r.name);
    }
    a.push_back("inventory");
    a.push_back("look");
    return a;
  }

  StepResult step(const std::string& action) override {
    ++steps_;
    const auto allowed = admissible();
    StepResult r;
    if (std::find(allowed.begin(), allowed.end(), action) == allowed.end())
      r.observation = "Nothing happens.";
    else
      r.observation = apply(action);
    r.success = solved();
    r.done = r.success || steps_ >= step_limit();
    return r;
  }

  std::string plan() const override;

  std::string state_key() const override {
    std::string k = task_type() + "|" + (at_ < 0 ? std::string("room") : rec_[at_].type) + "|";
    if (held_ != kNoObject) {
      const Object& o = obj_[held_];
      k += std::string(kObjects[o.type].name) + (o.clean ? "+c" : "") + (o.hot ? "+h" : "") + (o.cool ? "+k" : "");
    }
    int n_seen = 0;
    for (bool s : seen_) n_seen += s;
    return k + "|" + std::to_string(std::min(n_seen, 6)) + "|" + std::to_string(placed_ready()) + "|" +
           std::to_string(known_target() >= 0);
  }
  std::string task_type() const override { return task_types(World::Household)[type_]; }
  int step_limit() const override { return 50; }
  std::unique_ptr<Env> clone() const override { return std::make_unique<Household>(*this); }

 private:
  void build(const TaskSpec& t) {
    // The layout is shared by many tasks of a split; the placement is the task's own.
    const std::uint64_t layout = t.unseen ? 1000 + t.id % 20 : t.id % 40;
    nexp::Random lr = nexp::Random::stream({layout, 0x40u});
    for (const auto& rt : kReceptacles) {
      const int extra = t.unseen && rt.max_count > 1 ? 2 : 0;
      const int n = rt.min_count + static_cast<int>(lr.below(rt.max_count + extra - rt.min_count + 1));
      for (int i = 1; i <= n; ++i) rec_.push_back({rt.name, std::string(rt.name) + " " + std::to_string(i), rt.openable});
    }
    nexp::Random rng = nexp::Random::stream({t.id, t.unseen ? 1u : 0u, 0x41u});
    std::vector<int> candidates;
    for (int o = 0; o < static_cast<int>(std::size(kObjects)); ++o)
      if (fits(o)) candidates.push_back(o);
    target_ = candidates[rng.below(candidates.size())];
    const int need = type_ == PickTwo ? 2 : 1;
    do goal_ = kTargets[rng.below(std::size(kTargets))];
    while (!has_type(goal_) || prior(target_, goal_) > 0);
    for (int i = 0; i < need + static_cast<int>(rng.below(2)); ++i) place(target_, rng);
    for (int i = 0; i < 8; ++i) {
      int o = static_cast<int>(rng.below(std::size(kObjects)));
      if (o != target_) place(o, rng);
    }
    const std::vector<int> lamp_places = indices_of({"desk", "sidetable"});
    lamp_ = lamp_places[rng.below(lamp_places.size())];
    seen_.assign(rec_.size(), false);
    initial_ = std::make_shared<const Household>(*this);
  }

  bool fits(int o) const {
    switch (type_) {
      case LookLight: return o >= 8 || std::string(kObjects[o].name) == "mug";
      case Clean: return kObjects[o].food || kObjects[o].dish;
      case Heat: case Cool: return kObjects[o].food || (kObjects[o].dish && o <= 5);
      default: return true;
    }
  }
  bool has_type(const std::string& type) const {
    return std::any_of(rec_.begin(), rec_.end(), [&](const Receptacle& r) { return r.type == type; });
  }
  std::vector<int> indices_of(std::vector<std::string> types) const {
    std::vector<int> out;
    for (int i = 0; i < static_cast<int>(rec_.size()); ++i)
      if (std::find(types.begin(), types.end(), rec_[i].type) != types.end()) out.push_back(i);
    return out;
  }
  // By the object's prior, except a share kOffPrior of objects left on any open surface.
  void place(int o, nexp::Random& rng) {
    constexpr double kOffPrior = 0.2;
    const bool anywhere = rng.bernoulli(kOffPrior);
    double total = 0;
    std::vector<double> w;
    for (const auto& r : rec_) total += (w.emplace_back(anywhere ? (r.openable ? 0.0 : 1.0) : prior(o, r.type)));
    double u = rng.uniform() * total;
    int where = 0;
    while (where + 1 < static_cast<int>(w.size()) && u >= w[where]) u -= w[where++];
    int n = 1;
    for (const auto& x : obj_) n += x.type == o;
    obj_.push_back({o, std::string(kObjects[o].name) + " " + std::to_string(n), where});
  }

  std::string goal_text() const {
    const std::string x = kObjects[target_].name;
    switch (type_) {
      case LookLight: return "look at " + x + " under the desklamp";
      case PickTwo: return "put two " + x + " in " + goal_;
      case PickPlace: return "put a " + x + " in " + goal_;
      default: return "put a " + std::string(kStateWord[type_]) + " " + x + " in " + goal_;
    }
  }

  bool visible(int r) const { return !rec_[r].openable || rec_[r].open; }
  bool ready(const Object& o) const {
    return o.type == target_ && (type_ != Clean || o.clean) && (type_ != Heat || o.hot) && (type_ != Cool || o.cool);
  }
  int placed_ready() const {
    int n = 0;
    for (const auto& o : obj_) n += o.where >= 0 && ready(o) && rec_[o.where].type == goal_;
    return n;
  }
  bool solved() const {
    if (type_ == LookLight) return lamp_on_ && held_ != kNoObject && obj_[held_].type == target_;
    return placed_ready() >= (type_ == PickTwo ? 2 : 1);
  }

  std::string contents(int r) const {
    std::vector<std::string> items;
    for (const auto& o : obj_)
      if (o.where == r) items.push_back("a " + o.name);
    if (lamp_ == r) items.push_back("a desklamp 1");
    return items.empty() ? "nothing" : join(items, ", ");
  }
  std::string describe_here() {
    const Receptacle& r = rec_[at_];
    if (!visible(at_)) return "The " + r.name + " is closed.";
    seen_[at_] = true;
    if (r.openable) return "The " + r.name + " is open. In it, you see " + contents(at_) + ".";
    return "On the " + r.name + ", you see " + contents(at_) + ".";
  }
  int find_rec(const std::string& name) const {
    for (int i = 0; i < static_cast<int>(rec_.size()); ++i)
      if (rec_[i].name == name) return i;
    return -1;
  }
  int find_obj(const std::string& name) const {
    for (int i = 0; i < static_cast<int>(obj_.size()); ++i)
      if (obj_[i].name == name) return i;
    return -1;
  }

  std::string apply(const std::string& a) {
    if (starts_with(a, "go to ")) {
      at_ = find_rec(a.substr(6));
      lamp_on_ = false;
      return "You arrive at " + rec_[at_].name + ". " + describe_here();
    }
    Receptacle* r = at_ >= 0 ? &rec_[at_] : nullptr;
    if (starts_with(a, "open ")) {
      r->open = true;
      seen_[at_] = true;
      return "You open the " + r->name + ". The " + r->name + " is open. In it, you see " + contents(at_) + ".";
    }
    if (starts_with(a, "close ")) {
      r->open = false;
      return "You close the " + r->name + ".";
    }
    if (starts_with(a, "take ")) {
      held_ = find_obj(a.substr(5, a.find(" from ") - 5));
      obj_[held_].where = kNoObject;
      return "You pick up the " + obj_[held_].name + " from the " + r->name + ".";
    }
    if (starts_with(a, "put ")) {
      obj_[held_].where = at_;
      const std::string name = obj_[held_].name;
      held_ = kNoObject;
      return "You put the " + name + " in/on the " + r->name + ".";
    }
    Object* h = held_ != kNoObject ? &obj_[held_] : nullptr;
    if (starts_with(a, "clean ")) return h->clean = true, "You clean the " + h->name + " using the " + r->name + ".";
    if (starts_with(a, "heat ")) return h->hot = true, "You heat the " + h->name + " using the " + r->name + ".";
    if (starts_with(a, "cool ")) return h->cool = true, "You cool the " + h->name + " using the " + r->name + ".";
    if (a == "use desklamp 1") return lamp_on_ = true, "You turn on the desklamp 1.";
    if (starts_with(a, "examine ")) return describe_here();
    if (a == "inventory") return h ? "You are carrying: a " + h->name + "." : "You are not carrying anything.";
    return at_ < 0 ? "You are in the middle of a room." : "You are facing the " + rec_[at_].name + ". " + describe_here();
  }

  // What the teacher may use: the receptacles whose contents the agent has seen (seen_), the objects
  // it saw there, what it holds, and the priors any household agent knows. Never an unseen content.
  int known_target() const {
    for (int i = 0; i < static_cast<int>(obj_.size()); ++i) {
      const Object& o = obj_[i];
      const bool placed = type_ != LookLight && ready(o) && rec_[o.where >= 0 ? o.where : 0].type == goal_;
      if (o.where >= 0 && seen_[o.where] && o.type == target_ && !placed) return i;
    }
    return -1;
  }
  std::string go_or(int r, const std::string& here) const { return at_ == r ? here : "go to " + rec_[r].name; }
  std::string reach(int r, const std::string& then) const {
    if (at_ != r) return "go to " + rec_[r].name;
    if (!visible(r)) return "open " + rec_[r].name;
    return then;
  }
  std::string explore(const std::vector<int>& order) const {
    for (int r : order)
      if (!seen_[r]) return reach(r, "look");
    return "look";
  }
  std::vector<int> search_order(int object_type) const {
    std::vector<int> order(rec_.size());
    for (int i = 0; i < static_cast<int>(order.size()); ++i) order[i] = i;
    // The prior first; among receptacles it rules out, open surfaces (one step each) before closed ones.
    auto rank = [&](int r) { return prior(object_type, rec_[r].type) + (rec_[r].openable ? 0.0 : 1e-3); };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rank(a) > rank(b); });
    return order;
  }

  int type_ = 0, target_ = 0, lamp_ = 0;
  std::string goal_;
  std::vector<Receptacle> rec_;
  std::vector<Object> obj_;
  int at_ = -1, held_ = kNoObject;
  bool lamp_on_ = false;
  std::vector<bool> seen_;
  std::shared_ptr<const Household> initial_;  // the world as built, for reset()
};

std::string Household::plan() const {
  const bool two = type_ == PickTwo;
  if (held_ != kNoObject) {
    const Object& o = obj_[held_];
    if (o.type != target_ || (two && placed_ready() >= 2)) {  // put a wrong object down where it can go
      if (at_ >= 0 && visible(at_)) return "put " + o.name + " in/on " + rec_[at_].name;
      if (at_ >= 0) return "open " + rec_[at_].name;
      return "go to " + rec_[0].name;
    }
    if (type_ == LookLight) {
      if (seen_[lamp_] || at_ == lamp_) return go_or(lamp_, "use desklamp 1");
      return explore(indices_of({"desk", "sidetable"}));
    }
    const char* tool[] = {"", "", "sinkbasin", "microwave", "fridge", ""};
    const char* verb[] = {"", "", "clean ", "heat ", "cool ", ""};
    if (!ready(o)) {
      const int r = indices_of({tool[type_]}).front();
      return go_or(r, std::string(verb[type_]) + o.name + " with " + rec_[r].name);
    }
    int goal = indices_of({goal_}).front();
    if (at_ >= 0 && rec_[at_].type == goal_) goal = at_;
    return reach(goal, "put " + o.name + " in/on " + rec_[goal].name);
  }
  const int t = known_target();
  if (t >= 0) {
    const int r = obj_[t].where;
    return reach(r, "take " + obj_[t].name + " from " + rec_[r].name);
  }
  return explore(search_order(target_));
}

}  // namespace

std::unique_ptr<Env> make_household(const TaskSpec& task) { return std::make_unique<Household>(task); }

}  // namespace agent_sft
