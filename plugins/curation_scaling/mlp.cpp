#include "mlp.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

namespace curation_scaling {

Mlp Mlp::clone() const { return {w1.clone(), b1.clone(), w2.clone(), b2.clone()}; }

Mlp init_mlp(std::int64_t in, std::int64_t hidden, std::int64_t classes, std::uint64_t seed, at::ScalarType dtype) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const auto opt = at::TensorOptions().dtype(dtype);
  Mlp m;
  m.w1 = at::normal(0.0, std::sqrt(2.0 / in), {in, hidden}, gen, opt);
  m.b1 = at::zeros({hidden}, opt);
  m.w2 = at::normal(0.0, std::sqrt(2.0 / hidden), {hidden, classes}, gen, opt);
  m.b2 = at::zeros({classes}, opt);
  return m;
}

at::Tensor mlp_logits(const Mlp& m, const at::Tensor& x) {
  return at::addmm(m.b2, at::relu(at::addmm(m.b1, x, m.w1)), m.w2);
}

at::Tensor sample_actions(const at::Tensor& logits, at::Generator& gen) {
  const at::Tensor cdf = at::softmax(logits, 1).cumsum(1);
  const at::Tensor u = at::rand({logits.size(0), 1}, gen, logits.options());
  return (cdf < u).sum(1).clamp_max(logits.size(1) - 1);
}

namespace {

// dL/dz and the objective for one batch (see the header).
double logit_grad(Objective objective, const at::Tensor& z, const Batch& b, double beta, at::Tensor& dz) {
  const auto n = static_cast<double>(z.size(0));
  const at::Tensor logp = at::log_softmax(z, 1);
  const at::Tensor p = logp.exp();
  const at::Tensor y = b.label.unsqueeze(1);
  switch (objective) {
    case Objective::CrossEntropy: {
      dz = p.clone();
      dz.scatter_add_(1, y, at::full_like(y, -1.0, z.options()));
      dz.div_(n);
      return -logp.gather(1, y).mean().item<double>();
    }
    case Objective::Dpo: {
      const at::Tensor r = b.rejected.unsqueeze(1);
      const at::Tensor margin = (logp.gather(1, y) - b.ref_logp.gather(1, y)) - (logp.gather(1, r) - b.ref_logp.gather(1, r));
      const at::Tensor coef = -beta * at::sigmoid(-beta * margin) / n;  // dL/d margin per example
      dz = at::zeros_like(z);
      dz.scatter_add_(1, y, coef);
      dz.scatter_add_(1, r, -coef);
      return -at::log_sigmoid(beta * margin).mean().item<double>();
    }
    case Objective::Reinforce: {
      const at::Tensor a = b.action.unsqueeze(1);
      const at::Tensor reward = (b.action == b.label).to(z.scalar_type());
      const at::Tensor adv = (reward - reward.mean()).unsqueeze(1);  // baseline held constant
      dz = p * adv / n;
      dz.scatter_add_(1, a, -adv / n);
      return -(adv * logp.gather(1, a)).mean().item<double>();
    }
  }
  return NAN;
}

}  // namespace

double objective_and_grad(const Mlp& m, Objective objective, const Batch& b, double beta, Mlp* grad) {
  const at::Tensor pre = at::addmm(m.b1, b.x, m.w1);
  const at::Tensor h = at::relu(pre);
  const at::Tensor z = at::addmm(m.b2, h, m.w2);
  at::Tensor dz;
  const double loss = logit_grad(objective, z, b, beta, dz);
  if (grad) {
    grad->w2 = h.t().mm(dz);
    grad->b2 = dz.sum(0);
    const at::Tensor dpre = dz.mm(m.w2.t()) * (pre > 0).to(pre.scalar_type());
    grad->w1 = b.x.t().mm(dpre);
    grad->b1 = dpre.sum(0);
  }
  return loss;
}

void train_mlp(Mlp& m, const Mlp* reference, Objective objective, const at::Tensor& x, const at::Tensor& label,
               const at::Tensor& rejected, const at::Tensor& order, const SgdSettings& s, std::uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  Mlp velocity{at::zeros_like(m.w1), at::zeros_like(m.b1), at::zeros_like(m.w2), at::zeros_like(m.b2)};
  Mlp g;
  const std::int64_t n = order.size(0);
  for (std::int64_t epoch = 0; epoch < s.epochs; ++epoch) {
    for (std::int64_t start = 0; start < n; start += s.batch) {
      const at::Tensor idx = order.slice(0, start, std::min(n, start + s.batch));
      Batch b{x.index_select(0, idx), label.index_select(0, idx), {}, {}, {}};
      if (objective == Objective::Dpo) {
        b.rejected = rejected.index_select(0, idx);
        b.ref_logp = at::log_softmax(mlp_logits(*reference, b.x), 1);
      } else if (objective == Objective::Reinforce) {
        b.action = sample_actions(mlp_logits(m, b.x), gen);
      }
      objective_and_grad(m, objective, b, s.beta, &g);
      at::Tensor* params[] = {&m.w1, &m.b1, &m.w2, &m.b2};
      at::Tensor* vel[] = {&velocity.w1, &velocity.b1, &velocity.w2, &velocity.b2};
      const at::Tensor* grads[] = {&g.w1, &g.b1, &g.w2, &g.b2};
      for (int i = 0; i < 4; ++i) {
        vel[i]->mul_(s.momentum).add_(*grads[i]);
        params[i]->sub_(*vel[i], s.lr);
      }
    }
  }
}

at::Tensor cross_entropy_each(const Mlp& m, const at::Tensor& x, const at::Tensor& y) {
  return -at::log_softmax(mlp_logits(m, x), 1).gather(1, y.unsqueeze(1)).squeeze(1).to(at::kDouble);
}

double mean_cross_entropy(const Mlp& m, const at::Tensor& x, const at::Tensor& y) {
  return cross_entropy_each(m, x, y).mean().item<double>();
}

}  // namespace curation_scaling
