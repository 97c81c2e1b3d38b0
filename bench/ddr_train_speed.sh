#!/usr/bin/env bash
# Training throughput of the full DDR model: nexp's ddr.train (C++, LibTorch) against the same model,
# data path and optimizer written in PyTorch (bench/ddr_train_speed.py, Debian python3-torch: the same
# LibTorch underneath). One thread each, alternated ROUNDS times; prints a table and the ratio of the
# medians, writes CSV.
#   bench/ddr_train_speed.sh [path/to/nexp]          (default: build/nexp)
#   ROUNDS=3 STEPS=30 bench/ddr_train_speed.sh build/nexp
# Needs /usr/bin/python3 with torch (scripts/setup --bench installs python3-torch) and Fashion-MNIST in
# the data cache.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NEXP=$(realpath "${1:-$ROOT/build/nexp}")
DATA=${NEXP_DATA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nexp/data}/fashion-mnist
OUT=${BENCH_OUT:-$ROOT/runs/bench}
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-30}
DIM=48 DEPTH=4 HEADS=4 BATCH=64  # the size of configs/ddr/ablation.yaml
TRAIN=$((STEPS * BATCH))
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

[[ -x $NEXP ]] || { echo "ddr_train_speed: no nexp executable at $NEXP (build it, or pass its path)" >&2; exit 2; }
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
  { echo "ddr_train_speed: /usr/bin/python3 cannot import torch; install python3-torch (scripts/setup --bench)" >&2; exit 2; }
[[ -f $DATA/train-images-idx3-ubyte ]] || { echo "ddr_train_speed: Fashion-MNIST is not in $DATA; run scripts/setup" >&2; exit 2; }

RUNS=$(mktemp -d)
trap 'rm -rf "$RUNS"' EXIT
mkdir -p "$OUT"
CSV=$OUT/ddr_train_speed.csv
echo "round,implementation,images_per_second,steps,batch,dim,depth,heads" > "$CSV"

nexp_once() {
  (cd "$ROOT" && "$NEXP" run configs/ddr/smoke.yaml experiment=ddr-bench runs_dir="$RUNS" threads=1 \
    params.variant=ddr params.dim=$DIM params.depth=$DEPTH params.heads=$HEADS params.batch_size=$BATCH \
    params.epochs=1 params.lr=5e-3 params.warmup_steps=50 params.augment_shift=1 params.augment_flip=false \
    params.log_every=$STEPS params.checkpoint_every=$STEPS dataset.train_size=$TRAIN dataset.test_size=100 \
    >/dev/null 2>"$RUNS/nexp.log") || { cat "$RUNS/nexp.log" >&2; exit 1; }
  # The newest run's summary.
  /usr/bin/python3 - "$RUNS/ddr-bench" <<'EOF'
import json, pathlib, sys
runs = sorted(pathlib.Path(sys.argv[1]).glob("*/status.json"), key=lambda p: p.stat().st_mtime)
print(f'{json.loads(runs[-1].read_text())["summary"]["images_per_second"]:.2f}')
EOF
}

torch_once() {
  /usr/bin/python3 "$ROOT/bench/ddr_train_speed.py" --data "$DATA" --train-size $TRAIN --epochs 1 --batch-size $BATCH \
    --dim $DIM --depth $DEPTH --heads $HEADS --lr 5e-3 --shift 1 --threads 1 | awk '{print $2}'
}

nexp_all=() torch_all=()
for ((r = 1; r <= ROUNDS; r++)); do
  n=$(nexp_once); t=$(torch_once)
  nexp_all+=("$n") torch_all+=("$t")
  echo "$r,nexp,$n,$STEPS,$BATCH,$DIM,$DEPTH,$HEADS" >> "$CSV"
  echo "$r,pytorch,$t,$STEPS,$BATCH,$DIM,$DEPTH,$HEADS" >> "$CSV"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mn=$(median "${nexp_all[@]}") mt=$(median "${torch_all[@]}")
printf '\nDDR training, Fashion-MNIST, dim %s depth %s heads %s, batch %s, %s steps, 1 thread, %s rounds\n' \
  "$DIM" "$DEPTH" "$HEADS" "$BATCH" "$STEPS" "$ROUNDS"
printf '%-28s %s\n' "implementation" "images/s (median; each round)"
printf '%-28s %s   (%s)\n' "nexp ddr.train (C++)" "$mn" "${nexp_all[*]}"
printf '%-28s %s   (%s)\n' "PyTorch (Python)" "$mt" "${torch_all[*]}"
printf 'ratio nexp / PyTorch: %s\n' "$(awk -v a="$mn" -v b="$mt" 'BEGIN {printf "%.2f", a / b}')"
echo "CSV: $CSV"
