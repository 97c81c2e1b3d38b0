# Adaptive sweeps end to end: --sampler tpe --trials N with the local launcher (a slot asks the sampler
# as it frees), the history in the sweep folder, a larger budget that continues the same search, the
# same trials as an uninterrupted sweep, the YAML form, the same trials as the sampler in process
# (bench/samplers' Branin as a method), and the errors.
source "$(dirname "$0")/lib.sh"
# The trials' values of one column of trials.csv, in trial order.
column() { python3 -c "import csv,sys; print(' '.join(r[sys.argv[2]] for r in csv.DictReader(open(sys.argv[1]))))" "$1" "$2"; }

# fixture_crash.maybe reports params.x as `value` (maximised).
printf 'method: fixture_crash.maybe\nparams: {sleep_ms: 0}\nobjective: value\n' > tpe.yaml
AXES=('params.x=uniform(0,10)' 'params.sleep_ms=int(uniform(0,20))')

# Two slots: each freed slot gets a new proposal until the budget is spent.
expect_exit 0 nx run tpe.yaml -m "${AXES[@]}" --sampler tpe --trials 6 --jobs 2 experiment=par
PDIR=$WORK/runs/par/sweep
[[ $(count completed "$PDIR") == 6 ]] || fail "6 trials completed: $(cat "$PDIR/trials.csv")"
python3 - "$PDIR" <<'PY' || fail "sweep.yaml and sampler.yaml hold the 6 trials"
import sys, yaml
d = sys.argv[1]
s, h = yaml.safe_load(open(d + "/sweep.yaml")), yaml.safe_load(open(d + "/sampler.yaml"))
assert s["sampler"] == "tpe" and s["budget"] == 6 and len(s["trials"]) == 6, s
assert h["sampler"] == "tpe" and sorted(h["observed"]) == list(range(6)), h
PY

# 8 trials, then the same sweep with a budget of 14 continues it; a sweep of 14 from the start
# proposes the very same trials (one slot: the history's order is the trials' order).
expect_exit 0 nx run tpe.yaml -m "${AXES[@]}" --sampler tpe --trials 8 experiment=a
expect_exit 0 nx run tpe.yaml -m "${AXES[@]}" --sampler tpe --trials 14 experiment=a
expect_contains "$ERR" "8 done before" "the larger budget continues the sweep"
expect_exit 0 nx run tpe.yaml -m "${AXES[@]}" --sampler tpe --trials 14 experiment=b
A=$WORK/runs/a/sweep/trials.csv B=$WORK/runs/b/sweep/trials.csv
[[ $(wc -l < "$A") == 15 ]] || fail "14 trials: $(cat "$A")"
[[ $(column "$A" params.x) == "$(column "$B" params.x)" ]] || fail "resumed and uninterrupted sweeps differ: $(column "$A" params.x) / $(column "$B" params.x)"
[[ $(column "$A" params.sleep_ms) == "$(column "$B" params.sleep_ms)" ]] || fail "the integer axis differs"
# After its 10 startup draws TPE proposes near the best: the last 4 trials average above the first 10.
python3 - "$B" <<'PY' || fail "TPE's proposals improve on its startup draws: $(column "$B" value)"
import csv, sys
v = [float(r["value"]) for r in csv.DictReader(open(sys.argv[1]))]
assert sum(v[10:]) / 4 > sum(v[:10]) / 10, v
PY
expect_contains "$OUT" "best: trial" "the ranked table"

# The YAML form, and --dry-run (which cannot list trials that are proposed from results).
printf 'method: fixture_crash.maybe\nparams: {sleep_ms: 0}\nobjective: value\nsweep:\n  sampler: tpe\n  trials: 4\n  seed: 3\n  params:\n    params.x: uniform(0, 10)\n    params.crash: [false]\n' > block.yaml
expect_exit 0 nx run block.yaml --dry-run
expect_contains "$OUT" "adaptive sweep (tpe sampler, 4 trials" "dry run"
expect_exit 0 nx run block.yaml
[[ $(count completed "$WORK/runs/block/sweep") == 4 ]] || fail "the block's 4 trials"

# Pruning (the median rule on write_prune_config's sweep): the three x = 1 trials take the stop in
# through ctx.stop_requested() and end `pruned` before their 3 s, with their last value. A re-run runs
# nothing again.
write_prune_config prune.yaml 3000
expect_exit 0 nx run prune.yaml --jobs 1
PRDIR=$WORK/runs/prune/sweep
expect_three_pruned "$PRDIR"
LINES=$(cat "$PRDIR"/trial-*/metrics.jsonl | wc -l)
expect_exit 0 nx run prune.yaml --jobs 1
[[ $(count pruned "$PRDIR") == 3 && $(cat "$PRDIR"/trial-*/metrics.jsonl | wc -l) == "$LINES" ]] || fail "a re-run runs no trial again"

# Two objectives: nsga2 (its first generation is uniform draws), the Pareto front in the report; tpe
# optimises one objective and says so.
cat > two.yaml <<YAML
method: scaffold_check.fit
params: {steps: 20, checkpoint_every: 10}
dataset: {name: scaffold_check.linear, n: 50, d: 3}
objective: [mse, {metric: weight_error, mode: min}]
device: cpu
YAML
expect_exit 0 nx run two.yaml -m 'params.lr=loguniform(0.001,0.5)' 'params.steps=int(uniform(5,40))' --sampler nsga2 --trials 6 --jobs 2
[[ $(count completed "$WORK/runs/two/sweep") == 6 ]] || fail "6 nsga2 trials"
expect_exit 0 nx report runs/two/sweep -o two.html
grep -q "<h2>Pareto front</h2>" two.html || fail "the report shows the Pareto front"
expect_exit 2 nx run two.yaml -m 'params.lr=loguniform(0.001,0.5)' --sampler tpe --trials 6 experiment=two_tpe
expect_contains "$ERR" "use --sampler nsga2" "tpe with two objectives"

# Through the launcher TPE proposes what it proposes in process: bench/samplers' Branin as a method
# (fixture_objectives), 15 trials (10 startup draws, 5 from the model) against nexp_sampler_bench with
# the same seed. The sweep keeps 12 significant digits of each proposal, so the values agree to 1e-9.
cat > branin.yaml <<YAML
method: fixture_objectives.evaluate
params: {function: branin}
objective: {metric: value, mode: min}
sweep:
  sampler: tpe
  trials: 15
  seed: 4
  params:
    params.x1: uniform(-5, 10)
    params.x2: uniform(0, 15)
YAML
expect_exit 0 nx run branin.yaml --jobs 1
"$NEXP_BUILD_DIR/tests/nexp_sampler_bench" 5 15 branin > inprocess.csv || fail "nexp_sampler_bench runs"
python3 - "$WORK/runs/branin/sweep/trials.csv" inprocess.csv <<'PY' || fail "the sweep's Branin values are the in-process sampler's"
import csv, sys
ours = [float(r["value"]) for r in csv.DictReader(open(sys.argv[1]))]
ref = [float(r["value"]) for r in csv.DictReader(open(sys.argv[2])) if r["sampler"] == "tpe" and r["seed"] == "4"]
assert len(ours) == len(ref) == 15, (ours, ref)
assert all(abs(a - b) <= 1e-9 * max(1, abs(b)) for a, b in zip(ours, ref)), list(zip(ours, ref))
PY

# Errors: exit 2 and what to do.
expect_exit 2 nx run tpe.yaml -m "${AXES[@]}" --sampler tpe experiment=c
expect_contains "$ERR" "--trials N" "no budget"
printf 'method: fixture_crash.maybe\n' > noobj.yaml
expect_exit 2 nx run noobj.yaml -m 'params.x=uniform(0,10)' --sampler tpe --trials 3
expect_contains "$ERR" "objective" "no objective"
expect_exit 2 nx run tpe.yaml -m 'params.x=uniform(0,10)' --sampler bogus --trials 3
expect_contains "$ERR" "unknown sampler 'bogus'" "unknown sampler"
echo "cli_adaptive: ok"
