// htaf: a heavy-tailed smooth step (HTAF) to train deep Heaviside, spiking and binary networks, and
// implicit concept bottlenecks (ICBM). Registers the plugin's data set, metrics and methods with nexp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"
#include "shapes.hpp"

namespace {

using nexp::Direction;

void register_components(nexp::Registrar& r) {
  r.dataset<htaf::ShapesOptions>(
      "htaf.shapes",
      "28x28 images of 8 binary concepts (bars, ring, dot, corner, diagonals, box; jittered, noisy); the class "
      "is a fixed random function of the concept code",
      htaf::make_shapes);

  r.metric("trained", Direction::Maximize, "1 when the test accuracy exceeds 50%, else 0");
  r.metric("grad_ratio", Direction::None,
           "median over training steps of ||dL/dW_first|| / ||dL/dW_last|| (first layer against the head)");
  r.metric("firing_rate", Direction::None, "share of hidden LIF neurons spiking per time step (test split)");
  r.metric("test_accuracy_soft", Direction::Maximize, "test accuracy with the smooth units h instead of H");
  r.metric("discretization_gap", Direction::Minimize, "test_accuracy_soft - test_accuracy (hard units)");
  r.metric("binary_share", Direction::Maximize, "share of bottleneck outputs h on training images within 0.05 of 0 or 1");
  r.metric("concept_auc", Direction::Maximize,
           "htaf.shapes: mean over the 8 concepts of the best bottleneck unit's ROC AUC (max(AUC, 1 - AUC))");
  for (const std::string name : {"htaf", "ste", "sigmoid4", "sigmoid10", "sigmoid_matched", "arctan", "fast_sigmoid",
                                 "triangle", "approxsign"})
    r.metric(name + "_band_mass", Direction::None,
             "mass of " + name + "'s h' within the band |x| < delta that holds 90% of the slope-matched logistic's");
  r.metric("htaf_ratio5", Direction::None, "h'(5) / s'(5) of HTAF against the logistic with the same h'(0)");
  r.metric("htaf_total_mass", Direction::None, "integral of HTAF's h' over [-60, 60] (1)");
  r.metric("htaf_band_mass_min", Direction::None, "smallest HTAF band mass over a = 0.25 .. 32");
  r.metric("htaf_band_mass_max", Direction::None, "largest HTAF band mass over a = 0.25 .. 32");

  const std::vector<std::string> data = {"mnist", "fashion_mnist", "digits", "htaf.shapes"};
  r.method("htaf.dhn", "deep Heaviside MLP trained through a step approximation (depth x activation x mode)",
           htaf::run_dhn)
      .options<htaf::DhnOptions>()
      .produces({"test_accuracy", "trained", "grad_ratio", "train_loss"})
      .accepts(data);
  r.method("htaf.snn", "LIF spiking MLP, direct coding, BPTT through a surrogate gradient", htaf::run_snn)
      .options<htaf::SnnOptions>()
      .produces({"test_accuracy", "firing_rate", "grad_ratio", "train_loss"})
      .accepts(data);
  r.method("htaf.bnn", "binary MLP: sign units and binary weights with latent reals", htaf::run_bnn)
      .options<htaf::BnnOptions>()
      .produces({"test_accuracy", "grad_ratio", "train_loss"})
      .accepts(data);
  r.method("htaf.icbm", "implicit concept bottleneck: CNN -> m step units -> linear head, H at test",
           htaf::run_icbm)
      .options<htaf::IcbmOptions>()
      .produces({"test_accuracy", "test_accuracy_soft", "discretization_gap", "binary_share", "concept_auc",
                 "grad_ratio", "train_loss"})
      .accepts({"mnist", "fashion_mnist", "htaf.shapes"});
  r.method("htaf.profile", "gradient mass and tail of every step approximation (profile.csv)", htaf::run_profile)
      .options<htaf::ProfileOptions>()
      .produces({"htaf_band_mass", "arctan_band_mass", "sigmoid_matched_band_mass", "htaf_ratio5", "htaf_total_mass",
                 "htaf_band_mass_min", "htaf_band_mass_max"});
}

}  // namespace

NEXP_PLUGIN(htaf, "0.1.0",
            "HTAF, a sigmoid-tanh composite approximating the Heaviside step with heavy gradient tails, trains deep "
            "Heaviside, spiking and binary networks; ICBM discretises a CNN's features",
            "Heavy-Tailed Activation Function and Implicit Concept Bottleneck Models (Park, Kim, Lee, Park, Kong, "
            "Kim; arXiv 2605.11558)",
            register_components)
