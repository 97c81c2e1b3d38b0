# Stopping and resuming at exact points, each run held there by the scaffold's hold (params.hold_at:
# the run waits until <run>/artifacts/release exists), so that nothing depends on how fast it runs.
#   - One SIGINT stops the run at its next checkpoint: exit 1, interrupted (checkpointed); --resume
#     ends with the metrics of an uninterrupted run, each step logged once.
#   - A second SIGINT aborts at once wherever it lands (before the first checkpoint, during a
#     checkpoint's commit, after the graceful stop): exit 130, interrupted (aborted), log.txt kept;
#     --resume continues from the last committed checkpoint to the same metrics.
source "$(dirname "$0")/lib.sh"
BASE=(params.steps=60 params.checkpoint_every=10 params.lr=0.05 dataset.n=200 dataset.d=5 seed=5)

expect_exit 0 nx -q run "$SCAFFOLD_SMOKE" "${BASE[@]}" experiment=full
FULL=$(run_id "$OUT")

# start NAME ARGS...: the run in the background, as experiment NAME; sets PID and FOLDER once it holds.
start() {
  local name=$1; shift
  nx_exec -q run "$SCAFFOLD_SMOKE" "${BASE[@]}" experiment="$name" "$@" > "$name.out" 2> "$name.err" &
  PID=$!
  FOLDER=$(held_folder "$WORK/runs/$name/*")
  ERRFILE=$WORK/$name.err
}
# A SIGINT, once the run has taken it in (signals sent back to back may merge into one).
interrupt() {
  kill -INT "$PID"
  wait_for "the stop request of $FOLDER" has_line "$ERRFILE" "$STOP_REQUESTED"
}
finish() {  # expected exit code
  set +e; wait "$PID"; local rc=$?; set -e
  [[ $rc == "$1" ]] || fail "$FOLDER: exit $rc, expected $1: $(cat "$ERRFILE")"
}
# The status, its reason, and the last committed checkpoint ("none" when there is none).
expect_state() {  # status reason checkpoint
  [[ $(status_of "$FOLDER" status) == "$1" && $(status_of "$FOLDER" reason) == "$2" ]] \
    || fail "$FOLDER: expected $1 ($2): $(cat "$FOLDER/status.json")"
  local latest=none
  [[ -f $FOLDER/checkpoints/LATEST ]] && latest=$(cat "$FOLDER/checkpoints/LATEST")
  [[ $latest == "$3" ]] || fail "$FOLDER: last committed checkpoint $latest, expected $3"
}
# --resume ends where the uninterrupted run ends, with each step's metrics once.
expect_resumes() {
  release "$FOLDER"  # a resumed run that passes the hold again goes on
  expect_exit 0 nx -q run --resume "$FOLDER"
  expect_exit 0 nx compare "$FULL" "$(basename "$FOLDER")" --json
  python3 - "$OUT" "$FOLDER/metrics.jsonl" <<'PY' || fail "$FOLDER: the resumed run differs: $OUT"
import json, sys
full, resumed = json.loads(sys.argv[1])
assert resumed["status"] == "completed", resumed
for k in ("mse", "weight_error"):
    assert full["summary"][k] == resumed["summary"][k], (k, full["summary"][k], resumed["summary"][k])
steps = [json.loads(line)["step"] for line in open(sys.argv[2])]
assert steps == [10, 20, 30, 40, 50, 60], steps
PY
}
expect_aborted() {  # last committed checkpoint
  finish 130
  expect_state interrupted aborted "$1"
  grep -q "run $(basename "$FOLDER")" "$FOLDER/log.txt" && grep -q "aborted by a second stop signal" "$FOLDER/log.txt" \
    || fail "$FOLDER: log.txt keeps the run's lines and the abort: $(cat "$FOLDER/log.txt")"
  expect_exit 0 nx runs --status interrupted
  expect_contains "$OUT" "interrupted (aborted)" "nexp runs says why"
}

# One signal: the graceful stop at the next checkpoint (step 30).
start graceful params.hold_at=25
interrupt
release "$FOLDER"
finish 1
expect_state interrupted checkpointed ckpt-000003
expect_resumes

# Two signals before the first checkpoint: nothing to continue from; resume starts again.
start early params.hold_at=5
interrupt
kill -INT "$PID"
expect_aborted none
expect_resumes

# Two signals while the checkpoint of step 20 is being committed: step 10's is the last one.
start commit params.hold_at=20 params.hold_in=checkpoint
interrupt
kill -INT "$PID"
expect_aborted ckpt-000001
expect_resumes

# The second signal after the graceful stop committed step 30 and before the run closed.
start late params.hold_at=25 params.hold_on_stop=true
interrupt
release "$FOLDER"
wait_for "the hold after the stop" held_at "$FOLDER" "stop 30"
kill -INT "$PID"
expect_aborted ckpt-000003
expect_resumes
echo "cli_resume: ok"
