#!/usr/bin/env bash
# configs/design_bench/lica.yaml end to end on lica_fixture/ (LICA's folder layout: metadata.csv,
# layouts/<template_id>/<layout_id>.json, images/...): the run completes and scores what the fixture
# holds by hand; without a folder it fails with exit 2 and names the files LICA's download provides.
set -euo pipefail
: "${NEXP:?set by ctest}" "${PLUGIN_DIR:?set by ctest}" "${SOURCE_DIR:?set by ctest}"
fixture="$SOURCE_DIR/plugins/design_bench/tests/lica_fixture"
work=$(mktemp -d /tmp/nexp-design-bench-lica-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$SOURCE_DIR"
export NEXP_RUNS_DIR="$work/runs"
fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$NEXP" --plugin-dir "$PLUGIN_DIR" -q run configs/design_bench/lica.yaml "$@"; }
summary() {  # the run folder of run's output -> its summary as JSON
  local folder; folder=$(tail -n 1 <<<"$1" | awk '{print $3}')
  python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1] + '/status.json'))['summary']))" "$folder"
}

# Sibling matching with font-Jaccard: 8 layouts, 4 templates; the two flyers and the three slides share
# their fonts, no two templates do, so every pair is answered right.
out=$(run dataset.dir="$fixture" params.items=40)
python3 - "$(summary "$out")" <<'PY' || fail "sibling_matching on the fixture: $out"
import json, sys
s = json.loads(sys.argv[1])
assert s["items"] == 40 and s["parse_failures"] == 0, s
assert s["f1"] == 1.0 and s["score"] == 1.0, s
PY

# Aspect adaptation: the square post and its 9:16 story (4 components, matched by array order) give two
# items; the oracle scores 1, a proportional rescale less.
for model in oracle rescale; do
  out=$(run dataset.dir="$fixture" params.task=aspect_adapt params.model=$model)
  python3 - "$(summary "$out")" "$model" <<'PY' || fail "aspect_adapt $model on the fixture: $out"
import json, sys
s, model = json.loads(sys.argv[1]), sys.argv[2]
assert s["items"] == 2, s
assert (s["miou"] == 1.0) if model == "oracle" else (0.1 < s["miou"] < 0.95), s
PY
done

# No folder: exit 2, the files expected named.
set +e
err=$(run dataset.dir="$work/absent" 2>&1 >/dev/null)
code=$?
set -e
[[ $code == 2 ]] || fail "a missing LICA folder exited $code: $err"
[[ $err == *"layouts/<template_id>/<layout_id>.json"* && $err == *"metadata.csv"* ]] || fail "the message: $err"
echo "ok"
