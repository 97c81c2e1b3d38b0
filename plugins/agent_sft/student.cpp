// The student's LibTorch code: the only translation unit of the plugin that includes torch.
#include "student.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace agent_sft {

namespace {

struct BlockImpl : torch::nn::Module {
  BlockImpl(int dim, int heads) : heads(heads) {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
    qkv = register_module("qkv", torch::nn::Linear(dim, 3 * dim));
    out = register_module("out", torch::nn::Linear(dim, dim));
    fc1 = register_module("fc1", torch::nn::Linear(dim, 4 * dim));
    fc2 = register_module("fc2", torch::nn::Linear(4 * dim, dim));
  }
  // x [B, L, d]; mask [L, L] additive (-inf above the diagonal).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    const auto B = x.size(0), L = x.size(1), d = x.size(2), hd = d / heads;
    auto q = qkv->forward(ln1->forward(x)).view({B, L, 3, heads, hd}).permute({2, 0, 3, 1, 4});
    auto att = torch::matmul(q[0], q[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(hd)) + mask;
    auto y = torch::matmul(torch::softmax(att, -1), q[2]).transpose(1, 2).reshape({B, L, d});
    auto h = x + out->forward(y);
    return h + fc2->forward(torch::gelu(fc1->forward(ln2->forward(h))));
  }
  int heads;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, out{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Block);

struct NetImpl : torch::nn::Module {
  explicit NetImpl(const StudentConfig& c) : dim(c.dim) {
    tok = register_module("tok", torch::nn::Embedding(kVocab, c.dim));
    pos = register_module("pos", torch::nn::Embedding(c.context, c.dim));
    for (int i = 0; i < c.layers; ++i) blocks.push_back(register_module("block" + std::to_string(i), Block(c.dim, c.heads)));
    ln = register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim})));
    act = register_module("act", torch::nn::Linear(c.dim, c.dim));
    copy_q = register_module("copy_q", torch::nn::Linear(c.dim, c.dim));
    copy_k = register_module("copy_k", torch::nn::Linear(c.dim, c.dim));
    torch::nn::init::normal_(tok->weight, 0, 0.02);
    torch::nn::init::normal_(pos->weight, 0, 0.02);
  }
  // tokens [B, L] (right-padded) -> states [B, L, d]
  torch::Tensor encode(const torch::Tensor& tokens) {
    const auto L = tokens.size(1);
    auto x = tok->forward(tokens) + pos->forward(torch::arange(L, torch::kLong)).unsqueeze(0);
    auto mask = torch::full({L, L}, -INFINITY).triu(1);
    for (auto& b : blocks) x = b->forward(x, mask);
    return ln->forward(x);
  }
  // actions [M, La] (padded with kPad) -> [M, d]: W_a times the mean of the tokens' embeddings.
  torch::Tensor embed_actions(const torch::Tensor& actions) {
    auto valid = (actions != kPad).to(torch::kFloat).unsqueeze(-1);
    auto mean = (tok->forward(actions) * valid).sum(1) / valid.sum(1).clamp_min(1);
    return act->forward(mean);
  }
  int dim;
  torch::nn::Embedding tok{nullptr}, pos{nullptr};
  std::vector<Block> blocks;
  torch::nn::LayerNorm ln{nullptr};
  torch::nn::Linear act{nullptr}, copy_q{nullptr}, copy_k{nullptr};
};
TORCH_MODULE(Net);

torch::Tensor pad_rows(const std::vector<const std::vector<int>*>& rows) {
  std::size_t width = 1;
  for (const auto* r : rows) width = std::max(width, r->size());
  auto t = torch::full({static_cast<long>(rows.size()), static_cast<long>(width)}, kPad, torch::kLong);
  auto a = t.accessor<long, 2>();
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i]->size(); ++j) a[i][j] = (*rows[i])[j];
  return t;
}

// The copy term of eq. (pointer): for each token w of action a, its best match among the history
// states the decision may see, mean_{w in a} max_{j <= t} q(E[w]) . k(h_j) / sqrt(d). It lets the
// student point at a name or number it read (search[<the director>], echo <the count>). The running
// max over j is computed once per distinct token of a window's candidates (cummax), then read at each
// decision's position: candidates share most of their tokens, so this is exact and far cheaper than
// one max per candidate token.
struct CopyIndex {
  std::vector<std::vector<int>> distinct;    // per window: its candidates' distinct tokens
  std::vector<long> window, slot, position;  // per candidate token, row-major [M, width] (pads: slot 0)
};

CopyIndex copy_index(const std::vector<const Window*>& batch, std::size_t width) {
  CopyIndex ix;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    std::map<int, long> slot_of;
    ix.distinct.emplace_back();
    for (const auto& t : batch[b]->targets)
      for (const auto& c : t.candidates)
        for (std::size_t i = 0; i < width; ++i) {
          long slot = 0;
          if (i < c.size()) {
            const auto [it, added] = slot_of.emplace(c[i], static_cast<long>(slot_of.size()));
            if (added) ix.distinct.back().push_back(c[i]);
            slot = it->second;
          }
          ix.window.push_back(static_cast<long>(b));
          ix.slot.push_back(slot);
          ix.position.push_back(t.position);
        }
  }
  return ix;
}

torch::Tensor copy_scores(Net& net, const torch::Tensor& states, const torch::Tensor& actions, const CopyIndex& ix) {
  std::vector<const std::vector<int>*> rows;
  for (const auto& d : ix.distinct) rows.push_back(&d);
  auto queries = net->copy_q->forward(net->tok->forward(pad_rows(rows)));  // [B, U, d]
  auto keys = net->copy_k->forward(states);                                // [B, L, d]
  auto sim = torch::matmul(queries, keys.transpose(1, 2)) / std::sqrt(static_cast<double>(net->dim));
  auto running = std::get<0>(sim.cummax(-1));                              // [B, U, L]: max over j <= t
  auto best = running.index({torch::tensor(ix.window), torch::tensor(ix.slot), torch::tensor(ix.position)})
                  .view(actions.sizes());                                  // [M, La]
  auto valid = (actions != kPad).to(torch::kFloat);
  return (best * valid).sum(1) / valid.sum(1).clamp_min(1);
}

// Scores [T, C] (masked with -inf past each target's candidates) of every target in the windows.
torch::Tensor scores(Net& net, const std::vector<const Window*>& batch) {
  std::vector<const std::vector<int>*> seqs, cands;
  std::vector<long> rows, cols;
  std::size_t widest = 0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    seqs.push_back(&batch[b]->tokens);
    for (const auto& t : batch[b]->targets) {
      rows.push_back(static_cast<long>(b));
      cols.push_back(t.position);
      widest = std::max(widest, t.candidates.size());
      for (const auto& c : t.candidates) cands.push_back(&c);
    }
  }
  auto states = net->encode(pad_rows(seqs));
  auto h = states.index({torch::tensor(rows), torch::tensor(cols)});  // [T, d]
  const auto actions = pad_rows(cands);
  auto e = net->embed_actions(actions);                                // [M, d]
  auto copy = copy_scores(net, states, actions, copy_index(batch, actions.size(1)));  // [M]
  const long T = static_cast<long>(rows.size()), C = static_cast<long>(widest);
  auto index = torch::zeros({T, C}, torch::kLong);
  auto valid = torch::zeros({T, C}, torch::kBool);
  auto ia = index.accessor<long, 2>();
  auto va = valid.accessor<bool, 2>();
  long m = 0, t = 0;
  for (const auto* w : batch)
    for (const auto& target : w->targets) {
      for (std::size_t c = 0; c < target.candidates.size(); ++c) ia[t][c] = m++, va[t][c] = true;
      ++t;
    }
  auto s = (h.unsqueeze(1) * e.index({index})).sum(-1) / std::sqrt(static_cast<double>(net->dim)) +
           copy.index({index});
  return s.masked_fill(valid.logical_not(), -INFINITY);
}

torch::Tensor chosen_of(const std::vector<const Window*>& batch) {
  std::vector<long> chosen;
  for (const auto* w : batch)
    for (const auto& t : w->targets) chosen.push_back(t.chosen);
  return torch::tensor(chosen);
}

// The view at the next decision: the episode so far, closed by the kAct the decision sits on.
Window decision_window(const Episode& e, int context) {
  Window w;
  w.tokens = view(e, static_cast<int>(e.tokens.size()) - 1, context, 1).tokens;
  w.tokens.push_back(kAct);
  Target t;
  t.position = static_cast<int>(w.tokens.size()) - 1;
  return w.targets.push_back(t), w;
}

}  // namespace

struct Student::Impl {
  Net net;
  torch::optim::AdamW opt;
  Impl(const StudentConfig& c, std::uint64_t seed)
      : net((torch::manual_seed(seed), Net(c))), opt(net->parameters(), torch::optim::AdamWOptions(c.lr).weight_decay(0.01)) {}
};

Student::Student(const StudentConfig& config, std::uint64_t seed)
    : config_(config), impl_(std::make_unique<Impl>(config, seed)) {}

Student::Student(const Student& other) : config_(other.config_), impl_(std::make_unique<Impl>(other.config_, 0)) {
  torch::NoGradGuard no_grad;
  auto dst = impl_->net->parameters();
  auto src = other.impl_->net->parameters();
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
}

Student::~Student() = default;

std::int64_t Student::parameters() const {
  std::int64_t n = 0;
  for (const auto& p : impl_->net->parameters()) n += p.numel();
  return n;
}

void Student::set_lr(double lr) {
  for (auto& g : impl_->opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
}

double Student::train(const std::vector<Window>& corpus, int updates, nexp::Random& rng) {
  if (corpus.empty() || updates <= 0) return NAN;
  std::vector<double> cumulative;
  double total = 0;
  for (const auto& w : corpus) cumulative.push_back(total += static_cast<double>(w.targets.size()));
  impl_->net->train();
  double tail = 0;
  int tail_n = 0;
  for (int u = 0; u < updates; ++u) {
    std::vector<const Window*> batch;
    for (int b = 0; b < config_.batch; ++b) {
      const double x = rng.uniform() * total;
      batch.push_back(&corpus[std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin()]);
    }
    auto loss = torch::nn::functional::cross_entropy(scores(impl_->net, batch), chosen_of(batch));
    impl_->opt.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(impl_->net->parameters(), 1.0);
    impl_->opt.step();
    if (u >= updates - std::max(1, updates / 10)) tail += loss.item<double>(), ++tail_n;
  }
  return tail / tail_n;
}

std::vector<int> Student::choose(const std::vector<const Episode*>& episodes,
                                 const std::vector<std::vector<std::string>>& admissible) {
  torch::NoGradGuard no_grad;
  impl_->net->eval();
  std::vector<int> out;
  constexpr std::size_t kChunk = 32;  // episodes per forward pass
  for (std::size_t from = 0; from < episodes.size(); from += kChunk) {
    std::vector<Window> windows;
    for (std::size_t i = from; i < std::min(episodes.size(), from + kChunk); ++i) {
      windows.push_back(decision_window(*episodes[i], config_.context));
      for (const auto& a : admissible[i]) windows.back().targets[0].candidates.push_back(tokenize(a));
    }
    std::vector<const Window*> batch;
    for (const auto& w : windows) batch.push_back(&w);
    auto s = scores(impl_->net, batch);
    if (sampler_) {
      auto p = torch::softmax(s, -1).contiguous();
      auto pa = p.accessor<float, 2>();
      for (long t = 0; t < p.size(0); ++t) {
        double u = sampler_->uniform();
        const long n = static_cast<long>(windows[t].targets[0].candidates.size());
        long c = 0;
        while (c + 1 < n && u >= pa[t][c]) u -= pa[t][c++];
        out.push_back(static_cast<int>(c));
      }
    } else {
      auto best = s.argmax(-1);
      for (long t = 0; t < best.size(0); ++t) out.push_back(static_cast<int>(best[t].item<long>()));
    }
  }
  return out;
}

void Student::reinforce(const std::vector<Episode>& episodes, double baseline) {
  std::vector<Window> windows;
  std::vector<float> weights;
  for (const auto& e : episodes) {
    Episode all = e;
    for (auto& d : all.decisions) d.labelled = true;
    const float advantage = static_cast<float>((e.success ? 1.0 : 0.0) - baseline);
    for (auto& w : agent_sft::windows(all, config_.context)) {
      weights.insert(weights.end(), w.targets.size(), advantage);
      windows.push_back(std::move(w));
    }
  }
  if (windows.empty()) return;
  std::vector<const Window*> batch;
  for (const auto& w : windows) batch.push_back(&w);
  impl_->net->train();
  auto logp = torch::log_softmax(scores(impl_->net, batch), -1).gather(1, chosen_of(batch).unsqueeze(1)).squeeze(1);
  auto loss = -(torch::tensor(weights) * logp).sum() / static_cast<double>(episodes.size());
  impl_->opt.zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(impl_->net->parameters(), 1.0);
  impl_->opt.step();
}

}  // namespace agent_sft
