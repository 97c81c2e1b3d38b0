#pragma once
// Arithmetic in the prime field F_p (default p = 2^61 - 1, a Mersenne prime with a cheap reduction),
// and an incrementally built row-echelon basis: the linear algebra of the randomized algorithms.
#include <cstdint>
#include <random>
#include <vector>

namespace htc {

using u64 = std::uint64_t;

bool is_prime(u64 n);  // deterministic Miller-Rabin for all 64-bit n

class PrimeField {
 public:
  static constexpr u64 kMersenne61 = (u64{1} << 61) - 1;
  // Throws std::invalid_argument unless p is a prime below 2^62.
  explicit PrimeField(u64 p = kMersenne61);

  u64 p() const { return p_; }
  u64 add(u64 a, u64 b) const {
    const u64 s = a + b;
    return s >= p_ ? s - p_ : s;
  }
  u64 sub(u64 a, u64 b) const { return a >= b ? a - b : a + p_ - b; }
  u64 mul(u64 a, u64 b) const {
    const unsigned __int128 t = static_cast<unsigned __int128>(a) * b;
    if (mersenne_) {
      // t = hi * 2^61 + lo and 2^61 = 1 (mod p).
      u64 r = static_cast<u64>(t & kMersenne61) + static_cast<u64>(t >> 61);
      r = (r & kMersenne61) + (r >> 61);
      return r >= p_ ? r - p_ : r;
    }
    return static_cast<u64>(t % p_);
  }
  u64 pow(u64 a, u64 e) const;
  u64 inv(u64 a) const { return pow(a, p_ - 2); }  // a != 0
  // Uniform on F_p: the Schwartz-Zippel lemma is stated for this distribution.
  u64 random(std::mt19937_64& rng) const;

 private:
  u64 p_;
  bool mersenne_;
};

// A basis of the span of the vectors inserted so far, in echelon form: row i has a 1 in column
// pivot(i) and a 0 in the pivot columns of rows 0..i-1. Memory dim x rank.
class EchelonBasis {
 public:
  void reset(int dim);
  int dim() const { return dim_; }
  int rank() const { return rank_; }
  bool full() const { return rank_ == dim_; }
  // Reduces x (length dim; overwritten) against the basis; when something is left, it joins the basis
  // with `tag` (the row's origin, e.g. a source node) and insert() returns true.
  bool insert(u64* x, int tag, const PrimeField& f);
  const std::vector<int>& tags() const { return tags_; }
  std::size_t bytes() const { return rows_.capacity() * sizeof(u64) + (pivot_.capacity() + tags_.capacity()) * sizeof(int); }
  // Columns c with e_c in the span: reduced row echelon form, then the rows with a single nonzero.
  std::vector<int> covered_columns(const PrimeField& f);

 private:
  int dim_ = 0, rank_ = 0;
  std::vector<u64> rows_;  // rank x dim, row-major
  std::vector<int> pivot_, tags_;
};

}  // namespace htc
