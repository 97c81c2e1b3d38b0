#!/usr/bin/env bash
# Searches for inputs that break a fuzz target's properties with clang's libFuzzer (with AddressSanitizer
# and UndefinedBehaviorSanitizer), starting from its corpus (tests/fuzz/corpus/TARGET). Inputs that
# reach new code go to BUILD_DIR/tests/fuzz_corpus_TARGET; a failing input is written to fuzz-crash-* in
# the current folder: once fixed, add it to the corpus, so that every CI run replays it.
#   tests/fuzz/run-libfuzzer.sh [TARGET] [SECONDS] [BUILD_DIR]     e.g. override_grammar 60 build
# Needs clang++ and its libFuzzer runtime (Debian: clang); links the build's libnexp_core.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=${1:-override_grammar} SECONDS_MAX=${2:-60} BUILD=$(realpath "${3:-$ROOT/build}")
SOURCES=("$ROOT/tests/fuzz/fuzz_$TARGET.cpp" "$ROOT/core/src/$TARGET.cpp")
for f in "${SOURCES[@]}"; do [[ -f $f ]] || { echo "run-libfuzzer: no $f (targets: tests/fuzz/fuzz_*.cpp)" >&2; exit 2; }; done
command -v clang++ > /dev/null || { echo "run-libfuzzer: clang++ is needed (apt-get install clang)" >&2; exit 2; }
[[ -f $BUILD/core/libnexp_core.so ]] || { echo "run-libfuzzer: build nexp in $BUILD first" >&2; exit 2; }
BIN=$BUILD/tests/fuzz_$TARGET
clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$ROOT/core/include" -I"$BUILD/core/include" -I"$ROOT/core/src" "${SOURCES[@]}" \
  -L"$BUILD/core" -Wl,-rpath,"$BUILD/core" -lnexp_core -lyaml-cpp -lfmt -o "$BIN"
mkdir -p "$BUILD/tests/fuzz_corpus_$TARGET"
"$BIN" -max_total_time="$SECONDS_MAX" -artifact_prefix=fuzz-crash- "$BUILD/tests/fuzz_corpus_$TARGET" \
  "$ROOT/tests/fuzz/corpus/$TARGET"
