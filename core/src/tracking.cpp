// The SQLite run index and reading run folders (nexp/runtime/tracking.hpp).
#include "nexp/runtime/tracking.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <thread>

#include "json_fields.hpp"
#include "nexp/error.hpp"
#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/util.hpp"
#include "nexp/text.hpp"

namespace nexp {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- run status

namespace {
constexpr std::pair<RunStatus, const char*> kStatusNames[] = {{RunStatus::Created, "created"},
                                                              {RunStatus::Running, "running"},
                                                              {RunStatus::Completed, "completed"},
                                                              {RunStatus::Failed, "failed"},
                                                              {RunStatus::Interrupted, "interrupted"},
                                                              {RunStatus::Pruned, "pruned"}};

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot; 0 when unknown.
std::uint64_t process_start(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');  // the command name in parentheses may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}
}  // namespace

const char* to_string(RunStatus status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "?";
}

std::optional<RunStatus> parse_run_status(const std::string& text) {
  for (const auto& [s, name] : kStatusNames)
    if (text == name) return s;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& out, RunStatus status) { return out << to_string(status); }

RunProcess RunProcess::self() {
  const long pid = static_cast<long>(::getpid());
  return {pid, hostname(), process_start(pid)};
}

void RunProcess::write_to(json& status) const {
  status["pid"] = pid;
  status["host"] = host;
  status["process_start"] = start;
}

bool process_gone(const json& status) {
  if (detail::text_field(status, "status") != to_string(RunStatus::Running)) return false;
  const pid_t pid = detail::integer_field<pid_t>(status, "pid", 0);
  if (pid <= 0 || detail::text_field(status, "host") != hostname()) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  const std::uint64_t recorded = detail::integer_field<std::uint64_t>(status, "process_start", 0);
  const std::uint64_t now = process_start(pid);
  return recorded != 0 && now != 0 && now != recorded;  // the pid now belongs to another process
}

std::string RunRecord::status_text() const {
  return reason.empty() ? to_string(status) : fmt::format("{} ({})", to_string(status), reason);
}

std::string default_runs_dir() {
  const char* env = std::getenv("NEXP_RUNS_DIR");
  return env && *env ? env : "runs";
}

// ---------------------------------------------------------------- run folders

namespace {

void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it)
      flatten(it->second, prefix.empty() ? it->first.as<std::string>() : prefix + "." + it->first.as<std::string>(), out);
  } else if (node.IsScalar()) {
    out[prefix] = node.Scalar();
  } else if (node.IsSequence()) {
    YAML::Emitter em;
    em << YAML::Flow << node;
    out[prefix] = em.c_str();
  }
}

json read_json_or_empty(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, false);
  return j.is_object() ? j : json::object();
}

}  // namespace

RunRecord read_run_folder(const fs::path& folder) {
  if (!fs::exists(folder / "status.json") || !fs::exists(folder / "config.yaml"))
    throw DataError(fmt::format("'{}' is not a run folder: it needs status.json and config.yaml", folder.string()));
  const json status = read_json_or_empty(folder / "status.json");
  const json meta = read_json_or_empty(folder / "meta.json");
  using detail::text_field;
  RunRecord r;
  r.folder = fs::absolute(folder).lexically_normal();
  r.id = text_field(status, "id", folder.filename().string());
  r.experiment = text_field(status, "experiment");
  r.method = text_field(status, "method");
  r.dataset = text_field(status, "dataset");
  if (process_gone(status)) {
    r.status = RunStatus::Interrupted;
    r.reason = reason::process_gone;
  } else if (auto s = parse_run_status(text_field(status, "status"))) {
    r.status = *s;
    r.reason = text_field(status, "reason");
  } else {
    r.status = RunStatus::Failed;
    r.reason = "status.json unreadable";
  }
  r.config_hash = text_field(status, "config_hash");
  r.error = text_field(status, "error");
  r.sweep = text_field(status, "sweep");
  r.trial = detail::integer_field<int>(status, "trial", -1);
  r.seed = detail::integer_field<std::uint64_t>(status, "seed", 0);
  r.created = text_field(status, "created");
  r.started = text_field(status, "started");
  r.ended = text_field(status, "ended");
  r.seconds = detail::real_field(status, "seconds");
  if (const json* device = detail::json_field(meta, "device")) r.device = text_field(*device, "id");
  if (status.contains("summary") && status["summary"].is_object())
    for (auto& [k, v] : status["summary"].items())
      r.summary[k] = v.is_number() ? v.get<double>() : std::nan("");
  try {
    YAML::Node config = YAML::LoadFile((folder / "config.yaml").string());
    std::map<std::string, std::string> flat;
    for (const char* section : {"params", "dataset", "device"})
      if (config[section]) flatten(config[section], section, flat);
    if (config["seed"]) flat["seed"] = config["seed"].as<std::string>();
    if (config["method"]) flat["method"] = config["method"].as<std::string>();
    r.params = std::move(flat);
  } catch (const YAML::Exception& e) {
    throw DataError(fmt::format("run folder '{}': config.yaml does not parse ({})", folder.string(), e.what()));
  }
  return r;
}

std::map<std::string, std::vector<std::pair<std::int64_t, double>>> read_metric_series(const fs::path& folder) {
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> out;
  std::ifstream in(folder / "metrics.jsonl", std::ios::binary);
  std::string line;
  std::size_t number = 0, skipped = 0, first_skipped = 0;
  bool torn = false;
  while (std::getline(in, line)) {
    ++number;
    json j = json::parse(line, nullptr, false);
    const json* step = detail::json_field(j, "step");
    if (!step || !step->is_number_integer()) {
      // The last line without its newline: its process was killed (or the disk filled) while writing it, or
      // is writing it now.
      if (in.eof() && !line.empty()) torn = true;
      else if (skipped++ == 0) first_skipped = number;
      continue;
    }
    const std::int64_t at = step->get<std::int64_t>();
    for (auto& [k, v] : j.items()) {
      if (k == "step" || k == "time") continue;
      out[k].emplace_back(at, v.is_number() ? v.get<double>() : std::nan(""));
    }
  }
  const std::string file = (folder / "metrics.jsonl").string();
  if (torn)
    logger().warn("'{}': the last line is incomplete (its run stopped, or is still writing it); it is left out", file);
  if (skipped)
    logger().warn("'{}': {} line{} (the first: line {}) {} not a metrics record with an integer step; left out", file,
                  skipped, skipped == 1 ? "" : "s", first_skipped, skipped == 1 ? "is" : "are");
  return out;
}

json run_to_json(const RunRecord& r) {
  json j;
  j["id"] = r.id;
  j["experiment"] = r.experiment;
  j["method"] = r.method;
  j["dataset"] = r.dataset;
  j["status"] = to_string(r.status);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["error"] = r.error;
  j["folder"] = r.folder.string();
  j["config_hash"] = r.config_hash;
  j["device"] = r.device;
  j["seed"] = r.seed;
  j["created"] = r.created;
  j["started"] = r.started;
  j["ended"] = r.ended;
  j["seconds"] = r.seconds;
  if (!r.sweep.empty()) j["sweep"] = r.sweep, j["trial"] = r.trial;
  j["params"] = r.params;
  j["summary"] = json::object();
  for (const auto& [k, v] : r.summary) j["summary"][k] = json_number(v);
  return j;
}

// ---------------------------------------------------------------- SQLite

struct RunIndex::Db {
  sqlite3* handle = nullptr;
  fs::path file;
  ~Db() {
    if (handle) sqlite3_close(handle);
  }

  void exec(const std::string& sql) {
    char* err = nullptr;
    for (int attempt = 0;; ++attempt) {
      int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &err);
      if (rc == SQLITE_OK) return;
      std::string message = err ? err : sqlite3_errstr(rc);
      sqlite3_free(err);
      err = nullptr;
      // The busy timeout already waited; a few more tries cover a writer holding the lock for long.
      if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempt < 20) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
        continue;
      }
      throw Error(fmt::format("run index '{}': {} (while running: {})", file.string(), message, sql.substr(0, 80)));
    }
  }
};

namespace {

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw Error(fmt::format("run index: cannot prepare '{}': {}", sql, sqlite3_errmsg(db)));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement& bind(int i, const std::string& v) {
    const std::string text = valid_utf8(v);  // SQLite's TEXT is UTF-8
    sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, double v) {
    if (std::isnan(v)) sqlite3_bind_null(stmt_, i);
    else sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(fmt::format("run index: {}", sqlite3_errmsg(db_)));
  }
  void run_once() {
    step();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    auto* p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  double real(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(stmt_, col);
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs(
  id TEXT PRIMARY KEY, experiment TEXT, method TEXT, dataset TEXT, status TEXT, config_hash TEXT,
  folder TEXT, device TEXT, error TEXT, sweep TEXT, trial INTEGER, seed INTEGER,
  created TEXT, started TEXT, ended TEXT, seconds REAL, reason TEXT);
CREATE TABLE IF NOT EXISTS params(run_id TEXT, key TEXT, value TEXT, PRIMARY KEY(run_id, key));
CREATE TABLE IF NOT EXISTS summaries(run_id TEXT, name TEXT, value REAL, PRIMARY KEY(run_id, name));
CREATE TABLE IF NOT EXISTS metrics(run_id TEXT, step INTEGER, name TEXT, value REAL);
CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id, name, step);
CREATE INDEX IF NOT EXISTS runs_experiment ON runs(experiment);
CREATE INDEX IF NOT EXISTS runs_hash ON runs(config_hash);
)sql";

void write_record(sqlite3* db, const RunRecord& r) {
  Statement del_run(db, "DELETE FROM runs WHERE id = ?");
  del_run.bind(1, r.id).run_once();
  for (const char* t : {"params", "summaries", "metrics"}) {
    Statement del(db, fmt::format("DELETE FROM {} WHERE run_id = ?", t));
    del.bind(1, r.id).run_once();
  }
  Statement ins(db,
                "INSERT INTO runs(id, experiment, method, dataset, status, config_hash, folder, device, error, sweep, "
                "trial, seed, created, started, ended, seconds, reason) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, r.id).bind(2, r.experiment).bind(3, r.method).bind(4, r.dataset).bind(5, std::string(to_string(r.status)));
  ins.bind(6, r.config_hash).bind(7, r.folder.string()).bind(8, r.device).bind(9, r.error).bind(10, r.sweep);
  ins.bind(11, static_cast<std::int64_t>(r.trial)).bind(12, static_cast<std::int64_t>(r.seed));
  ins.bind(13, r.created).bind(14, r.started).bind(15, r.ended).bind(16, r.seconds).bind(17, r.reason);
  ins.run_once();
  Statement p(db, "INSERT INTO params(run_id, key, value) VALUES(?,?,?)");
  for (const auto& [k, v] : r.params) p.bind(1, r.id).bind(2, k).bind(3, v).run_once();
  Statement s(db, "INSERT INTO summaries(run_id, name, value) VALUES(?,?,?)");
  for (const auto& [k, v] : r.summary) s.bind(1, r.id).bind(2, k).bind(3, v).run_once();
  Statement m(db, "INSERT INTO metrics(run_id, step, name, value) VALUES(?,?,?,?)");
  for (const auto& [name, series] : read_metric_series(r.folder))
    for (const auto& [step, value] : series) m.bind(1, r.id).bind(2, step).bind(3, name).bind(4, value).run_once();
}

}  // namespace

RunIndex::RunIndex(const fs::path& runs_dir) : runs_dir_(runs_dir), db_(std::make_unique<Db>()) {
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  db_->file = runs_dir / "nexp.db";
  if (sqlite3_open_v2(db_->file.c_str(), &db_->handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK)
    throw Error(fmt::format("cannot open the run index '{}': {}", db_->file.string(),
                            db_->handle ? sqlite3_errmsg(db_->handle) : "out of memory"));
  sqlite3_busy_timeout(db_->handle, 30000);
  db_->exec("PRAGMA journal_mode=WAL");
  db_->exec("PRAGMA synchronous=NORMAL");
  db_->exec(kSchema);
  add_missing_columns();
}

// An index written by an older nexp lacks the columns added since; they are added empty.
void RunIndex::add_missing_columns() {
  Statement columns(db_->handle, "SELECT name FROM pragma_table_info('runs')");
  bool has_reason = false;
  while (columns.step()) has_reason = has_reason || columns.text(0) == "reason";
  if (has_reason) return;
  try {
    db_->exec("ALTER TABLE runs ADD COLUMN reason TEXT");
  } catch (const Error&) {
    // Another process added it at the same moment.
  }
}

RunIndex::~RunIndex() = default;

void RunIndex::upsert(const RunRecord& record) {
  // BEGIN IMMEDIATE takes the write lock up front: two writers never deadlock on a lock upgrade.
  db_->exec("BEGIN IMMEDIATE");
  try {
    write_record(db_->handle, record);
    db_->exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_->handle, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

int RunIndex::reindex() {
  std::vector<fs::path> folders;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(runs_dir_, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_directory()) continue;
    const std::string name = it->path().filename().string();
    if (name == "artifacts" || name == "checkpoints") {
      it.disable_recursion_pending();
      continue;
    }
    if (fs::exists(it->path() / "status.json") && fs::exists(it->path() / "config.yaml")) {
      folders.push_back(it->path());
      it.disable_recursion_pending();
    }
  }
  db_->exec("BEGIN IMMEDIATE");
  try {
    db_->exec("DELETE FROM runs; DELETE FROM params; DELETE FROM summaries; DELETE FROM metrics;");
    int n = 0;
    for (const auto& f : folders) {
      try {
        write_record(db_->handle, read_run_folder(f));
        ++n;
      } catch (const DataError&) {
        // A half-written folder (the process was killed while creating it) is not a run.
      }
    }
    db_->exec("COMMIT");
    return n;
  } catch (...) {
    sqlite3_exec(db_->handle, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

int RunIndex::refresh_running() {
  std::vector<std::pair<std::string, fs::path>> running;
  {
    Statement st(db_->handle, "SELECT id, folder FROM runs WHERE status = ?");
    st.bind(1, std::string(to_string(RunStatus::Running)));
    while (st.step()) running.emplace_back(st.text(0), st.text(1));
  }
  int changed = 0;
  for (const auto& [id, folder] : running) {
    try {
      RunRecord r = read_run_folder(folder);
      if (r.status == RunStatus::Running) continue;
      upsert(r);
      ++changed;
    } catch (const DataError&) {
      // The folder is gone or half-written: `nexp runs --reindex` drops such rows.
    }
  }
  return changed;
}

namespace {
RunRecord record_from_row(sqlite3* db, Statement& st) {
  RunRecord r;
  r.id = st.text(0);
  r.experiment = st.text(1);
  r.method = st.text(2);
  r.dataset = st.text(3);
  r.status = parse_run_status(st.text(4)).value_or(RunStatus::Failed);
  r.config_hash = st.text(5);
  r.folder = st.text(6);
  r.device = st.text(7);
  r.error = st.text(8);
  r.sweep = st.text(9);
  r.trial = static_cast<int>(st.integer(10));
  r.seed = static_cast<std::uint64_t>(st.integer(11));
  r.created = st.text(12);
  r.started = st.text(13);
  r.ended = st.text(14);
  r.seconds = st.real(15);
  r.reason = st.text(16);
  Statement p(db, "SELECT key, value FROM params WHERE run_id = ?");
  p.bind(1, r.id);
  while (p.step()) r.params[p.text(0)] = p.text(1);
  Statement s(db, "SELECT name, value FROM summaries WHERE run_id = ?");
  s.bind(1, r.id);
  while (s.step()) r.summary[s.text(0)] = s.real(1);
  return r;
}
constexpr const char* kColumns =
    "r.id, r.experiment, r.method, r.dataset, r.status, r.config_hash, r.folder, r.device, r.error, r.sweep, r.trial, "
    "r.seed, r.created, r.started, r.ended, r.seconds, r.reason";
}  // namespace

std::vector<RunRecord> RunIndex::query(const RunQuery& q) const {
  std::string sql = fmt::format("SELECT {} FROM runs r", kColumns);
  std::vector<std::string> binds;
  if (!q.sort_metric.empty()) {
    sql += " LEFT JOIN summaries s ON s.run_id = r.id AND s.name = ?";
    binds.push_back(q.sort_metric);
  }
  std::vector<std::string> where;
  auto filter = [&](const std::string& column, const std::string& value) {
    if (value.empty()) return;
    // A trailing '*' matches a prefix: --method 'htc.*'.
    if (value.back() == '*') {
      where.push_back(column + " LIKE ?");
      binds.push_back(value.substr(0, value.size() - 1) + "%");
    } else {
      where.push_back(column + " = ?");
      binds.push_back(value);
    }
  };
  filter("r.experiment", q.experiment);
  filter("r.method", q.method);
  if (q.status) filter("r.status", to_string(*q.status));
  filter("r.sweep", q.sweep);
  if (!where.empty()) sql += " WHERE " + fmt::format("{}", fmt::join(where, " AND "));
  if (!q.sort_metric.empty())
    sql += fmt::format(" ORDER BY s.value IS NULL, s.value {}, r.created", q.descending ? "DESC" : "ASC");
  else
    sql += " ORDER BY r.created, r.id";
  if (q.limit > 0) sql += fmt::format(" LIMIT {}", q.limit);
  Statement st(db_->handle, sql);
  for (size_t i = 0; i < binds.size(); ++i) st.bind(static_cast<int>(i + 1), binds[i]);
  std::vector<RunRecord> out;
  while (st.step()) out.push_back(record_from_row(db_->handle, st));
  return out;
}

std::optional<RunRecord> RunIndex::find(const std::string& id) const {
  Statement st(db_->handle, fmt::format("SELECT {} FROM runs r WHERE r.id = ? OR r.id LIKE ? ORDER BY r.id", kColumns));
  st.bind(1, id).bind(2, id + "%");
  std::vector<RunRecord> found;
  while (st.step()) found.push_back(record_from_row(db_->handle, st));
  for (const auto& r : found)
    if (r.id == id) return r;
  if (found.size() > 1) {
    std::vector<std::string> ids;
    for (const auto& r : found) ids.push_back(r.id);
    throw ConfigError(fmt::format("run id '{}' is ambiguous: it starts {} runs ({}); give more characters", id,
                                  found.size(), fmt::join(ids, ", ")));
  }
  if (found.empty()) return std::nullopt;
  return found.front();
}

fs::path locate_run(const std::string& id_or_folder, const fs::path& runs_dir) {
  std::error_code ec;
  if (fs::exists(fs::path(id_or_folder) / "config.yaml", ec)) return fs::path(id_or_folder);
  if (fs::exists(runs_dir / "nexp.db", ec)) {
    if (auto r = RunIndex(runs_dir).find(id_or_folder); r && fs::exists(r->folder)) return r->folder;
  }
  // The folders are the truth: look for the id among them too (an index not yet rebuilt).
  std::vector<fs::path> matches;
  for (auto it = fs::recursive_directory_iterator(runs_dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_directory()) continue;
    if (it.depth() > 3) { it.disable_recursion_pending(); continue; }
    if (it->path().filename().string().rfind(id_or_folder, 0) == 0 && fs::exists(it->path() / "status.json"))
      matches.push_back(it->path());
  }
  if (matches.size() == 1) return matches.front();
  if (matches.size() > 1)
    throw ConfigError(fmt::format("run id '{}' is ambiguous under '{}' ({} folders match); give more characters",
                                  id_or_folder, runs_dir.string(), matches.size()));
  throw ConfigError(fmt::format("no run '{}' under '{}': it is neither a run folder nor a known run id. `nexp runs` "
                                "lists the runs (use --runs-dir for another folder)",
                                id_or_folder, runs_dir.string()));
}

}  // namespace nexp
