# SIGINT stops a run at a checkpoint (status interrupted); --resume ends with the same metrics as an
# uninterrupted run with the same seed. A second SIGINT aborts at once, still marked interrupted.
source "$(dirname "$0")/lib.sh"
LONG=(params.steps=4000 params.checkpoint_every=50 params.lr=0.01 dataset.n=20000 dataset.d=60 seed=5)

expect_exit 0 nx -q run "$SCAFFOLD_SMOKE" "${LONG[@]}"
FULL=$(run_id "$OUT")

nx_exec -q run "$SCAFFOLD_SMOKE" "${LONG[@]}" > first.out 2> first.err &
PID=$!
sleep 2
kill -INT $PID
set +e; wait $PID; RC=$?; set -e
[[ $RC == 1 ]] || fail "an interrupted run exits 1, got $RC: $(cat first.err)"
PART=$(run_id "$(cat first.out)")
expect_exit 0 nx show "$PART" --json
expect_contains "$OUT" '"status": "interrupted"' "status after SIGINT"
expect_exit 0 nx -q run --resume "$PART"
expect_exit 0 nx compare "$FULL" "$PART" --json
python3 - "$OUT" <<'PY' || fail "resumed metrics differ: $OUT"
import json, sys
full, resumed = json.loads(sys.argv[1])
assert resumed["status"] == "completed", resumed
for k in ("mse", "weight_error"):
    assert full["summary"][k] == resumed["summary"][k], (k, full["summary"][k], resumed["summary"][k])
PY
STEPS=$(python3 -c "import json; print(len([json.loads(l)['step'] for l in open('$(awk '{print $3}' <<<"$(tail -n1 first.out)")/metrics.jsonl')]))")
[[ $STEPS == 80 ]] || fail "metrics.jsonl of the resumed run has $STEPS lines, expected 80 (each step once)"

# Two signals: abort at once, status still interrupted, log kept.
nx_exec -q run "$SCAFFOLD_SMOKE" "${LONG[@]}" > second.out 2> second.err &
PID=$!
sleep 2
kill -INT $PID; sleep 0.05; kill -INT $PID
set +e; wait $PID; RC=$?; set -e
[[ $RC == 130 ]] || fail "a second SIGINT aborts with 130, got $RC"
FOLDER=$(ls -d "$WORK"/runs/smoke/*/ | while read -r d; do grep -q '"aborted' "$d/status.json" && echo "$d"; done | head -n1)
[[ -n $FOLDER ]] || fail "no run folder says it was aborted"
expect_contains "$(cat "$FOLDER/status.json")" '"status": "interrupted"' "status after a second SIGINT"
[[ -s $FOLDER/log.txt ]] || fail "log.txt lost"
echo "cli_resume: ok"
