# The Slurm launcher end to end on a real one-node cluster: one `sbatch --array` job; a task is
# requeued while it runs, checkpoints on the signal, and resumes to the same result.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "skip: the local Slurm cluster needs root"; exit 77; }
SLURM_LOCAL=$NEXP_SOURCE_DIR/scripts/slurm-local
export NEXP_SLURM_DIR=$WORK/slurm
"$SLURM_LOCAL" start || fail "scripts/slurm-local start"
trap '"$SLURM_LOCAL" stop; rm -rf "$WORK"' EXIT
export SLURM_CONF=$NEXP_SLURM_DIR/slurm.conf

ARGS=(params.steps=1500 params.checkpoint_every=50 dataset.n=20000 dataset.d=40 params.lr=0.01)
nx_exec -q run "$SCAFFOLD_SMOKE" "${ARGS[@]}" -m 'seed=range(0,3)' objective=mse --launcher slurm --requeue --jobs 3 \
  > sweep.out 2> sweep.err &
PID=$!
DIR=$WORK/runs/smoke/sweep
# Wait for trial 1 to run, then requeue its task (Slurm sends SIGTERM; the trial checkpoints).
for _ in $(seq 300); do grep -q '"running"' "$DIR"/trial-0001-*/status.json 2>/dev/null && break; sleep 0.2; done
JOB=$(squeue -h -o %F | head -n1)
[[ -n $JOB ]] || fail "no job array in the queue: $(cat sweep.err)"
sleep 1
scontrol requeue "${JOB}_1" || fail "scontrol requeue ${JOB}_1"
for _ in $(seq 100); do grep -q '"interrupted"' "$DIR"/trial-0001-*/status.json && break; sleep 0.2; done
grep -q '"interrupted"' "$DIR"/trial-0001-*/status.json || fail "the requeued task did not mark its trial interrupted"
# A requeued task waits before it may start again; let it go now.
for _ in $(seq 50); do scontrol update JobId="${JOB}_1" StartTime=now 2>/dev/null && break; sleep 0.2; done
set +e; wait $PID; RC=$?; set -e
[[ $RC == 0 ]] || fail "the sweep exits 0 once every trial completed, got $RC: $(cat sweep.err)"
[[ $(count completed "$DIR") == 3 ]] || fail "three completed trials: $(cat "$DIR/trials.csv")"
grep -q '"resumed"' "$DIR"/trial-0001-*/meta.json || fail "trial 1 resumed from its checkpoint"
grep -q "^#SBATCH --array=0-2%3" "$DIR/slurm/job-1.sh" || fail "one array job: $(cat "$DIR/slurm/job-1.sh")"
expect_exit 0 nx sweep status "$DIR"
expect_contains "$OUT" "3 completed" "sweep status"
# The resumed trial ends where an uninterrupted local run ends.
expect_exit 0 nx -q run "$SCAFFOLD_SMOKE" "${ARGS[@]}" seed=1 experiment=local
LOCAL=$(run_id "$OUT")
expect_exit 0 nx show "$LOCAL" --json
want=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["mse"])' <<<"$OUT")
got=$(python3 -c "import json,glob; print(json.load(open(glob.glob('$DIR/trial-0001-*/status.json')[0]))['summary']['mse'])")
[[ $want == "$got" ]] || fail "requeued trial mse $got, uninterrupted $want"
echo "slurm_job_array: ok"
