// nexp's samplers on the standard objectives (bench/samplers_objectives.hpp), in process: one CSV row
// per trial (impl, sampler, objective, seed, trial, value, best so far, seconds the sampler took to
// propose it). bench/samplers.sh runs it beside Optuna and prints the comparison.
//   nexp_sampler_bench SEEDS BUDGET [OBJECTIVE ...] > nexp.csv
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "samplers/tpe.hpp"
#include "samplers_objectives.hpp"

using namespace nexp;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SEEDS BUDGET [OBJECTIVE ...]\n", argv[0]);
    return 2;
  }
  const int seeds = std::atoi(argv[1]), budget = std::atoi(argv[2]);
  const std::vector<std::string> only(argv + 3, argv + argc);
  std::printf("impl,sampler,objective,seed,trial,value,best,ask_seconds\n");
  for (const auto& obj : bench::objectives()) {
    if (!only.empty() && std::find(only.begin(), only.end(), obj.name) == only.end()) continue;
    for (const std::string sampler : {"tpe", "random", "tpe_optuna310"})
      for (int seed = 0; seed < seeds; ++seed) {
        // tpe_optuna310: the density as Optuna 3.1.0 computes it (samplers/tpe.hpp), for comparison.
        samplers::TpeOptions compat;
        compat.kernel_scale = false;
        std::unique_ptr<samplers::Sampler> s;
        if (sampler == "tpe_optuna310") s = std::make_unique<samplers::TpeSampler>(obj.space, static_cast<std::uint64_t>(seed), compat);
        else s = samplers::make_sampler(sampler, obj.space, static_cast<std::uint64_t>(seed));
        std::vector<samplers::Observation> history;
        double best = INFINITY;
        for (int n = 0; n < budget; ++n) {
          const auto t0 = std::chrono::steady_clock::now();
          samplers::Point x = s->ask(history, n);
          const double ask = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const double v = obj.f(x, static_cast<std::uint64_t>(seed), n);
          best = std::min(best, v);
          samplers::Observation o;
          o.number = n, o.x = std::move(x), o.values = {v};
          history.push_back(std::move(o));
          std::printf("nexp,%s,%s,%d,%d,%.10g,%.10g,%.3e\n", sampler.c_str(), obj.name.c_str(), seed, n, v, best, ask);
        }
      }
  }
  return 0;
}
