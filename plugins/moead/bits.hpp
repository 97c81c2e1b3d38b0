#pragma once
// Bit strings packed in machine words, a small fast PRNG, and the two mutation operators.
// Nothing here allocates: a BitString is a fixed array of words, so copying, mutating and evaluating
// a search point never touches the heap.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <nexp/random.hpp>

namespace moead {

// Longest bit string the plugin supports (four 64-bit words). The experiments use n <= 64.
constexpr int kMaxBits = 256;
constexpr int kWords = kMaxBits / 64;

// x in {0,1}^n; bit i (0-based) is position i+1 of the papers' notation. Bits at positions >= n are
// always zero, so word-wise operations (popcount, clz) need masking only at the top word.
struct BitString {
  std::array<std::uint64_t, kWords> w{};

  bool get(int i) const { return (w[i >> 6] >> (i & 63)) & 1u; }
  void set(int i, bool b) {
    const std::uint64_t m = std::uint64_t{1} << (i & 63);
    w[i >> 6] = b ? (w[i >> 6] | m) : (w[i >> 6] & ~m);
  }
  void flip(int i) { w[i >> 6] ^= std::uint64_t{1} << (i & 63); }
  bool operator==(const BitString& o) const { return w == o.w; }
  bool operator!=(const BitString& o) const { return w != o.w; }
};

// nexp::Random (xoshiro256** seeded through SplitMix64) with the draws these algorithms use. One
// generator per independent run, so replicas give the same result whichever thread runs them.
class Rng : public nexp::Random {
 public:
  using nexp::Random::Random;
  std::uint64_t next() { return (*this)(); }
  // Uniform in (0, 1]: never 0, so log() is finite.
  double uniform_open0() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  // Uniform integer in [0, bound), bound > 0 (Lemire's multiply-shift without rejection: one draw per
  // call, a bias below 2^-32 for the bounds used here, far under anything a run can detect).
  std::uint32_t below(std::uint32_t bound) {
    return static_cast<std::uint32_t>(((next() >> 32) * std::uint64_t{bound}) >> 32);
  }
  bool coin() { return next() >> 63; }
};

inline BitString random_bits(int n, Rng& rng) {
  BitString x;
  for (int k = 0; k * 64 < n; ++k) {
    const int valid = n - 64 * k >= 64 ? 64 : n - 64 * k;
    x.w[k] = valid == 64 ? rng.next() : rng.next() & ((std::uint64_t{1} << valid) - 1);
  }
  return x;
}

enum class MutationKind { Standard, PowerLaw };

// Standard bit mutation flips each bit independently with probability 1/n. Power-law mutation
// (Doerr, Le, Makhmara, Nguyen 2017; used for MOEA/D by Doerr, Krejca, Weeks 2024) draws a strength
// k in {1..n} with P(k) ~ k^-beta and flips k distinct bits chosen uniformly at random.
class Mutation {
 public:
  Mutation(MutationKind kind, int n, double beta);
  // Mutates x in place; returns the number of bits flipped (0 is possible for standard mutation).
  int apply(BitString& x, Rng& rng) const;
  MutationKind kind() const { return kind_; }

 private:
  // Flips k distinct positions chosen uniformly at random (rejection against a mask: k is small).
  void flip_distinct(BitString& x, int k, Rng& rng) const;
  MutationKind kind_;
  int n_;
  std::vector<double> cdf_;  // standard: P(K <= k), K ~ Bin(n, 1/n); power law: P(K <= k+1)
};

inline Mutation::Mutation(MutationKind kind, int n, double beta) : kind_(kind), n_(n) {
  if (kind == MutationKind::Standard) {
    // Independent flips with probability p = 1/n are the same as: K ~ Bin(n, p) flips, at K distinct
    // uniformly random positions. P(K = k) by the recurrence P(k+1) = P(k) (n-k)/(k+1) p/(1-p).
    const double p = 1.0 / n;
    double pk = std::pow(1 - p, n), acc = 0;
    for (int k = 0; k <= n; ++k) {
      cdf_.push_back(acc += pk);
      pk *= (n - k) / (k + 1.0) * p / (1 - p);
    }
  } else {
    double total = 0;
    for (int k = 1; k <= n; ++k) total += std::pow(k, -beta);
    double acc = 0;
    for (int k = 1; k <= n; ++k) cdf_.push_back(acc += std::pow(k, -beta) / total);
  }
  cdf_.back() = 1.0;
}

inline int Mutation::apply(BitString& x, Rng& rng) const {
  // Inverse transform; both distributions put almost all mass on the first few values.
  const double u = rng.uniform();
  int i = 0;
  while (i + 1 < static_cast<int>(cdf_.size()) && cdf_[i] <= u) ++i;
  const int k = kind_ == MutationKind::Standard ? i : i + 1;
  flip_distinct(x, k, rng);
  return k;
}

inline void Mutation::flip_distinct(BitString& x, int k, Rng& rng) const {
  if (k == 1) {
    x.flip(static_cast<int>(rng.below(static_cast<std::uint32_t>(n_))));
    return;
  }
  BitString chosen;
  for (int done = 0; done < k;) {
    const int i = static_cast<int>(rng.below(static_cast<std::uint32_t>(n_)));
    if (chosen.get(i)) continue;
    chosen.set(i, true);
    x.flip(i);
    ++done;
  }
}

}  // namespace moead
