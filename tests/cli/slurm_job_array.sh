# The Slurm launcher end to end on a real one-node cluster: one `sbatch --array` job; a task is
# requeued while it runs, checkpoints on the signal, and resumes to the same result. Every trial holds
# at step 25 (params.hold_at): trials 0 and 2 are let go as they hold (whatever the node's cores),
# trial 1 holds until it has been requeued, so the requeue always meets a running trial.
source "$(dirname "$0")/lib.sh"
slurm_local_start
# On the way out: held trials are let go, the cluster stops (its daemons must not outlive the test),
# and the scratch folder goes.
on_exit() {
  local d
  for d in "$WORK"/runs/smoke/sweep/trial-*/artifacts; do touch "$d/release" 2>/dev/null || true; done
  slurm_local_stop
  cleanup
}
trap on_exit EXIT

ARGS=(params.steps=60 params.checkpoint_every=10 dataset.n=200 dataset.d=5 params.lr=0.05)
nx_exec -q run "$SCAFFOLD_SMOKE" "${ARGS[@]}" params.hold_at=25 -m 'seed=range(0,3)' objective=mse \
  --launcher slurm --requeue --jobs 3 > sweep.out 2> sweep.err &
PID=$!
DIR=$WORK/runs/smoke/sweep
release_every "$DIR/trial-000[02]-*" &
T1=$(held_folder "$DIR/trial-0001-*")
JOB=$(squeue -h -o %F | head -n1)
[[ -n $JOB ]] || fail "no job array in the queue: $(cat sweep.err)"
# Requeue trial 1's task while it holds: Slurm signals it (SIGTERM); once the trial has taken the stop
# in, it is let go, checkpoints at step 30 and marks itself interrupted.
scontrol requeue "${JOB}_1" || fail "scontrol requeue ${JOB}_1"
wait_for "trial 1 to take the stop in" has_line "$DIR/slurm/${JOB}_1.out" "$STOP_REQUESTED"
release "$T1"
wait_for "trial 1 to be interrupted" grep -q '"interrupted"' "$T1/status.json"
[[ $(status_of "$T1" reason) == checkpointed ]] || fail "trial 1 stopped at a checkpoint: $(cat "$T1/status.json")"
# A requeued task waits before it may start again (Slurm sets its begin time ahead). Bring the start
# forward whenever the task is seen pending, until the trial has resumed: one update made while the task
# was still on its way back to the queue would be overwritten by the requeue's own begin time.
let_go() {
  [[ $(squeue -h -j "${JOB}_1" -o %T 2>/dev/null) == PENDING ]] &&
    scontrol update JobId="${JOB}_1" StartTime=now 2>/dev/null
  grep -q '"resumed"' "$T1/meta.json" 2>/dev/null || [[ $(status_of "$T1" status) == completed ]]
}
wait_for "the requeued task to start again" let_go
set +e; wait $PID; RC=$?; set -e
[[ $RC == 0 ]] || fail "the sweep exits 0 once every trial completed, got $RC: $(cat sweep.err)"
[[ $(count completed "$DIR") == 3 ]] || fail "three completed trials: $(cat "$DIR/trials.csv")"
grep -q '"resumed"' "$T1/meta.json" || fail "trial 1 resumed from its checkpoint"
grep -q "^#SBATCH --array=0-2%3" "$DIR/slurm/job-1.sh" || fail "one array job: $(cat "$DIR/slurm/job-1.sh")"
expect_exit 0 nx sweep status "$DIR"
expect_contains "$OUT" "3 completed" "sweep status"
# The resumed trial ends where an uninterrupted local run ends.
expect_exit 0 nx -q run "$SCAFFOLD_SMOKE" "${ARGS[@]}" seed=1 experiment=local
LOCAL=$(run_id "$OUT")
expect_exit 0 nx show "$LOCAL" --json
want=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["mse"])' <<<"$OUT")
got=$(python3 -c "import json; print(json.load(open('$T1/status.json'))['summary']['mse'])")
[[ $want == "$got" ]] || fail "requeued trial mse $got, uninterrupted $want"
echo "slurm_job_array: ok"
