// PC inference, DFC and Approx PC's central controller (inference.hpp).
#include "inference.hpp"

#include <cmath>

namespace approx_pc {

namespace {

double squared_norm(const at::Tensor& t) {
  const double n = t.norm().item<double>();
  return n * n;
}

// eps_1..eps_L at the states x; mu_1 = ff[1] is fixed because the input is clamped.
std::vector<at::Tensor> pc_errors(const Mlp& net, const std::vector<at::Tensor>& x, const at::Tensor& mu1, Cost* cost) {
  std::vector<at::Tensor> eps(x.size());
  eps[1] = x[1] - mu1;
  for (int l = 2; l <= net.depth(); ++l) eps[l] = x[l] - net.predict(l, x[l - 1], cost);
  return eps;
}

}  // namespace

double pc_energy(const Mlp& net, const std::vector<at::Tensor>& x, const at::Tensor& y_star, const PcSettings& s) {
  const std::vector<at::Tensor> eps = pc_errors(net, x, net.predict(1, x[0]), nullptr);
  double energy = 0;
  for (int l = 1; l <= net.depth(); ++l) energy += 0.5 * squared_norm(eps[l]);
  if (!s.clamp) energy += 0.5 * s.beta * squared_norm(x[net.depth()] - y_star);
  return energy;
}

Settled pc_inference(const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& y_star,
                     const PcSettings& s, const Observer& observe) {
  const int L = net.depth();
  Settled out;
  out.v.resize(ff.size());
  for (std::size_t l = 0; l < ff.size(); ++l) out.v[l] = ff[l].clone();
  if (s.clamp) out.v[L] = y_star.clone();
  auto& x = out.v;
  const int last_free = s.clamp ? L - 1 : L;
  double g0 = 0;
  for (int t = 0;; ++t) {
    out.e = pc_errors(net, x, ff[1], &out.cost);
    // dF/dx_l = eps_l - f'(x_l) . W_{l+1}^T eps_{l+1} (l < L); dF/dx_L = eps_L + beta (x_L - y*).
    std::vector<at::Tensor> g(x.size());
    double g2 = 0;
    for (int l = 1; l <= last_free; ++l) {
      if (l < L) {
        out.cost.add(static_cast<double>(net.size(l) * net.size(l + 1)), net.size(l), net.size(l + 1));
        g[l] = out.e[l] - net.dphi(x[l], l) * at::matmul(out.e[l + 1], net.W[l + 1]);
      } else {
        g[l] = out.e[l] + s.beta * (x[l] - y_star);
      }
      g2 += squared_norm(g[l]);
    }
    const double gnorm = std::sqrt(g2);
    if (t == 0) g0 = gnorm;
    out.iterations = t;
    out.gradient_norm = gnorm;
    out.residual = g0 > 0 ? gnorm / g0 : 0;
    if (g0 == 0 || (s.tol > 0 && gnorm <= s.tol * g0)) {
      out.converged = true;
      break;
    }
    if (t == s.max_steps) break;
    for (int l = 1; l <= last_free; ++l) x[l] = x[l] - s.step * g[l];
    if (observe) observe(x, out.cost.passes);
  }
  return out;
}

namespace {

at::Tensor d2phi(const Mlp& net, const at::Tensor& x) {
  if (net.activation == Activation::Linear) return at::zeros_like(x);
  const at::Tensor t = at::tanh(net.gain * x);
  return -2 * net.gain * net.gain * t * (1 - t * t);
}

// Per-sample energy [B] and gradient of the free layers (index 1..last).
at::Tensor sample_energy(const Mlp& net, const std::vector<at::Tensor>& x, const at::Tensor& mu1, const at::Tensor& y_star,
                         const PcSettings& s, std::vector<at::Tensor>& eps) {
  eps = pc_errors(net, x, mu1, nullptr);
  at::Tensor f = at::zeros({x[0].size(0)}, x[1].options());
  for (int l = 1; l <= net.depth(); ++l) f = f + 0.5 * eps[l].pow(2).sum(1);
  if (!s.clamp) f = f + 0.5 * s.beta * (x[net.depth()] - y_star).pow(2).sum(1);
  return f;
}

// The gradient [B, N] and Hessian [B, N, N] of F over the free layers 1..last, stacked.
std::pair<at::Tensor, at::Tensor> gradient_hessian(const Mlp& net, const std::vector<at::Tensor>& x,
                                                   const std::vector<at::Tensor>& eps, const at::Tensor& y_star,
                                                   const PcSettings& s, int last) {
  const int L = net.depth();
  std::vector<std::int64_t> offset{0};
  for (int l = 1; l <= last; ++l) offset.push_back(offset.back() + net.size(l));
  const std::int64_t B = x[0].size(0), N = offset.back();
  at::Tensor H = at::zeros({B, N, N}, x[1].options()), g = at::zeros({B, N}, x[1].options());
  for (int l = 1; l <= last; ++l) {
    const std::int64_t a = offset[l - 1], n = net.size(l);
    at::Tensor block = at::eye(n, x[1].options()).expand({B, n, n}).clone();
    at::Tensor grad = eps[l].clone();
    if (l < L) {
      const at::Tensor fp = net.dphi(x[l], l), back = at::matmul(eps[l + 1], net.W[l + 1]);  // W^T eps, [B, n]
      block += fp.unsqueeze(2) * at::matmul(net.W[l + 1].t(), net.W[l + 1]).unsqueeze(0) * fp.unsqueeze(1);
      block -= at::diag_embed(d2phi(net, x[l]) * back);
      grad -= fp * back;
      if (l + 1 <= last) {  // H_{l,l+1} = -diag(f'(x_l)) W_{l+1}^T
        const at::Tensor off = -fp.unsqueeze(2) * net.W[l + 1].t().unsqueeze(0);
        H.slice(1, a, a + n).slice(2, offset[l], offset[l] + net.size(l + 1)).copy_(off);
        H.slice(1, offset[l], offset[l] + net.size(l + 1)).slice(2, a, a + n).copy_(off.transpose(1, 2));
      }
    } else {
      block *= 1 + s.beta;
      grad += s.beta * (x[l] - y_star);
    }
    H.slice(1, a, a + n).slice(2, a, a + n).copy_(block);
    g.slice(1, a, a + n).copy_(grad);
  }
  return {g, H};
}

}  // namespace

Settled pc_equilibrium(const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& y_star,
                       const PcSettings& s, int newton_iters) {
  Settled out = pc_inference(net, ff, y_star, s);
  const int L = net.depth(), last = s.clamp ? L - 1 : L;
  if (out.converged || last < 1) return out;
  const double g0 = out.residual > 0 ? out.gradient_norm / out.residual : 0;
  auto& x = out.v;
  for (int it = 0; it < newton_iters; ++it) {
    std::vector<at::Tensor> eps;
    const at::Tensor f0 = sample_energy(net, x, ff[1], y_star, s, eps);
    auto [g, H] = gradient_hessian(net, x, eps, y_star, s, last);
    const double gnorm = g.norm().item<double>();
    out.residual = gnorm / g0, out.gradient_norm = gnorm, out.e = eps;
    out.converged = gnorm <= s.tol * g0;
    if (out.converged) break;
    at::Tensor dx = at::linalg_solve(H, -g.unsqueeze(-1)).squeeze(-1);
    // Where the Hessian is not positive definite the Newton step may climb: descend along -g there.
    const at::Tensor slope = (g * dx).sum(1, true);
    dx = at::where(slope < 0, dx, -g);
    at::Tensor t = at::ones({x[0].size(0), 1}, g.options());
    std::vector<at::Tensor> trial(x.size());
    for (int half = 0; half < 40; ++half) {
      trial = x;
      std::int64_t a = 0;
      for (int l = 1; l <= last; ++l) {
        trial[l] = x[l] + t * dx.slice(1, a, a + net.size(l));
        a += net.size(l);
      }
      std::vector<at::Tensor> e2;
      const at::Tensor worse = sample_energy(net, trial, ff[1], y_star, s, e2) > f0 + 1e-12 * f0.abs();
      if (!worse.any().item<bool>()) break;
      t = at::where(worse.unsqueeze(1), t / 2, t);
    }
    x = trial;
    ++out.iterations;
  }
  out.e = pc_errors(net, x, ff[1], nullptr);
  return out;
}

namespace {

// v_l = mu_l(v_{l-1}) + d_l with d_l = Q_l u = J_l^T u (d_L = u); fills v and d.
void controlled_forward(const Mlp& net, const std::vector<at::Tensor>& ff, const std::vector<at::Tensor>& J,
                        const at::Tensor& u, std::vector<at::Tensor>& v, std::vector<at::Tensor>& d, Cost& cost) {
  const int L = net.depth();
  const std::int64_t C = net.size(L);
  for (int l = 1; l <= L; ++l) {
    if (l == L) {
      d[l] = u;
    } else {
      cost.add(static_cast<double>(C * net.size(l)), net.size(l - 1), net.size(l));
      d[l] = at::bmm(u.unsqueeze(1), J[l]).squeeze(1);
    }
    v[l] = (l == 1 ? ff[1] : net.predict(l, v[l - 1], &cost)) + d[l];
  }
}

// J Q + alpha I = sum_l J_l J_l^T + alpha I, per sample [B, C, C].
at::Tensor control_matrix(const Mlp& net, const std::vector<at::Tensor>& J, double alpha, Cost& cost) {
  const int L = net.depth();
  const std::int64_t C = net.size(L);
  at::Tensor M = (1 + alpha) * at::eye(C, J[L].options()).expand_as(J[L]);
  for (int l = 1; l < L; ++l) {
    cost.add(static_cast<double>(C * C * net.size(l)), net.size(l - 1), net.size(l));
    M = M + at::bmm(J[l], J[l].transpose(1, 2));
  }
  return M;
}

// Drives v_L toward `goal` with Q = J^T fixed, from the controller state u (updated in place).
void settle(const Mlp& net, const std::vector<at::Tensor>& ff, const std::vector<at::Tensor>& J, const at::Tensor& goal,
            double scale, const ControlSettings& s, at::Tensor& u, Settled& out) {
  const int L = net.depth();
  at::Tensor A;
  if (s.mode == Controller::Solve) A = control_matrix(net, J, s.alpha, out.cost);
  for (int i = 0;; ++i) {
    controlled_forward(net, ff, J, u, out.v, out.e, out.cost);
    const at::Tensor r = goal - out.v[L] - s.alpha * u;  // e - alpha u
    out.residual = r.norm().item<double>() / scale;
    out.converged = out.residual <= s.tol;
    if (out.converged || i == s.max_iters) break;
    ++out.iterations;
    u = u + (s.mode == Controller::Solve ? at::linalg_solve(A, r.unsqueeze(-1)).squeeze(-1) : s.dt * r);
  }
}

}  // namespace

Settled control(const Mlp& net, const std::vector<at::Tensor>& ff, const at::Tensor& y_star, const ControlSettings& s,
                const Observer& observe) {
  const int L = net.depth();
  Settled out;
  out.v = ff;
  out.e.assign(ff.size(), at::Tensor());
  for (int l = 1; l <= L; ++l) out.e[l] = at::zeros_like(ff[l]);
  const at::Tensor delta = y_star - ff[L];
  const double scale = delta.norm().item<double>();
  if (scale == 0) {
    out.converged = true;
    return out;
  }
  at::Tensor u = at::zeros_like(ff[L]);
  double ff_distance = 0;
  for (int k = 1; k <= s.subgoals + s.refine; ++k) {
    const double share = std::min(1.0, static_cast<double>(k) / s.subgoals);
    const std::vector<at::Tensor> J = net.jacobians(out.v, &out.cost);  // Q = J^T at the current state
    const std::vector<at::Tensor> before = out.v;
    settle(net, ff, J, ff[L] + share * delta, scale, s, u, out);
    if (observe) observe(out.v, out.cost.passes);
    if (k > s.subgoals) {
      double moved = 0;
      ff_distance = 0;
      for (int l = 1; l <= L; ++l) {
        moved += squared_norm(out.v[l] - before[l]);
        ff_distance += squared_norm(out.v[l] - ff[l]);
      }
      if (std::sqrt(moved) <= s.refine_tol * std::sqrt(ff_distance)) break;
    }
  }
  return out;
}

double state_relative_error(const std::vector<at::Tensor>& v, const std::vector<at::Tensor>& ref,
                            const std::vector<at::Tensor>& ff) {
  double num = 0, den = 0;
  for (std::size_t l = 1; l < v.size(); ++l) {
    num += squared_norm(v[l] - ref[l]);
    den += squared_norm(ref[l] - ff[l]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace approx_pc
