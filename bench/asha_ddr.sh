#!/usr/bin/env bash
# ASHA on the ddr learning-rate / weight-decay search (configs/ddr/asha.yaml): for each of SEEDS sweep
# seeds, the same random draws (same sweep seed, same run seed) trained once at full budget and once with
# ASHA pruning, one trial at a time in each sweep (ASHA's decisions then depend on the trials' order
# alone), the two sweeps of a seed side by side (PARALLEL=0: one after the other). Training is deterministic (one thread), so a trial
# ASHA lets finish has exactly the curve of its full-budget twin.
# Prints per seed the best validation accuracy of each sweep (and the test accuracy of that trial), the
# training steps each spent (summed over its trials: a completed trial's full budget, a pruned one's
# steps up to its stop, from the step its final checkpoint recorded) and their ratio.
# Writes runs/bench/asha_ddr/trials.csv (every trial of every sweep).
#   bench/asha_ddr.sh [BUILD_DIR] [SEEDS] [extra overrides ...]
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
  "$NEXP" -q run "$CONFIG" --jobs 1 "${common[@]}" "experiment=ddr-asha-asha-$seed" > "$OUT/asha-$seed.log" 2>&1 || failed asha
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

rows, sums = [], {"full": [0, 0], "asha": [0, 0]}
print("seed  full: best val (its test)  steps   asha: best val (its test)  steps  pruned  steps ratio  reached")
reached = 0
for s in range(seeds):
    best = {}
    for arm in ("full", "asha"):
        ts = trials(f"{runs}/ddr-asha-{arm}-{s}")
        for t in ts:
            rows.append({"seed": s, "arm": arm, **t})
        done = [t for t in ts if t["status"] == "completed"]
        top = max(done, key=lambda t: t["val_accuracy"])
        best[arm] = (top, sum(t["steps"] for t in ts), sum(t["status"] == "pruned" for t in ts))
        sums[arm][0] += best[arm][1]
    (ft, fs, _), (at, as_, pruned) = best["full"], best["asha"]
    ok = at["val_accuracy"] >= ft["val_accuracy"]
    reached += ok
    print(f"{s:4d}  {ft['val_accuracy']:.4f} ({ft['test_accuracy']:.4f})       {fs:6d}   {at['val_accuracy']:.4f} ({at['test_accuracy']:.4f})"
          f"       {as_:6d}  {pruned:6d}  {as_ / fs:11.3f}  {'yes' if ok else 'no'}")
print(f"all   steps: full {sums['full'][0]}, asha {sums['asha'][0]}, ratio {sums['asha'][0] / sums['full'][0]:.3f}; "
      f"ASHA reached the full-budget best in {reached} of {seeds} seeds")
with open(table, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
PY
