#!/usr/bin/env bash
# Zero network calls in the default configuration: every smoke config runs in a network namespace
# that has only the loopback device, under strace, and no connect() or sendto() may name an address
# outside 127.0.0.0/8 and ::1. (A process that tried would fail there anyway; the trace shows the
# attempt.) Needs root (unshare -n) and strace; skips (77) without them.
set -euo pipefail
: "${NEXP:?}" "${NEXP_SOURCE_DIR:?}"
if [[ $(id -u) != 0 ]] || ! command -v strace >/dev/null || ! unshare -n true 2>/dev/null; then
  echo "SKIP: needs root, unshare -n and strace"
  exit 77
fi
TMP=$(mktemp -d /tmp/nexp-nonet-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
configs=("$SCAFFOLD_SMOKE")
for c in "$NEXP_SOURCE_DIR"/configs/*/smoke.yaml; do
  slug=$(basename "$(dirname "$c")")
  if [[ -f $NEXP_BUILD_DIR/plugins/libnexp_plugin_$slug.so ]]; then configs+=("$c")
  else echo "not built, not checked: $c"; fi
done
# Lines of a trace that name an inet address outside loopback.
outside_loopback() {
  grep -E 'AF_INET6?' "$1" | grep -vE 'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"' | grep -E 'inet_addr|inet_pton'
}
# The filter itself must catch an attempt (a canned trace line; nothing is sent).
echo 'connect(3, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("192.0.2.1")}, 16) = -1 ENETUNREACH' >"$TMP/canned"
echo 'connect(3, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}, 16) = 0' >>"$TMP/canned"
[[ $(outside_loopback "$TMP/canned" | wc -l) == 1 ]] || { echo "FAIL: the trace filter misses a non-loopback connect"; exit 1; }
ran=0
cd "$NEXP_SOURCE_DIR"  # configs name their data files relative to the source tree
for c in "${configs[@]}"; do
  name=$(basename "$(dirname "$c")")
  unshare -n -- sh -c 'ip link set lo up 2>/dev/null; exec "$@"' sh \
    strace -f -qq -e trace=connect,sendto,sendmsg -o "$TMP/$name.trace" \
    "$NEXP" --plugin-dir "$NEXP_FIXTURES" -q run "$c" threads=1 "runs_dir=$TMP/runs" >/dev/null
  if outside_loopback "$TMP/$name.trace" >"$TMP/bad"; then
    echo "FAIL: $c tried to reach the network:"; cat "$TMP/bad"; exit 1
  fi
  echo "ok: $c ($(grep -c . "$TMP/$name.trace" || true) socket calls traced, none outside loopback)"
  ran=$((ran + 1))
done
echo "$ran passed, 0 failed"
