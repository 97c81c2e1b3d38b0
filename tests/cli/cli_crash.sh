# Crash consistency: `nexp run` and `nexp run -m` killed with SIGKILL at 50 seeded points (NEXP_CRASH_SEED,
# default 16), each the n-th call of one system call, found in a traced reference run: metric writes,
# checkpoint commits, index updates, status writes (a run), and sweep.yaml, trial starts, trials.csv,
# best.yaml (the launcher of a sweep, killed with its trials). strace's fault injection delivers the
# SIGKILL as the process enters that call, so a point is the same on an idle and on a loaded machine.
# After each kill: `nexp runs` works, `nexp runs --reindex` lists exactly the run folders with their
# status, every metrics.jsonl parses; then resuming (`run --resume`, or the same sweep command) ends
# every run completed with the summary of an uninterrupted run and each step logged once, and a run
# completed before the kill is neither run again nor changed. Skips when strace cannot trace.
# Cost: one process per kill point and per nexp call, and one Python process (crash_check.py serve)
# for every check of the test.
CHECK=$(cd "$(dirname "$0")" && pwd)/crash_check.py
source "$(dirname "$0")/lib.sh"
SEED=${NEXP_CRASH_SEED:-16}
# Under strace, LeakSanitizer (scripts/check sanitize) cannot stop a process's threads to look for leaks.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
command -v strace > /dev/null && strace -o /dev/null true 2> /dev/null \
  || { echo "skip: strace is missing or may not trace here (ptrace refused)"; exit 77; }
expect_exit 0 nx list methods
[[ $OUT == *fixture_steps.walk* ]] || fail "the fixture_steps plugin is not built"

cat > walk.yaml <<'YAML'
method: fixture_steps.walk
params: {steps: 12, checkpoint_every: 4}
objective: {metric: sum, mode: min}
device: cpu
seed: 7
threads: 1
YAML
RUN=(run walk.yaml)
SWEEP=(run walk.yaml -m seed=1,2,3 --jobs 1)
# The system calls a kill point may be: what writes, commits, and (in the launcher) starts a trial.
CALLS=write,pwrite64,rename,fsync,fdatasync,unlink,unlinkat,rmdir,mkdir,clone,clone3,vfork

# The checks, all in one Python process: check NAME ARGS... runs crash_check.py's NAME, its output in
# CHECKED; a failed check prints why and returns 1.
coproc CHECKER { python3 "$CHECK" serve; }
check() {
  local IFS=$'\t' line
  echo "$*" >&"${CHECKER[1]}"
  CHECKED=
  while IFS= read -r line <&"${CHECKER[0]}"; do
    case $line in
      $'\x04'ok) return 0 ;;
      $'\x04'*) echo "${line#?}" >&2; return 1 ;;
    esac
    CHECKED+=$line$'\n'
  done
  fail "crash_check.py ended"
}

# References: uninterrupted runs, traced (the calls of the main process, the launcher's for a sweep).
# Their runs folder exists before they start, as at every kill point (or its mkdir would count).
reference() {  # name, nexp arguments...
  local name=$1; shift
  mkdir -p "$WORK/ref-$name"
  NEXP_RUNS_DIR=$WORK/ref-$name expect_exit 0 strace -o "$WORK/trace-$name.txt" -y -e trace=$CALLS \
    "$NEXP" --plugin-dir "$NEXP_FIXTURES" -q "$@"
}
reference RUN "${RUN[@]}"
reference SWEEP "${SWEEP[@]}"
check points "$SEED" trace-RUN.txt trace-SWEEP.txt 50 15 || fail "choosing the kill points"
printf '%s' "$CHECKED" > points.txt
[[ $(wc -l < points.txt) == 50 ]] || fail "expected 50 kill points: $(cat points.txt)"

# The processes of a session: the killed launcher's trials still running.
session() { ps -o pid= -s "$1" || true; }
session_done() { [[ -z $(session "$1") ]]; }

i=0 killed=0 missed=()
declare -A where
while read -r mode call n what <&3; do
  i=$((i + 1))
  export NEXP_RUNS_DIR=$WORK/point-$i
  mkdir -p "$NEXP_RUNS_DIR"  # as a user's runs folder is, before the run that a kill interrupts
  if [[ $mode == run ]]; then args=("${RUN[@]}"); else args=("${SWEEP[@]}"); fi
  set +e
  setsid strace -o /dev/null -e trace="$call" -e inject="$call":signal=KILL:when="$n" \
    "$NEXP" --plugin-dir "$NEXP_FIXTURES" -q "${args[@]}" > /dev/null 2> "point-$i.err" &
  sid=$!
  wait "$sid"
  rc=$?
  set -e
  if ((rc == 137)); then
    killed=$((killed + 1)) where[$what]=$((${where[$what]:-0} + 1))
  else
    missed+=("$mode $call #$n ($what): exit $rc")
  fi
  for pid in $(session "$sid"); do kill -KILL "$pid" 2> /dev/null || true; done  # the launcher's trials go too
  wait_for "the processes of kill point $i to end" session_done "$sid"

  expect_exit 0 nx runs --json
  expect_exit 0 nx runs --reindex --json
  echo "$OUT" > rows.json
  check killed "$NEXP_RUNS_DIR" rows.json snapshot.json || fail "kill point $i ($mode, $call #$n, $what)"
  if [[ $mode == sweep ]]; then
    expect_exit 0 nx -q "${args[@]}"
  else
    for folder in "$NEXP_RUNS_DIR"/walk/*/; do
      folder=${folder%/}
      [[ -f $folder/config.yaml ]] || continue  # killed before the run existed: nothing to resume
      if [[ -f $folder/status.json ]] && grep -q '"status": "completed"' "$folder/status.json"; then
        expect_exit 2 nx -q run --resume "$folder"
      else
        printf '{"step": 99, "x": 0.12' >> "$folder/metrics.jsonl"  # a torn line, as a full disk leaves
        expect_exit 0 nx -q run --resume "$folder"
      fi
    done
  fi
  check resumed "$NEXP_RUNS_DIR" "$WORK/ref-${mode^^}" snapshot.json \
    || fail "kill point $i ($mode, $call #$n, $what): after resuming"
done 3< points.txt

# A torn last line in a completed run: reindex leaves it out with a warning.
folder=$(compgen -G "$WORK/ref-RUN/walk/*/" | head -n1)
printf '{"step": 13, "x": 0.5' >> "$folder/metrics.jsonl"
NEXP_RUNS_DIR=$WORK/ref-RUN expect_exit 0 nx runs --reindex
expect_contains "$ERR" "the last line is incomplete" "reindex of a torn metrics.jsonl"

summary=$(for w in "${!where[@]}"; do printf '%s %s, ' "${where[$w]}" "$w"; done)
echo "cli_crash: seed $SEED: $killed of 50 kill points reached ($summary); every one survived"
((${#missed[@]} == 0)) || printf 'cli_crash: not reached (the run ended first): %s\n' "${missed[@]}"
((killed >= 45)) || fail "only $killed of 50 kill points were reached: the traced runs differ from the reference"
