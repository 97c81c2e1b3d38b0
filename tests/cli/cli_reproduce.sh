# `nexp reproduce` end to end on the scaffold's plugin: the scaffold's own results.yaml reproduces, a
# moved number fails with the old and new values, --record writes it back and regenerates the README,
# completed runs are reused and --fresh runs them again, sweeps are read per trial, missing data skips a
# row, schema errors exit 2, and the report page links every row to its run.
source "$(dirname "$0")/lib.sh"
NEXP_SRC=${NEXP_SOURCE_DIR:?}

# The tree `nexp new-plugin scaffold_check` writes: its results.yaml reproduces with the fixture plugin
# built from the same templates (the smoke row's recorded digits are the method's).
mkdir -p tree/plugins tree/configs
(cd tree && "$NEXP" new-plugin scaffold_check > /dev/null)
cd tree
expect_exit 0 nx reproduce --check-readme scaffold_check
expect_exit 0 nx reproduce scaffold_check
expect_contains "$OUT" "scaffold_check/smoke: (smoke scale)" "the row's claim"
expect_contains "$OUT" "=> passed" "the scaffold's smoke row reproduces"
expect_contains "$OUT" "reproduce: 1 passed, 0 failed, 0 errors, 0 skipped" "summary"
ID=$(find "$NEXP_RUNS_DIR/smoke" -maxdepth 1 -name '20*' | head -n 1)
[[ -n $ID ]] || fail "the row ran as an ordinary run under runs/smoke/"
expect_exit 0 nx runs --experiment smoke
expect_contains "$OUT" "completed" "the row's run is in the index"
cd ..

# A results file of our own next to a README: two rows on one run, an artifact, a sweep, missing data.
mkdir -p demo
cp "$SCAFFOLD_SMOKE" demo/smoke.yaml
MSE=$(python3 -c "import json,glob; print(json.load(open(glob.glob('$NEXP_RUNS_DIR/smoke/20*/status.json')[0]))['summary']['mse'])")
cat > demo/results.yaml <<EOF
plugin: scaffold_check
tables:
  - id: main
    columns: [{key: claim, title: claim}, {key: measured, title: measured}, {key: command, title: command}]
rows:
  - id: fit
    claim: the fit converges
    command: {config: demo/smoke.yaml, overrides: [threads=1]}
    checks:
      - {id: mse, metric: mse, recorded: $(printf '%.6f' "$MSE"), compare: {rel: 0.001}}
    text: {measured: "MSE {mse}"}
    cost: 1.5
    quick: true
  - id: fit-weights
    claim: the weights are close
    command: {config: demo/smoke.yaml, overrides: [threads=1]}
    checks:
      - {id: err, metric: weight_error, recorded: 0.1, compare: {abs: 0.1}}
    text: {measured: "error {err}"}
    cost: 1.5
    quick: true
  - id: lr
    claim: a larger step fits better
    command: {config: demo/smoke.yaml, overrides: [threads=1], sweep: ['params.lr=0.01,0.05', 'seed=0,1'], jobs: 2}
    checks:
      - {id: gain, metric: mse, trials: {params.lr: '0.05'}, baseline: {params.lr: '0.01'}, aggregate: mean, recorded: -1, compare: {ci: [-100, 0]}}
      - {id: trials, metric: mse, aggregate: count, recorded: 4}
    text: {measured: "mean MSE difference {gain} over {trials} trials"}
    cost: 6
  - id: needs-data
    claim: a row whose data are not installed
    command: {config: demo/smoke.yaml}
    needs: [{path: "\${data}/no-such-set", hint: "scripts/setup installs it"}]
    text: {measured: "-"}
    cost: 1
    quick: true
  - id: bench
    claim: a benchmark nexp does not run
    command: {external: "bench/speed.sh"}
    checks:
      - {id: ratio, metric: ratio, recorded: 1.07}
    text: {measured: "{ratio}x"}
    cost: 60
EOF
cat > demo/README.md <<'EOF'
# demo

<!-- results:main -->
<!-- /results:main -->
EOF
expect_exit 1 nx reproduce --check-readme demo/results.yaml
expect_contains "$ERR" "the results table main differs" "a stale README is reported"
expect_exit 0 nx reproduce --write-readme demo/results.yaml
expect_contains "$(cat demo/README.md)" '| the fit converges | MSE' "the table is generated"
expect_contains "$(cat demo/README.md)" '`nexp run demo/smoke.yaml -m threads=1 params.lr=0.01,0.05 seed=0,1 --jobs 2`' "a sweep's command"
expect_exit 0 nx reproduce --check-readme demo/results.yaml

# Quick rows: one run for the two rows that share a command; missing data is a skip, not a failure.
expect_exit 0 nx reproduce demo/results.yaml --quick
expect_contains "$OUT" "reproduce: 2 passed, 0 failed, 0 errors, 1 skipped" "quick rows"
expect_contains "$OUT" "missing data:" "the reason for the skip"
expect_contains "$OUT" "no-such-set does not exist (scripts/setup installs it)" "the missing path and the hint"
[[ $(find "$NEXP_RUNS_DIR/smoke" -maxdepth 1 -name '20*' | wc -l) == 2 ]] || fail "one new run for two rows (threads=1)"

# Everything: the sweep runs (4 trials), the external row is skipped with its reason.
expect_exit 0 nx reproduce demo/results.yaml --jobs 2
expect_contains "$OUT" "reproduce: 3 passed, 0 failed, 0 errors, 2 skipped" "all rows"
expect_contains "$OUT" "external command" "an external row is shown, not run"
expect_contains "$OUT" "(reused, ran before with this plugin build)" "a completed run of the same build is reused"
[[ $(find "$NEXP_RUNS_DIR/smoke/sweep" -name status.json | wc -l) == 4 ]] || fail "the sweep's four trials ran"
expect_exit 0 nx reproduce demo/results.yaml --row fit --fresh
[[ $(find "$NEXP_RUNS_DIR/smoke" -maxdepth 1 -name '20*' | wc -l) == 3 ]] || fail "--fresh runs the row again"

# A moved number fails, old and new side by side, and --record takes it.
sed -i 's/recorded: 0.1, compare: {abs: 0.1}/recorded: 0.5, compare: {abs: 0.1}/' demo/results.yaml
expect_exit 1 nx reproduce demo/results.yaml --row fit-weights
expect_contains "$OUT" "=> failed" "the row fails"
expect_contains "$ERR" "check 'err' (summary weight_error): README 0.5, now 0.0229" "old and new values"
expect_contains "$ERR" "nexp reproduce demo/results.yaml --row fit-weights --record" "what to do"
expect_exit 0 nx reproduce demo/results.yaml --row fit-weights --record
expect_contains "$OUT" "recorded scaffold_check/fit-weights err: 0.5 -> 0.0229" "the recorded change"
grep -q "recorded: 0.0229[0-9]*, compare: {abs: 0.1}" demo/results.yaml || fail "--record writes the value: $(cat demo/results.yaml)"
expect_contains "$(cat demo/README.md)" "| the weights are close | error 0.0229" "--record regenerates the README"
expect_exit 0 nx reproduce demo/results.yaml --row fit-weights

# Two rows on one run: --record writes the run's cost on both; a zero placeholder takes four digits.
sed -i 's/recorded: 0.0229[0-9]*, compare: {abs: 0.1}/recorded: 0, compare: {abs: 0.1}/' demo/results.yaml
expect_exit 0 nx reproduce demo/results.yaml --row fit --row fit-weights --fresh --record
grep -Eq "recorded: 0\.02[0-9]{3}, compare: \{abs: 0.1\}" demo/results.yaml || fail "four digits for a zero placeholder: $(cat demo/results.yaml)"
read -r COST_FIT COST_WEIGHTS < <(python3 -c "import yaml; r = yaml.safe_load(open('demo/results.yaml'))['rows']; print(r[0]['cost'], r[1]['cost'])")
[[ $COST_FIT == "$COST_WEIGHTS" && $COST_FIT != 1.5 ]] || fail "both rows record the shared run's cost: $COST_FIT, $COST_WEIGHTS"

# Budget: rows past it are skipped with the reason.
expect_exit 0 nx reproduce demo/results.yaml --row lr --fresh --budget 5
expect_contains "$OUT" "over the budget" "the budget skips the sweep (cost 6)"

# Schema errors: file, line, key, expected, found; exit 2.
sed 's/    quick: true/    quick: yes please/' demo/results.yaml > demo/bad.yaml
cp demo/README.md demo/bad.md
expect_exit 2 nx reproduce demo/bad.yaml
expect_contains "$ERR" "results file 'demo/bad.yaml', line 13: rows[0] (fit) > quick: expected true or false, found 'yes please'" "a schema error"
expect_exit 2 nx reproduce nosuchplugin
expect_contains "$ERR" "no results for plugin 'nosuchplugin'" "an unknown plugin"

# The report page: every row with its verdict and a link to its run.
expect_exit 0 nx report --reproduction scaffold_check
PAGE=$NEXP_RUNS_DIR/reproduce/scaffold_check.html
[[ -f $PAGE ]] || fail "the page is written next to the record"
for part in "class='verdict-passed'" "the fit converges" "a benchmark nexp does not run" "href='../smoke/sweep/'" "href='../smoke/20"; do
  grep -qF "$part" "$PAGE" || fail "the page shows $part"
done
echo "cli_reproduce: ok"
