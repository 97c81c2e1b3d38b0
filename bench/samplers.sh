#!/usr/bin/env bash
# nexp's samplers against Optuna 3.1's on the standard objectives (bench/samplers_objectives.hpp and the
# same formulas in bench/samplers_optuna.py): SEEDS seeds each, BUDGET trials each, equal budgets.
# Prints, per objective, the median final best of TPE and random search on both sides, Optuna TPE's
# 95% interval of that median (bootstrap over seeds), the ratio of trials nexp TPE needs to reach
# Optuna TPE's final median, and each sampler's own time per trial; then the overhead at 200 trials.
# Writes runs/bench/samplers/{nexp,optuna}.csv (every trial) and curves.csv (median best so far).
#   bench/samplers.sh [BUILD_DIR] [SEEDS] [BUDGET] [OBJECTIVE ...]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
SEEDS=${2:-20}
BUDGET=${3:-100}
shift $(($# < 3 ? $# : 3))
OUT=${BENCH_OUT:-$ROOT/runs/bench}/samplers
mkdir -p "$OUT"
BENCH=$BUILD/tests/nexp_sampler_bench
[[ -x $BENCH ]] || { echo "samplers: build nexp_sampler_bench first (ninja -C $BUILD nexp_sampler_bench)" >&2; exit 2; }
# Debian's python3-optuna lives with the system interpreter (a python3 earlier on PATH may lack it).
PY=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
"$PY" -c "import optuna" 2>/dev/null || { echo "samplers: needs python3-optuna (scripts/setup --bench)" >&2; exit 2; }
# The samplers of each side (NEXP_SAMPLERS, OPTUNA_SAMPLERS; add cmaes to both for CMA-ES): nexp's TPE
# with its own density and with Optuna 3.1.0's, Optuna's TPE as released and with the density corrected.
export NEXP_SAMPLERS=${NEXP_SAMPLERS:-tpe,random,tpe_optuna310}
export OPTUNA_SAMPLERS=${OPTUNA_SAMPLERS:-tpe,random,tpe_scaled}
"$BENCH" "$SEEDS" "$BUDGET" "$@" > "$OUT/nexp.csv"
"$PY" "$ROOT/bench/samplers_optuna.py" "$SEEDS" "$BUDGET" "$@" > "$OUT/optuna.csv"
# The sampler's own time at 200 trials (Branin, 3 seeds).
NEXP_SAMPLERS=tpe "$BENCH" 3 200 branin > "$OUT/nexp_200.csv"
OPTUNA_SAMPLERS=tpe "$PY" "$ROOT/bench/samplers_optuna.py" 3 200 branin > "$OUT/optuna_200.csv"
"$PY" "$ROOT/bench/samplers_report.py" "$OUT"
