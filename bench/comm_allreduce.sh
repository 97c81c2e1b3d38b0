#!/usr/bin/env bash
# all_reduce (c10d Gloo, float32 sum) between 2 local ranks of one nexp run, 1 KB .. 64 MB, beside
#   - its anchor: PyTorch's torch.distributed.all_reduce with Gloo between 2 local processes (Debian's
#     python3-torch, the same c10d), same sizes, same repetitions, one thread per rank;
#   - a memcpy of the same bytes in one process: what moving the data costs at the least.
# Runs the fixture method fixture_dist.bench (tests/fixtures/distributed.cpp); prints a table and writes
# runs/bench/comm_allreduce.csv. Latency on a virtual machine is dominated by how fast a blocked thread
# wakes up: measure on an idle machine.
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

# The anchor: the same loop in PyTorch.
/usr/bin/python3 "$ROOT/bench/comm_allreduce_anchor.py" "$WORK/anchor.json" 2> "$WORK/anchor.err" ||
  { cat "$WORK/anchor.err" >&2; exit 1; }

OUT=${BENCH_OUT:-$ROOT/runs/bench}
mkdir -p "$OUT"
python3 - "$FOLDER/status.json" "$WORK/anchor.json" "$OUT/comm_allreduce.csv" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
anchor = {int(k): v for k, v in json.load(open(sys.argv[2])).items()}
rows = []
size = 1 << 10
while size <= 64 << 20:
    ar, pt, mc = s[f"allreduce_us_{size}"], anchor[size], s[f"memcpy_us_{size}"]
    rows.append((size, ar, size / ar / 1e3, pt, ar / pt, mc, ar / mc))
    size *= 4
with open(sys.argv[3], "w") as f:
    f.write("bytes,nexp_us,nexp_GBps,pytorch_us,nexp_over_pytorch,memcpy_us,nexp_over_memcpy\n")
    for r in rows: f.write(",".join(f"{v:.6g}" for v in r) + "\n")
print(f"{'bytes':>10} {'nexp us':>10} {'GB/s':>6} {'PyTorch us':>11} {'ratio':>6} {'memcpy us':>10} {'ratio':>8}")
for b, ar, gbps, pt, r_pt, mc, r_mc in rows:
    print(f"{b:>10} {ar:>10.1f} {gbps:>6.2f} {pt:>11.1f} {r_pt:>6.2f} {mc:>10.1f} {r_mc:>8.1f}")
print("ratios: nexp / PyTorch (the anchor: the same c10d Gloo from Python), nexp / memcpy of the same bytes")
PY
