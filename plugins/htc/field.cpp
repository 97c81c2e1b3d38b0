#include "field.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace htc {

namespace {

u64 mulmod(u64 a, u64 b, u64 m) { return static_cast<u64>(static_cast<unsigned __int128>(a) * b % m); }

u64 powmod(u64 a, u64 e, u64 m) {
  u64 r = 1 % m;
  a %= m;
  for (; e; e >>= 1) {
    if (e & 1) r = mulmod(r, a, m);
    a = mulmod(a, a, m);
  }
  return r;
}

}  // namespace

bool is_prime(u64 n) {
  if (n < 2) return false;
  for (u64 q : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37})
    if (n % q == 0) return n == q;
  u64 d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  // These twelve bases decide primality for every n < 3.3 * 10^24.
  for (u64 a : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    u64 x = powmod(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s && composite; ++r) {
      x = mulmod(x, x, n);
      if (x == n - 1) composite = false;
    }
    if (composite) return false;
  }
  return true;
}

PrimeField::PrimeField(u64 p) : p_(p), mersenne_(p == kMersenne61) {
  if (p >= (u64{1} << 62) || !is_prime(p))
    throw std::invalid_argument(fmt::format("the field modulus must be a prime below 2^62, got {}", p));
}

u64 PrimeField::pow(u64 a, u64 e) const {
  u64 r = 1 % p_;
  for (; e; e >>= 1) {
    if (e & 1) r = mul(r, a);
    a = mul(a, a);
  }
  return r;
}

u64 PrimeField::random(std::mt19937_64& rng) const {
  if (mersenne_) {
    for (;;) {  // 61 random bits, rejecting the single value p itself
      const u64 x = rng() >> 3;
      if (x < p_) return x;
    }
  }
  // Rejection sampling below the largest multiple of p: exact and the same on every platform.
  const u64 limit = ~u64{0} - (~u64{0} % p_);
  for (;;) {
    const u64 x = rng();
    if (x < limit) return x % p_;
  }
}

void EchelonBasis::reset(int dim) {
  dim_ = dim;
  rank_ = 0;
  rows_.clear();
  pivot_.clear();
  tags_.clear();
}

bool EchelonBasis::insert(u64* x, int tag, const PrimeField& f) {
  if (full()) return false;
  // The elimination is the whole cost of the randomized algorithm on dense graphs: the Mersenne case
  // gets its own loop, free of the field's branch on the modulus.
  constexpr u64 p = PrimeField::kMersenne61;
  const bool mersenne = f.p() == p;
  for (int i = 0; i < rank_; ++i) {
    const u64 c = x[pivot_[i]];
    if (c == 0) continue;
    const u64* row = &rows_[static_cast<std::size_t>(i) * dim_];
    if (mersenne) {
      const u64 m = p - c;  // x + (p - c) row = x - c row
      for (int j = 0; j < dim_; ++j) {
        const unsigned __int128 t = static_cast<unsigned __int128>(m) * row[j] + x[j];
        u64 r = static_cast<u64>(t & p) + static_cast<u64>(t >> 61);
        x[j] = r >= p ? r - p : r;
      }
    } else {
      for (int j = 0; j < dim_; ++j)
        if (row[j]) x[j] = f.sub(x[j], f.mul(c, row[j]));
    }
  }
  int pivot = -1;
  for (int j = 0; j < dim_ && pivot < 0; ++j)
    if (x[j]) pivot = j;
  if (pivot < 0) return false;
  const u64 scale = f.inv(x[pivot]);
  for (int j = 0; j < dim_; ++j) rows_.push_back(f.mul(x[j], scale));
  pivot_.push_back(pivot);
  tags_.push_back(tag);
  ++rank_;
  return true;
}

std::vector<int> EchelonBasis::covered_columns(const PrimeField& f) {
  // Back-substitution to reduced form: row i is already 0 in the pivots of earlier rows, so clearing
  // pivot i from the earlier rows, last row first, never refills a cleared pivot.
  for (int i = rank_ - 1; i >= 0; --i) {
    const u64* row = &rows_[static_cast<std::size_t>(i) * dim_];
    for (int k = 0; k < i; ++k) {
      u64* other = &rows_[static_cast<std::size_t>(k) * dim_];
      const u64 c = other[pivot_[i]];
      if (c == 0) continue;
      for (int j = 0; j < dim_; ++j)
        if (row[j]) other[j] = f.sub(other[j], f.mul(c, row[j]));
    }
  }
  // In reduced form, e_c is in the row space iff the row with pivot c has no other nonzero entry
  // (every kernel vector then vanishes at c).
  std::vector<int> covered;
  for (int i = 0; i < rank_; ++i) {
    const u64* row = &rows_[static_cast<std::size_t>(i) * dim_];
    int nonzeros = 0;
    for (int j = 0; j < dim_; ++j) nonzeros += row[j] != 0;
    if (nonzeros == 1) covered.push_back(pivot_[i]);
  }
  return covered;
}

}  // namespace htc
