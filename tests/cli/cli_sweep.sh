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

# Six trials, two at a time, each held at step 25 until released. Trials 0 and 1 are let go and
# complete; trials 2 and 3 hold when Ctrl-C comes, take the stop in, and are let go to stop at their
# step-30 checkpoint; 4 and 5 never start. The same command resumes: no trial runs twice, none is lost.
SWEEP=(run "$SCAFFOLD_SMOKE" params.steps=60 params.checkpoint_every=10 dataset.n=200 dataset.d=5 params.lr=0.05
       params.hold_at=25 -m 'seed=range(0,6)' objective=mse --jobs 2)
DIR=$WORK/runs/smoke/sweep
nx_exec -q "${SWEEP[@]}" > first.out 2> first.err &
PID=$!
for t in 0000 0001; do release "$(held_folder "$DIR/trial-$t-*")"; done
T2=$(held_folder "$DIR/trial-0002-*")
T3=$(held_folder "$DIR/trial-0003-*")
kill -INT $PID
for t in 0002 0003; do wait_for "trial $t to take the stop in" has_line "$DIR/logs/trial-$t.log" "$STOP_REQUESTED"; done
release "$T2"
release "$T3"
set +e; wait $PID; RC=$?; set -e
[[ $RC == 1 ]] || fail "a stopped sweep exits 1, got $RC: $(cat first.err)"
[[ $(count completed "$DIR") == 2 && $(count interrupted "$DIR") == 2 ]] || fail "2 completed, 2 interrupted: $(states "$DIR")"
[[ $(count running "$DIR") == 0 ]] || fail "after Ctrl-C no trial may be left running"
[[ $(status_of "$T2" reason) == checkpointed ]] || fail "trial 2 stopped at a checkpoint: $(cat "$T2/status.json")"
# Resume: trials 4 and 5 hold at step 25 in their turn; each is let go as it holds.
nx_exec -q "${SWEEP[@]}" > second.out 2> second.err &
PID=$!
while kill -0 $PID 2>/dev/null; do
  for f in "$DIR"/trial-*/artifacts/held; do [[ -f $f ]] && touch "${f%held}release"; done
  sleep 0.05
done
set +e; wait $PID; RC=$?; set -e
[[ $RC == 0 ]] || fail "the resumed sweep exits 0: $(cat second.err)"
[[ $(count completed "$DIR") == 6 ]] || fail "all six trials complete after resuming"
for f in "$DIR"/trial-*/; do
  python3 -c "import json,sys; s=[json.loads(l)['step'] for l in open('$f/metrics.jsonl')]; assert s == [10,20,30,40,50,60], s" \
    || fail "$f: each step's metrics once"
done
RESUMED=$( { grep -l '"resumed"' "$DIR"/trial-*/meta.json 2>/dev/null || true; } | wc -l)
[[ $RESUMED == 2 ]] || fail "the 2 interrupted trials resumed, not $RESUMED"
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

# A trial past --trial-timeout is stopped and marked failed, and the sweep goes on with the next one.
# Both trials sleep until stopped, so each meets the limit however fast or slow it starts.
expect_exit 1 nx run crash.yaml -m params.sleep_ms=600000 params.x=1,2 experiment=timeouts --trial-timeout 2 --jobs 1
TDIR=$WORK/runs/timeouts/sweep
[[ $(count failed "$TDIR") == 2 ]] || fail "both trials timed out: $(states "$TDIR")"
[[ $(grep -c "exceeded --trial-timeout of 2 s" "$TDIR/trials.csv") == 2 ]] || fail "the timeout is the error: $(states "$TDIR")"

# `~sweep` (or `sweep=null`) runs a config with a sweep block as one plain run; validate checks just it.
printf 'method: fixture_crash.maybe\nparams: {sleep_ms: 0}\nobjective: value\nexperiment: one\nsweep:\n  params:\n    params.x: [1, 2]\n' > block.yaml
expect_exit 0 nx run block.yaml '~sweep' params.x=3
[[ -n $(run_id "$OUT") && ! -e $WORK/runs/one/sweep ]] || fail "one plain run, no sweep folder: $OUT"
expect_exit 0 nx run block.yaml sweep=null
[[ -n $(run_id "$OUT") && ! -e $WORK/runs/one/sweep ]] || fail "sweep=null: one plain run: $OUT"
expect_exit 0 nx validate block.yaml '~sweep'
[[ $ERR != *"its sweep block expands"* ]] || fail "validate ~sweep checks no trials: $ERR"

# A changed definition is refused with the difference; --force continues and reuses what matches.
expect_exit 2 nx run crash.yaml -m params.crash=false 'params.x=1,2,3'
expect_contains "$ERR" "another definition" "changed sweep"
expect_contains "$ERR" "+     expression: 1,2,3" "the diff"
expect_exit 0 nx run crash.yaml -m params.crash=false 'params.x=1,2,3' --force
expect_contains "$ERR" "2 of 3 trials already done" "trials found again by config hash"
echo "cli_sweep: ok"
