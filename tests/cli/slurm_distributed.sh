# A sweep of distributed trials on the one-node Slurm cluster (scripts/slurm-local): each array
# element asks for 2 tasks (#SBATCH --ntasks=2) and the trial's run starts its 2 ranks as the tasks of
# one srun, which meet through a TCP store on the node; the result is the one-process result.
source "$(dirname "$0")/lib.sh"
slurm_local_start
on_exit() { slurm_local_stop; cleanup; }
trap on_exit EXIT

printf 'method: fixture_dist.dp_sgd\nthreads: 1\nobjective: {metric: loss, mode: min}\n' > dp.yaml
expect_exit 0 nx -q run dp.yaml seed=1 experiment=one
ONE=$(tail -n 1 <<<"$OUT" | awk '{print $3}')
expect_exit 0 nx -q run dp.yaml -m 'seed=1,2' +distributed.processes=2 --launcher slurm --jobs 1
DIR=$WORK/runs/dp/sweep
grep -q "^#SBATCH --ntasks=2" "$DIR/slurm/job-1.sh" || fail "2 tasks per element: $(cat "$DIR/slurm/job-1.sh")"
[[ $(count completed "$DIR") == 2 ]] || fail "two completed trials: $(cat "$DIR/trials.csv")"
T=$(compgen -G "$DIR/trial-0000-*" | head -n1)
grep -q "rank 1 of 2" "$T/rank1.log" || fail "rank 1 ran as a Slurm task: $(cat "$T"/rank*.log)"
python3 - "$ONE" "$T" <<'PY' || fail "the 2-task trial differs from one process"
import json, sys
a, b = (json.load(open(f + "/status.json"))["summary"] for f in sys.argv[1:3])
assert b["world"] == 2, b
for k in ("w0", "w1", "w2", "w3", "w4", "loss"):
    assert abs(a[k] - b[k]) <= 1e-6 * abs(a[k]), (k, a[k], b[k])
PY
echo "slurm_distributed: ok"
