#!/usr/bin/env bash
# ASHA on the ddr learning-rate / weight-decay search (configs/ddr/asha.yaml): for each of SEEDS sweep
# seeds, the same random draws (same sweep seed, same run seed) trained once at full budget and once with
# ASHA pruning, one trial at a time in each sweep (ASHA's decisions then depend on the trials' order
# alone), the two sweeps of a seed side by side (PARALLEL=0: one after the other). Training is deterministic (one thread), so a trial
# ASHA lets finish has exactly the curve of its full-budget twin.
# Prints per seed the best validation accuracy of each sweep (and the test accuracy of that trial), the
# training steps each spent (summed over its trials: a completed trial's full budget, a pruned one's
# steps up to its stop, from the step its final checkpoint recorded) and their ratio.
# ASHA_TRIALS=N gives the ASHA sweep N draws instead of the full sweep's count: the random sampler draws
# in sequence, so its first draws are the full sweep's and the rest are configurations only it tries
# (the use ASHA is made for: more configurations for the same compute).
# Writes runs/bench/asha_ddr/trials.csv (every trial of every sweep).
#   bench/asha_ddr.sh [BUILD_DIR] [SEEDS] [extra overrides ...]
#   ASHA_TRIALS=54 bench/asha_ddr.sh build 5 params.epochs=3 sweep.trials=27
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
SEEDS=${2:-5}
shift $(($# < 2 ? $# : 2))
NEXP=$BUILD/nexp
[[ -x $NEXP ]] || { echo "asha_ddr: build nexp (with the ddr plugin) first" >&2; exit 2; }
OUT=${BENCH_OUT:-$ROOT/runs/bench}/asha_ddr
mkdir -p "$OUT"
export NEXP_RUNS_DIR=$OUT/runs OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
CONFIG=$ROOT/configs/ddr/asha.yaml
failed() { echo "asha_ddr: the $1 sweep of seed $seed failed (see $OUT/$1-$seed.log)" >&2; exit 1; }
start=$(date +%s)
for ((seed = 0; seed < SEEDS; ++seed)); do
  common=("seed=$seed" "sweep.seed=$seed" "$@")
  full=(run "$CONFIG" --jobs 1 "${common[@]}" sweep.pruner.type=none "experiment=ddr-asha-full-$seed")
  pid=
  if [[ ${PARALLEL:-1} == 1 ]]; then
    "$NEXP" -q "${full[@]}" > "$OUT/full-$seed.log" 2>&1 &
    pid=$!
  else
    "$NEXP" -q "${full[@]}" > "$OUT/full-$seed.log" 2>&1 || failed full
  fi
  more=(); [[ -z ${ASHA_TRIALS:-} ]] || more=("sweep.trials=$ASHA_TRIALS")
  "$NEXP" -q run "$CONFIG" --jobs 1 "${common[@]}" "${more[@]}" "experiment=ddr-asha-asha-$seed" > "$OUT/asha-$seed.log" 2>&1 || failed asha
  [[ -z $pid ]] || wait "$pid" || failed full
done
echo "asha_ddr: $SEEDS seeds in $(( $(date +%s) - start )) s of wall time" >&2
python3 - "$NEXP_RUNS_DIR" "$SEEDS" "$OUT/trials.csv" <<'PY'
import csv, glob, json, os, sys
runs, seeds, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def trials(folder):
    """Each trial of a sweep: status, validation and test accuracy, and the training steps it ran."""
    out = []
    for t in sorted(glob.glob(f"{folder}/sweep/trial-*")):
        status = json.load(open(f"{t}/status.json"))
        summary = status.get("summary", {})
        states = sorted(glob.glob(f"{t}/checkpoints/*/state.json"))
        steps = json.load(open(states[-1]))["step"] if states else 0
        out.append({"trial": os.path.basename(t), "status": status["status"], "steps": steps,
                    "val_accuracy": summary.get("val_accuracy", float("nan")),
                    "test_accuracy": summary.get("test_accuracy", float("nan"))})
    return out

def best_and_steps(ts):
    """The best completed trial of a sweep, the training steps it spent, and how many trials it pruned."""
    top = max((t for t in ts if t["status"] == "completed"), key=lambda t: t["val_accuracy"])
    return top, sum(t["steps"] for t in ts), sum(t["status"] == "pruned" for t in ts)

# ASHA's decisions on a trial depend only on the trials before it, so the first trials of a longer ASHA
# sweep are exactly the ASHA sweep of the full sweep's draws ("same draws"); "all" is the whole sweep.
rows, views = [], {"same draws": [0, 0, 0], "all": [0, 0, 0]}  # steps full, steps asha, seeds reached
for s in range(seeds):
    full = trials(f"{runs}/ddr-asha-full-{s}")
    asha = trials(f"{runs}/ddr-asha-asha-{s}")
    rows += [{"seed": s, "arm": "full", **t} for t in full] + [{"seed": s, "arm": "asha", **t} for t in asha]
    ft, fs, _ = best_and_steps(full)
    for view, ts in (("same draws", asha[:len(full)]), ("all", asha)):
        if view == "all" and len(asha) == len(full):
            continue
        at, as_, pruned = best_and_steps(ts)
        ok = at["val_accuracy"] >= ft["val_accuracy"]
        v = views[view]
        v[0], v[1], v[2] = v[0] + fs, v[1] + as_, v[2] + ok
        print(f"seed {s} ({view}, {len(ts)} ASHA trials): full best val {ft['val_accuracy']:.4f} (test {ft['test_accuracy']:.4f}), "
              f"{fs} steps; ASHA best val {at['val_accuracy']:.4f} (test {at['test_accuracy']:.4f}), {as_} steps, "
              f"{pruned} pruned; ratio {as_ / fs:.3f}; reached {'yes' if ok else 'no'}")
for view, (fs, as_, reached) in views.items():
    if fs:
        print(f"all seeds ({view}): steps full {fs}, asha {as_}, ratio {as_ / fs:.3f}; "
              f"ASHA reached the full-budget best in {reached} of {seeds} seeds")
with open(table, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
PY
