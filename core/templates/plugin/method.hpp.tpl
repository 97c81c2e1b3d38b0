#pragma once
// @SLUG@: least squares by gradient descent, the starting point of a new nexp plugin.
// Replace it with your method; keep the shape: math in functions that tests can call, the nexp glue
// (parameters, metrics, checkpoints) in run_fit().
#include <ATen/ATen.h>

#include <nexp/nexp.hpp>

namespace @SLUG@ {

// Options are declared once, as a struct: the schema, `nexp describe`, validation and the values the
// code reads all come from declare().
struct LinearOptions {
  std::int64_t n = 200;
  std::int64_t d = 5;
  double noise = 0.1;
  static void declare(nexp::Options<LinearOptions>& o) {
    o.add("n", &LinearOptions::n, "number of samples").min(1);
    o.add("d", &LinearOptions::d, "number of features").min(1);
    o.add("noise", &LinearOptions::noise, "standard deviation of the label noise").min(0);
  }
};

struct FitOptions {
  std::int64_t steps = 200;
  double lr = 0.1;
  std::int64_t checkpoint_every = 20;
  // To test stopping and resuming at an exact point (the run waits for artifacts/release):
  std::int64_t hold_at = 0;
  std::string hold_in = "step";
  bool hold_on_stop = false;
  static void declare(nexp::Options<FitOptions>& o) {
    o.add("steps", &FitOptions::steps, "gradient steps").min(1);
    o.add("lr", &FitOptions::lr, "step size").range(1e-6, 1);
    o.add("checkpoint_every", &FitOptions::checkpoint_every, "steps between metrics and checkpoints").min(1);
    o.add("hold_at", &FitOptions::hold_at, "wait at this step until artifacts/release exists (0: never)").min(0);
    o.add("hold_in", &FitOptions::hold_in, "where to wait: after the step, or inside its checkpoint's commit")
        .choices({"step", "checkpoint"});
    o.add("hold_on_stop", &FitOptions::hold_on_stop, "also wait when stopping, after the last checkpoint");
  }
};

// Synthetic regression data: y = X w* + noise, X ~ N(0, 1).
struct LinearData : nexp::Dataset {
  at::Tensor x, y, w_true;  // [n, d], [n], [d]
  std::string describe() const override;
};
std::shared_ptr<nexp::Dataset> make_linear(const LinearOptions& o, nexp::RunContext& ctx);

// One full-batch gradient step on the mean squared error (1/n) ||X w - y||^2.
at::Tensor gradient_step(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w, double lr);
double mse(const at::Tensor& x, const at::Tensor& y, const at::Tensor& w);

void run_fit(nexp::RunContext& ctx);

}  // namespace @SLUG@
