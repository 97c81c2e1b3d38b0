# `nexp report` for a run, several runs and a sweep, rendered by headless Chromium: the page must
# show its title and plots, produce a non-blank screenshot, and log no script error.
source "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || { echo "skip: Chromium is not installed (scripts/setup --test installs it)"; exit 77; }

render() {  # html, png
  local log=$WORK/chromium.log
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$WORK/chromium" \
    --enable-logging=stderr --v=0 --window-size=1300,1600 --screenshot="$2" "file://$1" > /dev/null 2> "$log" || true
  ! grep -E "Uncaught|CONSOLE.*[Ee]rror" "$log" || fail "script error while rendering $1"
  [[ -s $2 ]] || fail "no screenshot of $1: $(tail -n 5 "$log")"
  python3 - "$2" <<'PY' || fail "blank page: $1"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IHDR": width = struct.unpack(">I", data[pos + 8:pos + 12])[0]
    if kind == b"IDAT": idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
# Count distinct bytes in the decoded rows: an empty white page has almost none.
assert len(set(raw)) > 20, "the screenshot is (nearly) uniform"
PY
}

expect_exit 0 nx run "$SCAFFOLD_SMOKE" seed=1
ID1=$(run_id "$OUT")
expect_exit 0 nx run "$SCAFFOLD_SMOKE" seed=2 params.lr=0.02
ID2=$(run_id "$OUT")
expect_exit 0 nx report "$ID1" -o run.html
grep -q "<svg" run.html && grep -q "Run $ID1" run.html || fail "run report content"
! grep -qi "<script\|http://\|https://" <(sed 's|http://www.w3.org/2000/svg||g' run.html) || fail "the report must be self-contained"
render "$WORK/run.html" run.png
expect_exit 0 nx report "$ID1" "$ID2" -o compare.html
grep -q "2 runs compared" compare.html && grep -q "params.lr" compare.html || fail "compare report"
render "$WORK/compare.html" compare.png
expect_exit 0 nx -q run "$SCAFFOLD_SMOKE" -m params.lr=0.01,0.1 'seed=range(0,2)' objective=mse --jobs 2
expect_exit 0 nx report runs/smoke/sweep -o sweep.html
grep -q "Parallel coordinates" sweep.html && grep -q "mse vs params.lr" sweep.html || fail "sweep report"
render "$WORK/sweep.html" sweep.png
# An adaptive sweep: best so far against trial number, parameter importance, curves five to a panel.
expect_exit 0 nx -q run "$SCAFFOLD_SMOKE" -m 'params.lr=loguniform(0.005,0.2)' 'seed=range(0,2)' objective=mse \
  --sampler tpe --trials 12 --jobs 2 experiment=tpe
expect_exit 0 nx report runs/tpe/sweep -o tpe.html
for part in "proposed by the tpe sampler (budget 12)" "<h2>Best so far</h2>" "<h2>Parameter importance</h2>" \
            "class='legend'>best so far</text>" "(3/3)</text>"; do
  grep -qF "$part" tpe.html || fail "adaptive sweep report: no '$part'"
done
render "$WORK/tpe.html" tpe.png
echo "cli_report: ok"
