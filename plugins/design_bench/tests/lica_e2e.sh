#!/usr/bin/env bash
# configs/design_bench/lica.yaml end to end on lica_fixture/ (LICA's folder layout: metadata.csv,
# layouts/<template_id>/<layout_id>.json, images/...): the run completes and scores what the fixture
# holds by hand; without a folder it fails with exit 2 and names the files LICA's download provides.
source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
fixture="$SOURCE_DIR/plugins/design_bench/tests/lica_fixture"
run() { nxp -q run configs/design_bench/lica.yaml "$@"; }
summary() {  # run's output -> its run's summary as JSON
  python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1] + '/status.json'))['summary']))" "$(folder "$1")"
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
