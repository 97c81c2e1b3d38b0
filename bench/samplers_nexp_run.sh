#!/usr/bin/env bash
# nexp's TPE through the real launcher: `nexp run` of the objectives as a method
# (tests/fixtures/objectives.cpp) with `sampler: tpe`, one sweep per seed, one trial process at a time,
# against the in-process runner (nexp_sampler_bench) with the same seeds. The sweep stores each
# proposal with 12 significant digits and reads the value back from the trial's summary, so both should
# propose the same trials; prints how many trials agree, the median final best of each, and the wall
# time per trial of the sweep (process start, plugin load, run folder, sampler) beside the sampler's
# own time in process.
#   bench/samplers_nexp_run.sh [BUILD_DIR] [SEEDS] [BUDGET] [OBJECTIVE ...]   (branin, mixed)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
SEEDS=${2:-5}
BUDGET=${3:-100}
shift $(($# < 3 ? $# : 3))
OBJECTIVES=("$@")
((${#OBJECTIVES[@]})) || OBJECTIVES=(branin mixed)
NEXP=$BUILD/nexp
BENCH=$BUILD/tests/nexp_sampler_bench
FIXTURES=$BUILD/tests/fixture_plugins
[[ -x $NEXP && -x $BENCH && -e $FIXTURES/libnexp_plugin_fixture_objectives.so ]] || {
  echo "samplers_nexp_run: build nexp, nexp_sampler_bench and nexp_plugin_fixture_objectives first" >&2; exit 2; }
OUT=${BENCH_OUT:-$ROOT/runs/bench}/samplers_nexp_run
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NEXP_RUNS_DIR=$WORK/runs OMP_WAIT_POLICY=PASSIVE

space() {  # the objective's search space as sweep axes
  case $1 in
    branin) printf '    params.x1: uniform(-5, 10)\n    params.x2: uniform(0, 15)\n' ;;
    mixed) printf '    params.c: [a, b, c]\n    params.k: int(uniform(1, 10))\n    params.x: uniform(-3, 3)\n    params.y: uniform(-3, 3)\n' ;;
    *) echo "samplers_nexp_run: objective '$1' is not run through nexp (branin, mixed)" >&2; exit 2 ;;
  esac
}

echo "objective,seed,trials,wall_seconds" > "$OUT/sweeps.csv"
for obj in "${OBJECTIVES[@]}"; do
  "$BENCH" "$SEEDS" "$BUDGET" "$obj" > "$OUT/inprocess_$obj.csv"
  for ((seed = 0; seed < SEEDS; ++seed)); do
    { printf 'method: fixture_objectives.evaluate\nparams: {function: %s}\nobjective: {metric: value, mode: min}\n' "$obj"
      printf 'sweep:\n  sampler: tpe\n  trials: %d\n  seed: %d\n  params:\n' "$BUDGET" "$seed"
      space "$obj"; } > "$WORK/$obj.yaml"
    start=$(date +%s.%N)
    "$NEXP" -q --plugin-dir "$FIXTURES" run "$WORK/$obj.yaml" --jobs 1 "experiment=$obj-$seed" > "$WORK/out.log" 2>&1 ||
      { echo "samplers_nexp_run: the sweep of $obj, seed $seed failed:" >&2; tail -n 20 "$WORK/out.log" >&2; exit 1; }
    echo "$obj,$seed,$BUDGET,$(echo "$(date +%s.%N) - $start" | bc -l)" >> "$OUT/sweeps.csv"
    cp "$NEXP_RUNS_DIR/$obj-$seed/sweep/trials.csv" "$OUT/trials_$obj-$seed.csv"
  done
done
python3 - "$OUT" "$SEEDS" "${OBJECTIVES[@]}" <<'PY'
import csv, statistics, sys
out, seeds, objectives = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
walls = {}
for r in csv.DictReader(open(f"{out}/sweeps.csv")):
    walls.setdefault(r["objective"], []).append(float(r["wall_seconds"]) / int(r["trials"]))
print("objective  seeds  trials  same trials  median best: nexp run  in process  "
      "wall s/trial (nexp run)  sampler ms/trial (in process)")
for obj in objectives:
    inproc = [r for r in csv.DictReader(open(f"{out}/inprocess_{obj}.csv")) if r["sampler"] == "tpe"]
    same = total = 0
    best_run, best_in, ask = [], [], []
    for s in range(seeds):
        ours = [float(r["value"]) for r in csv.DictReader(open(f"{out}/trials_{obj}-{s}.csv"))]
        ref = [float(r["value"]) for r in inproc if int(r["seed"]) == s]
        ask += [float(r["ask_seconds"]) for r in inproc if int(r["seed"]) == s]
        total += len(ref)
        same += sum(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(ours, ref))
        best_run.append(min(ours)), best_in.append(min(ref))
    print(f"{obj:>9}  {seeds:5d}  {total // seeds:6d}  {same:5d}/{total:<5d}  {statistics.median(best_run):20.6g}  "
          f"{statistics.median(best_in):10.6g}  {statistics.median(walls[obj]):23.3f}  {1000 * statistics.mean(ask):29.3f}")
PY
