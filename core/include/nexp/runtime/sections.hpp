#pragma once
// The options of core's own config sections, declared like a component's (nexp/options.hpp), so that
// they are validated, described and bound the same way.
#include <cstdint>
#include <string>
#include <vector>

#include "nexp/export.hpp"
#include "nexp/options.hpp"

namespace nexp {

// `slurm:`: resources of the job array a sweep submits with --launcher slurm.
struct SlurmOptions {
  std::string partition;
  std::string time;
  int cpus_per_task = 1;
  std::string mem;
  std::string gres;
  std::vector<std::string> extra;
  int max_parallel = 0;

  static void declare(Options<SlurmOptions>& o) {
    o.add("partition", &SlurmOptions::partition, "partition to submit to (default: the cluster's default)");
    o.add("time", &SlurmOptions::time, "time limit per trial, as Slurm writes it (e.g. 01:00:00)");
    o.add("cpus_per_task", &SlurmOptions::cpus_per_task, "cores per trial; its torch and oneTBB threads").min(1);
    o.add("mem", &SlurmOptions::mem, "memory per trial, as Slurm writes it (e.g. 8G)");
    o.add("gres", &SlurmOptions::gres, "generic resources per trial (e.g. gpu:1)");
    o.add("extra", &SlurmOptions::extra, "further #SBATCH lines, each without the '#SBATCH ' prefix");
    o.add("max_parallel", &SlurmOptions::max_parallel, "array tasks at once; 0: --jobs").min(0);
  }
};

// `distributed:`: the run's ranks (nexp/comm.hpp). Absent: one process, as without it.
struct DistributedOptions {
  int processes = 1;
  std::string backend = "gloo";
  std::string timeout = "60s";  // of each collective (the rendezvous waits at least 2 min): 90s, 5m, 500ms, 1h

  static void declare(Options<DistributedOptions>& o) {
    o.add("processes", &DistributedOptions::processes, "ranks of the run (local processes, or Slurm tasks)").range(1, 1024);
    o.add("backend", &DistributedOptions::backend, "collective backend: gloo (c10d's, CPU tensors; Debian's LibTorch is built without MPI, so mpi is not offered)").choices({"gloo"});
    o.add("timeout", &DistributedOptions::timeout, "a rank that waits longer than this fails the run (e.g. 60s, 5m)");
  }
};

// "90s", "5m", "500ms", "1h" or a plain number of seconds; -1 when `text` is none of these or not positive.
NEXP_API double parse_duration_seconds(const std::string& text);

// `sweep: {pruner: ...}` (see SweepPruner in sweep.hpp).
struct PrunerSection {
  std::string type = "none";
  std::string metric;
  std::string mode = "auto";
  std::int64_t min_step = 1;
  double reduction = 3;
  int startup_trials = 5;

  static void declare(Options<PrunerSection>& o) {
    o.add("type", &PrunerSection::type, "none, median (stop a trial whose best value so far is worse than the completed "
                                        "trials' median at the same step) or asha (asynchronous successive halving)")
        .choices({"none", "median", "asha"});
    o.add("metric", &PrunerSection::metric, "the logged metric it reads (default: the objective's metric)");
    o.add("mode", &PrunerSection::mode, "min or max (auto: the objective's mode)").choices({"auto", "min", "max"});
    o.add("min_step", &PrunerSection::min_step, "median: no pruning before this step; asha: the first rung").min(1);
    o.add("reduction", &PrunerSection::reduction, "asha: rungs at min_step * reduction^k; the best 1/reduction go on").min(1.5);
    o.add("startup_trials", &PrunerSection::startup_trials, "median: completed trials before it prunes").min(0);
  }
};

// `sweep:` less its `params:` block (whose keys are config paths: see sweep.hpp).
struct SweepOptions {
  int samples = 0;
  std::int64_t seed = 0;
  std::string sampler = "grid";
  int trials = 0;
  PrunerSection pruner;

  static void declare(Options<SweepOptions>& o) {
    o.add("samples", &SweepOptions::samples, "draws of the sampled axes per grid point").min(0);
    o.add("seed", &SweepOptions::seed, "seed of the draws (a sweep always expands to the same trials)").min(0);
    o.add("sampler", &SweepOptions::sampler,
          "grid (the axes' product, with `samples` draws of sampled axes), random (`trials` draws), tpe "
          "(Tree-structured Parzen Estimator), cmaes (CMA-ES with restarts; numeric axes) or nsga2 (NSGA-II; "
          "several objectives): each trial of tpe, cmaes and nsga2 is proposed from the results so far")
        .choices({"grid", "random", "tpe", "cmaes", "nsga2"});
    o.add("trials", &SweepOptions::trials, "random and tpe: trials in all (for random: the draws per grid point)").min(0);
    o.add("pruner", &SweepOptions::pruner, "stops trials early from the values they log");
  }
};

// The top-level scalars of a config.
struct RunSection {
  std::string experiment;
  std::int64_t seed = 0;
  int threads = 0;
  std::string runs_dir = "runs";

  static void declare(Options<RunSection>& o) {
    o.add("experiment", &RunSection::experiment, "names runs/<experiment>/ (default: the config file's name)");
    o.add("seed", &RunSection::seed, "the run's seed").min(0);
    o.add("threads", &RunSection::threads, "torch and oneTBB threads; 0: every core").min(0);
    o.add("runs_dir", &RunSection::runs_dir, "where runs go (unset: $NEXP_RUNS_DIR if set, else runs)");
  }
};

}  // namespace nexp
