#pragma once
// A small, fast, seedable generator for simulations and evolutionary algorithms, where std::mt19937_64
// is slow to seed and heavy to copy per replica. xoshiro256** (Blackman and Vigna, 2018), seeded
// through SplitMix64. It is a UniformRandomBitGenerator, so <random>'s distributions accept it.
//
// Independent streams: Random::stream({seed, replica, purpose}) mixes several words into one state, so
// that replica r of seed s draws the same numbers however the replicas are scheduled.
// Random::stream(seed, "purpose", index) names the purpose (RunContext::stream uses it).
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>

namespace nexp {

// SplitMix64's finaliser: a bijective mixer with full avalanche.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 64-bit FNV-1a: a hash of a name that is the same on every platform (std::hash is not).
inline std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

class Random {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  explicit Random(std::uint64_t seed = 0) { reseed(seed); }
  // A stream keyed by several words, e.g. Random::stream({seed, replica, purpose}).
  static Random stream(std::initializer_list<std::uint64_t> key) {
    std::uint64_t k = 0x5DEECE66Dull, salt = 0;
    for (std::uint64_t w : key) k = mix64(k ^ (w * (0xD1B54A32D192ED03ull + 2 * salt++)));
    return Random(k);
  }
  // The stream of one named purpose: stream({seed, fnv1a64(purpose), index}).
  static Random stream(std::uint64_t seed, std::string_view purpose, std::uint64_t index = 0) {
    return stream({seed, fnv1a64(purpose), index});
  }
  // The raw state, for known-answer tests and for checkpoints: from_state(state()) continues the stream.
  static Random from_state(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
    Random r;
    r.s_[0] = a, r.s_[1] = b, r.s_[2] = c, r.s_[3] = d;
    return r;
  }
  static Random from_state(const std::array<std::uint64_t, 4>& s) { return from_state(s[0], s[1], s[2], s[3]); }
  std::array<std::uint64_t, 4> state() const { return {s_[0], s_[1], s_[2], s_[3]}; }

  void reseed(std::uint64_t seed) {
    // SplitMix64: successive states of a Weyl sequence, each mixed.
    for (auto& s : s_) s = mix64(seed), seed += 0x9E3779B97F4A7C15ull;
  }

  result_type operator()() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  bool bernoulli(double p) { return uniform() < p; }
  // Uniform in [0, n), without modulo bias (Lemire's multiply-shift with rejection).
  std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    unsigned __int128 m = static_cast<unsigned __int128>((*this)()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>((*this)()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
  double exponential(double rate) {
    return rate > 0 ? -std::log1p(-uniform()) / rate : std::numeric_limits<double>::infinity();
  }
  double normal() {  // Box-Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace nexp
