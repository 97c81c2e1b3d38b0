# Four processes writing the same runs folder at once: every run indexed, none lost.
source "$(dirname "$0")/lib.sh"
for seed in 1 2 3 4; do
  nx -q run "$SCAFFOLD_SMOKE" seed=$seed params.steps=300 > "out.$seed" 2> "err.$seed" &
done
wait
for seed in 1 2 3 4; do
  [[ $(tail -n1 "out.$seed") == run:* ]] || fail "process $seed: $(cat "err.$seed")"
done
expect_exit 0 nx runs --json
[[ $(python3 -c 'import json,sys; print(len([r for r in json.load(sys.stdin) if r["status"] == "completed"]))' <<<"$OUT") == 4 ]] \
  || fail "expected 4 completed runs in the index: $OUT"
expect_exit 0 nx runs --reindex --json
[[ $(python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' <<<"$OUT") == 4 ]] || fail "reindex"
echo "cli_concurrent: ok"
