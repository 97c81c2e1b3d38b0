#pragma once
// The nexp methods of DrWatson: the glue between RunContext (parameters, metrics, checkpoints,
// artifacts) and the simulator, the policies and the models.
//   drwatson.calibrate  the incumbent against the public figures (ETTR, accuracy, interruption rate)
//   drwatson.pretrain   masked-event pretraining across platforms        -> artifacts/encoder.pt
//   drwatson.finetune   few-label fine-tuning (+ temperature)            -> artifacts/model.pt
//   drwatson.headline   every policy on one platform's fleet under common random numbers, with
//                       reductions against the incumbent and bootstrap confidence intervals; also
//                       the ablations (params.variant)
//   drwatson.diagnose   this machine's device (HAL telemetry and an active probe) and/or a log file
#include <nexp/nexp.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fleet.hpp"
#include "simulator.hpp"

namespace drwatson {

void run_calibrate(nexp::RunContext& ctx);
void run_pretrain(nexp::RunContext& ctx);
void run_finetune(nexp::RunContext& ctx);
void run_headline(nexp::RunContext& ctx);
void run_diagnose(nexp::RunContext& ctx);

// Paired bootstrap of the reduction 1 - sum(treated) / sum(base) over replicas: (estimate, low, high)
// at the 95% level, percentile intervals, reproducible from seed.
struct Interval {
  double estimate = 0, low = 0, high = 0;
};
Interval paired_reduction(const std::vector<double>& base, const std::vector<double>& treated, std::uint64_t seed,
                          int resamples = 2000);

// Runs `policy` on `replicas` simulated fleets (seeds derived from `seed`, the same for every policy:
// common random numbers), in parallel with oneTBB.
std::vector<ReplicaMetrics> run_replicas(const FleetSpec& fleet, const Policy& policy, int platform, std::uint64_t seed,
                                         int replicas, double horizon_days = -1);

}  // namespace drwatson
