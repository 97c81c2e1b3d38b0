#pragma once
// Counter-based random streams for common random numbers.
//
// Every random quantity of the fleet simulator is drawn from a stream named by what it is for and
// whose it is: stream(seed, Purpose::Repair, fault_id, attempt). Two policies simulated with the same
// seed therefore see the same fault arrivals, the same symptom streams and the same coin flips for
// "did this repair fix it", as long as they reach the same situation. That is what makes the paired
// comparison of policies (common random numbers) tight.
#include <cmath>
#include <cstdint>
#include <limits>

namespace drwatson {

// SplitMix64 finaliser: a bijective mixer with full avalanche.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

enum class Purpose : std::uint64_t {
  Arrival = 1, Lemon, Symptom, Peers, Repair, Qa, Sweep, Severity, Cause, Corpus, Batch, Bootstrap, History,
  Mask, Split, Recur,
};

// xoshiro256** seeded through SplitMix64 from a key of up to four words.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) { reseed(seed); }
  Rng(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0) {
    std::uint64_t k = mix64(seed ^ 0x5DEECE66Dull);
    k = mix64(k ^ static_cast<std::uint64_t>(purpose));
    k = mix64(k ^ a);
    k = mix64(k ^ (b * 0xD1B54A32D192ED03ull));
    k = mix64(k ^ (c * 0xABC98388FB8FAC03ull));
    reseed(k);
  }

  std::uint64_t next() {
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
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  bool bernoulli(double p) { return uniform() < p; }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  int integer(int lo, int hi) { return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo + 1))); }
  double exponential(double rate) {
    if (rate <= 0) return std::numeric_limits<double>::infinity();
    return -std::log1p(-uniform()) / rate;
  }
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double lognormal(double sigma) { return std::exp(sigma * normal()); }
  std::uint64_t poisson(double mean) {
    if (mean <= 0) return 0;
    if (mean > 30) {  // normal approximation is fine for background counts this large
      const double x = std::round(mean + std::sqrt(mean) * normal());
      return x < 0 ? 0 : static_cast<std::uint64_t>(x);
    }
    const double limit = std::exp(-mean);
    double p = uniform();
    std::uint64_t k = 0;
    while (p > limit) p *= uniform(), ++k;
    return k;
  }
  // Index drawn with probability proportional to weights[i].
  template <class Weights>
  std::size_t categorical(const Weights& weights) {
    double total = 0;
    for (double w : weights) total += w;
    double u = uniform() * total;
    std::size_t i = 0, last = 0;
    for (double w : weights) {
      if (w > 0) last = i;
      if (u < w) return i;
      u -= w;
      ++i;
    }
    return last;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  void reseed(std::uint64_t seed) {
    for (auto& s : s_) s = seed = mix64(seed);
  }
  std::uint64_t s_[4];
};

}  // namespace drwatson
