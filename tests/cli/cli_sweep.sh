# Sweeps with the local launcher: expansion, --dry-run, Ctrl-C half-way and resume (no trial run
# twice, none lost), a trial that segfaults, a changed definition, --retry-failed.
source "$(dirname "$0")/lib.sh"
states() { for f in "$1"/trial-*/status.json; do python3 -c "import json; d=json.load(open('$f')); print(d['status'], d['error'])"; done; }

# A 12-trial grid, and a 20-sample random sweep that expands the same way every time.
expect_exit 0 nx run "$SCAFFOLD_SMOKE" -m params.lr=0.01,0.05,0.1 'seed=range(0,4)' --dry-run
[[ $(grep -c " new$" <<<"$OUT") == 12 ]] || fail "12 trials expected: $OUT"
expect_exit 0 nx run "$SCAFFOLD_SMOKE" -m 'params.lr=loguniform(1e-3,0.5)' --samples 20 --dry-run
FIRST=$OUT
expect_exit 0 nx run "$SCAFFOLD_SMOKE" -m 'params.lr=loguniform(1e-3,0.5)' --samples 20 --dry-run
[[ $FIRST == "$OUT" ]] || fail "a sampled sweep must expand the same way twice"
[[ $(grep -c " new$" <<<"$OUT") == 20 ]] || fail "20 samples expected: $OUT"
awk 'NR > 2 && $NF == "new" { if ($2 < 0.001 || $2 > 0.5) exit 1 }' <<<"$OUT" || fail "loguniform draw out of bounds: $OUT"
expect_exit 2 nx run "$SCAFFOLD_SMOKE" params.lr=0.01,0.1
expect_contains "$ERR" "add -m" "a sweep value without -m"

# Six slow trials, two at a time; Ctrl-C once two have finished; then the same command resumes.
SWEEP=(run "$SCAFFOLD_SMOKE" params.steps=1500 params.checkpoint_every=50 dataset.n=20000 dataset.d=40 params.lr=0.01
       -m 'seed=range(0,6)' objective=mse --jobs 2)
DIR=$WORK/runs/smoke/sweep
nx_exec -q "${SWEEP[@]}" > first.out 2> first.err &
PID=$!
for _ in $(seq 600); do (( $(count completed "$DIR") >= 2 )) && break; sleep 0.2; done
kill -INT $PID
set +e; wait $PID; RC=$?; set -e
[[ $RC == 1 ]] || fail "a stopped sweep exits 1, got $RC: $(cat first.err)"
(( $(count completed "$DIR") >= 2 )) || fail "two trials had completed: $(states "$DIR")"
[[ $(count running "$DIR") == 0 ]] || fail "after Ctrl-C no trial may be left running"
INTERRUPTED=$(count interrupted "$DIR")
expect_exit 0 nx -q "${SWEEP[@]}"
[[ $(count completed "$DIR") == 6 ]] || fail "all six trials complete after resuming"
for f in "$DIR"/trial-*/; do
  steps=$(python3 -c "import json,sys; s=[json.loads(l)['step'] for l in open('$f/metrics.jsonl')]; assert len(s)==len(set(s)), s; print(len(s))") \
    || fail "$f: a step logged twice"
  [[ $steps == 30 ]] || fail "$f: $steps metric lines, expected 30"
done
RESUMED=$( { grep -l '"resumed"' "$DIR"/trial-*/meta.json 2>/dev/null || true; } | wc -l)
[[ $RESUMED == "$INTERRUPTED" ]] || fail "$INTERRUPTED trials were interrupted but $RESUMED resumed"
[[ $(wc -l < "$DIR/trials.csv") == 7 ]] || fail "trials.csv: a header and six rows"
[[ -f $DIR/best.yaml ]] || fail "best.yaml"
expect_exit 0 nx validate "$DIR/best.yaml"
expect_exit 0 nx runs --sweep "$DIR" --json
[[ $(python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' <<<"$OUT") == 6 ]] || fail "six trials in the index"

# A trial that segfaults is marked failed with its signal; the others complete.
printf 'method: fixture_crash.maybe\nparams: {sleep_ms: 50}\nobjective: value\n' > crash.yaml
expect_exit 1 nx run crash.yaml -m params.crash=false,true 'params.x=1,2' --jobs 2
CDIR=$WORK/runs/crash/sweep
[[ $(count completed "$CDIR") == 2 && $(count failed "$CDIR") == 2 ]] || fail "2 completed and 2 failed: $(cat "$CDIR/trials.csv")"
grep -q "signal 11" "$CDIR/trials.csv" || fail "the failed trials name the signal: $(cat "$CDIR/trials.csv")"
expect_contains "$OUT" "best: trial 1 params.crash=false params.x=2" "ranked by the objective"

expect_exit 1 nx run crash.yaml -m params.crash=false,true 'params.x=1,2' --retry-failed
expect_contains "$ERR" "2 to run" "--retry-failed runs the failed trials (only) again"

# A trial past --trial-timeout is stopped and marked failed; the sweep goes on.
expect_exit 1 nx run crash.yaml -m params.sleep_ms=0,60000 experiment=timeouts --trial-timeout 15 --jobs 2
TDIR=$WORK/runs/timeouts/sweep
[[ $(count completed "$TDIR") == 1 && $(count failed "$TDIR") == 1 ]] || fail "one completed, one timed out: $(states "$TDIR")"
grep -q "exceeded --trial-timeout of 15 s" "$TDIR/trials.csv" || fail "the timeout is the error: $(states "$TDIR")"

# A changed definition is refused with the difference; --force continues and reuses what matches.
expect_exit 2 nx run crash.yaml -m params.crash=false 'params.x=1,2,3'
expect_contains "$ERR" "another definition" "changed sweep"
expect_contains "$ERR" "+     expression: 1,2,3" "the diff"
expect_exit 0 nx run crash.yaml -m params.crash=false 'params.x=1,2,3' --force
expect_contains "$ERR" "2 of 3 trials already done" "trials found again by config hash"
echo "cli_sweep: ok"
