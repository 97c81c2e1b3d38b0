#pragma once
// Counter-based random streams for common random numbers.
//
// Every random quantity of the fleet simulator is drawn from a stream named by what it is for and
// whose it is: stream(seed, Purpose::Repair, fault_id, attempt). Two policies simulated with the same
// seed therefore see the same fault arrivals, the same symptom streams and the same coin flips for
// "did this repair fix it", as long as they reach the same situation. That is what makes the paired
// comparison of policies (common random numbers) tight.
//
// The generator is nexp::Random (xoshiro256**). Two things stay drwatson's own, because changing them
// would change every stream and with it every published number: the key is folded into one word by
// mixing seed, purpose and up to three counters in a fixed order, and the four state words are chained
// SplitMix64 outputs (s0 = mix(key), s1 = mix(s0), ...) where nexp::Random::reseed mixes a Weyl
// sequence (s_i = mix(key + i * golden)). below() keeps its modulo reduction for the same reason.
#include <cmath>
#include <cstdint>

#include <nexp/random.hpp>

namespace drwatson {

using nexp::mix64;

enum class Purpose : std::uint64_t {
  Arrival = 1, Lemon, Symptom, Peers, Repair, Qa, Sweep, Severity, Cause, Corpus, Batch, Bootstrap, History,
  Mask, Split, Recur,
};

class Rng : public nexp::Random {
 public:
  explicit Rng(std::uint64_t seed) : nexp::Random(chained(seed)) {}
  Rng(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0)
      : nexp::Random(chained(key(seed, purpose, a, b, c))) {}

  std::uint64_t next() { return (*this)(); }
  // Uniform integer in [0, n) by modulo (hides nexp::Random::below, which rejects to remove the bias;
  // for the n used here, at most a few thousand, the bias is below 1e-15).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  int integer(int lo, int hi) { return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo + 1))); }
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
  static std::uint64_t key(std::uint64_t seed, Purpose purpose, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t k = mix64(seed ^ 0x5DEECE66Dull);
    k = mix64(k ^ static_cast<std::uint64_t>(purpose));
    k = mix64(k ^ a);
    k = mix64(k ^ (b * 0xD1B54A32D192ED03ull));
    return mix64(k ^ (c * 0xABC98388FB8FAC03ull));
  }
  static nexp::Random chained(std::uint64_t seed) {
    const std::uint64_t s0 = mix64(seed), s1 = mix64(s0), s2 = mix64(s1), s3 = mix64(s2);
    return nexp::Random::from_state(s0, s1, s2, s3);
  }
};

}  // namespace drwatson
