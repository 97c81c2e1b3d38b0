// MiniShell: a Terminal-Bench-like task on a virtual file tree. Commands ls, cat, grep -rl, wc -l,
// mkdir, cp, mv, echo > file, sed -i and submit, answered with GNU coreutils' error messages; submit
// runs a hidden test on the final state of the tree; step limit 30.
#include <algorithm>
#include <map>
#include <set>

#include "worlds.hpp"

namespace agent_sft {
namespace {

const std::vector<std::string> kWords[2] = {
    {"alpha", "report", "cache", "index", "notes", "draft", "build", "query", "stats", "audit", "batch", "sync"},
    {"orbit", "ledger", "prism", "vector", "quartz", "ember", "harbor", "signal", "canyon", "relay", "pixel", "atlas"}};
const std::vector<std::string> kDirs = {"/srv/data", "/var/log", "/home/user", "/opt/tools", "/etc/app", "/tmp/work"};

std::string dirname(const std::string& p) { return p.substr(0, std::max<std::size_t>(1, p.rfind('/'))); }
std::string basename(const std::string& p) { return p.substr(p.rfind('/') + 1); }
int lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

class MiniShell final : public Env {
 public:
  explicit MiniShell(const TaskSpec& t) : type_(t.type) { build(t); }

  std::string reset() override {
    const auto initial = initial_;
    *this = *initial;
    initial_ = initial;
    return "root@box:/# # Task: " + task_ + "\nWhen you are done, run submit.";
  }

  std::vector<std::string> admissible() const override {
    std::vector<std::string> a = {"ls /"};
    for (const auto& d : known_dirs_) a.push_back("ls " + d);
    for (const auto& f : known_files_) a.push_back("cat " + f), a.push_back("wc -l " + f);
    for (const auto& w : words_) a.push_back("grep -rl '" + w + "' " + search_root_);
    if (!dest_.empty()) {
      a.push_back("mkdir " + dest_);
      for (const auto& f : known_files_)
        a.push_back((type_ == 0 ? "cp " : "mv ") + f + " " + dest_ + "/");
    }
    for (const auto& n : numbers_) a.push_back("echo " + n + " > /answer.txt");
    if (type_ == 2)
      for (const auto& f : known_files_) a.push_back("sed -i 's/^" + key_ + "=.*/" + key_ + "=" + value_ + "/' " + f);
    a.push_back("submit");
    return a;
  }

  StepResult step(const std::string& action) override {
    ++steps_;
    StepResult r;
    if (action == "submit") {
      r.success = hidden_test();
      r.done = true;
      r.observation = r.success ? "Tests passed." : "Tests failed.";
      return r;
    }
    r.observation = run(action);
    if (r.observation.empty()) r.observation = "(no output)";
    r.done = steps_ >= step_limit();
    return r;
  }

  std::string plan() const override {
    switch (type_) {
      case 0:
        if (hit_.empty()) return "grep -rl '" + words_[0] + "' " + search_root_;
        if (copied_) return "submit";
        if (dest_missing_seen_) return "mkdir " + dest_;
        return "cp " + hit_ + " " + dest_ + "/";
      case 1:
        if (count_seen_.empty()) return "wc -l " + target_;
        return answered_ ? "submit" : "echo " + count_seen_ + " > /answer.txt";
      case 2:
        if (hit_.empty()) return "grep -rl '" + words_[0] + "' " + search_root_;
        return edited_ ? "submit" : "sed -i 's/^" + key_ + "=.*/" + key_ + "=" + value_ + "/' " + hit_;
      default:
        if (!listed_) return "ls " + target_;
        for (const auto& f : tmp_seen_)
          if (!moved_.count(f)) return "mv " + f + " " + dest_ + "/";
        return "submit";
    }
  }

  std::string state_key() const override {
    return task_type() + "|" + std::to_string(!hit_.empty()) + std::to_string(copied_) +
           std::to_string(dest_missing_seen_) + std::to_string(!count_seen_.empty()) + std::to_string(answered_) +
           std::to_string(edited_) + std::to_string(listed_) + "|" + std::to_string(moved_.size()) + "|" +
           std::to_string(std::min<std::size_t>(known_files_.size(), 5));
  }
  std::string task_type() const override { return task_types(World::MiniShell)[type_]; }
  int step_limit() const override { return 30; }
  std::unique_ptr<Env> clone() const override { return std::make_unique<MiniShell>(*this); }

 private:
  void build(const TaskSpec& t) {
    nexp::Random rng = nexp::Random::stream({t.id, t.unseen ? 1u : 0u, 0x51u});
    const auto& pool = kWords[t.unseen ? 1 : 0];
    auto pick = [&](const std::vector<std::string>& v) { return v[rng.below(v.size())]; };
    dirs_ = {"/", "/srv", "/var", "/home", "/opt", "/etc", "/tmp", "/trash"};
    for (const auto& d : kDirs) dirs_.insert(d);
    for (int i = 0; i < 14; ++i) {  // filler files
      std::string body;
      const int n = 1 + static_cast<int>(rng.below(12));
      for (int l = 0; l < n; ++l) body += pick(pool) + " " + std::to_string(rng.below(1000)) + "\n";
      files_[pick(kDirs) + "/" + pick(pool) + std::to_string(i) + ".txt"] = body;
    }
    search_root_ = "/";
    switch (type_) {
      case 0: {
        const std::string token = "KEY-" + std::to_string(100 + rng.below(900));
        hidden_ = pick(kDirs) + "/" + pick(pool) + ".log";
        files_[hidden_] = "start\n" + token + " " + pick(pool) + "\nend\n";
        dest_ = rng.bernoulli(0.5) ? "/backup" : "/srv/archive";
        if (rng.bernoulli(0.5)) dirs_.insert(dest_);
        words_ = {token, pick(pool)};
        task_ = "Copy the file that contains '" + token + "' into " + dest_ + "/ (keep its name).";
        break;
      }
      case 1: {
        target_ = pick(kDirs) + "/" + pick(pool) + ".csv";
        std::string body;
        for (int l = 0, n = 3 + static_cast<int>(rng.below(25)); l < n; ++l) body += std::to_string(rng.below(100)) + "\n";
        files_[target_] = body;
        known_files_.insert(target_);
        task_ = "Write the number of lines of " + target_ + " to /answer.txt.";
        break;
      }
      case 2: {
        const std::string svc = pick(pool) + "d";
        key_ = rng.bernoulli(0.5) ? "port" : "workers";
        value_ = std::to_string(key_ == "port" ? 8000 + rng.below(1000) : 2 + rng.below(30));
        hidden_ = "/etc/app/" + pick(pool) + ".conf";
        files_[hidden_] = "name=" + svc + "\nport=" + std::to_string(7000 + rng.below(900)) + "\nworkers=1\n";
        std::string other = svc;
        while (other == svc) other = pick(pool) + "d";
        files_["/etc/app/" + pick(pool) + "x.conf"] = "name=" + other + "\nport=9000\nworkers=4\n";
        search_root_ = "/etc";
        words_ = {"name=" + svc};
        task_ = "Set " + key_ + " to " + value_ + " in the config file of service " + svc + " (under /etc).";
        break;
      }
      default: {
        target_ = pick(kDirs);
        dest_ = "/trash";
        const int n = 1 + static_cast<int>(rng.below(3));
        for (int i = 0; i < n; ++i) files_[target_ + "/" + pick(pool) + std::to_string(i) + ".tmp"] = "tmp\n";
        files_[target_ + "/keep" + std::to_string(rng.below(9)) + ".txt"] = "keep\n";
        known_dirs_.insert(target_);
        task_ = "Move every .tmp file of " + target_ + " into /trash/.";
      }
    }
    original_ = files_;
    initial_ = std::make_shared<const MiniShell>(*this);
  }

  bool is_dir(const std::string& p) const { return dirs_.count(p) > 0; }
  std::string child(const std::string& dir, const std::string& path) const {
    return dir == "/" ? "/" + path : dir + "/" + path;
  }

  std::string list(const std::string& d) {
    if (files_.count(d)) return d;
    if (!is_dir(d)) return "ls: cannot access '" + d + "': No such file or directory";
    std::set<std::string> names;
    for (const auto& x : dirs_)
      if (x != d && dirname(x) == d) names.insert(basename(x) + "/"), known_dirs_.insert(x);
    for (const auto& [f, _] : files_)
      if (dirname(f) == d) {
        names.insert(basename(f));
        known_files_.insert(f);
        if (type_ == 3 && d == target_ && f.size() > 4 && f.substr(f.size() - 4) == ".tmp") tmp_seen_.insert(f);
      }
    if (type_ == 3 && d == target_) listed_ = true;
    return join({names.begin(), names.end()}, "  ");
  }

  std::string grep(const std::string& word, const std::string& root) {
    std::vector<std::string> hits;
    for (const auto& [f, body] : files_)
      if ((root == "/" || starts_with(f, root + "/")) && body.find(word) != std::string::npos) hits.push_back(f);
    for (const auto& h : hits) known_files_.insert(h);
    if (!hits.empty() && word == words_[0] && type_ != 1 && type_ != 3) hit_ = hits.front();
    return join(hits, "\n");
  }

  std::string copy_or_move(const std::string& src, const std::string& dest_dir, bool move) {
    const char* cmd = move ? "mv" : "cp";
    if (!files_.count(src)) return std::string(cmd) + ": cannot stat '" + src + "': No such file or directory";
    if (!is_dir(dest_dir)) {
      if (dest_dir == dest_) dest_missing_seen_ = true;
      return std::string(cmd) + ": cannot create regular file '" + dest_dir + "/': Not a directory";
    }
    const std::string to = child(dest_dir, basename(src));
    files_[to] = files_[src];
    known_files_.insert(to);
    if (move) {
      files_.erase(src);
      known_files_.erase(src);
      moved_.insert(src);
      if (src == hit_) hit_ = to;
    } else if (src == hit_ && dest_dir == dest_) {
      copied_ = true;
    }
    return "";
  }

  std::string run(const std::string& a) {
    auto rest = [&](std::size_t n) { return a.substr(n); };
    if (starts_with(a, "ls ")) return list(rest(3));
    if (starts_with(a, "cat ")) {
      const std::string f = rest(4);
      if (is_dir(f)) return "cat: " + f + ": Is a directory";
      return files_.count(f) ? files_[f] : "cat: " + f + ": No such file or directory";
    }
    if (starts_with(a, "wc -l ")) {
      const std::string f = rest(6);
      if (!files_.count(f)) return "wc: " + f + ": No such file or directory";
      const std::string n = std::to_string(lines(files_[f]));
      numbers_.insert(n);
      if (f == target_) count_seen_ = n;
      return n + " " + f;
    }
    if (starts_with(a, "grep -rl '")) {
      const std::size_t q = a.find('\'', 10);
      return grep(a.substr(10, q - 10), a.substr(q + 2));
    }
    if (starts_with(a, "mkdir ")) {
      const std::string d = rest(6);
      if (is_dir(d) || files_.count(d)) return "mkdir: cannot create directory '" + d + "': File exists";
      dirs_.insert(d);
      known_dirs_.insert(d);
      if (d == dest_) dest_missing_seen_ = false;
      return "";
    }
    if (starts_with(a, "cp ") || starts_with(a, "mv ")) {
      const std::size_t sp = a.find(' ', 3);
      std::string dest = a.substr(sp + 1);
      if (dest.size() > 1 && dest.back() == '/') dest.pop_back();
      return copy_or_move(a.substr(3, sp - 3), dest, a[0] == 'm');
    }
    if (starts_with(a, "echo ")) {
      const std::size_t gt = a.find(" > ");
      if (gt == std::string::npos) return a.substr(5);
      const std::string v = a.substr(5, gt - 5);
      files_[a.substr(gt + 3)] = v + "\n";
      if (type_ == 1) answered_ = v == count_seen_;
      return "";
    }
    if (starts_with(a, "sed -i 's/^")) {
      const std::size_t end = a.rfind("' ");
      const std::string f = a.substr(end + 2);
      if (!files_.count(f)) return "sed: can't read " + f + ": No such file or directory";
      std::string out, line, body = files_[f];
      for (std::size_t i = 0, j; i < body.size(); i = j + 1) {
        j = body.find('\n', i);
        line = body.substr(i, j - i);
        out += (starts_with(line, key_ + "=") ? key_ + "=" + value_ : line) + "\n";
      }
      files_[f] = out;
      if (f == hit_) edited_ = true;
      return "";
    }
    return "bash: " + a.substr(0, a.find(' ')) + ": command not found";
  }

  bool hidden_test() const {
    auto has = [&](const std::string& f, const std::string& body) {
      const auto it = files_.find(f);
      return it != files_.end() && it->second == body;
    };
    switch (type_) {
      case 0: return has(child(dest_, basename(hidden_)), original_.at(hidden_));
      case 1: return has("/answer.txt", std::to_string(lines(original_.at(target_))) + "\n");
      case 2: {
        const auto it = files_.find(hidden_);
        return it != files_.end() && it->second.find("\n" + key_ + "=" + value_ + "\n") != std::string::npos;
      }
      default:
        for (const auto& [f, body] : original_)
          if (dirname(f) == target_ && f.size() > 4 && f.substr(f.size() - 4) == ".tmp")
            if (files_.count(f) || !has("/trash/" + basename(f), body)) return false;
        return true;
    }
  }

  int type_ = 0;
  std::string task_, target_, hidden_, dest_, key_, value_, search_root_;
  std::vector<std::string> words_;
  std::map<std::string, std::string> files_, original_;
  std::set<std::string> dirs_;
  // What the agent has observed (the teacher's knowledge, and where admissible arguments come from).
  std::set<std::string> known_files_, known_dirs_, numbers_, tmp_seen_, moved_;
  std::string hit_, count_seen_;
  bool copied_ = false, dest_missing_seen_ = false, answered_ = false, edited_ = false, listed_ = false;
  std::shared_ptr<const MiniShell> initial_;
};

}  // namespace

std::unique_ptr<Env> make_minishell(const TaskSpec& task) { return std::make_unique<MiniShell>(task); }

}  // namespace agent_sft
