# Shared by the CLI tests: a scratch folder, the nexp under test with the scaffold plugin, assertions,
# and the helpers that hold a run at an exact point (the scaffold's params.hold_at; see its method).
# Sleeps appear only as the interval of a polling loop whose upper bound is `wait_for`'s.
set -euo pipefail
: "${NEXP:?set by ctest}" "${NEXP_FIXTURES:?set by ctest}" "${SCAFFOLD_SMOKE:?set by ctest}"
WORK=$(mktemp -d /tmp/nexp-cli-XXXXXX)
# On the way out, nothing keeps running: background jobs are killed, and a held run whose folder is
# removed stops waiting (the second removal takes what such a run wrote while the first one ran).
cleanup() {
  local jobs; jobs=$(jobs -p)
  [[ -z $jobs ]] || { kill -9 $jobs; wait $jobs; } 2>/dev/null || true  # wait: no "Killed" line
  rm -rf "$WORK" 2>/dev/null || { sleep 1; rm -rf "$WORK"; } || true  # a failing trap would set the exit code
}
trap cleanup EXIT
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
# A field of a run folder's status.json.
status_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1] + '/status.json')).get(sys.argv[2], ''))" "$1" "$2"; }

# wait_for WHAT COMMAND...: polls COMMAND until it succeeds; fails after 300 s (an upper bound, never
# a guess of how long something takes).
wait_for() {
  local what=$1; shift
  local deadline=$((SECONDS + 300))
  until "$@"; do
    ((SECONDS < deadline)) || fail "waited 300 s for $what"
    sleep 0.05
  done
}
# held_at FOLDER WHERE: the run in FOLDER is holding at WHERE ("step 25", "checkpoint 20", "stop 30").
held_at() { [[ -f $1/artifacts/held && $(cat "$1/artifacts/held") == "$2" ]]; }
# The one folder that matches a glob, once it exists and holds (printed).
held_folder() {  # glob
  local f
  wait_for "a run to hold at $1" compgen -G "$1/artifacts/held" > /dev/null
  f=$(compgen -G "$1/artifacts/held" | head -n1)
  echo "${f%/artifacts/held}"
}
release() { touch "$1/artifacts/release"; }
# Lets every run that holds under a folder go on, until killed (run it in the background).
release_every() {  # glob of run folders
  while :; do
    for f in $1/artifacts/held; do [[ -f $f ]] && touch "${f%held}release"; done
    sleep 0.05
  done
}
# has_line FILE TEXT: FILE exists and contains TEXT.
has_line() { [[ -f $1 ]] && grep -qF -- "$2" "$1"; }
STOP_REQUESTED="nexp: stop requested"

# Starts the local one-node Slurm cluster of scripts/slurm-local in $WORK/slurm and points the Slurm
# commands at it (root only: otherwise the test is skipped, exit 77). The test's EXIT trap calls
# slurm_local_stop, so that the cluster's daemons do not outlive it.
slurm_local_start() {
  [[ $(id -u) == 0 ]] || { echo "skip: the local Slurm cluster needs root"; exit 77; }
  export NEXP_SLURM_DIR=$WORK/slurm
  "$NEXP_SOURCE_DIR/scripts/slurm-local" start || fail "scripts/slurm-local start"
  export SLURM_CONF=$NEXP_SLURM_DIR/slurm.conf
}
slurm_local_stop() { "$NEXP_SOURCE_DIR/scripts/slurm-local" stop || true; }

# A sweep for the pruners: fixture_crash.maybe logs x at every 10 ms step while it sleeps. Three trials
# with x = 5 complete; three with x = 1 are worse than the completed trials' median at every step, so
# the median rule stops them.
write_prune_config() {  # file sleep_ms
  printf 'method: fixture_crash.maybe\nparams: {sleep_ms: %s}\nobjective: value\nsweep:\n  params:\n    params.x: [5, 1]\n    seed: [0, 1, 2]\n  pruner: {type: median, startup_trials: 3, min_step: 5}\n' \
    "$2" > "$1"
}
# Sweep folder $1 of that config: 3 completed, 3 pruned with the rule's reason and their last value.
expect_three_pruned() {
  [[ $(count completed "$1") == 3 && $(count pruned "$1") == 3 ]] || fail "3 completed, 3 pruned: $(cat "$1/trials.csv")"
  local f
  for f in "$1"/trial-000[345]-*; do
    [[ $(status_of "$f" reason) == "median rule at step "* ]] || fail "$f: the reason: $(cat "$f/status.json")"
    python3 -c "import json; d=json.load(open('$f/status.json')); assert d['summary']['value'] == 1, d" || fail "$f: its last value kept"
  done
}
