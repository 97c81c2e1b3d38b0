#include "half_trek_matrix.hpp"

#include <algorithm>
#include <stdexcept>

namespace htc {

namespace {

// Gauss-Jordan inverse over F_p of the s x s row-major matrix a; false when it is singular.
bool invert(std::vector<u64> a, int s, const PrimeField& f, std::vector<u64>& inverse) {
  inverse.assign(static_cast<std::size_t>(s) * s, 0);
  for (int i = 0; i < s; ++i) inverse[static_cast<std::size_t>(i) * s + i] = 1;
  auto at = [s](std::vector<u64>& m, int i, int j) -> u64& { return m[static_cast<std::size_t>(i) * s + j]; };
  for (int col = 0; col < s; ++col) {
    int pivot = col;
    while (pivot < s && at(a, pivot, col) == 0) ++pivot;
    if (pivot == s) return false;
    if (pivot != col)
      for (int j = 0; j < s; ++j) {
        std::swap(at(a, pivot, j), at(a, col, j));
        std::swap(at(inverse, pivot, j), at(inverse, col, j));
      }
    const u64 scale = f.inv(at(a, col, col));
    for (int j = 0; j < s; ++j) {
      at(a, col, j) = f.mul(at(a, col, j), scale);
      at(inverse, col, j) = f.mul(at(inverse, col, j), scale);
    }
    for (int i = 0; i < s; ++i) {
      const u64 c = at(a, i, col);
      if (i == col || c == 0) continue;
      for (int j = 0; j < s; ++j) {
        at(a, i, j) = f.sub(at(a, i, j), f.mul(c, at(a, col, j)));
        at(inverse, i, j) = f.sub(at(inverse, i, j), f.mul(c, at(inverse, col, j)));
      }
    }
  }
  return true;
}

}  // namespace

HalfTrekMatrix::HalfTrekMatrix(const MixedGraph& g, const PrimeField& f, std::mt19937_64& rng) : g_(g), f_(f) {
  const int n = g.num_nodes();
  block_pos_.assign(n, 0);
  block_of_.assign(n, 0);
  for (auto& component : g.strong_components()) {
    for (std::size_t i = 0; i < component.size(); ++i) {
      block_pos_[component[i]] = static_cast<int>(i);
      block_of_[component[i]] = static_cast<int>(blocks_.size());
    }
    blocks_.push_back({std::move(component), {}});
  }
  for (int attempt = 0; attempt < 16; ++attempt)
    if (draw(rng)) return;
  throw std::runtime_error("I - Lambda was singular at 16 random points; the field is too small for this graph");
}

bool HalfTrekMatrix::draw(std::mt19937_64& rng) {
  const int n = g_.num_nodes();
  lam_.assign(n, {});
  om_.assign(n, {});
  om_diag_.assign(n, 0);
  for (int w = 0; w < n; ++w) {
    lam_[w].resize(g_.parents(w).size());
    for (auto& x : lam_[w]) x = f_.random(rng);
    om_[w].resize(g_.siblings(w).size());
    om_diag_[w] = f_.random(rng);
  }
  for (const auto& e : g_.bidirected()) {
    const u64 x = f_.random(rng);
    const auto& sa = g_.siblings(e.from);
    const auto& sb = g_.siblings(e.to);
    om_[e.from][std::lower_bound(sa.begin(), sa.end(), e.to) - sa.begin()] = x;
    om_[e.to][std::lower_bound(sb.begin(), sb.end(), e.from) - sb.begin()] = x;
  }
  for (auto& block : blocks_) {
    const int s = static_cast<int>(block.nodes.size());
    if (s == 1) continue;
    std::vector<u64> a(static_cast<std::size_t>(s) * s, 0);
    for (int j = 0; j < s; ++j) {
      const int w = block.nodes[j];
      a[static_cast<std::size_t>(j) * s + j] = 1;
      const auto& pa = g_.parents(w);
      for (std::size_t k = 0; k < pa.size(); ++k)
        if (block_of_[pa[k]] == block_of_[w]) {
          u64& entry = a[static_cast<std::size_t>(block_pos_[pa[k]]) * s + j];
          entry = f_.sub(entry, lam_[w][k]);
        }
    }
    if (!invert(std::move(a), s, f_, block.inverse)) return false;
  }
  return true;
}

void HalfTrekMatrix::row(int y, std::vector<u64>& out) const {
  const int n = g_.num_nodes();
  // out = r with r (I - Lambda) = Omega[y, .]: r[w] = Omega[y, w] + sum_{u -> w} r[u] lambda_uw.
  std::vector<u64> rhs(n, 0);
  out.assign(n, 0);
  rhs[y] = om_diag_[y];
  const auto& sib = g_.siblings(y);
  for (std::size_t k = 0; k < sib.size(); ++k) rhs[sib[k]] = om_[y][k];
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const Block& block = blocks_[b];
    for (int w : block.nodes) {
      u64 acc = rhs[w];
      const auto& pa = g_.parents(w);
      for (std::size_t k = 0; k < pa.size(); ++k)
        if (block_of_[pa[k]] != static_cast<int>(b) && out[pa[k]]) acc = f_.add(acc, f_.mul(out[pa[k]], lam_[w][k]));
      rhs[w] = acc;
    }
    const int s = static_cast<int>(block.nodes.size());
    if (s == 1) {
      out[block.nodes[0]] = rhs[block.nodes[0]];
      continue;
    }
    for (int j = 0; j < s; ++j) {
      u64 acc = 0;
      for (int i = 0; i < s; ++i) {
        const u64 c = rhs[block.nodes[i]];
        if (c) acc = f_.add(acc, f_.mul(c, block.inverse[static_cast<std::size_t>(i) * s + j]));
      }
      out[block.nodes[j]] = acc;
    }
  }
}

std::size_t HalfTrekMatrix::bytes() const {
  std::size_t b = (om_diag_.capacity() + block_pos_.capacity() + block_of_.capacity()) * sizeof(u64);
  for (const auto& x : lam_) b += x.capacity() * sizeof(u64);
  for (const auto& x : om_) b += x.capacity() * sizeof(u64);
  for (const auto& block : blocks_) b += (block.inverse.capacity() + block.nodes.capacity()) * sizeof(u64);
  return b;
}

u64 HalfTrekMatrix::lambda(int from, int to) const {
  const auto& pa = g_.parents(to);
  auto it = std::lower_bound(pa.begin(), pa.end(), from);
  return it != pa.end() && *it == from ? lam_[to][it - pa.begin()] : 0;
}

u64 HalfTrekMatrix::omega(int a, int b) const {
  if (a == b) return om_diag_[a];
  const auto& s = g_.siblings(a);
  auto it = std::lower_bound(s.begin(), s.end(), b);
  return it != s.end() && *it == b ? om_[a][it - s.begin()] : 0;
}

}  // namespace htc
