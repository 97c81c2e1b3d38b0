#pragma once
// The experiments of approx_pc: its options, the teacher data set, and the two methods.
//   approx_pc.teacher   Gaussian inputs labelled by a random tanh teacher network
//   approx_pc.compare   one batch: PC run to convergence (double) as the reference; each rule's states and
//                       updates measured against it (deviation.csv: every rule and K in one table)
//   approx_pc.train     trains the MLP with one rule: accuracy against wall time and layer passes
#include <nexp/nexp.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inference.hpp"
#include "network.hpp"

namespace approx_pc {

enum class Rule { Bp, Pc, Dfc, ApproxPc };
const char* rule_name(Rule r);

// The network's nonlinearity and how each rule infers: shared by compare and train.
struct RuleOptions {
  Activation activation = Activation::Tanh;
  double gain = 1.0;         // f(a) = tanh(gain a)
  double init_scale = 1.0;   // W_l ~ N(0, init_scale^2 / n_{l-1})
  Rule rule = Rule::ApproxPc;
  double nudge = 0.1;        // y* = yhat + nudge (y - yhat)
  bool clamp = true;         // PC: x_L = y*; control: alpha = 0
  double beta = 1.0;         // output precision when not clamped; control leak alpha = 1/beta
  int pc_steps = 20;         // T
  double pc_step = 0.1;      // gamma
  double pc_tol = 0;         // early stop of PC's inference (relative gradient norm); 0: all T steps
  int subgoals = 4;          // K (dfc: 1)
  int refine = 0;            // Approx PC: re-linearisations at the final goal
  double refine_tol = 1e-9;
  Controller controller = Controller::Solve;
  int max_iters = 10;        // controller iterations per subgoal
  double control_tol = 1e-9;
  double dt = 0.1;           // Euler step of the `iterate` controller
  static void declare(nexp::Options<RuleOptions>& o);
  // Refuses values that cannot be meant (nudge outside (0, 1]) before any work starts.
  void check() const;
  PcSettings pc() const;
  ControlSettings control(Rule r) const;  // r = Dfc forces K = 1, R = 0
};

struct CompareOptions : RuleOptions {
  int depth = 2;             // hidden layers
  std::int64_t width = 64;
  std::int64_t batch = 32;
  int pretrain_steps = 0;    // BP steps (SGD, batch `batch`) before the comparison
  double pretrain_lr = 0.05;
  std::vector<std::int64_t> subgoals_grid = {1, 2, 4, 8, 16};  // Approx PC rows of deviation.csv
  std::vector<double> nudge_grid;                              // nudges of deviation.csv (empty: nudge)
  int reference_steps = 2000;    // PC reference: descent steps (the warm-up) ...
  int reference_newton = 100;    // ... then at most this many Newton steps ...
  double reference_tol = 1e-12;  // ... until ||dF/dx|| <= tol ||dF/dx||_0
  double reference_step = 0.1;
  double target_rel_err = 1e-3;  // passes_to_target: first cost at which state_rel_err <= this
  static void declare(nexp::Options<CompareOptions>& o);
};

struct TrainOptions : RuleOptions {
  std::vector<std::int64_t> hidden = {256, 256};
  double lr = 0.05;
  int epochs = 2;
  std::int64_t batch_size = 64;
  std::int64_t max_steps = 0;          // 0: all epochs
  std::int64_t eval_every = 100;       // steps between test evaluations
  std::int64_t cos_every = 50;         // steps between measurements of the update's cosine with BP
  double target_accuracy = 0.95;       // seconds_to_target
  std::int64_t checkpoint_every = 0;   // 0: none
  bool use_double = false;
  static void declare(nexp::Options<TrainOptions>& o);
};

struct TeacherOptions {
  std::int64_t train_size = 2048;
  std::int64_t test_size = 1024;
  std::int64_t input_dim = 20;
  std::vector<std::int64_t> hidden = {32};
  std::int64_t classes = 5;
  double gain = 2.0;
  double label_noise = 0.0;
  std::int64_t teacher_seed = 0;
  static void declare(nexp::Options<TeacherOptions>& o);
};

std::shared_ptr<nexp::Dataset> make_teacher(const TeacherOptions& o, nexp::RunContext& ctx);

// One batch's rule applied to `net`: the settled states (bp: the feedforward ones) and the update in the
// descent direction, scaled to the same units as backprop's (divided by nudge).
struct Step {
  Settled settled;
  Updates update;
};
Step rule_step(Rule rule, const RuleOptions& o, const Mlp& net, const std::vector<at::Tensor>& ff,
               const at::Tensor& labels_onehot);

void run_compare(nexp::RunContext& ctx);
void run_train(nexp::RunContext& ctx);

}  // namespace approx_pc
