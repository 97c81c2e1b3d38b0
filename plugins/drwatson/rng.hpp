#pragma once
// Counter-based random streams for common random numbers.
//
// Every random quantity of the fleet simulator is drawn from a stream named by what it is for and
// whose it is: stream(seed, Purpose::Repair, fault_id, attempt). Two policies simulated with the same
// seed therefore see the same fault arrivals, the same symptom streams and the same coin flips for
// "did this repair fix it", as long as they reach the same situation. That is what makes the paired
// comparison of policies (common random numbers) tight.
//
// The generator is nexp::Random; a stream's key is (seed, purpose, a, b, c), folded by
// nexp::Random::stream, the derivation every nexp run uses for its named streams.
#include <cmath>
#include <cstdint>

#include <nexp/random.hpp>

namespace drwatson {


enum class Purpose : std::uint64_t {
  Arrival = 1, Lemon, Symptom, Peers, Repair, Qa, Sweep, Severity, Cause, Corpus, Batch, Bootstrap, History,
  Mask, Split, Recur, Battery,
};

class Rng : public nexp::Random {
 public:
  explicit Rng(std::uint64_t seed) : nexp::Random(seed) {}
  Rng(std::uint64_t seed, Purpose purpose, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0)
      : nexp::Random(nexp::Random::stream({seed, static_cast<std::uint64_t>(purpose), a, b, c})) {}

  std::uint64_t next() { return (*this)(); }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : nexp::Random::below(n); }
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
};

}  // namespace drwatson
