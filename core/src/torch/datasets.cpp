// Core's tensor data sets: IDX images (MNIST, Fashion-MNIST), CSV tables and NPY arrays, read into
// nexp::TensorDataset (core/src/datasets.cpp holds their catalogue and schemas).
#include <ATen/ATen.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include "../array_files.hpp"
#include "nexp/error.hpp"
#include "nexp/tensor_dataset.hpp"
#include "nexp/text.hpp"
#include "torch_components.hpp"

namespace nexp {

namespace fs = std::filesystem;

TensorDataset::~TensorDataset() = default;

std::string TensorDataset::describe() const {
  auto shape = [](const at::Tensor& t) {
    std::vector<std::int64_t> s(t.sizes().begin() + 1, t.sizes().end());
    return s.empty() ? std::string("scalar") : fmt::format("{}", fmt::join(s, "x"));
  };
  std::string out = fmt::format("{}: {} train", name, train_x.defined() ? train_x.size(0) : 0);
  if (test_x.defined()) out += fmt::format(" / {} test", test_x.size(0));
  if (train_x.defined()) out += ", " + shape(train_x);
  if (num_classes > 0) out += fmt::format(", {} classes", num_classes);
  return out;
}

namespace {

const char* kSetupHint = "Install it with `scripts/setup` (or set NEXP_DATA_DIR to where it is)";

fs::path need_file(const fs::path& file, const std::string& dataset) {
  if (!fs::exists(file))
    throw DataError(fmt::format("dataset '{}': '{}' is missing. {}", dataset, file.string(), kSetupHint));
  return file;
}

// The size of a file need_file found (a folder, or a file that went away, is refused).
std::uint64_t file_bytes(const fs::path& file, const std::string& dataset) {
  std::error_code ec;
  const std::uintmax_t bytes = fs::file_size(file, ec);
  if (ec) throw DataError(fmt::format("dataset '{}': cannot read '{}': {}", dataset, file.string(), ec.message()));
  return bytes;
}

// ---------------------------------------------------------------- IDX (MNIST format)

at::Tensor read_idx(const fs::path& file, const std::string& dataset) {
  std::ifstream in(need_file(file, dataset), std::ios::binary);
  detail::ArrayHeader h;
  try {
    h = detail::read_idx_header(in, file_bytes(file, dataset), fmt::format("dataset '{}': '{}'", dataset, file.string()));
  } catch (const DataError& e) {
    throw DataError(fmt::format("{}. {}", e.what(), kSetupHint));
  }
  at::Tensor t = at::empty(h.shape, at::kByte);
  const auto n = static_cast<std::streamsize>(h.data_bytes);
  in.read(reinterpret_cast<char*>(t.data_ptr<std::uint8_t>()), n);
  if (in.gcount() != n)
    throw DataError(fmt::format("dataset '{}': '{}' is truncated ({} of {} bytes). {}", dataset, file.string(),
                                in.gcount(), n, kSetupHint));
  return t;
}

// The first `n` samples of a fixed permutation (seeded by `seed`), or all of them when n <= 0.
std::pair<at::Tensor, at::Tensor> subset(const at::Tensor& x, const at::Tensor& y, std::int64_t n, std::int64_t seed) {
  if (n <= 0 || n >= x.size(0)) return {x, y};
  at::Generator gen = at::detail::createCPUGenerator(static_cast<std::uint64_t>(seed));
  at::Tensor idx = at::randperm(x.size(0), gen, at::kLong).slice(0, 0, n);
  return {x.index_select(0, idx), y.index_select(0, idx)};
}

}  // namespace

std::shared_ptr<Dataset> load_idx_set(const std::string& name, const fs::path& dir, const ImageOptions& s,
                                      std::vector<std::string> class_names) {
  auto images = [&](const char* f) { return read_idx(dir / f, name).unsqueeze(1).to(at::kFloat).div_(255.0f); };
  auto labels = [&](const char* f) { return read_idx(dir / f, name).to(at::kLong); };
  auto d = std::make_shared<TensorDataset>();
  d->name = name;
  std::tie(d->train_x, d->train_y) = subset(images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte"),
                                            s.train_size, s.subset_seed);
  std::tie(d->test_x, d->test_y) = subset(images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte"),
                                          s.test_size, s.subset_seed + 1);
  if (s.normalize) {
    // Standardise with the training set's statistics.
    const float mean = d->train_x.mean().item<float>(), std = d->train_x.std().item<float>();
    d->train_x = (d->train_x - mean) / std;
    d->test_x = (d->test_x - mean) / std;
  }
  d->num_classes = 10;
  d->class_names = std::move(class_names);
  return d;
}

// ---------------------------------------------------------------- CSV and NPY

namespace {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
};

Table read_csv(const fs::path& file, bool has_header, const std::string& dataset) {
  std::istringstream in(read_text_file(need_file(file, dataset), fmt::format("dataset '{}'", dataset)));
  Table t;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (has_header && t.header.empty()) {
      t.header = cells;
      continue;
    }
    std::vector<double> row;
    for (size_t c = 0; c < cells.size(); ++c) {
      char* end = nullptr;
      double v = std::strtod(cells[c].c_str(), &end);
      while (end && (*end == ' ' || *end == '\t')) ++end;
      if (end == cells[c].c_str() || *end != '\0')
        throw DataError(fmt::format("dataset '{}': '{}' line {}, column {}: expected a number, found '{}'{}", dataset,
                                    file.string(), line_no, c + 1, cells[c],
                                    has_header ? "" : " (if the file has a header row, set header: true)"));
      row.push_back(v);
    }
    if (!t.rows.empty() && row.size() != t.rows.front().size())
      throw DataError(fmt::format("dataset '{}': '{}' line {} has {} columns, the first data row has {}", dataset,
                                  file.string(), line_no, row.size(), t.rows.front().size()));
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) throw DataError(fmt::format("dataset '{}': '{}' has no data rows", dataset, file.string()));
  if (t.header.empty())
    for (size_t c = 0; c < t.rows.front().size(); ++c) t.header.push_back(fmt::format("x{}", c));
  return t;
}

// NPY format 1.0-3.0, little-endian float32/float64/int32/int64/uint8, C order.
at::Tensor read_npy(const fs::path& file, const std::string& dataset) {
  std::ifstream in(need_file(file, dataset), std::ios::binary);
  const detail::ArrayHeader h =
      detail::read_npy_header(in, file_bytes(file, dataset), fmt::format("dataset '{}': '{}'", dataset, file.string()));
  static const std::map<std::string, at::ScalarType> types = {
      {"<f4", at::kFloat}, {"<f8", at::kDouble}, {"<i4", at::kInt}, {"<i8", at::kLong}, {"|u1", at::kByte}, {"|b1", at::kBool}};
  at::Tensor t = at::empty(h.shape, types.at(h.dtype));
  const auto bytes = static_cast<std::streamsize>(h.data_bytes);
  in.read(static_cast<char*>(t.data_ptr()), bytes);
  if (in.gcount() != bytes)
    throw DataError(fmt::format("dataset '{}': '{}' is truncated ({} of {} bytes of data)", dataset, file.string(),
                                in.gcount(), bytes));
  return t;
}

// Splits x, y into train and test by a seeded permutation; standardises features if asked.
std::shared_ptr<TensorDataset> split_table(const std::string& name, at::Tensor x, at::Tensor y, const SplitOptions& split,
                                           bool classification) {
  auto d = std::make_shared<TensorDataset>();
  d->name = name;
  const double fraction = split.test_fraction;
  const std::int64_t n = x.size(0);
  const std::int64_t n_test = static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(n)));
  at::Generator gen = at::detail::createCPUGenerator(static_cast<std::uint64_t>(split.split_seed));
  at::Tensor perm = at::randperm(n, gen, at::kLong);
  at::Tensor test_idx = perm.slice(0, 0, n_test), train_idx = perm.slice(0, n_test, n);
  d->train_x = x.index_select(0, train_idx);
  d->train_y = y.index_select(0, train_idx);
  if (n_test > 0) {
    d->test_x = x.index_select(0, test_idx);
    d->test_y = y.index_select(0, test_idx);
  }
  if (split.standardize) {
    at::Tensor mean = d->train_x.mean(0), std = d->train_x.std(0).clamp_min(1e-12);
    d->train_x = (d->train_x - mean) / std;
    if (n_test > 0) d->test_x = (d->test_x - mean) / std;
  }
  if (classification) d->num_classes = y.numel() ? y.max().item<std::int64_t>() + 1 : 0;
  return d;
}

}  // namespace

std::shared_ptr<Dataset> load_table(const std::string& name, const fs::path& file, bool header, int target_column,
                                    bool classification, const SplitOptions& split) {
  Table t = read_csv(file, header, name);
  const auto cols = static_cast<int>(t.rows.front().size());
  const int target = target_column < 0 ? cols + target_column : target_column;
  if (target < 0 || target >= cols)
    throw DataError(fmt::format("dataset '{}': target column {} does not exist in '{}' ({} columns)", name,
                                target_column, file.string(), cols));
  at::Tensor x = at::empty({static_cast<std::int64_t>(t.rows.size()), cols - 1}, at::kFloat);
  at::Tensor y = at::empty({static_cast<std::int64_t>(t.rows.size())}, classification ? at::kLong : at::kFloat);
  auto xa = x.accessor<float, 2>();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    for (int c = 0, k = 0; c < cols; ++c) {
      if (c == target) continue;
      xa[static_cast<std::int64_t>(r)][k++] = static_cast<float>(t.rows[r][c]);
    }
    if (classification) {
      double v = t.rows[r][target];
      if (v < 0 || v != std::floor(v))
        throw DataError(fmt::format("dataset '{}': '{}' row {}: a class label must be a non-negative integer, found {}; "
                                    "set task: regression for a numeric target",
                                    name, file.string(), r + 1, v));
      y[static_cast<std::int64_t>(r)] = static_cast<std::int64_t>(v);
    } else {
      y[static_cast<std::int64_t>(r)] = static_cast<float>(t.rows[r][target]);
    }
  }
  auto d = split_table(name, x, y, split, classification);
  for (int c = 0; c < cols; ++c)
    if (c != target) d->feature_names.push_back(t.header[static_cast<size_t>(c)]);
  return d;
}

std::shared_ptr<Dataset> load_npy_set(const fs::path& x_file, const fs::path& y_file, bool classification,
                                      const SplitOptions& split) {
  at::Tensor x = read_npy(x_file, "npy").to(at::kFloat);
  at::Tensor y = read_npy(y_file, "npy");
  if (y.size(0) != x.size(0))
    throw DataError(fmt::format("dataset 'npy': x has {} rows but y has {}", x.size(0), y.size(0)));
  y = classification ? y.to(at::kLong) : y.to(at::kFloat);
  return split_table("npy", x, y, split, classification);
}

}  // namespace nexp
