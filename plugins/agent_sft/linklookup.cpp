// LinkLookup: a HotpotQA-like world behind ReAct's actions (search[entity], lookup[keyword],
// finish[answer]), two-hop bridge and comparison questions over a generated knowledge world with
// near-duplicate names, step limit 8, exact-match answers.
#include <algorithm>
#include <map>
#include <set>

#include "worlds.hpp"

namespace agent_sft {
namespace {

// Syllables of the two name pools: the unseen split's names share no word with the seen split's.
const std::vector<std::string> kSyllables[2] = {
    {"ka", "ro", "ve", "lin", "ma", "tor", "si", "den", "ba", "lu", "mer", "an", "ti", "sol", "re", "ga"},
    {"zu", "phe", "quo", "nix", "wy", "dra", "oth", "ule", "fey", "cro", "imb", "yas", "gor", "ept", "hal", "ssi"}};

std::string capital(std::string s) {
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// A pseudo-word of two or three syllables.
std::string word(nexp::Random& rng, bool unseen) {
  const auto& syl = kSyllables[unseen ? 1 : 0];
  std::string w;
  const int n = 2 + static_cast<int>(rng.below(2));
  for (int i = 0; i < n; ++i) w += syl[rng.below(syl.size())];
  return capital(w);
}

// The near-duplicate of a name: one vowel of its last word changed ("Karo Velin" -> "Karo Velan").
std::string near_duplicate(const std::string& name, nexp::Random& rng) {
  static const std::string vowels = "aeiou";
  std::string d = name;
  std::vector<std::size_t> at;
  for (std::size_t i = d.rfind(' ') == std::string::npos ? 1 : d.rfind(' ') + 2; i < d.size(); ++i)
    if (vowels.find(d[i]) != std::string::npos) at.push_back(i);
  if (at.empty()) return d + "s";
  const std::size_t i = at[rng.below(at.size())];
  char c = d[i];
  while (c == d[i]) c = vowels[rng.below(vowels.size())];
  d[i] = c;
  return d;
}

struct Page {
  std::string first;               // what search[] shows
  std::vector<std::string> more;   // sentences lookup[] walks through
};

enum Fact { DirectorOfFilm, BornOfDirector, FoundedA, FoundedB, kFacts };

class LinkLookup final : public Env {
 public:
  explicit LinkLookup(const TaskSpec& t) : type_(t.type) {
    nexp::Random rng = nexp::Random::stream({t.id, t.unseen ? 1u : 0u, 0x11u});
    if (type_ == 0)
      build_bridge(rng, t.unseen);
    else
      build_comparison(rng, t.unseen);
  }

  std::string reset() override {
    steps_ = 0;
    current_.clear();
    seen_text_ = {question_};
    pages_seen_.clear();
    known_.assign(kFacts, false);
    lookup_pos_.clear();
    done_ = false;
    return question_;
  }

  std::vector<std::string> admissible() const override {
    std::vector<std::string> acts;
    std::set<std::string> names;
    for (const auto& text : seen_text_)
      for (const auto& [name, _] : pages_)
        if (text.find(name) != std::string::npos) names.insert(name);
    std::set<std::string> searchable = names;  // the search box also suggests near-duplicate titles
    for (const auto& n : names)
      if (dup_.count(n)) searchable.insert(dup_.at(n));
    for (const auto& n : searchable) acts.push_back("search[" + n + "]");
    if (!current_.empty())
      for (const char* k : {"born", "directed", "founded"}) acts.push_back(std::string("lookup[") + k + "]");
    for (const auto& n : names)
      if (answerable(n)) acts.push_back("finish[" + n + "]");
    return acts;
  }

  StepResult step(const std::string& action) override {
    ++steps_;
    StepResult r = respond(action);
    if (!r.done && steps_ >= step_limit()) r.done = true;
    done_ = r.done;
    seen_text_.push_back(r.observation);
    return r;
  }

  std::string plan() const override {
    if (type_ == 0) {
      if (!known_[DirectorOfFilm]) return "search[" + film_ + "]";
      if (known_[BornOfDirector]) return "finish[" + answer_ + "]";
      return current_ == director_ ? "lookup[born]" : "search[" + director_ + "]";
    }
    for (int f : {FoundedA, FoundedB}) {
      const std::string& c = f == FoundedA ? a_ : b_;
      if (!known_[f]) return current_ == c ? "lookup[founded]" : "search[" + c + "]";
    }
    return "finish[" + answer_ + "]";
  }

  std::string state_key() const override {
    std::string k = type_ == 0 ? "bridge|" : "comparison|";
    for (bool f : known_) k += f ? '1' : '0';
    k += "|" + role(current_) + "|" + std::to_string(pages_seen_.size());
    return k;
  }
  std::string task_type() const override { return task_types(World::LinkLookup)[type_]; }
  int step_limit() const override { return 8; }
  std::unique_ptr<Env> clone() const override { return std::make_unique<LinkLookup>(*this); }

 private:
  void build_bridge(nexp::Random& rng, bool unseen) {
    film_ = "The " + word(rng, unseen) + " " + word(rng, unseen);
    const std::string film2 = near_duplicate(film_, rng);
    director_ = word(rng, unseen) + " " + word(rng, unseen);
    const std::string director2 = near_duplicate(director_, rng);
    answer_ = word(rng, unseen) + "ton";
    std::string city2 = word(rng, unseen) + "ton";
    const std::string shot_in = word(rng, unseen) + "ton", based_in = word(rng, unseen) + "ton";
    const int year = 1930 + static_cast<int>(rng.below(80));
    pages_[film_] = {film_ + " is a " + std::to_string(year) + " film directed by " + director_ + ", shot in " +
                         shot_in + ". Not to be confused with " + film2 + ".",
                     {film_ + " was directed by " + director_ + "."}};
    pages_[film2] = {film2 + " is a " + std::to_string(year + 1 + rng.below(9)) + " film directed by " + director2 + ".",
                     {film2 + " was directed by " + director2 + "."}};
    const bool born_first = rng.bernoulli(0.4);
    const std::string born = director_ + " was born in " + answer_ + ".";
    pages_[director_] = {director_ + " is a film director" +
                             (born_first ? " born in " + answer_ : " based in " + based_in) +
                             ". Not to be confused with " + director2 + ".",
                         {director_ + " directed " + film_ + ".", born}};
    born_on_first_ = born_first;
    pages_[director2] = {director2 + " is a painter.", {director2 + " was born in " + city2 + "."}};
    for (const auto& c : {answer_, city2, shot_in, based_in}) pages_[c] = {c + " is a city.", {}};
    dup_[film_] = film2, dup_[director_] = director2;
    question_ = "Question: Where was the director of " + film_ + " born?";
  }

  void build_comparison(nexp::Random& rng, bool unseen) {
    static const char* kinds[] = {" Works", " Labs", " Records", " Motors"};
    a_ = word(rng, unseen) + kinds[rng.below(4)];
    b_ = word(rng, unseen) + kinds[rng.below(4)];
    while (b_ == a_) b_ = word(rng, unseen) + kinds[rng.below(4)];
    int ya = 1850 + static_cast<int>(rng.below(150)), yb = ya;
    while (yb == ya) yb = 1850 + static_cast<int>(rng.below(150));
    for (const auto& [c, y] : {std::pair{a_, ya}, std::pair{b_, yb}}) {
      const std::string dup = near_duplicate(c, rng);
      const bool first = rng.bernoulli(0.4);
      founded_first_[c] = first;
      const std::string founded = c + " was founded in " + std::to_string(y) + ".";
      pages_[c] = {first ? founded + " Not to be confused with " + dup + "."
                         : c + " is a company. Not to be confused with " + dup + ".",
                   {c + " is based in " + word(rng, unseen) + "ton.", founded}};
      pages_[dup] = {dup + " was founded in " + std::to_string(1850 + rng.below(150)) + ".", {}};
      dup_[c] = dup;
    }
    answer_ = ya < yb ? a_ : b_;
    question_ = "Question: Which company was founded first, " + a_ + " or " + b_ + "?";
  }

  bool answerable(const std::string& name) const {
    return type_ == 1 || pages_.at(name).more.empty();  // bridge answers are cities
  }

  std::string role(const std::string& name) const {
    if (name.empty()) return "-";
    if (name == film_) return "film";
    if (name == director_) return "director";
    if (name == a_) return "a";
    if (name == b_) return "b";
    return "other";
  }

  StepResult respond(const std::string& action) {
    auto arg = [&](const std::string& head) {
      return starts_with(action, head) && action.back() == ']' ? action.substr(head.size(), action.size() - head.size() - 1)
                                                              : std::string("\x01");
    };
    if (const std::string x = arg("search["); x != "\x01") {
      auto it = pages_.find(x);
      if (it == pages_.end()) return {"Could not find [" + x + "].", false, false};
      current_ = x;
      pages_seen_.insert(x);
      for (const char* k : {"born", "directed", "founded"}) lookup_pos_[x + "|" + k] = 0;
      learn_from_first(x);
      return {it->second.first, false, false};
    }
    if (const std::string k = arg("lookup["); k != "\x01") {
      if (current_.empty()) return {"No page is open: search[] an entity first.", false, false};
      const auto& more = pages_.at(current_).more;
      std::vector<std::size_t> hits;
      for (std::size_t i = 0; i < more.size(); ++i)
        if (more[i].find(k) != std::string::npos) hits.push_back(i);
      int& pos = lookup_pos_[current_ + "|" + k];
      if (pos >= static_cast<int>(hits.size())) return {"No more results.", false, false};
      const std::string& s = more[hits[pos]];
      learn_from_lookup(s);
      ++pos;
      return {"(Result " + std::to_string(pos) + " / " + std::to_string(hits.size()) + ") " + s, false, false};
    }
    if (const std::string a = arg("finish["); a != "\x01") {
      const bool ok = a == answer_;
      return {ok ? "Episode finished, reward = 1" : "Episode finished, reward = 0", true, ok};
    }
    return {"Invalid action: " + action + ". Valid actions are search[<entity>], lookup[<keyword>] and finish[<answer>].",
            false, false};
  }

  void learn_from_first(const std::string& x) {
    if (type_ == 0) {
      if (x == film_) known_[DirectorOfFilm] = true;
      if (x == director_ && born_on_first_) known_[BornOfDirector] = true;
    } else {
      if (x == a_ && founded_first_[a_]) known_[FoundedA] = true;
      if (x == b_ && founded_first_[b_]) known_[FoundedB] = true;
    }
  }
  void learn_from_lookup(const std::string& sentence) {
    if (type_ == 0 && current_ == director_ && sentence.find("born") != std::string::npos) known_[BornOfDirector] = true;
    if (type_ == 0 && current_ == film_ && sentence.find("directed") != std::string::npos) known_[DirectorOfFilm] = true;
    if (type_ == 1 && sentence.find("founded") != std::string::npos) {
      if (current_ == a_) known_[FoundedA] = true;
      if (current_ == b_) known_[FoundedB] = true;
    }
  }

  int type_;
  std::string question_, answer_, film_, director_, a_, b_;
  bool born_on_first_ = false;
  std::map<std::string, bool> founded_first_;
  std::map<std::string, Page> pages_;
  std::map<std::string, std::string> dup_;  // an entity's near-duplicate
  // What the agent has observed: the facts its observations revealed, and the open page.
  std::string current_;
  std::vector<std::string> seen_text_;
  std::set<std::string> pages_seen_;
  std::vector<bool> known_;
  std::map<std::string, int> lookup_pos_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Env> make_linklookup(const TaskSpec& task) {
  auto env = std::make_unique<LinkLookup>(task);
  return env;
}

}  // namespace agent_sft
