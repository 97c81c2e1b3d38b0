#pragma once
// What libnexp_torch.so's runtime (runtime.cpp) calls in its other files.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nexp/comm.hpp"
#include "nexp/dataset.hpp"
#include "nexp/runtime/torch_runtime.hpp"

namespace nexp {

// comm.cpp
std::unique_ptr<Comm> make_torch_comm(const CommSetup& setup);

// datasets.cpp
std::shared_ptr<Dataset> load_idx_set(const std::string& name, const std::filesystem::path& dir, const ImageOptions& s,
                                      std::vector<std::string> class_names);
std::shared_ptr<Dataset> load_table(const std::string& name, const std::filesystem::path& file, bool header,
                                    int target_column, bool classification, const SplitOptions& split);
std::shared_ptr<Dataset> load_npy_set(const std::filesystem::path& x_file, const std::filesystem::path& y_file,
                                      bool classification, const SplitOptions& split);

// predictions.cpp: core's prediction metric `name` (accuracy, nll, ece, brier); throws Error for another.
double core_prediction_metric(const std::string& name, const at::Tensor& probs, const at::Tensor& labels);

}  // namespace nexp
