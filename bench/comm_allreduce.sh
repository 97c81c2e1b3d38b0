#!/usr/bin/env bash
# all_reduce (c10d Gloo, float32 sum) between 2 local ranks of one nexp run, 1 KB .. 64 MB, beside the
# time of a memcpy of the same bytes in one process: the overhead of the communication layer. Runs the
# fixture method fixture_dist.bench (tests/fixtures/distributed.cpp); prints a table and writes
# runs/bench/comm_allreduce.csv. Each rank uses 1 thread.
#   bench/comm_allreduce.sh [BUILD_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMP_WAIT_POLICY=PASSIVE NEXP_RUNS_DIR=$WORK/runs
printf 'method: fixture_dist.bench\nthreads: 1\ndistributed: {processes: 2, timeout: 120s}\n' > "$WORK/bench.yaml"
"$BUILD/nexp" -q --plugin-dir "$BUILD/tests/fixture_plugins" run "$WORK/bench.yaml" > "$WORK/out.txt"
FOLDER=$(awk '$1 == "run:" {print $3}' "$WORK/out.txt")
OUT=${BENCH_OUT:-$ROOT/runs/bench}
mkdir -p "$OUT"
python3 - "$FOLDER/status.json" "$OUT/comm_allreduce.csv" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
rows = []
size = 1 << 10
while size <= 64 << 20:
    ar, mc = s[f"allreduce_us_{size}"], s[f"memcpy_us_{size}"]
    rows.append((size, ar, size / ar / 1e3, mc, size / mc / 1e3, ar / mc))
    size *= 4
with open(sys.argv[2], "w") as f:
    f.write("bytes,allreduce_us,allreduce_GBps,memcpy_us,memcpy_GBps,ratio\n")
    for r in rows: f.write(",".join(f"{v:.6g}" for v in r) + "\n")
print(f"{'bytes':>10} {'all_reduce us':>14} {'GB/s':>7} {'memcpy us':>11} {'GB/s':>7} {'ratio':>8}")
for b, ar, arg, mc, mcg, ratio in rows:
    print(f"{b:>10} {ar:>14.1f} {arg:>7.2f} {mc:>11.1f} {mcg:>7.2f} {ratio:>8.1f}")
print("ratio: all_reduce time / memcpy time of the same bytes (goal: <= 3 at 64 MB; 1 KB latency goal: < 200 us)")
PY
