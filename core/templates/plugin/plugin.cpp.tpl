// @SLUG@: <the paper's title>. Registers the plugin's components with nexp.
#include <nexp/nexp.hpp>

#include "@SLUG@.hpp"

namespace {

void register_components(nexp::Registrar& r) {
  r.metric("mse", nexp::Direction::Minimize, "mean squared error of the fit on the training data");
  r.metric("weight_error", nexp::Direction::Minimize, "Euclidean distance between fitted and true weights");

  r.dataset("@SLUG@.linear", "synthetic linear regression data y = X w* + noise", @SLUG@::make_linear)
      .param(nexp::Param::integer("n", 200, "number of samples").min(1))
      .param(nexp::Param::integer("d", 5, "number of features").min(1))
      .param(nexp::Param::real("noise", 0.1, "standard deviation of the label noise").min(0));

  r.method("@SLUG@.fit", "least squares by full-batch gradient descent", @SLUG@::run_fit)
      .param(nexp::Param::integer("steps", 200, "gradient steps").min(1))
      .param(nexp::Param::real("lr", 0.1, "step size").range(1e-6, 1))
      .param(nexp::Param::integer("checkpoint_every", 20, "steps between metrics and checkpoints").min(1))
      // To test stopping and resuming at an exact point (the run waits for artifacts/release):
      .param(nexp::Param::integer("hold_at", 0, "wait at this step until artifacts/release exists (0: never)").min(0))
      .param(nexp::Param::string("hold_in", "step", "where to wait: after the step, or inside its checkpoint's commit")
                 .choices({"step", "checkpoint"}))
      .param(nexp::Param::boolean("hold_on_stop", false, "also wait when stopping, after the last checkpoint"))
      .produces({"mse", "weight_error"})
      .accepts({"@SLUG@.*"})
      .supports_resume();
}

}  // namespace

NEXP_PLUGIN(@SLUG@, "0.1.0", "<one line: the paper's claim>", "<authors, title, venue, year>", register_components)
