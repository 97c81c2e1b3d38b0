#!/usr/bin/env bash
# Starts or stops the local model server for the llm tests (CTest fixture llm_server), with its
# state in $NEXP_LLM_LOCAL_STATE so that it is this build's own server, stopped by its PID.
# Exit 77 (skipped) when npm or the packages are unavailable here.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $1 in
  start)
    url=$("$ROOT/scripts/llm-local" start)
    rc=$?
    if [[ $rc == 3 ]]; then
      echo "SKIP: the local model server cannot be installed here (see above); the tests that need it skip"
      exit 77
    fi
    [[ $rc == 0 ]] || exit "$rc"
    echo "local model server at $url (pid $(cat "$NEXP_LLM_LOCAL_STATE/pid"))"
    ;;
  stop) "$ROOT/scripts/llm-local" stop ;;
esac
