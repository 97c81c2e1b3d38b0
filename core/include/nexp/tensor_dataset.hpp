#pragma once
// The tensor data sets core ships (Fashion-MNIST, MNIST, the scikit-learn tables, CSV and NPY files).
// Built by libnexp_torch.so: a plugin that reads them declares TORCH in nexp_add_plugin().
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nexp/dataset.hpp"
#include "nexp/export.hpp"

namespace nexp {

// x: float32 [N, ...features] (images [N, 1, H, W] in [0, 1] unless normalised); y: int64 class
// indices [N] for classification (num_classes > 0) or float32 [N] / [N, T] targets for regression.
// test_x and test_y are undefined tensors when the source has no test split.
class NEXP_API TensorDataset : public Dataset {
 public:
  ~TensorDataset() override;
  std::string describe() const override;

  std::string name;
  at::Tensor train_x, train_y, test_x, test_y;
  std::int64_t num_classes = 0;
  std::vector<std::string> feature_names;  // tabular sets
  std::vector<std::string> class_names;
};

}  // namespace nexp
