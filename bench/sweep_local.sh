#!/usr/bin/env bash
# The local sweep launcher on this machine: parallel efficiency of --jobs 2 against --jobs 1 on
# CPU-bound one-thread trials, and the launcher's overhead per trial (trials that do nothing). Prints a table
# and writes runs/bench/sweep_local.csv.
#   bench/sweep_local.sh [BUILD_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
NEXP="$BUILD/nexp --plugin-dir $BUILD/tests/fixture_plugins"
SMOKE=$BUILD/tests/scaffold_check/smoke.yaml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_WAIT_POLICY=PASSIVE
cd "$WORK"
seconds() {  # wall seconds of a command that must succeed
  local s; s=$(date +%s.%N)
  "$@" > "$WORK/out.log" 2>&1 || { echo "sweep_local: '$*' failed:" >&2; tail -n 20 "$WORK/out.log" >&2; exit 1; }
  echo "$(date +%s.%N) - $s" | bc -l
}
TRIALS=8
CPU=(threads=1 params.steps=2000 params.checkpoint_every=2000 dataset.n=20000 dataset.d=40 params.lr=0.01 "seed=range(0,$TRIALS)")
t1=$(seconds $NEXP -q run "$SMOKE" -m "${CPU[@]}" experiment=cpu1 --jobs 1)
t2=$(seconds $NEXP -q run "$SMOKE" -m "${CPU[@]}" experiment=cpu2 --jobs 2)
printf 'method: fixture_crash.maybe\n' > noop.yaml
n1=$(seconds $NEXP -q run noop.yaml -m "params.x=range(0,$TRIALS)" experiment=noop1 --jobs 1)
n2=$(seconds $NEXP -q run noop.yaml -m "params.x=range(0,$TRIALS)" experiment=noop2 --jobs 2)
eff=$(echo "$t1 / (2 * $t2)" | bc -l)
OUT=${BENCH_OUT:-$ROOT/runs/bench}
mkdir -p "$OUT"
{
  echo "case,trials,jobs1_s,jobs2_s,speedup,efficiency_2_cores,overhead_per_trial_s"
  printf 'cpu_bound,%d,%.2f,%.2f,%.2f,%.2f,\n' "$TRIALS" "$t1" "$t2" "$(echo "$t1/$t2" | bc -l)" "$eff"
  printf 'no_op,%d,%.2f,%.2f,%.2f,,%.3f\n' "$TRIALS" "$n1" "$n2" "$(echo "$n1/$n2" | bc -l)" "$(echo "$n1/$TRIALS" | bc -l)"
} > "$OUT/sweep_local.csv"
column -t -s, "$OUT/sweep_local.csv"
echo "(cpu_bound: ${TRIALS} least-squares fits of 2000 steps; no_op: trials that only start, load plugins, write their folder and exit)"
