#!/usr/bin/env bash
# What a researcher waits for before nexp starts working: whole-process wall time (hyperfine) of
# `nexp --version`, `nexp list` (every plugin), a MOEA/D smoke run (no LibTorch), a DDR smoke run
# (LibTorch), and the local launcher's cost per trial for trials that do nothing, of a plugin without
# LibTorch (fixture_crash) and of one with it (scaffold_check). Also the CPU time (user + system), which
# a shared machine inflates less than the wall time. Prints a table and writes
# runs/bench/startup-<label>.csv.
#   bench/startup.sh [BUILD_DIR] [LABEL]      e.g. bench/startup.sh build-main before
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
LABEL=${2:-$(basename "$BUILD")}
NEXP="$BUILD/nexp --plugin-dir $BUILD/tests/fixture_plugins"
command -v hyperfine > /dev/null || { echo "startup: hyperfine is needed (scripts/setup --bench installs it)" >&2; exit 2; }
[[ -x $BUILD/nexp && -f $BUILD/plugins/libnexp_plugin_moead.so && -f $BUILD/plugins/libnexp_plugin_ddr.so ]] ||
  { echo "startup: build nexp with its plugins and tests in $BUILD first" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export OMP_WAIT_POLICY=PASSIVE NEXP_RUNS_DIR="$WORK/runs"
TRIALS=8
printf 'method: fixture_crash.maybe\n' > plain.yaml
OUT=${BENCH_OUT:-$ROOT/runs/bench}
mkdir -p "$OUT"
CSV="$OUT/startup-$LABEL.csv"
echo "case,runs,wall_s,wall_sd_s,cpu_s,per,note" > "$CSV"

measure() {  # case, runs, divide by, note, command...
  local name=$1 runs=$2 per=$3 note=$4; shift 4
  hyperfine -N --style none --warmup 1 --runs "$runs" --prepare "rm -rf $WORK/runs" \
    --export-json "$WORK/$name.json" "$*" > /dev/null 2> "$WORK/$name.err" ||
    { echo "startup: '$*' failed:" >&2; tail -n 20 "$WORK/$name.err" >&2; exit 1; }
  python3 - "$WORK/$name.json" "$name" "$runs" "$per" "$note" >> "$CSV" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
per = float(sys.argv[4])
print(f"{sys.argv[2]},{sys.argv[3]},{r['mean'] / per:.4f},{r['stddev'] / per:.4f},{(r['user'] + r['system']) / per:.4f},{sys.argv[4]},{sys.argv[5]}")
PY
}

measure version 30 1 "nexp --version" $NEXP --version
measure list 5 1 "all plugins loaded" $NEXP list
measure moead_smoke 5 1 "configs/moead/smoke.yaml" $NEXP -q run "$ROOT/configs/moead/smoke.yaml"
measure ddr_smoke 3 1 "configs/ddr/smoke.yaml" $NEXP -q run "$ROOT/configs/ddr/smoke.yaml"
measure trial_plain 3 $TRIALS "per trial; fixture_crash.maybe, --jobs 1" \
  $NEXP -q run plain.yaml -m "params.x=range(0,$TRIALS)" --jobs 1
measure trial_torch 3 $TRIALS "per trial; scaffold_check.fit of 1 step, --jobs 1" \
  $NEXP -q run "$BUILD/tests/scaffold_check/smoke.yaml" -m "seed=range(0,$TRIALS)" params.steps=1 \
  params.checkpoint_every=1 dataset.n=10 --jobs 1
column -t -s, "$CSV"
echo "(machine load: $(cut -d' ' -f1-3 /proc/loadavg); $CSV)"
