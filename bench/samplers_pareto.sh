#!/usr/bin/env bash
# nexp's NSGA-II against Optuna 3.1's NSGAIISampler on the two-objective problems of
# bench/samplers_objectives.hpp (pareto_problems(); the same formulas in bench/samplers_optuna.py):
# both with their defaults (population 50, uniform crossover with probability 0.9 and swapping
# probability 1/2, mutation 1/parameters), random search beside them, SEEDS seeds each, BUDGET trials each.
# Prints, per problem, the median final hypervolume of each side, Optuna's 95% interval of that median
# (bootstrap over seeds), a rank test, the distance to the true front (IGD) and each sampler's own time
# per trial. Writes runs/bench/samplers/{nexp,optuna}_pareto.csv (every trial).
#   bench/samplers_pareto.sh [BUILD_DIR] [SEEDS] [BUDGET] [PROBLEM ...]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
SEEDS=${2:-20}
BUDGET=${3:-500}
shift $(($# < 3 ? $# : 3))
OUT=${BENCH_OUT:-$ROOT/runs/bench}/samplers
mkdir -p "$OUT"
BENCH=$BUILD/tests/nexp_sampler_bench
[[ -x $BENCH ]] || { echo "samplers_pareto: build nexp_sampler_bench first (ninja -C $BUILD nexp_sampler_bench)" >&2; exit 2; }
PY=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
"$PY" -c "import optuna" 2>/dev/null || { echo "samplers_pareto: needs python3-optuna (scripts/setup --bench)" >&2; exit 2; }
# Each side's wall and CPU time (objectives and bookkeeping included) on stderr.
TIMEFORMAT="samplers_pareto: %R s wall, %U s user, %S s system"
time NEXP_SAMPLERS=${NEXP_SAMPLERS:-nsga2,random} "$BENCH" pareto "$SEEDS" "$BUDGET" "$@" > "$OUT/nexp_pareto.csv"
time OPTUNA_SAMPLERS=${OPTUNA_SAMPLERS:-nsga2,random} "$PY" "$ROOT/bench/samplers_optuna.py" pareto "$SEEDS" "$BUDGET" "$@" > "$OUT/optuna_pareto.csv"
"$PY" "$ROOT/bench/samplers_report.py" --pareto "$OUT"
