# On a machine with a usable CUDA GPU: `nexp devices` lists it with telemetry, and a run on cuda:0
# completes with the same metrics as on the CPU within float tolerance. Skips elsewhere.
source "$(dirname "$0")/lib.sh"
expect_exit 0 nx devices --json
USABLE=$(python3 -c 'import json,sys; print(sum(1 for d in json.load(sys.stdin) if d.get("backend") == "cuda" and d.get("details", {}).get("torch") == "usable"))' <<<"$OUT")
[[ $USABLE -gt 0 ]] || { echo "skip: no CUDA device usable by this LibTorch"; exit 77; }
expect_exit 0 nx run "$SCAFFOLD_SMOKE" device=cuda:0
expect_exit 0 nx show "$(run_id "$OUT")" --json
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"] == "completed" and d["device"] == "cuda:0", d' <<<"$OUT"
echo "gpu_cuda_run: ok"
