#!/usr/bin/env bash
# Every plugin's quick results rows (`nexp reproduce --all --quick`), re-run in a scratch runs folder
# and compared with the numbers their READMEs record. Fails when a row leaves its tolerance.
set -euo pipefail
: "${NEXP:?set by ctest}" "${NEXP_SOURCE_DIR:?set by ctest}"
RUNS=$(mktemp -d /tmp/nexp-reproduce-XXXXXX)
trap 'rm -rf "$RUNS"' EXIT
cd "$NEXP_SOURCE_DIR"
start=$(date +%s)
"$NEXP" reproduce --all --quick --jobs "${NEXP_REPRODUCE_JOBS:-2}" --runs-dir "$RUNS"
echo "reproduce --all --quick: $(( $(date +%s) - start )) s" >&2
