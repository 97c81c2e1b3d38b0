# Shared by the CLI tests: a scratch folder, the nexp under test with the scaffold plugin, assertions.
set -euo pipefail
: "${NEXP:?set by ctest}" "${NEXP_FIXTURES:?set by ctest}" "${SCAFFOLD_SMOKE:?set by ctest}"
WORK=$(mktemp -d /tmp/nexp-cli-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export NEXP_RUNS_DIR="$WORK/runs"
nx() { "$NEXP" --plugin-dir "$NEXP_FIXTURES" "$@"; }
# For `nx_exec ... &`: the background job is nexp itself, so $! is its PID (a subshell would not
# pass SIGINT on: non-interactive bash ignores it in background jobs).
nx_exec() { exec "$NEXP" --plugin-dir "$NEXP_FIXTURES" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_contains() {  # text, part, what
  [[ "$1" == *"$2"* ]] || fail "$3: expected to find '$2' in: $1"
}
expect_exit() {  # code, command...
  local want=$1; shift
  set +e; OUT=$("$@" 2>"$WORK/stderr"); local got=$?; set -e
  ERR=$(cat "$WORK/stderr")
  [[ $got == "$want" ]] || fail "'$*' exited $got, expected $want. stderr: $ERR"
}
# The last line of a run's stdout: "run: <id> <folder>".
run_id() { tail -n 1 <<<"$1" | awk '$1 == "run:" {print $2}'; }
# How many trials of sweep folder $2 have status $1 (0 when none: never fails under pipefail).
count() { { grep -l "\"status\": \"$1\"" "$2"/trial-*/status.json 2>/dev/null || true; } | wc -l; }
