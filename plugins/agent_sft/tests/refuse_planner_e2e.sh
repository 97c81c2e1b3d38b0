#!/usr/bin/env bash
# A remote environment (dataset.env=http) without what it needs: the planner teacher (a server exposes
# no world to plan in), no url, a url that is not one, held-out tasks that overlap the training tasks.
# `nexp run` exits 2 with a message that says what to set, and contacts no server.
source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
run() { nxp -q run configs/agent_sft/smoke.yaml dataset.env=http "$@"; }
refused() {  # refused "what it must say" overrides...: exit 2 and the message
  local want=$1 out rc
  shift
  set +e
  out=$(run "$@" 2>&1)
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$*: exit $rc, expected 2: $out"
  grep -qF "$want" <<<"$out" || fail "$*: no '$want' in: $out"
  if grep -qF "/create" <<<"$out"; then fail "$*: a server was contacted: $out"; fi
}

refused "Expected params.teacher=llm" dataset.url=http://127.0.0.1:9
refused "dataset.url is empty" params.teacher=llm
refused "expected the AgentGym server's address" dataset.url=localhost:36001 params.teacher=llm
refused "overlap the training tasks" dataset.url=http://127.0.0.1:9 dataset.eval_first=100 params.teacher=llm
echo "ok"
