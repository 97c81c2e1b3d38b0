# Distributed runs (`distributed: {processes: N}`), end to end with the fixture_dist methods:
#   - data-parallel gradient descent on N = 1, 2, 4 ranks ends at the parameters of one process
#     without `distributed:` (1e-6 relative); rank 0 alone writes metrics.jsonl, the others rank<k>.log;
#   - every collective matches its closed form on 2 and 3 ranks; gossip on a ring of 4 contracts at
#     the second eigenvalue of its mixing matrix;
#   - a rank killed with SIGKILL, or stopped (SIGSTOP) past the timeout, fails the run with that
#     rank's error, and no rank process is left (the process table);
#   - Ctrl-C reaches every rank, which checkpoints; --resume ends where an uninterrupted run ends;
#   - bad `distributed:` input exits 2 with key, file:line, expected and found; a rank that fails on bad
#     input fails the run with exit 2.
source "$(dirname "$0")/lib.sh"

config() {  # file method processes [params yaml] [timeout]
  printf 'method: %s\nseed: 3\nthreads: 1\n' "$2" > "$1"
  if [[ -n ${4:-} ]]; then echo "params: $4" >> "$1"; fi
  if [[ $3 -gt 0 ]]; then echo "distributed: {processes: $3, timeout: ${5:-60s}}" >> "$1"; fi
}
folder_of() { tail -n 1 <<<"$1" | awk '$1 == "run:" {print $3}'; }
summary() { python3 -c "import json,sys; print('%g' % json.load(open(sys.argv[1] + '/status.json'))['summary'][sys.argv[2]])" "$1" "$2"; }
# Same parameters and loss to 1e-6 relative.
same_result() {
  python3 - "$1" "$2" <<'PY' || fail "$1 and $2 differ"
import json, sys
a, b = (json.load(open(f + "/status.json"))["summary"] for f in sys.argv[1:3])
keys = [k for k in a if k[0] == "w" and k[1:].isdigit() or k == "loss"]
assert len(keys) == 6, keys
for k in keys:
    assert abs(a[k] - b[k]) <= 1e-6 * max(abs(a[k]), 1e-12), (k, a[k], b[k])
PY
}

# ---- Data-parallel SGD: N = 1, 2, 4 against one process.
config one.yaml fixture_dist.dp_sgd 0
expect_exit 0 nx -q run one.yaml
ONE=$(folder_of "$OUT")
for n in 1 2 4; do
  config dp$n.yaml fixture_dist.dp_sgd $n
  expect_exit 0 nx -q run dp$n.yaml
  F=$(folder_of "$OUT")
  same_result "$ONE" "$F"
  [[ $(summary "$F" world) == "$n" ]] || fail "dp$n ran on $(summary "$F" world) ranks"
  [[ $(wc -l < "$F/metrics.jsonl") == 60 ]] || fail "dp$n: metrics.jsonl has $(wc -l < "$F/metrics.jsonl") lines, expected 60 (rank 0's)"
  for ((k = 1; k < n; ++k)); do grep -q "rank $k of $n" "$F/rank$k.log" || fail "dp$n: rank$k.log: $(cat "$F/rank$k.log")"; done
  ((n == 1)) || [[ $(status_of "$F" processes) == "$n" ]] || fail "dp$n: status.json does not record processes"
done
[[ ! -e $ONE/rank1.log && $(status_of "$ONE" processes) == "" ]] || fail "a run without distributed: started ranks"

# ---- Collectives on 2 and 3 ranks; gossip on a ring of 4 (|lambda2| = 1/3 exactly).
for n in 2 3; do
  config coll$n.yaml fixture_dist.collectives $n
  expect_exit 0 nx -q run coll$n.yaml
  [[ $(summary "$(folder_of "$OUT")" checked) == "1" ]] || fail "collectives on $n ranks"
done
# ctx.devices(): every device of the config's list.
{ cat coll2.yaml; echo "device: [cpu, cpu:0]"; } > devices.yaml
expect_exit 0 nx -q run devices.yaml
[[ $(summary "$(folder_of "$OUT")" devices) == "2" ]] || fail "ctx.devices() of a device list"
config gossip.yaml fixture_dist.gossip 4 "{steps: 20}"
expect_exit 0 nx -q run gossip.yaml
G=$(folder_of "$OUT")
python3 - "$G" <<'PY' || fail "gossip: $(cat "$G/status.json")"
import json, sys
s = json.load(open(sys.argv[1] + "/status.json"))["summary"]
rate, lam = s["rate"], s["lambda2"]
assert abs(lam - 1 / 3) < 1e-12 and abs(rate - lam) < 1e-6, (rate, lam)
PY

# ---- A rank killed, or hung past the timeout: the run fails with its error; no rank is left.
rank_pids() { local p; for p in $(pgrep -P "$1" || true); do tr '\0' '\n' < /proc/$p/environ | grep -q '^NEXP_RANK=' && echo "$p"; done; }
rank_pid() { local p; for p in $(rank_pids "$1"); do tr '\0' '\n' < /proc/$p/environ | grep -qx "NEXP_RANK=$2" && echo "$p"; done; }
running() { [[ -f $1/metrics.jsonl && $(wc -l < "$1/metrics.jsonl") -ge 3 ]]; }
three_ranks() { [[ $(rank_pids "$PID" | wc -l) == 3 ]]; }
expect_killed_run() {  # name, signal, rank, timeout, what the error says
  config $1.yaml fixture_dist.dp_sgd 3 "{steps: 100000, step_sleep_ms: 20}" "$4"
  nx_exec -q run $1.yaml > $1.out 2> $1.err &
  PID=$!
  wait_for "3 ranks" three_ranks
  local pids; pids=$(rank_pids "$PID")
  wait_for "the ranks to step" compgen -G "$WORK/runs/$1/*/metrics.jsonl" > /dev/null
  local F; F=$(dirname "$(compgen -G "$WORK/runs/$1/*/metrics.jsonl")")
  wait_for "the ranks to step" running "$F"
  local started=$SECONDS
  kill -"$2" "$(rank_pid "$PID" "$3")"
  set +e; wait "$PID"; local rc=$?; set -e
  [[ $rc == 1 ]] || fail "$1: exit $rc, expected 1: $(cat $1.err)"
  # An upper bound only (the run must not wait forever), generous for a loaded machine.
  ((SECONDS - started <= ${4%s} + 60)) || fail "$1: took $((SECONDS - started)) s to end"
  [[ $(status_of "$F" status) == failed ]] || fail "$1: $(cat "$F/status.json")"
  expect_contains "$(status_of "$F" error)" "$5" "$1: status.json's error"
  local p; for p in $pids; do [[ ! -e /proc/$p ]] || fail "$1: rank process $p is still there: $(ps -o pid,stat,cmd -p "$p")"; done
  ! pgrep -f "run-rank $F" > /dev/null || fail "$1: a rank of $F is still running"
}
expect_killed_run killed KILL 1 60s "rank 1 was killed by signal 9"
expect_killed_run hung STOP 2 3s "rank 2 did not join a collective within the 3 s timeout"

# ---- Ctrl-C: every rank checkpoints; --resume ends where the uninterrupted run ends.
config stop.yaml fixture_dist.dp_sgd 2 "{steps: 200, step_sleep_ms: 30}"
expect_exit 0 nx -q run stop.yaml experiment=whole
WHOLE=$(folder_of "$OUT")
nx_exec -q run stop.yaml experiment=stopped > stopped.out 2> stopped.err &
PID=$!
wait_for "the ranks to step" compgen -G "$WORK/runs/stopped/*/metrics.jsonl" > /dev/null
S=$(dirname "$(compgen -G "$WORK/runs/stopped/*/metrics.jsonl")")
wait_for "the ranks to step" running "$S"
kill -INT "$PID"
set +e; wait "$PID"; rc=$?; set -e
[[ $rc == 1 && $(status_of "$S" status) == interrupted ]] || fail "stopped: exit $rc, $(cat "$S/status.json")"
[[ -f $S/checkpoints/LATEST && -f $S/ranks/1/checkpoints/LATEST ]] || fail "stopped: each rank commits its checkpoint"
expect_exit 0 nx -q run --resume "$(basename "$S")"
same_result "$WHOLE" "$S"
[[ $(wc -l < "$S/metrics.jsonl") == 200 ]] || fail "resumed: each step's metrics once, found $(wc -l < "$S/metrics.jsonl") lines"

# ---- Bad input: exit 2 with key, file:line, expected and found.
printf 'method: fixture_dist.dp_sgd\ndistributed:\n  processes: 0\n' > bad1.yaml
expect_exit 2 nx -q validate bad1.yaml
expect_contains "$ERR" "bad1.yaml', line 3" "processes: 0"; expect_contains "$ERR" "processes" "processes: 0"
printf 'method: fixture_dist.dp_sgd\ndistributed: {processes: 2, backend: mpl}\n' > bad2.yaml
expect_exit 2 nx -q validate bad2.yaml
expect_contains "$ERR" "bad2.yaml', line 2" "backend"; expect_contains "$ERR" "gloo" "backend: the expected value"
printf 'method: fixture_dist.dp_sgd\ndistributed:\n  timeout: soon\n' > bad3.yaml
expect_exit 2 nx -q validate bad3.yaml
expect_contains "$ERR" "bad3.yaml', line 3" "timeout"; expect_contains "$ERR" "found 'soon'" "timeout"
# A rank that fails on bad input (here a 2 x N/2 torus over 3 ranks) fails the run with exit 2 and its words.
config torus3.yaml fixture_dist.gossip 3 "{graph: torus}"
expect_exit 2 nx -q run torus3.yaml
expect_contains "$ERR" "rank 0 failed" "torus over 3 ranks"; expect_contains "$ERR" "even number" "torus over 3 ranks"
echo "cli_distributed: ok"
