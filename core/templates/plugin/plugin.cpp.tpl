// @SLUG@: <the paper's title>. Registers the plugin's components with nexp.
#include <nexp/nexp.hpp>

#include "@SLUG@.hpp"

namespace {

void register_components(nexp::Registrar& r) {
  r.metric("mse", nexp::Direction::Minimize, "mean squared error of the fit on the training data");
  r.metric("weight_error", nexp::Direction::Minimize, "Euclidean distance between fitted and true weights");

  r.dataset<@SLUG@::LinearOptions>("@SLUG@.linear", "synthetic linear regression data y = X w* + noise",
                                    @SLUG@::make_linear);

  r.method("@SLUG@.fit", "least squares by full-batch gradient descent", @SLUG@::run_fit)
      .options<@SLUG@::FitOptions>()
      .produces({"mse", "weight_error"})
      .accepts({"@SLUG@.*"})
      .supports_resume();
}

}  // namespace

NEXP_PLUGIN(@SLUG@, "0.1.0", "<one line: the paper's claim>", "<authors, title, venue, year>", register_components)
