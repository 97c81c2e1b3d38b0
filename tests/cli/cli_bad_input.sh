# Bad input files, through the readers that parse user files (htc's edge lists, drwatson's logs, core's
# CSV tables read for dirichlet_vae): random bytes, latin-1, truncated, empty, and a folder instead of
# a file. Each run ends failed with exit 2, its `run:` line, and a readable message (bytes that are
# not UTF-8 shown as \xNN) in the output, status.json and `nexp runs`; no run is left running.
source "$(dirname "$0")/lib.sh"
: "${NEXP_SOURCE_DIR:?set by ctest}"
expect_exit 0 nx list methods
for m in htc.decide drwatson.diagnose dirichlet_vae.threshold; do
  [[ $OUT == *"$m"* ]] || { echo "skip: plugin method $m is not built (NEXP_BUILD_PLUGINS=OFF)"; exit 77; }
done

python3 - <<'PY'
import random
open("random.bin", "wb").write(random.Random(11).randbytes(4096))
open("latin1.edges", "wb").write("nodes 3\n1 -> 2  # café\n2 <-> 3\n".encode("latin-1"))
open("truncated.edges", "wb").write(b"nodes 3\n1 -> 2\n2 <")
open("latin1.log", "wb").write("[ 9130.1] NVRM: Xid (PCI:0000:b3:00): 48, pid=21877, name=python, été\n".encode("latin-1"))
# A UTF-8 log cut inside a character: the last line ends with the first byte of "°" (C2 B0).
open("truncated.log", "wb").write("[ 12.0] GPU 0: temperature 85 °C\n[ 13.0] GPU 0: temperature 86 °C".encode()[:-2])
open("latin1.csv", "wb").write("x0,x1,x2,target\n1.5,2.0,0.5,1\n2.5,3.0°,0.1,0\n".encode("latin-1"))
open("truncated.csv", "wb").write(b"x0,x1,x2,target\n1.5,2.0,0.5,1\n2.5,3.0")
open("empty", "wb").close()
PY
mkdir folder
echo "not an edge list" > folder/notes.txt

fails() {  # what, expected part of the message, config, overrides...
  local what=$1 part=$2; shift 2
  expect_exit 2 nx -q run "$@"
  expect_contains "$ERR" "$part" "$what: the message"
  local id; id=$(run_id "$OUT")
  [[ -n $id ]] || fail "$what: no 'run: <id> <folder>' line: $OUT"
  local folder; folder=$(tail -n 1 <<<"$OUT" | awk '{print $3}')
  [[ $(status_of "$folder" status) == failed ]] || fail "$what: $(cat "$folder/status.json")"
  expect_contains "$(status_of "$folder" error)" "$part" "$what: status.json's error"
}

EDGES=("$NEXP_SOURCE_DIR/configs/htc/edge_list.yaml")
fails "edge list of random bytes" 'holds the byte \x' "${EDGES[@]}" dataset.path=random.bin
fails "latin-1 edge list" "line 2, column 14 holds the byte \\xE9" "${EDGES[@]}" dataset.path=latin1.edges
fails "truncated edge list" "line 3: expected \`i -> j\`" "${EDGES[@]}" dataset.path=truncated.edges
fails "empty edge list" "is empty" "${EDGES[@]}" dataset.path=empty
fails "folder of no edge list" "holds no *.edges file" "${EDGES[@]}" dataset.path=folder

LOG=("$NEXP_SOURCE_DIR/configs/drwatson/diagnose.yaml" "params.fleet=$NEXP_SOURCE_DIR/configs/drwatson/fleet.yaml"
     params.probe_steps=1 device.id=cpu)
fails "log of random bytes" 'holds the byte \x' "${LOG[@]}" params.log=random.bin
fails "latin-1 log" "line 1, column 67 holds the byte \\xE9" "${LOG[@]}" params.log=latin1.log
fails "truncated log" "line 2, column 31 holds the byte \\xC2" "${LOG[@]}" params.log=truncated.log
fails "empty log" "is empty" "${LOG[@]}" params.log=empty
fails "a folder as the log" "is a folder" "${LOG[@]}" params.log=folder

printf 'method: dirichlet_vae.threshold\ndataset: {name: csv, path: x.csv, task: regression}\ndevice: cpu\n' > csv.yaml
fails "CSV of random bytes" 'holds the byte \x' csv.yaml dataset.path=random.bin
fails "latin-1 CSV" "line 3, column 8 holds the byte \\xB0" csv.yaml dataset.path=latin1.csv
fails "truncated CSV" "line 3 has 2 columns" csv.yaml dataset.path=truncated.csv
fails "empty CSV" "is empty" csv.yaml dataset.path=empty
fails "a folder as the CSV" "is a folder" csv.yaml dataset.path=folder

expect_exit 0 nx runs --json
python3 - "$OUT" <<'PY' || fail "nexp runs: 15 failed runs with their errors, none running: $OUT"
import json, sys
runs = json.loads(sys.argv[1])
assert len(runs) == 15 and all(r["status"] == "failed" and r["error"] for r in runs), [(r["id"], r["status"]) for r in runs]
assert sum("\\x" in r["error"] for r in runs) == 7, [r["error"] for r in runs]
PY
! grep -l '"running"' "$WORK"/runs/*/*/status.json || fail "a run folder was left running"
echo "cli_bad_input: ok"
