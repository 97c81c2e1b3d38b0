#include "problem.hpp"

#include <fmt/format.h>

#include <cmath>

namespace moead {

namespace {

// Portable popcount (SWAR): the baseline x86-64 target has no popcnt instruction and
// __builtin_popcountll would call a library routine.
inline int popcount(std::uint64_t w) {
  w = w - ((w >> 1) & 0x5555555555555555ULL);
  w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
  w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((w * 0x0101010101010101ULL) >> 56);
}

}  // namespace

long double log1p_portable(long double x) {
  // 1 + x = m 2^k with m in [1/sqrt 2, sqrt 2) (halving is exact), then log m = 2 atanh z with
  // z = (m - 1)/(m + 1), |z| < 0.172, summed to 40 odd terms (z^81 < 1e-61). Only +, *, / are used:
  // x87's logarithm instructions round the last bit differently on different CPUs, and one bit is
  // enough to flip a tie in the scalarisation and change the run.
  constexpr long double ln2 = 0.693147180559945309417232121458176568L;
  constexpr long double sqrt2 = 1.41421356237309504880168872420969808L;
  long double m = 1 + x;
  int k = 0;
  for (; m >= sqrt2; m /= 2) ++k;
  for (; m < sqrt2 / 2; m *= 2) --k;
  const long double z = (m - 1) / (m + 1), z2 = z * z;
  long double sum = 0, power = z;
  for (int j = 0; j < 40; ++j, power *= z2) sum += power / (2 * j + 1);
  return k * ln2 + 2 * sum;
}

const std::vector<std::pair<std::string, ProblemKind>>& problem_kinds() {
  static const std::vector<std::pair<std::string, ProblemKind>> kinds = {
      {"lotz", ProblemKind::Lotz}, {"oneminmax", ProblemKind::OneMinMax}, {"cocz", ProblemKind::Cocz}};
  return kinds;
}
const std::vector<std::pair<std::string, DistortionKind>>& distortion_kinds() {
  static const std::vector<std::pair<std::string, DistortionKind>> kinds = {
      {"identity", DistortionKind::Identity}, {"square", DistortionKind::Square}, {"exp2", DistortionKind::Exp2},
      {"nsqrt", DistortionKind::NSqrt},       {"log1p", DistortionKind::Log1p},   {"table", DistortionKind::Table}};
  return kinds;
}
DistortionKind parse_distortion(const std::string& name) {
  for (const auto& [text, kind] : distortion_kinds())
    if (text == name) return kind;
  throw nexp::ConfigError(
      fmt::format("unknown distortion '{}': expected one of {{identity, square, exp2, nsqrt, log1p, table}}", name));
}
const char* problem_name(ProblemKind kind) { return problem_kinds()[static_cast<int>(kind)].first.c_str(); }
const char* distortion_name(DistortionKind kind) { return distortion_kinds()[static_cast<int>(kind)].first.c_str(); }

std::vector<long double> distortion_table(DistortionKind kind, int n, const std::vector<double>& table) {
  std::vector<long double> g(n + 1);
  for (int t = 0; t <= n; ++t) {
    const long double x = t;
    switch (kind) {
      case DistortionKind::Identity: g[t] = x; break;
      case DistortionKind::Square: g[t] = x * x; break;
      case DistortionKind::Exp2: g[t] = std::ldexp(1.0L, t) - 1.0L; break;
      case DistortionKind::NSqrt: g[t] = n * std::sqrt(x); break;
      case DistortionKind::Log1p: g[t] = log1p_portable(x); break;
      case DistortionKind::Table:
        if (static_cast<int>(table.size()) != n + 1)
          throw nexp::ConfigError(fmt::format(
              "distortion 'table' needs n+1 = {} values g(0), ..., g(n) in `table` (or `table2` for the second "
              "objective); found {}. Give a strictly increasing list such as [0, 1, 4, 9, ...]",
              n + 1, table.size()));
        g[t] = table[t];
        break;
    }
  }
  if (kind == DistortionKind::Exp2 && n > 64)
    throw nexp::ConfigError(fmt::format(
        "distortion 'exp2' (2^t - 1) with n = {}: values beyond 2^64 are no longer exact integers in the 64-bit "
        "mantissa used for scalarisation, so ties between neighbouring points could appear. Use n <= 64",
        n));
  for (int t = 0; t <= n; ++t)
    if (!std::isfinite(static_cast<double>(g[t])) || (t > 0 && !(g[t] > g[t - 1])))
      throw nexp::ConfigError(fmt::format(
          "distortion '{}' must be finite and strictly increasing on 0..{}; g({}) = {} follows g({}) = {}. A "
          "monotone distortion keeps the Pareto set; a non-increasing one does not",
          distortion_name(kind), n, t, static_cast<double>(g[t]), t - 1, t > 0 ? static_cast<double>(g[t - 1]) : 0.0));
  return g;
}

Problem::Problem(ProblemKind kind, int n, DistortionKind d1, DistortionKind d2, const std::vector<double>& table1,
                 const std::vector<double>& table2)
    : kind_(kind), d1_(d1), d2_(d2), n_(n) {
  if (n < 2 || n > kMaxBits)
    throw nexp::ConfigError(fmt::format("bit-string length n = {} is outside [2, {}]", n, kMaxBits));
  if (kind == ProblemKind::Cocz && n % 2 != 0)
    throw nexp::ConfigError(fmt::format("COCZ splits x into two halves and needs an even n; found n = {}", n));
  g1_ = distortion_table(d1, n, table1);
  g2_ = distortion_table(d2, n, table2);
  top_word_ = (n - 1) / 64;
  const int top_bits = n - 64 * top_word_;
  top_bits_ = top_bits;
  top_mask_ = top_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << top_bits) - 1;
  switch (kind) {
    case ProblemKind::Lotz:
    case ProblemKind::OneMinMax:
      front_size_ = n + 1, u_min_ = 0, pareto_sum_ = n;
      break;
    case ProblemKind::Cocz:
      front_size_ = n / 2 + 1, u_min_ = n / 2, pareto_sum_ = 3 * n / 2;
      for (int i = 0; i < n / 2; ++i) first_half_.set(i, true);
      break;
  }
  const int v_min = pareto_sum_ - (u_min_ + front_size_ - 1);
  ref_ = {g1_[u_min_] - (g1_[u_min_ + 1] - g1_[u_min_]), g2_[v_min] - (g2_[v_min + 1] - g2_[v_min])};
  long double prev_f1 = ref_.first;
  for (int k = 0; k < front_size_; ++k) {  // front sorted by f1 ascending, f2 descending
    const Point p = front_point(k);
    front_hv_ += (p.f1 - prev_f1) * (p.f2 - ref_.second);
    prev_f1 = p.f1;
  }
}

std::pair<int, int> Problem::base(const BitString& x) const {
  switch (kind_) {
    case ProblemKind::Lotz: {
      int lo = 0;
      for (int k = 0; k <= top_word_; ++k) {
        const std::uint64_t mask = k == top_word_ ? top_mask_ : ~std::uint64_t{0};
        const std::uint64_t zeros = ~x.w[k] & mask;
        if (zeros) {
          lo += __builtin_ctzll(zeros);
          break;
        }
        lo += k == top_word_ ? top_bits_ : 64;
      }
      int tz = 0;
      for (int k = top_word_; k >= 0; --k) {
        const int valid = k == top_word_ ? top_bits_ : 64;
        if (x.w[k]) {
          tz += __builtin_clzll(x.w[k]) - (64 - valid);
          break;
        }
        tz += valid;
      }
      return {lo, tz};
    }
    case ProblemKind::OneMinMax: {
      int ones = 0;
      for (int k = 0; k <= top_word_; ++k) ones += popcount(x.w[k]);
      return {n_ - ones, ones};
    }
    case ProblemKind::Cocz: {
      int ones = 0, first = 0;
      for (int k = 0; k <= top_word_; ++k) {
        ones += popcount(x.w[k]);
        first += popcount(x.w[k] & first_half_.w[k]);
      }
      return {ones, first + (n_ / 2 - (ones - first))};
    }
  }
  return {0, 0};
}

BitString Problem::pareto_string(int k) const {
  BitString x;
  switch (kind_) {
    case ProblemKind::Lotz:
      for (int i = 0; i < k; ++i) x.set(i, true);
      break;
    case ProblemKind::OneMinMax:
      for (int i = 0; i < n_ - k; ++i) x.set(i, true);
      break;
    case ProblemKind::Cocz:
      for (int i = 0; i < n_ / 2 + k; ++i) x.set(i, true);
      break;
  }
  return x;
}

std::vector<std::pair<int, int>> Problem::attainable() const {
  std::vector<std::pair<int, int>> out;
  switch (kind_) {
    case ProblemKind::Lotz:
      // On the front u + v = n; off it, 1^u 0 ... 1 0^v gives every u + v <= n - 2 (u + v = n - 1 is
      // impossible: bit u+1 would have to be both the first 0 and the last 1).
      for (int u = 0; u <= n_; ++u) {
        out.emplace_back(u, n_ - u);
        for (int v = 0; u + v <= n_ - 2; ++v) out.emplace_back(u, v);
      }
      break;
    case ProblemKind::OneMinMax:
      for (int k = 0; k <= n_; ++k) out.emplace_back(n_ - k, k);
      break;
    case ProblemKind::Cocz:
      for (int p = 0; p <= n_ / 2; ++p)      // ones in the first half
        for (int q = 0; q <= n_ / 2; ++q)    // ones in the second half
          out.emplace_back(p + q, p + n_ / 2 - q);
      break;
  }
  return out;
}

std::string Problem::describe() const {
  return fmt::format("moead.problem: {} n={} f1=g1({}) f2=g2({}), front of {} points", problem_name(kind_), n_,
                     distortion_name(d1_), distortion_name(d2_), front_size_);
}

std::shared_ptr<nexp::Dataset> make_problem_dataset(const ProblemOptions& o, nexp::RunContext&) {
  auto d = std::make_shared<ProblemData>();
  const std::vector<double> none;
  d->problem = std::make_shared<const Problem>(o.problem, o.n, o.distortion, o.distortion2, o.table.value_or(none),
                                               o.table2.value_or(none));
  return d;
}

}  // namespace moead
