# Shared by the plugins' end-to-end tests (nexp_add_plugin_cli_test): a scratch runs folder removed on
# the way out (background jobs killed first), the working directory at the source tree so that configs/
# paths resolve, and the helpers every such test uses. Source it first:
#   source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
set -euo pipefail
: "${NEXP:?set by ctest}" "${PLUGIN_DIR:?set by ctest}" "${SOURCE_DIR:?set by ctest}"
work=$(mktemp -d /tmp/nexp-plugin-e2e-XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$SOURCE_DIR"
export NEXP_RUNS_DIR="$work/runs"
fail() { echo "FAIL: $*" >&2; exit 1; }
# nexp with this plugin's folder.
nxp() { "$NEXP" --plugin-dir "$PLUGIN_DIR" "$@"; }
# The run folder named by the last line of a run's output ("run: <id> <folder>").
folder() { tail -n 1 <<<"$1" | awk '{print $3}'; }
# refused "what it must say" args...: the test's own `run args...` exits 2 and its output holds the text.
refused() {
  local want=$1 out rc
  shift
  set +e
  out=$(run "$@" 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$*: exit $rc, expected 2: $out"
  grep -qF -- "$want" <<<"$out" || fail "$*: no '$want' in: $out"
  REFUSED_OUTPUT=$out
}
