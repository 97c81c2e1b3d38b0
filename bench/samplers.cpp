// nexp's samplers on the standard objectives (bench/samplers_objectives.hpp), in process: one CSV row
// per trial (impl, sampler, objective, seed, trial, value, best so far, seconds the sampler took to
// propose it). bench/samplers.sh runs it beside Optuna and prints the comparison.
//   nexp_sampler_bench SEEDS BUDGET [OBJECTIVE ...] > nexp.csv
// The same history given to both sides (bench/samplers_same_history.py): TPE's next proposal after the
// trials of HISTORY (a CSV of x0, x1, ..., value in trial order), once for each of SEEDS seeds.
//   nexp_sampler_bench propose OBJECTIVE HISTORY SEEDS > proposals.csv
// The two-objective problems (bench/samplers_pareto.sh): one row per trial (impl, sampler, problem,
// seed, trial, f1, f2, hypervolume of the trials so far, seconds the sampler took to propose it).
//   nexp_sampler_bench pareto SEEDS BUDGET [PROBLEM ...] > nexp_pareto.csv
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "samplers/nsga2.hpp"
#include "samplers/tpe.hpp"
#include "samplers_objectives.hpp"

using namespace nexp;

namespace {

const bench::Objective* find_objective(const std::string& name) {
  static const std::vector<bench::Objective> all = bench::objectives();
  for (const auto& o : all)
    if (o.name == name) return &o;
  return nullptr;
}

std::vector<samplers::Observation> read_history(const std::string& path, std::size_t dims) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<samplers::Observation> history;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::vector<double> cells;
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(std::stod(cell));
    if (cells.size() != dims + 1) continue;
    samplers::Observation o;
    o.number = static_cast<int>(history.size());
    o.x.assign(cells.begin(), cells.end() - 1);
    o.values = {cells.back()};
    history.push_back(std::move(o));
  }
  return history;
}

// TPE's proposal for trial len(history), seeds 0..SEEDS-1, with the default density and with Optuna
// 3.1.0's (each kernel's -log sigma left out).
int propose(const std::string& name, const std::string& path, int seeds) {
  const bench::Objective* obj = find_objective(name);
  if (!obj) {
    std::fprintf(stderr, "unknown objective '%s'\n", name.c_str());
    return 2;
  }
  const auto history = read_history(path, obj->space.size());
  std::printf("impl,sampler,seed");
  for (const auto& d : obj->space) std::printf(",%s", d.key.c_str());
  std::printf("\n");
  for (const bool scale : {true, false}) {
    samplers::TpeOptions o;
    o.kernel_scale = scale;
    for (int seed = 0; seed < seeds; ++seed) {
      samplers::TpeSampler s(obj->space, static_cast<std::uint64_t>(seed), o);
      const samplers::Point x = s.ask(history, static_cast<int>(history.size()));
      std::printf("nexp,%s,%d", scale ? "tpe" : "tpe_optuna310", seed);
      for (double v : x) std::printf(",%.17g", v);
      std::printf("\n");
    }
  }
  return 0;
}

std::vector<std::string> sampler_names(const char* fallback) {
  const char* env = std::getenv("NEXP_SAMPLERS");
  std::vector<std::string> names;
  std::stringstream list(env && *env ? env : fallback);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  return names;
}

// NEXP_SAMPLERS (comma-separated, default nsga2,random) on the two-objective problems, with their
// defaults (make_sampler, as the sweep launcher builds them); nsga2_optuna310 is NSGA-II with Optuna
// 3.1.0's parent selection (samplers/nsga2.hpp), for comparison.
int pareto(int seeds, int budget, const std::vector<std::string>& only) {
  std::printf("impl,sampler,problem,seed,trial,f1,f2,hypervolume,ask_seconds\n");
  for (const auto& p : bench::pareto_problems()) {
    if (!only.empty() && std::find(only.begin(), only.end(), p.name) == only.end()) continue;
    for (const std::string& sampler : sampler_names("nsga2,random"))
      for (int seed = 0; seed < seeds; ++seed) {
        const auto seed_word = static_cast<std::uint64_t>(seed);
        const std::unique_ptr<samplers::Sampler> s =
            sampler == "nsga2_optuna310"
                ? std::make_unique<samplers::Nsga2Sampler>(p.space, seed_word, 50, samplers::Nsga2Selection::Optuna310)
                : samplers::make_sampler(sampler, p.space, seed_word);
        std::vector<samplers::Observation> history;
        std::vector<std::array<double, 2>> values;
        for (int n = 0; n < budget; ++n) {
          const auto t0 = std::chrono::steady_clock::now();
          samplers::Point x = s->ask(history, n);
          const double ask = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const std::array<double, 2> v = p.f(x);
          values.push_back(v);
          samplers::Observation o;
          o.number = n, o.x = std::move(x), o.values = {v[0], v[1]};
          history.push_back(std::move(o));
          std::printf("nexp,%s,%s,%d,%d,%.10g,%.10g,%.10g,%.3e\n", sampler.c_str(), p.name.c_str(), seed, n, v[0], v[1],
                      samplers::hypervolume_2d(values, p.reference), ask);
        }
      }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "propose") return propose(argv[2], argv[3], std::atoi(argv[4]));
  if (argc >= 4 && std::string(argv[1]) == "pareto")
    return pareto(std::atoi(argv[2]), std::atoi(argv[3]), std::vector<std::string>(argv + 4, argv + argc));
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SEEDS BUDGET [OBJECTIVE ...] | propose OBJECTIVE HISTORY SEEDS | pareto SEEDS BUDGET [PROBLEM ...]\n", argv[0]);
    return 2;
  }
  const int seeds = std::atoi(argv[1]), budget = std::atoi(argv[2]);
  const std::vector<std::string> only(argv + 3, argv + argc);
  // NEXP_SAMPLERS (comma-separated) picks the samplers; tpe_optuna310 is TPE with Optuna 3.1.0's density.
  const std::vector<std::string> names = sampler_names("tpe,random,tpe_optuna310");
  std::printf("impl,sampler,objective,seed,trial,value,best,ask_seconds\n");
  for (const auto& obj : bench::objectives()) {
    if (!only.empty() && std::find(only.begin(), only.end(), obj.name) == only.end()) continue;
    for (const std::string& sampler : names)
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
