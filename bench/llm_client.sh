#!/usr/bin/env bash
# The language-model client against the local model server (scripts/llm-local): its overhead per
# call beside the server's own latency and beside a bare HTTP request, and 16 concurrent requests.
# Prints a table and writes runs/bench/llm_client.csv.
#   bench/llm_client.sh [BUILD_DIR] [CALLS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "${1:-$ROOT/build}")
CALLS=${2:-200}
[[ -x $BUILD/tests/nexp_llm_bench ]] || { echo "llm_client: build the target nexp_llm_bench first" >&2; exit 1; }
export NEXP_LLM_LOCAL_STATE=$(mktemp -d /tmp/nexp-llm-bench-XXXXXX)
export NEXP_LLM_LOCAL_PARALLEL=16
trap '"$ROOT/scripts/llm-local" stop; rm -rf "$NEXP_LLM_LOCAL_STATE"' EXIT
URL=$("$ROOT/scripts/llm-local" start)
OUT=${BENCH_OUT:-$ROOT/runs/bench}
mkdir -p "$OUT"
echo "server $URL; $CALLS one-token calls; the machine may be shared, so medians are inflated by its load"
"$BUILD/tests/nexp_llm_bench" "$URL" "$CALLS" "$OUT/llm_client.csv"
echo "wrote $OUT/llm_client.csv"
