#pragma once
// Tables with a binary label and a protected group, split 60/20/20 (train / validation / test).
//   stable_fairness.table  source = adult | compas | income | hmda | german | arrests | synthetic | csv
// adult: the UCI census income data in LIBSVM a9a form (48,842 rows, 123 one-hot features; label
// income > 50K; group sex (female 0, male 1) or race (white 1, other 0)). compas: ProPublica's two-year
// recidivism table with their filter (6,172 rows; label two_year_recid; group race, African-American 0,
// Caucasian 1, other rows dropped, or sex). income, hmda, german, arrests: tables from Debian's R
// packages, written by data.R (labels, groups and features are described there):
//   income   8,993  income >= $30,000 (above the median class)  sex | ethnic (4 groups, 8,925 rows)
//   hmda     2,380  mortgage denied                              afam
//   german   1,000  good credit                                  sex | age (under 25)
//   arrests  5,226  released with a summons                      colour | colour_sex (4 groups)
// Groups are numbered in the sorted order of their names. synthetic: Gaussian class conditionals per
// group with set base rates, whose true rates are known in closed form. csv: any table, label and group
// named by column.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nexp/nexp.hpp>

namespace stable_fairness {

// One sample: features (the last column is a constant 1, the intercept), labels 0/1, groups 0..G-1.
struct Sample {
  Eigen::MatrixXd x;
  std::vector<int> y;
  std::vector<int> g;
  int groups = 2;
  std::size_t size() const { return y.size(); }
};

struct Split {
  Sample train, val, test;
  std::vector<std::string> group_names;
};

struct TableOptions {
  std::string source = "synthetic";
  std::string file;   // adult / compas: default the data cache; csv: required
  std::string label;  // csv: the 0/1 label column
  std::string group;  // csv: the group column (any values); the other sources: one of their groups
  std::int64_t split_seed = 0;
  bool group_feature = true;  // the group indicator is one of the features
  // synthetic
  std::int64_t n = 6000;
  double group1_share = 0.3;
  std::vector<double> base_rates = {0.2, 0.4};  // P(y = 1 | g), one per group
  double separation = 1.5;                      // distance of the class means (in sd units)
  std::int64_t d = 4;

  static void declare(nexp::Options<TableOptions>& o) {
    o.add("source", &TableOptions::source, "adult | compas | income | hmda | german | arrests | synthetic | csv")
        .choices({"adult", "compas", "income", "hmda", "german", "arrests", "synthetic", "csv"});
    o.add("file", &TableOptions::file, "the table to read (csv: required; others: default the data cache)");
    o.add("label", &TableOptions::label, "csv: the label column (values 0/1)");
    o.add("group", &TableOptions::group,
          "the protected attribute (empty: the first named): adult sex|race, compas race|sex, income "
          "sex|ethnic, hmda afam, german sex|age, arrests colour|colour_sex, csv a column name");
    o.add("split_seed", &TableOptions::split_seed, "seed of the 60/20/20 train/validation/test split").min(0);
    o.add("group_feature", &TableOptions::group_feature, "give the classifiers the group indicator as a feature");
    o.add("n", &TableOptions::n, "synthetic: rows").min(50);
    o.add("group1_share", &TableOptions::group1_share, "synthetic: share of group 1").range(0.01, 0.99);
    o.add("base_rates", &TableOptions::base_rates, "synthetic: P(y = 1 | g) for each group").range(0.01, 0.99);
    o.add("separation", &TableOptions::separation, "synthetic: distance between class means").range(0.0, 10.0);
    o.add("d", &TableOptions::d, "synthetic: feature dimension").range(1, 100);
  }
};

// A whole table before the split (no intercept column yet).
struct RawTable {
  Eigen::MatrixXd x;
  std::vector<int> y, g;
  std::vector<std::string> group_names;
  std::string origin;
};

RawTable read_adult(const std::filesystem::path& file, const std::string& group);
RawTable read_compas(const std::filesystem::path& file, const std::string& group);
RawTable read_csv_table(const std::filesystem::path& file, const std::string& label, const std::string& group);

// The tables data.R writes: column `label`, text columns `group_<name>` (empty: unknown; such rows are
// dropped when that group is chosen), numeric features. Protected attributes are not features.
struct RSource {
  std::string name, package;        // the source and the Debian package holding the R data
  std::vector<std::string> groups;  // the group choices, the default first
};
const std::vector<RSource>& r_sources();
RawTable read_r_table(const std::filesystem::path& file, const std::string& source, const std::string& group);
RawTable make_synthetic(const TableOptions& o, std::uint64_t seed);
// The synthetic model: x | y, g ~ N(mu_{y,g}, I), mu_{y,g} = ((2y - 1) separation / 2, 0.5 g, 0, ...).
// The exact positive rate of the rule "x_0 > c" in group g:
//   P(x_0 > c | g) = b_g Phi(separation/2 - c) + (1 - b_g) Phi(-separation/2 - c),
// so its demographic-parity gap is |b_1 - b_0| (Phi(s/2 - c) - Phi(-s/2 - c)).
double synthetic_rule_rate(const TableOptions& o, int group, double c);

// 60/20/20 by a seeded permutation; standardises columns by the training mean and sd; appends the
// intercept column; optionally appends the group one-hot (G - 1 columns).
Split split_table(const RawTable& t, std::uint64_t seed, bool group_feature);

struct FairTable : nexp::Dataset {
  TableOptions options;
  RawTable raw;
  Split split;  // the split of options.split_seed
  // The split of split_seed + offset (studies over many splits).
  Split split_at(std::int64_t offset) const;
  std::string origin;
  std::string describe() const override;
};
std::shared_ptr<nexp::Dataset> make_table(const TableOptions& o, nexp::RunContext& ctx);

}  // namespace stable_fairness
