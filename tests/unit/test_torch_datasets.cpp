// core/src/torch/datasets.cpp and core/src/torch/predictions.cpp (libnexp_torch): tensor data sets and
// prediction metrics against hand-computed values.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <fstream>

#include "nexp/tensor_dataset.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

namespace {

// The factories take a RunContext they do not use; this one answers nothing.
struct NoContext final : RunContext {
  const std::string& method_name() const override { static std::string s = "test"; return s; }
  const Params& params() const override { static Params p; return p; }
  bool has_dataset() const override { return false; }
  Dataset& dataset() override { throw Error("no dataset"); }
  const std::vector<std::string>& selected_metrics() const override { static std::vector<std::string> v; return v; }
  Device& device() override { throw Error("no device"); }
  const std::vector<std::shared_ptr<Device>>& devices() override { throw Error("no device"); }
  Comm& comm() override { throw Error("no communicator"); }
  int threads() const override { return 1; }
  std::uint64_t seed() const override { return 0; }
  std::mt19937_64& rng() override { return rng_; }
  spdlog::logger& log() override { throw Error("no log"); }
  void log_metrics(std::int64_t, const std::map<std::string, double>&) override {}
  void summary(const std::string&, double) override {}
  std::vector<const MetricSpec*> prediction_metrics(const std::string&) const override { return {}; }
  Progress progress(std::int64_t, const std::string&) override { throw Error("no progress"); }
  std::filesystem::path artifacts_dir() const override { return "/nonexistent"; }
  llm::Client& llm(const std::string&) override { throw Error("no language model"); }
  void save_checkpoint(const std::function<void(const std::filesystem::path&)>&) override {}
  std::optional<std::filesystem::path> checkpoint() const override { return std::nullopt; }
  void restore_rng_state() override {}
  bool stop_requested() const override { return false; }
  std::mt19937_64 rng_;
};

Params defaults(const Schema& s, std::map<std::string, Value> set) {
  for (const auto& p : s.params())
    if (!set.count(p.name()) && !p.is_required() && !p.is_optional()) set[p.name()] = p.fallback();
  return Params(set);
}

std::shared_ptr<TensorDataset> make(const std::string& name, std::map<std::string, Value> set) {
  const DatasetSpec* spec = test_registry().find_dataset(name);
  NoContext ctx;
  return std::dynamic_pointer_cast<TensorDataset>(spec->make(defaults(spec->schema, std::move(set)), ctx));
}

}  // namespace

TEST(Data, CsvSplitsAndStandardises) {
  TempDir dir;
  std::string csv = "a,b,label\n";
  for (int i = 0; i < 10; ++i) csv += std::to_string(i) + "," + std::to_string(2 * i) + "," + std::to_string(i % 2) + "\n";
  auto file = dir.write("t.csv", csv);
  auto d = make("csv", {{"path", Value(file.string())}, {"test_fraction", Value(0.2)}, {"standardize", Value(false)}});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->train_x.sizes(), (at::IntArrayRef{8, 2}));
  EXPECT_EQ(d->test_x.size(0), 2);
  EXPECT_EQ(d->num_classes, 2);
  EXPECT_EQ(d->feature_names, (std::vector<std::string>{"a", "b"}));
  // Each row keeps b = 2a and label = a mod 2 through the shuffle.
  at::Tensor x = at::cat({d->train_x, d->test_x}), y = at::cat({d->train_y, d->test_y});
  EXPECT_TRUE(at::allclose(x.select(1, 1), 2 * x.select(1, 0)));
  EXPECT_TRUE(at::equal(y, x.select(1, 0).to(at::kLong) % 2));
  auto bad = dir.write("bad.csv", "a,label\n1,0\nx,1\n");
  try {
    make("csv", {{"path", Value(bad.string())}});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3, column 1: expected a number, found 'x'"), std::string::npos) << e.what();
  }
}

TEST(Data, NpyReadsFloat64AndInt64) {
  TempDir dir;
  auto write_npy = [&](const std::string& name, const std::string& descr, const std::string& shape, const void* data,
                       size_t bytes) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header += '\n';
    std::ofstream out(dir.path / name, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff), static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(len), 2);
    out << header;
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    return (dir.path / name).string();
  };
  const double x[6] = {1, 2, 3, 4, 5, 6};
  const std::int64_t y[3] = {0, 1, 2};
  auto xf = write_npy("x.npy", "<f8", "(3, 2)", x, sizeof x);
  auto yf = write_npy("y.npy", "<i8", "(3,)", y, sizeof y);
  auto d = make("npy", {{"x", Value(xf)}, {"y", Value(yf)}, {"test_fraction", Value(0.0)}, {"standardize", Value(false)}});
  ASSERT_EQ(d->train_x.sizes(), (at::IntArrayRef{3, 2}));
  EXPECT_DOUBLE_EQ(d->train_x.sum().item<double>(), 21.0);
  EXPECT_EQ(d->train_y.sum().item<std::int64_t>(), 3);
  EXPECT_EQ(d->num_classes, 3);
}

TEST(Data, MissingInstalledDataNamesTheSetupCommand) {
  ::setenv("NEXP_DATA_DIR", "/nonexistent/nexp-data", 1);
  try {
    make("fashion_mnist", {});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/setup"), std::string::npos) << e.what();
  }
  ::unsetenv("NEXP_DATA_DIR");
}

TEST(Metrics, PredictionMetricsMatchHandComputedValues) {
  at::Tensor probs = at::tensor({0.7, 0.2, 0.1, 0.1, 0.6, 0.3, 0.3, 0.3, 0.4, 0.5, 0.25, 0.25}, at::kDouble).view({4, 3});
  at::Tensor labels = at::tensor({0, 2, 2, 1}, at::kLong);
  auto metric = [&](const char* name) { return test_registry().find_metric(name)->from_predictions(probs, labels); };
  EXPECT_DOUBLE_EQ(metric("accuracy"), 0.5);  // rows 0 and 2 are right
  EXPECT_NEAR(metric("nll"), -(std::log(0.7) + std::log(0.3) + std::log(0.4) + std::log(0.25)) / 4, 1e-12);
  const double brier = ((0.09 + 0.04 + 0.01) + (0.01 + 0.36 + 0.49) + (0.09 + 0.09 + 0.36) + (0.25 + 0.5625 + 0.0625)) / 4;
  EXPECT_NEAR(metric("brier"), brier, 1e-12);
  // ECE, 15 bins: confidences 0.7 (right), 0.6 (wrong), 0.4 (right), 0.5 (wrong) fall in 4 bins.
  EXPECT_NEAR(metric("ece"), (0.3 + 0.6 + 0.6 + 0.5) / 4, 1e-12);
}
