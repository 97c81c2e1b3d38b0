#!/usr/bin/env bash
# Trained denoisers saved and loaded end to end: a run with params.save_denoisers=true writes
# artifacts/denoisers/ring8_mlp_edm.bin; a run loading that folder trains nothing and reports the same
# summary to the last digit; loading it into a run on other data (another seed), from a folder that does
# not exist, or for the family it does not hold exits 2 and says what to do.
source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
run() { nxp -q run configs/fds/sample.yaml params.denoiser=mlp_edm params.sampler=euler \
          params.nfe=4 params.width=16 params.depth=1 params.train_steps=30 params.train_samples=500 params.samples=300 \
          params.eval_samples=300 dataset.reference=300 "$@"; }

saved=$(folder "$(run params.save_denoisers=true)")
ckpt="$saved/artifacts/denoisers"
[[ -s "$ckpt/ring8_mlp_edm.bin" ]] || fail "no checkpoint in $ckpt"
loaded=$(folder "$(run params.load_denoisers="$ckpt")")
grep -q "mlp_edm loaded from" "$loaded/log.txt" || fail "the loading run did not load: $(cat "$loaded/log.txt")"
if grep -q "mlp_edm trained" "$loaded/log.txt"; then fail "the loading run trained"; fi
python3 - "$saved" "$loaded" <<'PY' || fail "the loaded denoiser gave another summary"
import json, sys
a, b = (json.load(open(f + "/status.json"))["summary"] for f in sys.argv[1:3])
for k in ["mmd", "sliced_w2", "mode_coverage", "precision", "recall", "nfe"]:
    assert a[k] == b[k], (k, a[k], b[k])
PY

refused "trained on other data" params.load_denoisers="$ckpt" seed=4
refused "no such folder" params.load_denoisers="$work/none"
refused "ring8_mlp_vp.bin: cannot open" params.load_denoisers="$ckpt" params.denoiser=mlp_vp
echo "ok"
