# The daily commands end to end: list, describe, validate, run, runs, show, compare, export, devices.
source "$(dirname "$0")/lib.sh"

expect_exit 0 nx list methods
expect_contains "$OUT" "scaffold_check.fit" "nexp list"
expect_exit 0 nx describe scaffold_check.fit
expect_contains "$OUT" "float in [1e-06, 1]" "describe shows ranges"
expect_contains "$OUT" "weight_error" "describe shows metrics"
expect_exit 0 nx describe scaffold_check.fit --json
[[ $(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["params"][1]["name"], d["resumable"])' <<<"$OUT") == "lr True" ]] \
  || fail "describe --json: $OUT"

expect_exit 0 nx validate "$SCAFFOLD_SMOKE" params.steps=30
expect_contains "$OUT" "steps: 30" "validate prints the resolved config"

expect_exit 0 nx run "$SCAFFOLD_SMOKE" params.steps=40 seed=1
ID1=$(run_id "$OUT")
[[ -n $ID1 ]] || fail "nexp run must end its stdout with 'run: <id> <folder>': $OUT"
FOLDER1=$(tail -n 1 <<<"$OUT" | awk '{print $3}')
[[ -f $FOLDER1/status.json && -f $FOLDER1/config.yaml && -f $FOLDER1/metrics.jsonl ]] || fail "run folder $FOLDER1"
expect_exit 0 nx run "$SCAFFOLD_SMOKE" params.steps=60 seed=2
ID2=$(run_id "$OUT")

expect_exit 0 nx show "$ID1" --json
python3 - "$OUT" <<'PY' || fail "show --json"
import json, sys
d = json.loads(sys.argv[1])
assert d["status"] == "completed", d
assert d["params"]["params.steps"] == "40", d["params"]
assert d["summary"]["mse"] > 0 and d["summary"]["weight_error"] >= 0, d["summary"]
PY

expect_exit 0 nx runs --sort mse --asc
[[ $(grep -c "scaffold_check.fit" <<<"$OUT") == 2 ]] || fail "runs lists both: $OUT"
# More steps fit better: the 60-step run sorts first by mse.
[[ $(grep scaffold_check.fit <<<"$OUT" | head -n1 | awk '{print $1}') == "$ID2" ]] || fail "sort by mse: $OUT"

expect_exit 0 nx compare "$ID1" "$ID2"
expect_contains "$OUT" "params.steps" "compare shows the differing parameter"
expect_exit 0 nx export --csv
[[ $(wc -l <<<"$OUT") == 3 ]] || fail "export --csv: one header and two rows: $OUT"
expect_contains "$(head -n1 <<<"$OUT")" "summary.mse" "export header"
expect_exit 0 nx export --json -o "$WORK/runs.json"
python3 -c "import json; assert len(json.load(open('$WORK/runs.json'))) == 2"

rm "$WORK/runs/nexp.db"*
expect_exit 0 nx runs --reindex
[[ $(grep -c "scaffold_check.fit" <<<"$OUT") == 2 ]] || fail "reindex rebuilt both rows: $OUT"

# A run left `running` by a process that is gone (killed, machine rebooted) reads as interrupted
# (process gone): in `nexp runs --reindex`, `nexp show` and the --status filter.
python3 - "$FOLDER1/status.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["status"], d["pid"] = "running", int(open("/proc/sys/kernel/pid_max").read()) + 1
json.dump(d, open(sys.argv[1], "w"))
PY
expect_exit 0 nx runs --reindex
[[ $(grep "^$ID1" <<<"$OUT") == *"interrupted (process gone)"* ]] || fail "a stale run in nexp runs: $OUT"
expect_exit 0 nx show "$ID1"
expect_contains "$OUT" "interrupted (process gone)" "a stale run in nexp show"
expect_exit 0 nx runs --status interrupted --json
[[ $(python3 -c 'import json,sys; print([r["id"] for r in json.load(sys.stdin)])' <<<"$OUT") == "['$ID1']" ]] \
  || fail "--status interrupted finds the stale run: $OUT"

# `nexp run` honours NEXP_RUNS_DIR as the reading commands do: a run made in one folder is found
# from another.
mkdir -p here there
(cd here && NEXP_RUNS_DIR="$WORK/elsewhere" nx -q run "$SCAFFOLD_SMOKE" params.steps=10 > ../env.out)
ID3=$(run_id "$(cat env.out)")
[[ -f $WORK/elsewhere/smoke/$ID3/status.json ]] || fail "NEXP_RUNS_DIR: the run is not in it: $(cat env.out)"
[[ ! -e here/runs ]] || fail "NEXP_RUNS_DIR: a runs folder appeared in the working directory"
(cd there && NEXP_RUNS_DIR="$WORK/elsewhere" nx show "$ID3" > ../show.out) || fail "nexp show from another folder"
grep -q "run $ID3  completed" show.out || fail "nexp show: $(cat show.out)"

expect_exit 0 nx devices --json
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["id"] == "cpu" and d[0]["cores"] >= 1' <<<"$OUT"
echo "cli_basics: ok"
