# Start-up: `nexp --version` and runs of plain C++ plugins never load LibTorch; `nexp run`,
# `run-trial` and `validate` load only the plugins their config names (also a device backend of
# another plugin); `nexp list` loads them all. What the dynamic loader opened is read from
# LD_DEBUG=files, one file per process (sweep trials included).
source "$(dirname "$0")/lib.sh"

export LD_DEBUG=files LD_DEBUG_OUTPUT="$WORK/ld"
opened() {  # the libraries the processes since the last call opened; then forgets them
  cat "$WORK"/ld.* 2>/dev/null | awk '/file=/ {sub(/.*file=/, ""); sub(/ .*/, ""); print}' | sort -u
  rm -f "$WORK"/ld.*
}
expect_opened() {  # pattern, what
  grep -q -- "$1" <<<"$LIBS" || fail "$2: expected a library matching '$1' to be loaded; loaded: $(tr '\n' ' ' <<<"$LIBS")"
}
expect_not_opened() {  # pattern, what
  ! grep -q -- "$1" <<<"$LIBS" || fail "$2: '$(grep -- "$1" <<<"$LIBS" | head -n1)' was loaded"
}

expect_exit 0 nx --version
LIBS=$(opened)
expect_not_opened libtorch "--version"
expect_not_opened libnexp_plugin_ "--version"
expect_not_opened libgomp "--version"

# A plain C++ plugin: no LibTorch, and not the LibTorch plugin next to it.
printf 'method: fixture_crash.maybe\nparams: {x: 2.5}\n' > plain.yaml
expect_exit 0 nx run plain.yaml
LIBS=$(opened)
expect_contains "$OUT" "value" "the plain run reports its metric"
expect_opened libnexp_plugin_fixture_crash "a run of fixture_crash.maybe"
expect_not_opened libnexp_plugin_scaffold_check "a run of fixture_crash.maybe (lazy loading)"
expect_not_opened libtorch "a run of a plugin without TORCH"
expect_not_opened libnexp_torch "a run of a plugin without TORCH"

# Its sweep: neither the launching process nor a trial loads LibTorch.
expect_exit 0 nx run plain.yaml -m params.x=1,2
LIBS=$(opened)
[[ $(count completed "$NEXP_RUNS_DIR/plain/sweep") == 2 ]] || fail "both trials complete: $OUT"
expect_not_opened libtorch "a sweep of a plugin without TORCH"

# A LibTorch plugin (the positive control: the check above can fail).
expect_exit 0 nx run "$SCAFFOLD_SMOKE" params.steps=2 params.checkpoint_every=2
LIBS=$(opened)
expect_opened libtorch_cpu "a run of a TORCH plugin"
expect_opened libnexp_torch "a run of a TORCH plugin"
expect_not_opened libnexp_plugin_fixture_crash "a run of scaffold_check.fit (lazy loading)"

# list, describe and devices see every plugin.
expect_exit 0 nx list methods
LIBS=$(opened)
expect_contains "$OUT" "fixture_crash.maybe" "nexp list"
expect_contains "$OUT" "scaffold_check.fit" "nexp list"

# A typo still gets the closest name from every plugin (they are all loaded to say so).
expect_exit 2 nx validate plain.yaml method=scaffold_check.fitt
expect_contains "$ERR" "scaffold_check.fit" "the suggestion for a mistyped method"
opened > /dev/null

# The shipped plugins, when they are built: MOEA/D never loads LibTorch; a config whose device is
# another plugin's backend (simaccel, a LibTorch plugin) loads both, and nothing else.
PLUGINS="${NEXP_BUILD_DIR:-}/plugins"
if [[ -f $PLUGINS/libnexp_plugin_moead.so && -f $PLUGINS/libnexp_plugin_htc.so && -f $PLUGINS/libnexp_plugin_simaccel.so ]]; then
  expect_exit 0 "$NEXP" run "$NEXP_SOURCE_DIR/configs/moead/smoke.yaml" params.budget=2000
  LIBS=$(opened)
  expect_opened libnexp_plugin_moead "the MOEA/D smoke run"
  expect_not_opened libtorch "the MOEA/D smoke run"
  expect_exit 0 "$NEXP" run "$NEXP_SOURCE_DIR/configs/htc/smoke.yaml" dataset.graphs=2 device=simaccel:0
  LIBS=$(opened)
  expect_opened libnexp_plugin_htc "htc on simaccel:0"
  expect_opened libnexp_plugin_simaccel "htc on simaccel:0"
  expect_not_opened libnexp_plugin_moead "htc on simaccel:0"
else
  echo "note: the shipped plugins are not built; their start-up checks are skipped"
fi
echo "cli_startup: ok"
