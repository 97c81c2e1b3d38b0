#pragma once
// CB-PbRL: the constrained bi-level problem and its double loop, and the baselines built from the
// same pieces.
//
// Parameters x = (th, ph): r_th = th, c_ph = softplus(ph) on the grid's cells, 0 on the absorbing
// state (`mask`). Bi-level problem (a reading of the abstract; README "formulation"):
//   min_x F(x, lam*(x))                       upper level: (10) of preferences.hpp on the queries
//   (pi*, lam*)(x) = saddle point of max_pi min_{lam>=0} J_{r_th}(pi) + alpha H(pi) - lam (J_{c_ph}(pi) - d)
// Inner loop, warm-started: N > 0 steps of one soft backup (2), the softmax (3), one dual step (4);
// N = 0: solved to convergence (solve_lower). Outer step: fresh queries from the learner's pi, the
// expert and random policies; F on every pair labelled so far (`replay`) or on the fresh ones; then
//   grad F = dF/dx + dF/dlam * dlam*/dx                                                          (11)
// where, when the constraint is active (lam* > 0), implicit differentiation of J_c(pi*(x, lam), c) = d:
//   dlam*/dx = -(dJ_c/dx) / (dJ_c/dlam)                                                             (12)
// and dJ_c/du (u = r - lam c) from the soft Bellman fixed point (2): with Pi the policy's (S x SA)
// averaging, g_Q(s,a) = d_pi(s) pi(a|s) A_c(s,a) / alpha the derivative of J_c in Q through (3),
//   dQ = (I - gamma P Pi)^{-1} du  =>  dJ_c/du(s) = sum_a g_Q(s,a) + w(s),
//   w = (I - gamma P_pi)^{-T} gamma P^T g_Q                                                          (13)
// dJ_c/dr = dJ_c/du, dJ_c/dlam = -c . dJ_c/du, dJ_c/dc = d_pi - lam dJ_c/du. `naive` drops the second
// term of (11). With the inner loop not converged (N finite) the formulas are evaluated at the inner
// iterate.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nexp/random.hpp>

#include "cmdp.hpp"
#include "preferences.hpp"
#include "world.hpp"

namespace cb_pbrl {

// (13) at a policy pi for cost c and multiplier lam.
struct CostSensitivity {
  VectorXd dr, dc;
  double dlam = 0;
};
CostSensitivity cost_sensitivity(const Cmdp& m, const MatrixXd& pi, const VectorXd& c, double lam, double alpha);

// The learner's parameters and the lower level's state.
struct Params {
  VectorXd th, ph, mask;
  VectorXd r() const { return th.cwiseProduct(mask); }
  VectorXd c() const;  // softplus(ph) on the mask
};

// (11) with (12): F, and its gradient in th and ph.
struct HyperGradient {
  double F = 0;
  VectorXd dth, dph;
  double dlam_dF = 0;  // dF/dlam
  bool active = false;
};
HyperGradient hypergradient(const Cmdp& m, const Params& x, const MatrixXd& pi, double lam,
                            const std::vector<Query>& queries, Coupling coupling, const LabelModel& model, double alpha,
                            bool implicit);

enum class Mode { Bilevel, SafeRlhf, Unconstrained, TwoStage };

struct LearnerConfig {
  Mode mode = Mode::Bilevel;
  bool implicit = true;
  int outer_steps = 200, queries_per_step = 8, inner_steps = 0;  // inner_steps 0: solved to convergence
  double alpha = 0.01, lr = 0.05, lam_lr = 0.5;
  bool adam = true;
  bool replay = true;  // the upper objective on every query labelled so far, not only the fresh ones
  LabelModel labels;
  int segment_min = 10, segment_max = 20;
  double mix_learner = 0.4, mix_expert = 0.3, mix_random = 0.3;
  int heldout = 500;
  bool track_heldout_gradient = false;  // hypergrad_sq_avg: the held-out objective's gradient at every iterate
  double budget_scale = 1.0;            // the learner's budget is budget_scale * d
};

struct LearnerResult {
  double normalized_return = 0, ret = 0, cost = 0, violation = 0, budget = 0;
  double pref_accuracy_better = 0, pref_accuracy_safer = 0, cost_auc = 0;
  double queries = 0, hypergrad_sq_avg = 0, lam = 0;
  Params x;
};

// Adam (Kingma and Ba 2015) on one parameter vector.
struct Adam {
  VectorXd m, v;
  int t = 0;
  void step(VectorXd& x, const VectorXd& g, double lr);
};

// The double loop as a resumable object: step() runs one outer iteration (N inner steps, fresh queries
// from the stream ("queries", k), one outer step); save()/load() write and read the whole state, so
// that a run stopped after k steps and loaded into a fresh Trainer continues bit for bit.
class Trainer {
 public:
  Trainer(const Grid& g, const LearnerConfig& cfg, std::uint64_t seed);
  std::map<std::string, double> step();  // upper_loss, lam, hypergrad_sq of this step
  int steps_done() const { return k_; }
  LearnerResult finish() const;  // the learned (r, c) deployed at d, and the metrics
  void save(const std::filesystem::path& file) const;
  void load(const std::filesystem::path& file);  // nexp::DataError for a foreign or truncated file

 private:
  const Grid& g_;
  LearnerConfig cfg_;
  std::uint64_t seed_;
  double d_;
  Params x_;
  MatrixXd Q_, pi_;
  double lam_ = 0, sq_sum_ = 0;
  int k_ = 0;
  Adam adam_th_, adam_ph_;
  std::vector<Query> heldout_, seen_;  // seen_: the replayed pairs, or two-stage's offline set
};

// Trains on `grid` with streams derived from `seed`; `step_log` (may be empty) gets (step, values).
using StepLog = std::function<void(int, const std::map<std::string, double>&)>;
LearnerResult train(const Grid& grid, const LearnerConfig& cfg, std::uint64_t seed, const StepLog& step_log = {});

// The policy that the learned (r, c) give at budget d (exact lower level), and its true return and cost.
struct Deployment {
  double normalized_return = 0, ret = 0, cost = 0, violation = 0, lam = 0;
};
Deployment deploy(const Grid& grid, const Params& x, double d, double alpha, bool constrained);
// The oracle at budget d (occupancy LP) and the normalisation (J_r - J_r(random)) / (J_r(oracle) - J_r(random)).
double oracle_return(const Grid& grid, double d);

}  // namespace cb_pbrl
