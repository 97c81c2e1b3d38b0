// approx_pc: predictive coding trained through one central feedback controller.
// Registers the plugin's metrics, its teacher data set and its methods with nexp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  r.metric("state_rel_err", Direction::Minimize,
           "||v - x*|| / ||x* - x^-||: distance of the rule's settled states from PC's converged equilibrium x*");
  r.metric("update_rel_err", Direction::Minimize, "relative distance of the rule's weight update from PC's");
  r.metric("update_cos_pc", Direction::Maximize, "cosine of the rule's weight update with converged PC's");
  r.metric("update_cos_bp", Direction::Maximize, "cosine of the rule's weight update with minus backprop's gradient");
  r.metric("layer_passes", Direction::Minimize, "layer passes (one layer's matrix product over the batch = 1)");
  r.metric("passes_to_target", Direction::Minimize,
           "layer passes until the state is within params.target_rel_err of PC's equilibrium (train: until the "
           "target accuracy); -1 if never");
  r.metric("pc_passes_to_target", Direction::Minimize, "the same for PC's own inference");
  r.metric("speedup_vs_pc", Direction::Maximize, "PC's passes to the target over the rule's; -1 if either never");
  r.metric("reference_residual", Direction::Minimize, "PC reference: final ||dF/dx|| over the initial");
  r.metric("reference_steps", Direction::None, "PC reference: descent steps taken");
  r.metric("layer_passes_per_step", Direction::Minimize, "layer passes per training step (forward, inference, update)");
  r.metric("ms_per_step", Direction::Minimize, "wall milliseconds per training step").measures_time();
  r.metric("seconds_to_target", Direction::Minimize,
           "training wall seconds until the test accuracy reaches params.target_accuracy; -1 if never")
      .measures_time();
  r.metric("wall_seconds", Direction::None, "training wall seconds so far").measures_time();
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<approx_pc::TeacherOptions>("approx_pc.teacher",
                                       "Gaussian inputs labelled by the argmax of a random tanh teacher MLP",
                                       approx_pc::make_teacher);
  r.method("approx_pc.compare",
           "one batch: PC run to convergence as the reference; BP, PC, DFC and Approx PC (each K) measured against it",
           approx_pc::run_compare)
      .options<approx_pc::CompareOptions>()
      .produces({"state_rel_err", "update_rel_err", "update_cos_pc", "update_cos_bp", "layer_passes", "passes_to_target",
                 "pc_passes_to_target", "speedup_vs_pc", "reference_residual", "reference_steps"})
      .accepts({"approx_pc.teacher", "digits", "mnist", "fashion_mnist", "iris", "wine"});
  r.method("approx_pc.train", "train an MLP with backprop, PC, DFC or Approx PC (squared error, SGD)",
           approx_pc::run_train)
      .options<approx_pc::TrainOptions>()
      .produces({"test_accuracy", "update_cos_bp", "layer_passes_per_step", "ms_per_step", "seconds_to_target",
                 "passes_to_target", "wall_seconds", "layer_passes"})
      .accepts({"approx_pc.teacher", "digits", "mnist", "fashion_mnist", "iris", "wine"})
      .supports_resume();
}

}  // namespace

NEXP_PLUGIN(approx_pc, "0.1.0",
            "predictive coding (PC), deep feedback control (DFC) and Approx PC: a central controller reaching PC's "
            "equilibrium through subgoals",
            "Approx PC: predictive coding via feedback control (NeurIPS 2026; authors not named in the abstract nexp "
            "implements)",
            register_components)
