# `nexp new-plugin`: the scaffold in the tree, and a plugin built outside the tree against the
# installed package (cmake --install, find_package(nexp)), loaded, run, and passing its tests.
source "$(dirname "$0")/lib.sh"
: "${NEXP_BUILD_DIR:?}" "${NEXP_CXX_COMPILER:?}"
mkdir -p tree/plugins tree/configs
(cd tree && "$NEXP" new-plugin myidea > ../new.out)
for f in tree/plugins/myidea/{CMakeLists.txt,plugin.cpp,myidea.cpp,myidea.hpp,README.md,tests/test_myidea.cpp} tree/configs/myidea/smoke.yaml; do
  [[ -f $f ]] || fail "new-plugin did not create $f"
done
grep -q "next steps" new.out || fail "new-plugin tells the next steps: $(cat new.out)"
cd tree
expect_exit 2 "$NEXP" new-plugin myidea
cd ..
expect_contains "$ERR" "already exists" "new-plugin never overwrites"
expect_exit 2 "$NEXP" new-plugin My-Idea
expect_contains "$ERR" "is not a slug" "bad slug"

PREFIX=$WORK/prefix
cmake --install "$NEXP_BUILD_DIR" --prefix "$PREFIX" > install.log || fail "cmake --install: $(tail install.log)"
"$PREFIX/bin/nexp" new-plugin outside --out-of-tree "$WORK/outside" > /dev/null
cmake -S "$WORK/outside" -B "$WORK/outside/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_CXX_COMPILER="$NEXP_CXX_COMPILER" > configure.log 2>&1 || fail "configure against the installed nexp: $(tail -n 20 configure.log)"
# Another compiler than nexp's is refused when the plugin is configured, not when it is loaded.
OTHER=$(command -v clang++ || true)
[[ $("$NEXP_CXX_COMPILER" --version) == *clang* ]] && OTHER=$(command -v g++ || true)
if [[ -n $OTHER ]]; then
  expect_exit 1 env -u CXXFLAGS -u LDFLAGS cmake -S "$WORK/outside" -B "$WORK/outside/build-other" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_CXX_COMPILER="$OTHER"
  expect_contains "$OUT$ERR" "nexp would refuse to load its plugins" "a compiler other than nexp's"
fi
cmake --build "$WORK/outside/build" > build.log 2>&1 || fail "build: $(tail -n 30 build.log)"
export NEXP_PLUGIN_PATH=$WORK/outside/build/plugins
expect_exit 0 "$PREFIX/bin/nexp" describe outside.fit
expect_exit 0 "$PREFIX/bin/nexp" run "$WORK/outside/configs/smoke.yaml"
[[ -n $(run_id "$OUT") ]] || fail "the out-of-tree plugin ran: $OUT"
ctest --test-dir "$WORK/outside/build" --output-on-failure > ctest.log 2>&1 || fail "its tests: $(tail -n 30 ctest.log)"
grep -q "conformance.outside" ctest.log || fail "the conformance suite ran on it: $(cat ctest.log)"
echo "cli_new_plugin: ok"
