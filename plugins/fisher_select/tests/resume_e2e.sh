#!/usr/bin/env bash
# Checkpoint and resume end to end: a fine-tuning run stopped by SIGINT after its first checkpoint
# (wherever the stop lands) exits 1, interrupted; `nexp run --resume` ends with the summary of the same
# run left alone, to the last digit, and each evaluation step logged once.
source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
args=(configs/fisher_select/smoke.yaml params.selector=gfv params.steps=1000 params.eval_every=100)

full=$(folder "$(nxp -q run "${args[@]}" experiment=full)")

# nexp itself in the background (not a function's subshell, which would not pass SIGINT on)
"$NEXP" --plugin-dir "$PLUGIN_DIR" -q run "${args[@]}" experiment=stopped > "$work/stopped.out" 2> "$work/stopped.err" &
pid=$!
for _ in $(seq 6000); do  # up to 300 s for the first checkpoint (step 100)
  compgen -G "$work/runs/stopped/*/checkpoints/LATEST" > /dev/null && break
  sleep 0.05
done
stopped=$(dirname "$(dirname "$(compgen -G "$work/runs/stopped/*/checkpoints/LATEST")")")
kill -INT "$pid"
set +e; wait "$pid"; rc=$?; set -e
[[ $rc == 1 ]] || fail "the stopped run exited $rc, expected 1: $(cat "$work/stopped.err")"
grep -q '"status": "interrupted"' "$stopped/status.json" || fail "not interrupted: $(cat "$stopped/status.json")"
nxp -q run --resume "$stopped" > /dev/null || fail "--resume failed"
grep -q "resumed after step" "$stopped/log.txt" || fail "the resumed run did not load its checkpoint"
python3 - "$full" "$stopped" <<'PY' || fail "the resumed run differs from the one left alone"
import json, sys
full, resumed = (json.load(open(f + "/status.json")) for f in sys.argv[1:3])
assert resumed["status"] == "completed", resumed["status"]
for k in ["test_accuracy", "test_accuracy_auc", "noisy_selected", "duplicate_selected", "selected_rank"]:
    assert full["summary"][k] == resumed["summary"][k], (k, full["summary"][k], resumed["summary"][k])
steps = [[json.loads(line)["step"] for line in open(f + "/metrics.jsonl")] for f in sys.argv[1:3]]
assert steps[0] == steps[1] and steps[0][-1] == 1000, steps
PY
echo "ok"
