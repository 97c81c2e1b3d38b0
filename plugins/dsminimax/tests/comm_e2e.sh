#!/usr/bin/env bash
# The comm back end end to end: `params.backend=comm` under `distributed: {processes: P}` (M / P nodes
# per rank, Gloo) reports what the sim back end reports, to 1e-12 relative, for P = 2 and 4 (8 nodes,
# stochastic gradients); 8 nodes over 3 processes exits 2 and says what to change.
source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
run() { nxp -q run configs/dsminimax/ncpl.yaml dataset.noise=0.01 params.steps=200 \
          params.stop_at_eps=false seed=3 "$@"; }

sim=$(folder "$(run)")
for p in 2 4; do
  comm=$(folder "$(run params.backend=comm distributed.processes=$p)")
  python3 - "$sim" "$comm" <<'PY' || fail "comm with $p processes differs from sim"
import json, sys
a, b = (json.load(open(f + "/status.json"))["summary"] for f in sys.argv[1:3])
keys = ["grad_phi_norm", "phi", "consensus_error", "iterations_to_eps", "grad_calls", "comm_rounds", "spectral_gap"]
for k in keys:
    assert abs(a[k] - b[k]) <= 1e-12 * max(abs(a[k]), 1e-300), (k, a[k], b[k])
assert a["comm_rounds"] == 200 and a["grad_calls"] == 8 * 201, a
PY
done

set +e
out=$(run params.backend=comm distributed.processes=3 2>&1)
rc=$?
set -e
[[ $rc == 2 ]] || fail "8 nodes over 3 processes: exit $rc, expected 2: $out"
grep -q "multiple of distributed.processes" <<<"$out" || fail "8 nodes over 3 processes: no advice in: $out"
echo "ok"
