// The data sets of data.hpp: readers for Adult (LIBSVM a9a), COMPAS (ProPublica's filter), the tables
// data.R writes from R packages, any CSV table, and the synthetic Gaussian model; the seeded 60/20/20
// split.
#include "data.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include <nexp/random.hpp>
#include <nexp/table.hpp>

namespace stable_fairness {
namespace {

using nexp::DataError;

void require_file(const std::filesystem::path& file, const std::string& source) {
  if (std::filesystem::is_regular_file(file)) return;
  throw DataError("stable_fairness.table: source=" + source + " needs the file " + file.string() +
                  ", which does not exist; run scripts/setup (it installs the fairness tables into the data "
                  "cache) or give dataset.file=PATH");
}

RawTable from_rows(std::vector<std::vector<double>> rows, std::vector<int> y, std::vector<int> g,
                   std::vector<std::string> names, std::string origin) {
  RawTable t;
  const std::size_t n = rows.size(), d = n ? rows[0].size() : 0;
  t.x.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) t.x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = rows[i][j];
  t.y = std::move(y), t.g = std::move(g), t.group_names = std::move(names), t.origin = std::move(origin);
  return t;
}

double phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

// a9a: columns 67-71 race (White, Asian-Pac-Islander, Amer-Indian-Eskimo, Other, Black), 72-73 sex
// (Female, Male), 1-based. They are left out of the features; the group enters through group_feature.
RawTable read_adult(const std::filesystem::path& file, const std::string& group) {
  require_file(file, "adult");
  if (group != "sex" && group != "race")
    throw DataError("stable_fairness.table: source=adult takes group=sex or group=race, found '" + group + "'");
  std::ifstream in(file);
  std::vector<std::vector<double>> rows;
  std::vector<int> y, g;
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ss(line);
    std::string label, tok;
    if (!(ss >> label)) continue;
    std::vector<double> row(123 - 7, 0.0);
    int sex = -1, race = -1;
    while (ss >> tok) {
      const auto colon = tok.find(':');
      if (colon == std::string::npos)
        throw DataError("stable_fairness.table: " + file.string() + " line " + std::to_string(lineno) +
                        ": expected index:value, found '" + tok + "' (is this the LIBSVM a9a file?)");
      const int idx = std::stoi(tok.substr(0, colon));
      if (idx < 1 || idx > 123)
        throw DataError("stable_fairness.table: " + file.string() + " line " + std::to_string(lineno) +
                        ": feature index " + std::to_string(idx) + " outside 1..123");
      if (idx >= 67 && idx <= 71) race = idx;
      else if (idx == 72 || idx == 73) sex = idx;
      else row[static_cast<std::size_t>(idx < 67 ? idx - 1 : idx - 8)] = std::stod(tok.substr(colon + 1));
    }
    if (sex < 0 || race < 0)
      throw DataError("stable_fairness.table: " + file.string() + " line " + std::to_string(lineno) +
                      ": no sex (72/73) or race (67-71) column is set; expected the a9a encoding");
    rows.push_back(std::move(row));
    y.push_back(label == "+1" || label == "1" ? 1 : 0);
    g.push_back(group == "sex" ? (sex == 73 ? 1 : 0) : (race == 67 ? 1 : 0));
  }
  std::vector<std::string> names =
      group == "sex" ? std::vector<std::string>{"female", "male"} : std::vector<std::string>{"non-white", "white"};
  return from_rows(std::move(rows), std::move(y), std::move(g), std::move(names), "adult (a9a), group " + group);
}

// ProPublica's filter: days_b_screening_arrest in [-30, 30], is_recid != -1, c_charge_degree != "O",
// score_text != "N/A". Features: age, priors, three juvenile counts, felony charge, and the other
// protected attribute as an indicator. The COMPAS score itself is not a feature.
RawTable read_compas(const std::filesystem::path& file, const std::string& group) {
  require_file(file, "compas");
  if (group != "race" && group != "sex")
    throw DataError("stable_fairness.table: source=compas takes group=race or group=sex, found '" + group + "'");
  const auto t = nexp::CsvTable::read(file);
  std::vector<std::vector<double>> rows;
  std::vector<int> y, g;
  for (std::size_t r = 0; r < t.size(); ++r) {
    const auto& days = t.text(r, "days_b_screening_arrest");
    if (days.empty() || std::abs(std::stod(days)) > 30) continue;
    if (t.integer(r, "is_recid") == -1 || t.text(r, "c_charge_degree") == "O" || t.text(r, "score_text") == "N/A")
      continue;
    const auto& race = t.text(r, "race");
    const bool male = t.text(r, "sex") == "Male";
    if (group == "race" && race != "African-American" && race != "Caucasian") continue;
    rows.push_back({t.real(r, "age"), t.real(r, "priors_count"), t.real(r, "juv_fel_count"),
                    t.real(r, "juv_misd_count"), t.real(r, "juv_other_count"),
                    t.text(r, "c_charge_degree") == "F" ? 1.0 : 0.0,
                    group == "race" ? (male ? 1.0 : 0.0) : (race == "African-American" ? 1.0 : 0.0)});
    y.push_back(static_cast<int>(t.integer(r, "two_year_recid")));
    g.push_back(group == "race" ? (race == "Caucasian" ? 1 : 0) : (male ? 1 : 0));
  }
  std::vector<std::string> names = group == "race" ? std::vector<std::string>{"African-American", "Caucasian"}
                                                   : std::vector<std::string>{"female", "male"};
  return from_rows(std::move(rows), std::move(y), std::move(g), std::move(names),
                   "compas (ProPublica filter), group " + group);
}

namespace {

// A table with a 0/1 label column and a group column (any values); the other columns are features:
// numeric ones as they are, others one-hot (at most 50 values). Columns whose name starts with
// `skip_prefix` (when not empty) are not features; rows with an empty group are dropped when
// `drop_empty_group`.
RawTable labelled_table(const nexp::CsvTable& t, const std::filesystem::path& file, const std::string& label,
                        const std::string& group, const std::string& skip_prefix, bool drop_empty_group,
                        std::string origin) {
  for (const auto& c : {label, group})
    if (!t.has_column(c)) {
      std::string cols;
      for (const auto& h : t.header()) cols += (cols.empty() ? "" : ", ") + h;
      throw DataError("stable_fairness.table: " + file.string() + " has no column '" + c + "'; its columns are: " +
                      cols + ". Set dataset.label / dataset.group to one of them");
    }
  auto kept = [&](std::size_t r) { return !drop_empty_group || !t.text(r, group).empty(); };
  std::set<std::string> group_values;
  for (std::size_t r = 0; r < t.size(); ++r)
    if (kept(r)) group_values.insert(t.text(r, group));
  if (group_values.size() < 2)
    throw DataError("stable_fairness.table: column '" + group + "' of " + file.string() +
                    " must hold at least two groups; found " + std::to_string(group_values.size()));
  std::vector<std::string> names(group_values.begin(), group_values.end());
  // Per feature column: numeric, or its categories.
  std::vector<std::pair<std::string, std::vector<std::string>>> features;
  for (const auto& h : t.header()) {
    if (h == label || h == group || (!skip_prefix.empty() && h.rfind(skip_prefix, 0) == 0)) continue;
    std::set<std::string> values;
    bool numeric = true;
    for (std::size_t r = 0; r < t.size(); ++r) {
      const auto& v = t.text(r, h);
      char* end = nullptr;
      std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0') numeric = false;
      values.insert(v);
    }
    if (!numeric && values.size() > 50)
      throw DataError("stable_fairness.table: column '" + h + "' of " + file.string() + " is not numeric and has " +
                      std::to_string(values.size()) + " distinct values (at most 50 are one-hot encoded); drop it");
    features.push_back({h, numeric ? std::vector<std::string>{} : std::vector<std::string>(values.begin(), values.end())});
  }
  std::vector<std::vector<double>> rows;
  std::vector<int> y, g;
  for (std::size_t r = 0; r < t.size(); ++r) {
    if (!kept(r)) continue;
    const auto& lv = t.text(r, label);
    if (lv != "0" && lv != "1")
      throw DataError("stable_fairness.table: " + file.string() + " row " + std::to_string(r + 1) + ": label column '" +
                      label + "' must be 0 or 1, found '" + lv + "'");
    std::vector<double> row;
    for (const auto& [h, cats] : features) {
      if (cats.empty()) row.push_back(t.real(r, h));
      for (std::size_t c = 1; c < cats.size(); ++c) row.push_back(t.text(r, h) == cats[c] ? 1.0 : 0.0);
    }
    rows.push_back(std::move(row));
    y.push_back(lv == "1");
    g.push_back(static_cast<int>(std::find(names.begin(), names.end(), t.text(r, group)) - names.begin()));
  }
  return from_rows(std::move(rows), std::move(y), std::move(g), std::move(names), std::move(origin));
}

}  // namespace

RawTable read_csv_table(const std::filesystem::path& file, const std::string& label, const std::string& group) {
  if (!std::filesystem::is_regular_file(file))
    throw DataError("stable_fairness.table: source=csv: file '" + file.string() +
                    "' does not exist; give dataset.file=PATH to a CSV table with a header row");
  if (label.empty() || group.empty())
    throw DataError("stable_fairness.table: source=csv needs dataset.label=COLUMN and dataset.group=COLUMN (found label='" +
                    label + "', group='" + group + "')");
  return labelled_table(nexp::CsvTable::read(file), file, label, group, "", false, "csv " + file.string());
}

const std::vector<RSource>& r_sources() {
  static const std::vector<RSource> sources = {
      {"income", "r-cran-kernlab", {"sex", "ethnic"}},
      {"hmda", "r-cran-aer", {"afam"}},
      {"german", "r-cran-caret", {"sex", "age"}},
      {"arrests", "r-cran-cardata", {"colour", "colour_sex"}},
  };
  return sources;
}

RawTable read_r_table(const std::filesystem::path& file, const std::string& source, const std::string& group) {
  const auto& all = r_sources();
  const auto it = std::find_if(all.begin(), all.end(), [&](const RSource& r) { return r.name == source; });
  if (it == all.end()) throw DataError("stable_fairness.table: '" + source + "' is not one of the R-packaged tables");
  const std::string g = group.empty() ? it->groups.front() : group;
  if (std::find(it->groups.begin(), it->groups.end(), g) == it->groups.end()) {
    std::string choices;
    for (const auto& c : it->groups) choices += (choices.empty() ? "" : " or group=") + c;
    throw DataError("stable_fairness.table: source=" + source + " takes group=" + choices + ", found '" + g + "'");
  }
  if (!std::filesystem::is_regular_file(file))
    throw DataError("stable_fairness.table: source=" + source + " needs the file " + file.string() +
                    ", which does not exist; install the Debian package " + it->package +
                    " and run scripts/setup (plugins/stable_fairness/data.R writes it), or give dataset.file=PATH");
  return labelled_table(nexp::CsvTable::read(file), file, "label", "group_" + g, "group_", true,
                        source + " (Debian " + it->package + "), group " + g);
}

RawTable make_synthetic(const TableOptions& o, std::uint64_t seed) {
  if (o.base_rates.size() != 2)
    throw nexp::ConfigError("stable_fairness.table: source=synthetic takes base_rates with one value per group (2), found " +
                            std::to_string(o.base_rates.size()));
  auto rng = nexp::Random::stream(seed, "synthetic");
  std::vector<std::vector<double>> rows;
  std::vector<int> y, g;
  for (std::int64_t i = 0; i < o.n; ++i) {
    const int gi = rng.bernoulli(o.group1_share) ? 1 : 0;
    const int yi = rng.bernoulli(o.base_rates[static_cast<std::size_t>(gi)]) ? 1 : 0;
    std::vector<double> row(static_cast<std::size_t>(o.d));
    for (auto& v : row) v = rng.normal();
    row[0] += (2 * yi - 1) * o.separation / 2;
    if (row.size() > 1) row[1] += 0.5 * gi;
    rows.push_back(std::move(row));
    y.push_back(yi), g.push_back(gi);
  }
  return from_rows(std::move(rows), std::move(y), std::move(g), {"group0", "group1"}, "synthetic Gaussian");
}

double synthetic_rule_rate(const TableOptions& o, int group, double c) {
  const double b = o.base_rates.at(static_cast<std::size_t>(group));
  return b * phi(o.separation / 2 - c) + (1 - b) * phi(-o.separation / 2 - c);
}

Split split_table(const RawTable& t, std::uint64_t seed, bool group_feature) {
  const std::size_t n = t.y.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto rng = nexp::Random::stream(seed, "split");
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  const std::size_t n_train = n * 6 / 10, n_val = n * 2 / 10;
  const int G = static_cast<int>(t.group_names.size());
  const Eigen::Index d = t.x.cols(), extra = group_feature ? G - 1 : 0;
  // Training mean and sd of every column.
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(d), sd = Eigen::VectorXd::Zero(d);
  for (std::size_t i = 0; i < n_train; ++i) mean += t.x.row(static_cast<Eigen::Index>(order[i])).transpose();
  mean /= static_cast<double>(n_train);
  for (std::size_t i = 0; i < n_train; ++i)
    sd += (t.x.row(static_cast<Eigen::Index>(order[i])).transpose() - mean).array().square().matrix();
  sd = (sd / static_cast<double>(n_train)).cwiseSqrt();
  auto part = [&](std::size_t from, std::size_t to) {
    Sample s;
    s.groups = G;
    s.x.resize(static_cast<Eigen::Index>(to - from), d + extra + 1);
    for (std::size_t i = from; i < to; ++i) {
      const auto r = static_cast<Eigen::Index>(i - from), src = static_cast<Eigen::Index>(order[i]);
      for (Eigen::Index j = 0; j < d; ++j) s.x(r, j) = sd(j) > 0 ? (t.x(src, j) - mean(j)) / sd(j) : 0.0;
      for (Eigen::Index j = 0; j < extra; ++j) s.x(r, d + j) = t.g[order[i]] == j + 1 ? 1.0 : 0.0;
      s.x(r, d + extra) = 1.0;
      s.y.push_back(t.y[order[i]]), s.g.push_back(t.g[order[i]]);
    }
    return s;
  };
  Split s{part(0, n_train), part(n_train, n_train + n_val), part(n_train + n_val, n), t.group_names};
  for (const Sample* p : {&s.train, &s.val, &s.test})
    for (int gi = 0; gi < G; ++gi)
      if (std::count(p->g.begin(), p->g.end(), gi) == 0)
        throw DataError("stable_fairness.table: a split part has no member of group '" + t.group_names[gi] +
                        "'; the table is too small or the group too rare (" + std::to_string(n) + " rows)");
  return s;
}

std::string FairTable::describe() const {
  std::ostringstream o;
  o << origin << ": " << split.train.size() << " train / " << split.val.size() << " validation / " << split.test.size()
    << " test, " << split.train.x.cols() << " features (with intercept), " << split.train.groups << " groups";
  return o.str();
}

Split FairTable::split_at(std::int64_t offset) const {
  return split_table(raw, static_cast<std::uint64_t>(options.split_seed + offset), options.group_feature);
}

std::shared_ptr<nexp::Dataset> make_table(const TableOptions& o, nexp::RunContext& ctx) {
  const auto cache = nexp::data_dir() / "stable_fairness";
  RawTable raw;
  if (o.source == "adult")
    raw = read_adult(o.file.empty() ? cache / "adult" / "a9a.txt" : std::filesystem::path(o.file),
                     o.group.empty() ? "sex" : o.group);
  else if (o.source == "compas")
    raw = read_compas(o.file.empty() ? cache / "compas" / "compas-two-years-deidentified.csv"
                                     : std::filesystem::path(o.file),
                      o.group.empty() ? "race" : o.group);
  else if (o.source == "csv")
    raw = read_csv_table(o.file, o.label, o.group);
  else if (o.source != "synthetic")
    raw = read_r_table(o.file.empty() ? cache / o.source / (o.source + ".csv") : std::filesystem::path(o.file),
                       o.source, o.group);
  else
    raw = make_synthetic(o, ctx.seed());
  auto t = std::make_shared<FairTable>();
  t->options = o;
  t->origin = raw.origin;
  t->raw = std::move(raw);
  t->split = t->split_at(0);
  return t;
}

}  // namespace stable_fairness
