# An adaptive sweep on a real one-node Slurm cluster: the trials run in waves of --jobs array tasks,
# and each wave's results reach the sampler before it proposes the next wave.
source "$(dirname "$0")/lib.sh"
slurm_local_start
on_exit() {
  slurm_local_stop
  cleanup
}
trap on_exit EXIT

printf 'method: fixture_crash.maybe\nparams: {sleep_ms: 0}\nobjective: value\n' > tpe.yaml
expect_exit 0 nx run tpe.yaml -m 'params.x=uniform(0,10)' --sampler tpe --trials 5 --jobs 2 --launcher slurm
DIR=$WORK/runs/tpe/sweep
[[ $(count completed "$DIR") == 5 ]] || fail "5 trials completed: $(cat "$DIR/trials.csv")"
# Waves of 2, 2 and 1 array tasks: three job scripts, each array file naming its wave's trials.
[[ $(ls "$DIR"/slurm/job-*.sh | wc -l) == 3 ]] || fail "three waves: $(ls "$DIR/slurm")"
[[ $(cat "$DIR/slurm/array-1.txt" | tr '\n' ' ') == "0 1 " && $(cat "$DIR/slurm/array-3.txt") == 4 ]] \
  || fail "the waves' trials: $(head "$DIR"/slurm/array-*.txt)"
python3 -c "import yaml,sys; h=yaml.safe_load(open('$DIR/sampler.yaml')); assert sorted(h['observed']) == [0,1,2,3,4], h" \
  || fail "the sampler saw every wave: $(cat "$DIR/sampler.yaml")"
# Pruning under Slurm (write_prune_config's sweep, as cli_adaptive runs it locally): nexp stops each
# x = 1 trial through scancel; they end pruned with their last value, are not requeued (--requeue), and
# a re-run runs nothing again.
write_prune_config prune.yaml 4000
expect_exit 0 nx run prune.yaml --jobs 1 --launcher slurm --requeue
PRDIR=$WORK/runs/prune/sweep
expect_three_pruned "$PRDIR"
for f in "$PRDIR"/trial-000[345]-*; do
  [[ ! -e $f/pruned-by-sweep ]] || fail "$f: the note is removed once the trial is marked"
done
expect_contains "$ERR" "scancel --batch --signal=TERM" "stopped through scancel"
expect_exit 0 nx run prune.yaml --jobs 1 --launcher slurm
[[ $(count pruned "$PRDIR") == 3 && $(ls "$PRDIR"/slurm/job-*.sh | wc -l) == 1 ]] || fail "a re-run submits nothing"
expect_exit 2 nx run prune.yaml experiment=prune-nowait --jobs 1 --launcher slurm --no-wait
expect_contains "$ERR" "drop --no-wait" "a pruned sweep waits for its job"

expect_exit 2 nx run tpe.yaml -m 'params.x=uniform(0,10)' --sampler tpe --trials 7 --jobs 2 --launcher slurm --no-wait
expect_contains "$ERR" "drop --no-wait" "an adaptive sweep waits for its waves"
echo "slurm_adaptive: ok"
