#pragma once
// Inference of the three energy-/control-based rules on one batch: predictive coding (PC), deep feedback
// control (DFC) and Approx PC. Each returns the settled states and the per-layer errors whose local
// update (Mlp::local_update) is the rule's weight change.
//
// Algorithm index
//   PC (Whittington & Bogacz 2017)          pc_inference      eps_l = x_l - mu_l(x_{l-1}),
//       F = sum_l 1/2 ||eps_l||^2 + beta/2 ||x_L - y*||^2 (clamp: x_L = y*, the beta -> inf limit);
//       gradient descent x_l <- x_l - gamma dF/dx_l from the feedforward state, for T steps or until
//       ||dF/dx|| <= tol ||dF/dx at start||:  dF/dx_l = eps_l - f'(x_l) . W_{l+1}^T eps_{l+1}  (l < L),
//       dF/dx_L = eps_L + beta (x_L - y*). Errors move one layer per step.
//   DFC (Meulemans et al. 2021), matching form   control(subgoals = 1)
//       v_l = W_l phi(v_{l-1}) + b_l + Q_l u,  Q_l = J_l^T frozen at the feedforward state,
//       leaky integral control  du/dt = e - alpha u,  e = y* - v_L,  alpha = 1/beta (0 when clamped).
//       Steady state: y* - v_L(u) = alpha u; linearised u = (J Q + alpha I)^-1 (y* - yhat).
//       controller `iterate`: Euler steps u <- u + dt (e - alpha u) with the network at its
//       instantaneous state (the tau_v << tau_u limit); `solve`: chord-Newton steps
//       u <- u + (J Q + alpha I)^-1 (y* - v_L(u) - alpha u) with the C x C matrix of the linearisation.
//       DFC's error at layer l is e_l = v_l - mu_l(v_{l-1}) = Q_l u, so its update is the local one.
//   Approx PC (as read here; the paper is not public)   control(subgoals = K, refine = R)
//       subgoals y*_k = yhat + (k/K)(y* - yhat), k = 1..K; at each, Q_l = J_l(v)^T is re-linearised at the
//       state the previous subgoal settled in and the same controller reaches y*_k (warm-started u).
//       `refine` re-linearises at the final goal until the state moves by less than refine_tol.
//       K = 1, R = 0 is DFC. At a self-consistent point (Q = J(v)^T at the settled v):
//       e_L = Q_L u = u = beta (y* - v_L) and e_l = J_l^T u = f'(v_l) . W_{l+1}^T J_{l+1}^T u
//       = f'(v_l) . W_{l+1}^T e_{l+1}: PC's equilibrium equations dF/dx = 0, so PC's fixed point.
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "network.hpp"

namespace approx_pc {

// The settled state of a rule: states v_0..v_L, errors e_1..e_L (index 0 unused), cost and how it ended.
struct Settled {
  std::vector<at::Tensor> v, e;
  Cost cost;
  int iterations = 0;       // PC: descent steps; control: controller iterations over all subgoals
  double residual = 0;      // PC: final ||dF/dx|| / initial; control: final ||r|| / ||y* - yhat||
  double gradient_norm = 0; // PC: final ||dF/dx||
  bool converged = false;
};

// Called after each PC step or each settled subgoal / refinement with the states and the cost so far.
using Observer = std::function<void(const std::vector<at::Tensor>& v, double passes)>;

struct PcSettings {
  double beta = 1.0;   // output precision (unused when clamped)
  bool clamp = true;   // x_L = y*
  double step = 0.1;   // gamma
  int max_steps = 20;  // T
  double tol = 0;      // stop when ||dF/dx|| <= tol ||dF/dx||_0 (0: run all T steps)
};

// Predictive-coding energy F at the states x (with x_0 the input).
double pc_energy(const Mlp& net, const std::vector<at::Tensor>& x, const at::Tensor& y_star, const PcSettings& s);
// PC's inference from the feedforward states `ff` (Mlp::forward of the input).
Settled pc_inference(const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& y_star,
                     const PcSettings& s, const Observer& observe = {});

// PC's equilibrium to high accuracy, for reference: pc_inference (gradient descent, the warm-up that
// selects the basin: s.max_steps steps) and then Newton's method on F with the exact per-sample Hessian
// (block tridiagonal: H_ll = I + diag(f') W_{l+1}^T W_{l+1} diag(f') - diag(f'' . W_{l+1}^T eps_{l+1}),
// H_{l,l+1} = -diag(f'(x_l)) W_{l+1}^T), each step backtracked per sample until F decreases, until
// ||dF/dx|| <= s.tol ||dF/dx||_0. Plain gradient descent needs 10^5+ steps on deep gain-3 nets.
Settled pc_equilibrium(const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& y_star,
                       const PcSettings& s, int newton_iters = 100);

enum class Controller { Iterate, Solve };

struct ControlSettings {
  double alpha = 0;            // leak, 1/beta; 0 when clamped
  Controller mode = Controller::Solve;
  int subgoals = 1;            // K
  int refine = 0;              // R: re-linearisations at the final goal
  double refine_tol = 1e-12;   // stop refining when ||dv|| <= refine_tol ||v - ff||
  int max_iters = 50;          // controller iterations per subgoal
  double tol = 1e-12;          // per subgoal: ||y*_k - v_L - alpha u|| <= tol ||y* - yhat||
  double dt = 0.1;             // Euler step (iterate)
};

// DFC (subgoals = 1, refine = 0) and Approx PC from the feedforward states `ff`.
Settled control(const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& y_star,
                const ControlSettings& s, const Observer& observe = {});

// ||v - ref|| / ||ref - ff|| over layers 1..L: a state's distance to a reference equilibrium, relative to
// how far that equilibrium is from the feedforward pass.
double state_relative_error(const std::vector<at::Tensor>& v, const std::vector<at::Tensor>& ref,
                            const std::vector<at::Tensor>& ff);

}  // namespace approx_pc
