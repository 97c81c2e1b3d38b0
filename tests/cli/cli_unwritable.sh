# A run whose folder becomes unwritable mid-run, in a user and mount namespace of its own (unshare -rm:
# no root needed): the disk fills up (a 1 MiB tmpfs, filled while the run holds at step 3), or the run's
# folder is made read-only (a read-only bind mount over it). Either way the run fails with the file and
# the system's reason on stderr, exit 1 and its `run:` line; `nexp runs` agrees with `nexp runs
# --reindex`; and once the folder is writable again, `nexp run --resume` completes the run with the
# summary of an uninterrupted one. Skips where user namespaces or these mounts are not allowed.
if [[ -z ${NEXP_IN_NAMESPACE:-} ]]; then
  unshare -rm true 2> /dev/null || { echo "skip: user and mount namespaces (unshare -rm) are not allowed here"; exit 77; }
  NEXP_IN_NAMESPACE=1 exec unshare -rm bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
MOUNTS=()
trap 'for m in "${MOUNTS[@]}"; do umount -l "$m" 2> /dev/null || true; done; cleanup' EXIT
mkdir disk ro
mount -t tmpfs -o size=1m nexp-test "$WORK/disk" || { echo "skip: cannot mount a tmpfs in a user namespace here"; exit 77; }
MOUNTS+=("$WORK/disk")
expect_exit 0 nx list methods
[[ $OUT == *fixture_steps.walk* ]] || fail "the fixture_steps plugin is not built"

printf 'method: fixture_steps.walk\nparams: {steps: 40, checkpoint_every: 4}\ndevice: cpu\nseed: 3\n' > walk.yaml
NEXP_RUNS_DIR=$WORK/ref expect_exit 0 nx -q run walk.yaml
REFERENCE=$(status_of "$(compgen -G "$WORK/ref/walk/*" | head -n1)" summary)

# The run of walk.yaml, held at step 3 until `spoil` (a command) has made its folder unwritable.
spoiled_run() {  # name, spoil command...
  local name=$1; shift
  nx_exec -q run walk.yaml params.hold_at=3 params.held_file="$WORK/$name.held" \
    params.release_file="$WORK/$name.release" > "$name.out" 2> "$name.err" &
  local pid=$!
  wait_for "the $name run to hold" test -f "$WORK/$name.held"
  "$@"
  touch "$WORK/$name.release"
  set +e; wait "$pid"; local rc=$?; set -e
  ERR=$(cat "$name.err")
  [[ $rc == 1 ]] || fail "$name: exit $rc, expected 1: $ERR"
  FOLDER=$(tail -n 1 "$name.out" | awk '$1 == "run:" {print $3}')
  [[ -d $FOLDER ]] || fail "$name: no 'run: <id> <folder>' line: $(cat "$name.out")"
}
# `nexp runs` (which brings rows of ended runs up to date) and `--reindex` give the run the same status.
expect_index() {  # status, what
  expect_exit 0 nx runs --json
  local before=$OUT
  expect_exit 0 nx runs --reindex --json
  python3 - "$before" "$OUT" "$1" <<'PY' || fail "$2: the index"
import json, sys
before, after, want = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
assert [(r["id"], r["status"]) for r in before] == [(r["id"], r["status"]) for r in after], (before, after)
assert [r["status"] for r in after] == [want], after
PY
}
expect_resumes() {  # what
  expect_exit 0 nx -q run --resume "$FOLDER"
  [[ $(status_of "$FOLDER" status) == completed && $(status_of "$FOLDER" summary) == "$REFERENCE" ]] \
    || fail "$1: the resumed run differs from an uninterrupted one: $(cat "$FOLDER/status.json")"
}

# 1. The disk fills up.
fill() { dd if=/dev/zero of="$WORK/disk/fill" bs=4k 2> /dev/null || true; }
export NEXP_RUNS_DIR=$WORK/disk/runs
spoiled_run full fill
expect_contains "$ERR" "No space left on device" "full disk: the error"
rm "$WORK/disk/fill"
expect_index failed "full disk"
expect_contains "$(status_of "$FOLDER" error)" "No space left on device" "full disk: status.json's error"
expect_resumes "full disk"

# 2. The run's folder becomes read-only (the index beside it stays writable).
export NEXP_RUNS_DIR=$WORK/ro/runs
mkdir -p "$NEXP_RUNS_DIR/walk"
read_only() {
  mount --bind "$NEXP_RUNS_DIR/walk" "$NEXP_RUNS_DIR/walk" && MOUNTS+=("$NEXP_RUNS_DIR/walk")
  mount -o remount,bind,ro "$NEXP_RUNS_DIR/walk"
}
spoiled_run readonly read_only
expect_contains "$ERR" "Read-only file system" "read-only folder: the error"
umount "$NEXP_RUNS_DIR/walk"
expect_index interrupted "read-only folder"  # status.json could not say more than running: process gone
expect_resumes "read-only folder"
echo "cli_unwritable: ok"
