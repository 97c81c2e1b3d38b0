// The neural set functions of models.hpp.
#include "models.hpp"

#include <ATen/ATen.h>
#include <torch/nn/functional/activation.h>

#include <cmath>

namespace submodular {

namespace {

at::Tensor sp(const at::Tensor& x) { return at::softplus(x); }

// A two-layer item MLP d -> hidden -> out.
struct ItemMlp {
  mutable torch::nn::Linear l1{nullptr}, l2{nullptr};
  ItemMlp() = default;
  ItemMlp(torch::nn::Module& owner, const std::string& name, int d, int hidden, int out) {
    l1 = owner.register_module(name + "_1", torch::nn::Linear(d, hidden));
    l2 = owner.register_module(name + "_2", torch::nn::Linear(hidden, out));
  }
  at::Tensor operator()(const at::Tensor& x) const { return l2->forward(at::tanh(l1->forward(x))); }
};

at::Tensor param(torch::nn::Module& m, const std::string& name, at::IntArrayRef shape, double scale, double shift = 0) {
  return m.register_parameter(name, at::randn(shape, at::kDouble) * scale + shift);
}

// Pairwise G_h(S) for all heads: [B, H]. a: [N, H], u: [N, H, r].
at::Tensor pairwise_values(const at::Tensor& mask, const at::Tensor& a, const at::Tensor& u) {
  const auto n = u.size(0), h = u.size(1), r = u.size(2);
  const at::Tensor sum_u = mask.matmul(u.reshape({n, h * r})).reshape({-1, h, r});  // [B, H, r]
  const at::Tensor sq = mask.matmul(u.pow(2).sum(-1));                                 // [B, H]
  return mask.matmul(a) + 0.5 * (sum_u.pow(2).sum(-1) - sq);
}

// ---------------------------------------------------------------- pairwise

class PairwiseNet : public SetModel {
 public:
  PairwiseNet(const ModelOptions& o, const at::Tensor& x, bool alpha_term)
      : o_(o), x_(register_buffer("x", x)), alpha_term_(alpha_term) {
    const int d = static_cast<int>(x.size(1));
    for (int k = 0; k < o.layers; ++k) {
      const std::string p = "layer" + std::to_string(k);
      u_.emplace_back(*this, p + "_u", d, o.hidden, o.heads * o.rank);
      rho_.emplace_back(*this, p + "_rho", d, o.hidden, o.heads);
      phi_.push_back(register_module(p + "_phi", std::make_shared<RateConcave>(o.heads, o.phi_terms, o.kappa,
                                                                                false, o.learn_phi)));
      if (k > 0)
        psi_.push_back(register_module(p + "_psi", std::make_shared<RateConcave>(o.heads, o.phi_terms, 0.0, true, true)));
      w_.push_back(param(*this, p + "_w", {o.heads}, 0.1));
      if (k > 0) lambda_.push_back(param(*this, p + "_lambda", {o.heads}, 0.1));
    }
    omega_ = param(*this, "omega", {o.layers}, 0.1);
    if (alpha_term_) {
      ua_ = ItemMlp(*this, "alpha_u", d, o.hidden, o.rank);
      rhoa_ = ItemMlp(*this, "alpha_rho", d, o.hidden, 1);
    }
  }

  at::Tensor raw(const at::Tensor& mask) override {
    const auto n = x_.size(0);
    at::Tensor prev, out = at::zeros({mask.size(0)}, mask.options());
    const at::Tensor omega = sp(omega_);
    for (int k = 0; k < o_.layers; ++k) {
      const at::Tensor u = sp(u_[k](x_)).reshape({n, o_.heads, o_.rank}) / std::sqrt(o_.rank);
      const at::Tensor a = sp(rho_[k](x_)) + at::log1p(std::sqrt(o_.kappa) * u.norm(2, -1)) / o_.kappa;
      const at::Tensor g = pairwise_values(mask, a, u);  // [B, H]
      at::Tensor v = phi_[k]->forward(g);  // [B, H]
      if (k > 0) v = psi_[k - 1]->forward(sp(lambda_[k - 1]) * prev.unsqueeze(-1) + v);
      const at::Tensor layer = v.matmul(sp(w_[k]));
      out = out + omega[k] * layer;
      prev = layer;
    }
    if (alpha_term_) out = out + alpha_pairwise(mask);
    return out;
  }

 private:
  // G(S) with a_e = alpha/(1-alpha) B_e + rho_e, B_e = sum_{j != e} <u_e, u_j> over the ground set.
  at::Tensor alpha_pairwise(const at::Tensor& mask) {
    const at::Tensor u = sp(ua_(x_)) / std::sqrt(o_.rank);  // [N, r]
    const at::Tensor b_sum = u.matmul(u.sum(0)) - u.pow(2).sum(-1);  // [N]
    const at::Tensor a = o_.alpha / (1 - o_.alpha) * b_sum + sp(rhoa_(x_)).squeeze(-1);
    return pairwise_values(mask, a.unsqueeze(-1), u.unsqueeze(1)).squeeze(-1);
  }

  ModelOptions o_;
  at::Tensor x_;
  bool alpha_term_;
  std::vector<ItemMlp> u_, rho_;
  std::vector<std::shared_ptr<RateConcave>> phi_, psi_;
  std::vector<at::Tensor> w_, lambda_;
  at::Tensor omega_;
  ItemMlp ua_, rhoa_;
};

// ---------------------------------------------------------------- DSF

class Dsf : public SetModel {
 public:
  Dsf(const ModelOptions& o, const at::Tensor& x) : x_(register_buffer("x", x)) {
    const int d = static_cast<int>(x.size(1)), width = o.heads * o.rank;
    m_ = ItemMlp(*this, "m", d, o.hidden, width);
    for (int k = 1; k < o.layers; ++k) w_.push_back(param(*this, "w" + std::to_string(k), {width, width}, 0.1, -2.0));
    out_ = param(*this, "out", {width}, 0.1);
  }
  at::Tensor raw(const at::Tensor& mask) override {
    at::Tensor h = at::log1p(mask.matmul(sp(m_(x_))));
    for (const at::Tensor& w : w_) h = at::log1p(h.matmul(sp(w)));
    return h.matmul(sp(out_));
  }

 private:
  at::Tensor x_;
  ItemMlp m_;
  std::vector<at::Tensor> w_;
  at::Tensor out_;
};

// ---------------------------------------------------------------- FLEXSUBNET

// phi(y) = c_0 y + sum_j c_j (sp(b_j) - sp(b_j - w_j y)) / w_j: the exact integral of the
// positive decreasing h(t) = c_0 + sum_j c_j sigmoid(b_j - w_j t). Elementwise over [B, H], one phi per unit.
class IntegralConcave : public torch::nn::Module {
 public:
  IntegralConcave(int units, int terms) {
    c0_ = param(*this, "c0", {units}, 0.1, -1.0);
    c_ = param(*this, "c", {terms, units}, 0.1);
    b_ = param(*this, "b", {terms, units}, 1.0);
    w_ = param(*this, "w", {terms, units}, 0.1);
  }
  at::Tensor forward(const at::Tensor& y) {  // [B, units]
    const at::Tensor w = sp(w_) + 1e-3;
    const at::Tensor yy = y.unsqueeze(1);  // [B, 1, units]
    const at::Tensor part = (sp(b_) - sp(b_ - w * yy)) / w;
    return sp(c0_) * y + (sp(c_) * part).sum(1);
  }

 private:
  at::Tensor c0_, c_, b_, w_;
};

class FlexSubNet : public SetModel {
 public:
  FlexSubNet(const ModelOptions& o, const at::Tensor& x) : x_(register_buffer("x", x)) {
    const int d = static_cast<int>(x.size(1));
    for (int k = 0; k < o.layers; ++k) {
      const std::string p = "layer" + std::to_string(k);
      m_.emplace_back(*this, p + "_m", d, o.hidden, o.heads);
      phi_.push_back(register_module(p + "_phi", std::make_shared<IntegralConcave>(o.heads, o.phi_terms)));
      if (k > 0) w_.push_back(param(*this, p + "_w", {o.heads, o.heads}, 0.1, -1.0));
    }
    out_ = param(*this, "out", {o.heads}, 0.1);
    lambda_ = param(*this, "lambda", {1}, 0.1);
  }
  at::Tensor raw(const at::Tensor& mask) override {
    const at::Tensor lambda = at::sigmoid(lambda_);
    at::Tensor f;
    for (std::size_t k = 0; k < m_.size(); ++k) {
      at::Tensor arg = mask.matmul(sp(m_[k](x_)));
      if (k > 0) arg = lambda * f.matmul(sp(w_[k - 1])) + (1 - lambda) * arg;
      f = phi_[k]->forward(arg);
    }
    return f.matmul(sp(out_));
  }

 private:
  at::Tensor x_;
  std::vector<ItemMlp> m_;
  std::vector<std::shared_ptr<IntegralConcave>> phi_;
  std::vector<at::Tensor> w_;
  at::Tensor out_, lambda_;
};

// ---------------------------------------------------------------- mixture of shells

class Mixture : public SetModel {
 public:
  Mixture(const ModelOptions& o, const at::Tensor& x) : x_(register_buffer("x", x)) {
    const int d = static_cast<int>(x.size(1));
    e_ = ItemMlp(*this, "embed", d, o.hidden, o.rank);
    c_ = ItemMlp(*this, "cover", d, o.hidden, o.heads * o.rank);
    m_ = ItemMlp(*this, "modular", d, o.hidden, 1);
    w_ = param(*this, "w", {3}, 0.1);
  }
  at::Tensor raw(const at::Tensor& mask) override {
    const at::Tensor e = e_(x_);
    const at::Tensor sim = at::exp(-at::cdist(e, e).pow(2));  // [N, N], in (0, 1]
    const at::Tensor fl = (mask.unsqueeze(1) * sim.unsqueeze(0)).amax(-1).sum(-1);
    const at::Tensor cover = at::clamp_max(mask.matmul(sp(c_(x_))), 1.0).sum(-1);
    const at::Tensor modular = mask.matmul(sp(m_(x_))).squeeze(-1);
    const at::Tensor w = sp(w_);
    return w[0] * fl + w[1] * cover + w[2] * modular;
  }

 private:
  at::Tensor x_;
  ItemMlp e_, c_, m_;
  at::Tensor w_;
};

// ---------------------------------------------------------------- unconstrained set models

class DeepSets : public SetModel {
 public:
  DeepSets(const ModelOptions& o, const at::Tensor& x) : x_(register_buffer("x", x)) {
    const int d = static_cast<int>(x.size(1));
    phi_ = ItemMlp(*this, "phi", d, 2 * o.hidden, 2 * o.hidden);
    rho_ = ItemMlp(*this, "rho", 2 * o.hidden, 2 * o.hidden, 1);
  }
  at::Tensor raw(const at::Tensor& mask) override {
    return rho_(mask.matmul(at::tanh(phi_(x_)))).squeeze(-1);
  }

 private:
  at::Tensor x_;
  ItemMlp phi_, rho_;
};

class SetTransformer : public SetModel {
 public:
  SetTransformer(const ModelOptions& o, const at::Tensor& x) : x_(register_buffer("x", x)), heads_(o.heads) {
    const int d = static_cast<int>(x.size(1));
    dim_ = o.hidden;
    embed_ = register_module("embed", torch::nn::Linear(d, dim_));
    qkv_ = register_module("qkv", torch::nn::Linear(dim_, 3 * dim_));
    ff_ = ItemMlp(*this, "ff", dim_, 2 * dim_, dim_);
    null_ = param(*this, "null", {dim_}, 0.1);
    seed_ = param(*this, "seed", {dim_}, 0.1);
    pool_kv_ = register_module("pool_kv", torch::nn::Linear(dim_, 2 * dim_));
    out_ = ItemMlp(*this, "out", dim_, dim_, 1);
  }
  at::Tensor raw(const at::Tensor& mask) override {
    const auto b = mask.size(0), n = x_.size(0);
    // Tokens: the N ground items plus the null token; keys outside S are masked out.
    const at::Tensor tokens = at::cat({embed_->forward(x_), null_.unsqueeze(0)}, 0);  // [N+1, D]
    const at::Tensor keep = at::cat({mask, at::ones({b, 1}, mask.options())}, 1);      // [B, N+1]
    const at::Tensor bias = (1 - keep).unsqueeze(1).unsqueeze(1) * -1e9;              // [B, 1, 1, N+1]
    const auto qkv = qkv_->forward(tokens).chunk(3, -1);
    const at::Tensor h = tokens + attend(split(qkv[0]).unsqueeze(0), split(qkv[1]), split(qkv[2]), bias, b);
    const at::Tensor z = h + ff_(h);                                                   // [B, N+1, D]
    const auto kv = pool_kv_->forward(z).chunk(2, -1);
    const at::Tensor q = split(seed_.unsqueeze(0)).unsqueeze(0);                       // [1, H, 1, dh]
    const at::Tensor pooled = attend(q, split(kv[0]), split(kv[1]), bias, b).squeeze(1);  // [B, D]
    (void)n;
    return out_(pooled).squeeze(-1);
  }

 private:
  // [..., T, D] -> [..., H, T, D/H]
  at::Tensor split(const at::Tensor& t) const {
    auto sizes = t.sizes().vec();
    const auto tokens = sizes[sizes.size() - 2];
    sizes.pop_back();
    sizes.pop_back();
    sizes.push_back(tokens);
    sizes.push_back(heads_);
    sizes.push_back(dim_ / heads_);
    return t.reshape(sizes).transpose(-3, -2);
  }
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                    std::int64_t batch) const {
    const at::Tensor scores = q.matmul(k.transpose(-1, -2)) / std::sqrt(static_cast<double>(dim_ / heads_)) + bias;
    at::Tensor o = at::softmax(scores, -1).matmul(v);  // [B, H, T, dh]
    o = o.transpose(-3, -2);                           // [B, T, H, dh]
    return o.reshape({batch, o.size(1), dim_});
  }

  at::Tensor x_;
  int heads_, dim_ = 32;
  torch::nn::Linear embed_{nullptr}, qkv_{nullptr}, pool_kv_{nullptr};
  ItemMlp ff_, out_;
  at::Tensor null_, seed_;
};

}  // namespace

// ---------------------------------------------------------------- shared

SetModel::SetModel() { log_scale_ = register_parameter("log_scale", at::zeros({1}, at::kDouble)); }

at::Tensor SetModel::forward(const at::Tensor& mask) { return at::exp(log_scale_) * raw(mask); }

void SetModel::calibrate(const at::Tensor& masks, const at::Tensor& y) {
  at::NoGradGuard no_grad;
  log_scale_.zero_();
  const double f = raw(masks).abs().mean().item<double>(), t = y.abs().mean().item<double>();
  if (f > 0 && t > 0) log_scale_.fill_(std::log(t / f));
}

void ModelOptions::declare(nexp::Options<ModelOptions>& o) {
  o.add("hidden", &ModelOptions::hidden, "width of the item MLPs").range(2, 1024);
  o.add("rank", &ModelOptions::rank, "dimension of the pairwise embeddings u (and other item embeddings)").range(1, 256);
  o.add("heads", &ModelOptions::heads, "parallel pairwise terms (units) per layer").range(1, 64);
  o.add("layers", &ModelOptions::layers, "layers (pairwise cross layers, DSF / FLEXSUBNET depth)").range(1, 8);
  o.add("kappa", &ModelOptions::kappa, "rate floor of phi: -phi''/phi' >= kappa (Thm. 1)").range(1e-6, 1e6);
  o.add("learn_phi", &ModelOptions::learn_phi, "learn the rate-controlled phi (else phi(y) = (1 - e^{-kappa y})/kappa)");
  o.add("phi_terms", &ModelOptions::phi_terms, "terms of each learned concave function").range(1, 64);
  o.add("alpha", &ModelOptions::alpha, "pairwise_alpha: the alpha guaranteed in closed form").range(0.01, 0.99);
}

const char* model_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::Pairwise: return "pairwise";
    case ModelKind::PairwiseAlpha: return "pairwise_alpha";
    case ModelKind::Dsf: return "dsf";
    case ModelKind::FlexSubNet: return "flexsubnet";
    case ModelKind::Mixture: return "mixture";
    case ModelKind::DeepSets: return "deepsets";
    case ModelKind::SetTransformer: return "set_transformer";
  }
  return "?";
}

bool is_constrained(ModelKind kind) { return kind != ModelKind::DeepSets && kind != ModelKind::SetTransformer; }

RateConcave::RateConcave(int units, int terms, double floor, bool linear, bool learned)
    : floor_(floor), linear_(linear) {
  if (learned) {
    beta_ = param(*this, "beta", {units, terms}, 1.0, -1.0);
    c_ = param(*this, "c", {units, terms}, 0.1);
  } else {  // one term of rate exactly `floor` and weight 1 per unit
    beta_ = register_buffer("beta", at::full({units, 1}, -1e3, at::kDouble));  // softplus(-1e3) = 0
    c_ = register_buffer("c", at::full({units, 1}, std::log(std::expm1(1.0)), at::kDouble));  // softplus = 1
  }
  if (linear_) lin_ = param(*this, "lin", {units}, 0.1, -2.0);
}

at::Tensor RateConcave::rates() { return floor_ + sp(beta_) + 1e-9; }

at::Tensor RateConcave::forward(const at::Tensor& y) {
  const at::Tensor r = rates();  // [units, terms]
  const at::Tensor yy = y.unsqueeze(-1);
  at::Tensor out = (sp(c_) * -at::expm1(-r * yy) / r).sum(-1);
  if (linear_) out = out + sp(lin_) * y;
  return out;
}

std::shared_ptr<SetModel> make_model(ModelKind kind, const ModelOptions& o, const at::Tensor& features) {
  const at::Tensor x = features.to(at::kDouble);
  std::shared_ptr<SetModel> m;
  switch (kind) {
    case ModelKind::Pairwise: m = std::make_shared<PairwiseNet>(o, x, false); break;
    case ModelKind::PairwiseAlpha: m = std::make_shared<PairwiseNet>(o, x, true); break;
    case ModelKind::Dsf: m = std::make_shared<Dsf>(o, x); break;
    case ModelKind::FlexSubNet: m = std::make_shared<FlexSubNet>(o, x); break;
    case ModelKind::Mixture: m = std::make_shared<Mixture>(o, x); break;
    case ModelKind::DeepSets: m = std::make_shared<DeepSets>(o, x); break;
    case ModelKind::SetTransformer: m = std::make_shared<SetTransformer>(o, x); break;
  }
  m->to(at::kDouble);
  return m;
}

at::Tensor masks_of(const std::vector<std::vector<int>>& sets, int n) {
  at::Tensor m = at::zeros({static_cast<std::int64_t>(sets.size()), n}, at::kDouble);
  auto acc = m.accessor<double, 2>();
  for (std::size_t b = 0; b < sets.size(); ++b)
    for (int i : sets[b]) acc[static_cast<std::int64_t>(b)][i] = 1.0;
  return m;
}

}  // namespace submodular
